// SPDX-License-Identifier: MIT
/*
 * concsched sched — run a program once under the concsched scheduler with a
 * manual policy: park, delay or yield its threads at chosen functions,
 * optionally serialize it, and report what the scheduler did. It is the
 * hands-on way to try an interleaving and the driver of the VM tests of
 * the pause / resume / delay mechanism (docs/sched.md).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "run/sched_run.h"
#include "kernel/target.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched sched [OPTIONS] -- PROG [ARGS...]\n\n"
		"Run PROG once under the concsched sched_ext scheduler with a manual policy\n"
		"and print a JSON summary of what the scheduler did (needs root and a\n"
		"kernel with sched_ext; elsewhere use 'concsched vm -- concsched sched ...').\n\n"
		"Points (repeatable; SYMBOL is a function of PROG, SKIP hits pass first,\n"
		"then COUNT hits act, 0 = all):\n"
		"  --park-at SYMBOL[:SKIP[:COUNT]]     park the thread before SYMBOL runs\n"
		"  --delay-at SYMBOL:USEC[:SKIP[:COUNT]] stop it USEC microseconds\n"
		"  --yield-at SYMBOL[:SKIP[:COUNT]]    preempt it, back of the run queue\n"
		"  --release-at SYMBOL[:SKIP[:COUNT]]  the thread runs on and releases every\n"
		"                         parked thread, in BPF (no round trip to concsched)\n"
		"Release rule for parked threads:\n"
		"  --release all-parked   when every runnable thread is parked, release the\n"
		"                         one parked longest (default)\n"
		"  --release never        only the watchdog releases\n"
		"  --release after:USEC   release each parked thread USEC after its park\n"
		"Scheduler:\n"
		"  --serial fifo|random|pct  at most one thread of PROG runs at a time;\n"
		"                         next = FIFO, seeded random, or the highest of\n"
		"                         seeded random priorities (PCT; preemptive)\n"
		"  --seed N               seed of --serial random and pct\n"
		"  --watchdog-ms N        no park lasts longer (default 1000)\n"
		"  --timeout-ms N         sched_ext stall timeout (default 30000, >= 2x\n"
		"                         watchdog); the rescue below acts at 75%% of N,\n"
		"                         or at 3750 ms without this option\n"
		"  --slice-us N           time slice of PROG's threads (default 5000)\n"
		"  --no-rescue            leave a thread that waits that long to\n"
		"                         run in SCHED_EXT (by default it moves to the fair\n"
		"                         class, unsteered; with this the kernel ejects the\n"
		"                         scheduler and prints its debug dump)\n"
		"Run:\n"
		"  --run-timeout-ms N     kill PROG's process group after N ms (default 60000)\n"
		"  --user USER            run PROG as USER (default: SUDO_UID or the caller)\n"
		"  --cycles N             load, run PROG, unload N times (one JSON line each;\n"
		"                         stops at the first failing cycle)\n"
		"  --copies N             run N copies of PROG at once (1-%d), each a target\n"
		"                         of its own: its own serial token, all-parked notes,\n"
		"                         points and counters (as run -j N steers); one JSON\n"
		"                         line per copy, with \"copy\" and \"target\"\n"
		"  --pretty               indent the JSON\n\n"
		"Exit status: PROG's exit status (128+signal if killed), 1 if it timed out,\n"
		"2 on usage or environment errors.\n\n"
		"Examples:\n"
		"  sudo concsched sched -- ./four_threads\n"
		"  sudo concsched sched --park-at a_lock -- ./lockorder 100\n"
		"  sudo concsched sched --park-at a_lock --release-at b_unlock --release never \\\n"
		"       -- ./lockorder 100\n"
		"  sudo concsched sched --delay-at marker:1000 -- ./marker_loop 50\n"
		"  sudo concsched sched --serial random --seed 7 -- ./bank\n"
		"  sudo concsched sched --copies 2 --park-at a_lock -- ./lockorder 100\n"
		"  concsched vm -- concsched sched --park-at marker --release never -- ./gap 1\n"
		"\nMechanism and summary fields: docs/sched.md; the scheduler's own comment\n"
		"is at the top of sched/scx_concsched.bpf.c.\n",
		SCHED_CMD_MAX_COPIES);
}

/* SYMBOL[:A[:B[:C]]] -> symbol + up to three numbers. */
static int parse_point(const char *arg, enum cs_action act, struct point_spec *p)
{
	char *s = xstrdup(arg), *tok, *save = NULL;
	uint64_t nums[3] = { 0, 0, 0 };
	int n = 0, need = act == CS_ACT_DELAY ? 1 : 0;

	tok = strtok_r(s, ":", &save);
	if (!tok || !*tok)
		goto bad;
	p->symbol = xstrdup(tok);
	while ((tok = strtok_r(NULL, ":", &save))) {
		if (n >= 3 || parse_u64(tok, &nums[n]))
			goto bad;
		n++;
	}
	if (n < need || (act != CS_ACT_DELAY && n > 2))
		goto bad;
	p->act = act;
	if (act == CS_ACT_DELAY) {
		p->delay_ns = nums[0] * 1000ULL;
		p->skip = nums[1];
		p->count = nums[2];
	} else {
		p->skip = nums[0];
		p->count = nums[1];
	}
	free(s);
	return 0;
bad:
	log_err("bad point '%s' (see concsched sched --help)", arg);
	free(s);
	return -EINVAL;
}

