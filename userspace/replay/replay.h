/* SPDX-License-Identifier: MIT */
/* concsched replay (replay.c). */
#ifndef CONCSCHED_REPLAY_H
#define CONCSCHED_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "results/oracle.h"
#include "run/run_types.h"
#include "results/store.h"
#include "lib/declog.h"
#include "strategies/strategy.h"

struct replay_opts {
	const char *dir;
	int64_t run;
	uint64_t times;
	double run_timeout_s;
	bool json, vm;
	bool decisions_only; /* --decisions: not the recorded order */
};

/* One recorded run made ready to be re-run (replay, minimize): the
 * campaign, the run and its decision log, the target and its probes. */
struct replayer {
	const char *dir;
	int64_t run;
	struct store *st;
	struct store_campaign camp;
	struct store_run sr;
	const struct strategy_ops *ops; /* the recorded strategy */
	/* a portfolio run's sub-strategy, its flags as the run had them */
	struct strategy_ops arm_ops;
	bool arm_unprobed; /* that arm probed no accesses ("arm_access": false) */
	struct run_opts o;
	struct campaign c;
	struct declog dl; /* the run's log */
	char **args;
	size_t nargs;
	char *serial;
	bool graced; /* the last replay_once's steering ended at its run
		      * timeout, before the program did (the grace period) */
};

/* Load ro->run of ro->dir (writable: the store opened for writing). With
 * ro->vm only the campaign and the run are loaded. 0 or -errno (one line
 * printed). replay_close whatever it returned. */
int replay_open(struct replayer *p, const struct replay_opts *ro, bool writable);
/* Run the target once under strat; *v its verdict, *log (when given) the
 * replay's own decision log (declog_free it), *secs its duration. */
int replay_once(struct replayer *p, struct strategy *strat, struct oracle_verdict *v,
		struct declog *log, double *secs);
/* A replay that did not fail again (failed false) after its steering ended
 * at the run timeout (graced) did not go through the order: true when it
 * is to run again instead of being counted, at most REPLAY_GRACED_AGAIN
 * times (*again counts them). */
#define REPLAY_GRACED_AGAIN 4
bool replay_again(bool failed, bool graced, unsigned *again);
/* v is the recorded kind of failure. */
bool replay_reproduced(const struct replayer *p, const struct oracle_verdict *v);
void replay_close(struct replayer *p);

/* A log of p's run with its passes in order v (n of them), its decisions
 * too when decisions. */
void replay_order_log(const struct replayer *p, const struct declog_entry *v, size_t n,
		      bool decisions, struct declog *out);
/* Replay p's run `times` times in pass order v (its decisions too when
 * decisions) under --serial mode serial: true when every replay failed as
 * recorded; *last the last replay's verdict. */
bool replay_fails_every_time(struct replayer *p, enum cs_serial_mode serial, bool decisions,
			     const struct declog_entry *v, size_t n, unsigned times,
			     struct oracle_verdict *last);
/* run (just stored, failed) of the campaign c replayed c->o->replay_check
 * times before the campaign goes on; an order that fails again becomes
 * its schedule; the replays table and a line on stderr say how it went. */
void replay_check_failure(struct campaign *c, int64_t run);

/* Replay run ro->run of campaign ro->dir ro->times times; argv: the
 * command line, passed on to the VM with --vm. The exit status: 1 it
 * failed again at least once, 0 it passed every time, 2 an error. */
int replay_run(const struct replay_opts *ro, int argc, char **argv);

#endif
