/* SPDX-License-Identifier: MIT */
/*
 * A run's steering lost, as its stored configuration records it
 * ("steering": {"watchdog_releases", "rescued_threads", "serial_preempts"},
 * the configuration's last key, only when one of them is not 0): written
 * by the run (run/onerun.c), read by report, replay and minimize.
 */
#ifndef CONCSCHED_RESULTS_RUN_STEERING_H
#define CONCSCHED_RESULTS_RUN_STEERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_steering {
	uint64_t watchdog_releases; /* parked threads the scheduler let go itself */
	uint64_t rescued_threads;   /* starved threads that left the scheduler */
	uint64_t serial_preempts;   /* serial mode: a turn taken back */
};

/* cfg (a JSON object, consumed) with "steering" appended when s has a
 * count; cfg itself when not. */
char *run_steering_append(char *cfg, const struct run_steering *s);

/* The counts cfg records (all 0 without "steering" or without cfg). */
void run_steering_read(const char *cfg, struct run_steering *s);

/* cfg (consumed) without its "steering": a run made from the recorded one
 * (minimize) has counts of its own. */
char *run_steering_strip(char *cfg);

/* Whether the strategy's order held: no starved thread left the
 * scheduler and no serial turn was taken back. A watchdog release alone is
 * common in runs whose failures replay (pct: a thread parked while the
 * runner blocks without a point), not a sign by itself. */
bool run_steering_kept(const struct run_steering *s);

/* "not kept throughout (1 parked thread(s) went on by the scheduler's
 * watchdog, ...)": the reason run_steering_kept() is false. */
void run_steering_describe(const struct run_steering *s, char *buf, size_t len);

#endif