static int parse_serial(const char *s, enum cs_serial_mode *m)
{
	if (!strcmp(s, "fifo"))
		*m = CS_SERIAL_FIFO;
	else if (!strcmp(s, "random"))
		*m = CS_SERIAL_RANDOM;
	else if (!strcmp(s, "pct") || !strcmp(s, "prio"))
		*m = CS_SERIAL_PRIO;
	else if (!strcmp(s, "off"))
		*m = CS_SERIAL_OFF;
	else
		return -EINVAL;
	return 0;
}

static int parse_release(const char *s, struct sched_run *r)
{
	uint64_t us;

	if (!strcmp(s, "all-parked"))
		r->rule = RELEASE_ALL_PARKED;
	else if (!strcmp(s, "never"))
		r->rule = RELEASE_NEVER;
	else if (!strncmp(s, "after:", 6) && !parse_u64(s + 6, &us)) {
		r->rule = RELEASE_AFTER;
		r->release_after_ns = us * 1000ULL;
	} else
		return -EINVAL;
	return 0;
}

int cmd_sched(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "park-at", required_argument, NULL, 'p' },
		{ "delay-at", required_argument, NULL, 'd' },
		{ "yield-at", required_argument, NULL, 'y' },
		{ "release-at", required_argument, NULL, 'R' },
		{ "release", required_argument, NULL, 'r' },
		{ "serial", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "watchdog-ms", required_argument, NULL, 'w' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "slice-us", required_argument, NULL, 'l' },
		{ "run-timeout-ms", required_argument, NULL, 't' },
		{ "user", required_argument, NULL, 'u' },
		{ "pretty", no_argument, NULL, 'P' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "copies", required_argument, NULL, 'C' },
		{ "no-rescue", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct scx_concsched_opts so = { 0 };
	struct sched_run r = { 0 }, copies[SCHED_CMD_MAX_COPIES];
	struct launch_opts lo_ = { 0 };
	struct target_info ti;
	const char *user = NULL;
	uint64_t v, run_timeout_ms = 60000, cycles = 1, cycle, ncopies = 1;
	bool pretty = false;
	int opt, rc = EXIT_USAGE, k;
	enum cs_action act;

	r.rule = RELEASE_ALL_PARKED;
	while ((opt = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (opt) {
		case 'p':
		case 'd':
		case 'y':
		case 'R':
			act = opt == 'p'   ? CS_ACT_PARK
			      : opt == 'd' ? CS_ACT_DELAY
			      : opt == 'y' ? CS_ACT_YIELD
					   : CS_ACT_RELEASE;
			if (r.nr_points >= SCHED_CMD_MAX_POINTS) {
				log_err("at most %d points", SCHED_CMD_MAX_POINTS);
				goto cleanup;
			}
			if (parse_point(optarg, act, &r.points[r.nr_points]))
				goto cleanup;
			r.nr_points++;
			break;
		case 'r':
			if (parse_release(optarg, &r)) {
				log_err("--release: want all-parked, never or after:USEC, got '%s'",
					optarg);
				goto cleanup;
			}
			break;
		case 's':
			if (parse_serial(optarg, &so.serial)) {
				log_err("--serial: want fifo, random or pct, got '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'N':
			so.no_rescue = true;
			break;
		case 'S':
			if (parse_u64(optarg, &so.seed)) {
				log_err("--seed: not a number: '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'c':
		case 'w':
		case 'T':
		case 'l':
		case 't':
			if (parse_u64(optarg, &v) || v == 0 || v > 3600000) {
				log_err("--%s: want a positive number, got '%s'",
					opt == 'w'   ? "watchdog-ms"
					: opt == 'T' ? "timeout-ms"
					: opt == 'l' ? "slice-us"
					: opt == 'c' ? "cycles"
						     : "run-timeout-ms",
					optarg);
				goto cleanup;
			}
			if (opt == 'w')
				so.watchdog_ms = (unsigned)v;
			else if (opt == 'T')
				so.timeout_ms = (unsigned)v;
			else if (opt == 'l')
				so.slice_us = (unsigned)v;
			else if (opt == 'c')
				cycles = v;
			else
				run_timeout_ms = v;
			break;
		case 'C':
			if (parse_u64(optarg, &ncopies) || !ncopies ||
			    ncopies > SCHED_CMD_MAX_COPIES) {
				log_err("--copies: want 1-%d, got '%s'", SCHED_CMD_MAX_COPIES,
					optarg);
				goto cleanup;
			}
			break;
		case 'u':
			user = optarg;
			break;
		case 'P':
			pretty = true;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto cleanup;
		default:
			usage(stderr);
			goto cleanup;
		}
	}
	if (optind >= argc) {
		log_err("sched: no program given (concsched sched [OPTIONS] -- PROG [ARGS...])");
		goto cleanup;
	}
	if (target_inspect(argv[optind], &ti))
		goto cleanup;
	if (launcher_resolve_user(user, &lo_.uid, &lo_.gid, &lo_.drop_privs))
		goto cleanup;
	if (geteuid() != 0) {
		log_err("sched needs root (BPF and sched_ext): run it with sudo");
		goto cleanup;
	}
	argv[optind] = ti.path;
	lo_.argv = argv + optind;
	lo_.sched_ext = true;
	lo_.stdin_fd = lo_.stderr_fd = -1;
	/* stdout carries the JSON summary: the program's output goes to stderr. */
	lo_.stdout_fd = 2;
	signal(SIGINT, sched_run_on_signal);
	signal(SIGTERM, sched_run_on_signal);
	/* Each copy has its own counters and samples; the points and the
	 * release rule are the same. */
	for (k = 0; k < (int)ncopies; k++) {
		copies[k] = r;
		memset(&copies[k].release_lat, 0, sizeof(struct samples));
		memset(&copies[k].delay_late, 0, sizeof(struct samples));
		memset(&copies[k].parked, 0, sizeof(struct samples));
		memset(&copies[k].to_park, 0, sizeof(struct samples));
	}
	for (cycle = 0; cycle < cycles && !sched_run_interrupted; cycle++) {
		rc = sched_run_once(copies, (int)ncopies, &so, &lo_, ti.path,
				    (unsigned)run_timeout_ms, pretty);
		if (rc == EXIT_USAGE || (cycles > 1 && rc != 0)) {
			if (cycles > 1)
				log_err("cycle %llu of %llu failed", (unsigned long long)cycle + 1,
					(unsigned long long)cycles);
			break;
		}
	}
	for (k = 0; k < (int)ncopies; k++) {
		free(copies[k].release_lat.v);
		free(copies[k].delay_late.v);
		free(copies[k].parked.v);
		free(copies[k].to_park.v);
	}
cleanup:
	for (opt = 0; opt < r.nr_points; opt++)
		free(r.points[opt].symbol);
	return rc;
}
