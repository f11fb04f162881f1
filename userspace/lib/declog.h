/* SPDX-License-Identifier: MIT */
/*
 * Decision log: what the controller decided during one run, so `concsched
 * replay DIR --run N` can make the same decisions again (issue 5, item 5).
 * Decisions are keyed by the abstract thread (ALGORITHMS.md §8: creation
 * site + first monitored actions, stable across runs, unlike TIDs) and the
 * index of the event in that thread (its k-th monitored action), never by
 * time, so a replay applies each decision at the same program point even
 * when timing differs. Threads that share an abstract id are told apart by
 * `instance`, their order of appearance among threads with that id.
 *
 * Encoding (little-endian, LEB128 varints, zigzag for signed values):
 *   "CSDL" u8:version
 *   varint seed, varint len + strategy config JSON bytes
 *   varint nthreads, nthreads x (u64 abstract id, varint instance)
 *   varint nentries, nentries x (varint thread index, varint event delta
 *       from that thread's previous entry, u8 action, zigzag varint arg)
 *   version 2: varint nnames, nnames x (u64 abstract id, varint len + the
 *       thread's creation path), for people reading a schedule
 *   version 3: a thread's DECLOG_PASS entries (the observed schedule, in
 *       the order the threads went on) are deltas from its previous pass,
 *       its decisions from its previous decision: two chains, so that the
 *       passes can follow their own order after the decisions
 * Typical size: 3-5 bytes per decision.
 */
#ifndef CONCSCHED_DECLOG_H
#define CONCSCHED_DECLOG_H

#include <stddef.h>
#include <stdint.h>

#define DECLOG_VERSION 3

enum declog_action {
	DECLOG_PARK = 1, /* park the thread before this event; arg unused */
	DECLOG_RELEASE,	 /* release it (TSA/MAP release rule chose it); arg: rule */
	DECLOG_DELAY_US, /* delay arg µs (sleep noise) */
	DECLOG_YIELD,	 /* yield arg times */
	DECLOG_PRIORITY, /* set priority to arg (PCT) */
	DECLOG_PASS,	 /* observed: the thread went on from this point; the
			  * passes, in log order, are the run's schedule */
	DECLOG_ACTION_END
};

struct declog_entry {
	uint64_t thread;   /* abstract thread id */
	uint32_t instance; /* among threads with the same abstract id */
	uint64_t event;	   /* per-thread event index */
	enum declog_action action;
	int64_t arg;
};

struct declog {
	uint64_t seed;
	char *config_json;	      /* the run's strategy configuration */
	struct declog_entry *entries; /* in decision order */
	size_t n, cap;
	struct declog_entry *sorted; /* lookup copy (decisions only), built by declog_lookup */
	size_t nsorted;
	struct declog_name {
		uint64_t id;
		char *path;
	} * names; /* creation paths of the log's threads, in naming order */
	size_t nnames;
};

/* "park", "release", "delay", "yield", "priority", "pass". */
const char *declog_action_name(enum declog_action a);

void declog_init(struct declog *dl, uint64_t seed, const char *config_json);
void declog_free(struct declog *dl);
/* Append a decision. -EINVAL for an unknown action or when a thread's
 * event index goes backwards (decisions are logged as they are made). */
int declog_add(struct declog *dl, uint64_t thread, uint32_t instance, uint64_t event,
	       enum declog_action action, int64_t arg);

/* Encode into a malloc'd buffer. 0 or -errno. */
int declog_encode(const struct declog *dl, uint8_t **buf, size_t *len);
/* Decode; -EBADMSG on a truncated or corrupt log, -EPROTONOSUPPORT on a
 * newer version. dl is initialised by the call; free with declog_free. */
int declog_decode(const uint8_t *buf, size_t len, struct declog *dl);

/* Name abstract thread id by its creation path (once; later names of the
 * same id are ignored). */
void declog_name_thread(struct declog *dl, uint64_t id, const char *path);
/* The path of id, or NULL. */
const char *declog_thread_path(const struct declog *dl, uint64_t id);

/* Entries that are decisions (not DECLOG_PASS). */
size_t declog_decisions(const struct declog *dl);

/* Decisions for (thread, instance) at `event`, in logged order: returns
 * how many and points *first at the first of them (valid until the next
 * declog_add or declog_free). 0 when none. */
size_t declog_lookup(struct declog *dl, uint64_t thread, uint32_t instance, uint64_t event,
		     const struct declog_entry **first);

#endif
