/* SPDX-License-Identifier: MIT */
/*
 * --serial MODE around any strategy that does not pick who runs itself:
 * one target thread at a time; every decision point waits, and at each
 * all-parked note the oldest waiting thread in creation-path order (fifo)
 * or a seeded choice among them (random) goes on, so neither tids nor
 * timing enter the order. The inner strategy keeps its lifecycle (its run
 * configuration is still drawn and recorded) but not its decisions.
 *
 * The waiting list and the pick are shared with replay (strategies/strategy_replay.c).
 */
#ifndef CONCSCHED_SERIAL_H
#define CONCSCHED_SERIAL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/declog.h"
#include "lib/rng.h"
#include "strategies/strategy.h"

struct serial_wait {
	size_t ti; /* index in the run's thread table */
	uint64_t k;
};

struct serial_list {
	struct serial_wait *v;
	size_t n;
	enum cs_serial_mode mode;
	struct cs_rng rng;
	uint64_t last_pick_ns;
};

void serial_list_init(struct serial_list *l, enum cs_serial_mode mode, uint64_t run_seed);
void serial_list_free(struct serial_list *l);
/* Thread ti waits at its point k (an earlier point it waited at was
 * never parked: that park was cancelled, and is forgotten). */
void serial_list_add(struct serial_list *l, size_t ti, uint64_t k);
/* The waiting entry at (thread id, event), or SIZE_MAX. */
size_t serial_list_find(const struct serial_list *l, const struct strat_run *r, uint64_t id,
			uint64_t event);
/* fifo: the first waiting thread in creation-path order; otherwise a
 * seeded choice in that order. SIZE_MAX when nobody waits. */
size_t serial_list_choose(struct serial_list *l, const struct strat_run *r);
/* Release entry i (logged) and drop it. */
void serial_list_release(struct serial_list *l, struct strat_run *r, size_t i);

/* "off", "fifo", "random", "prio" and back (-EINVAL). */
const char *serial_mode_name(enum cs_serial_mode m);
int serial_mode_parse(const char *s, enum cs_serial_mode *m);

struct strategy *serial_wrap(struct strategy *inner, enum cs_serial_mode mode);

#endif
