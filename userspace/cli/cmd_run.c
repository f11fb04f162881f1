// SPDX-License-Identifier: MIT
/*
 * concsched run: options, --help, the strategy from the registry (wrapped
 * for --serial), and the campaign on this kernel or in the sched_ext VM.
 * The campaign itself is campaign/campaign.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "run/vm_campaign.h"
#include "cli/commands.h"
#include "coverage/syncov.h"
#include "kernel/target.h"
#include "lib/suppress.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/self.h"
#include "lib/shell.h"
#include "lib/xalloc.h"
#include "strategies/pct.h"
#include "strategies/strategy_registry.h"
#include "strategies/serial.h"
#include "vm/vm.h"

/* ---- usage ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched run [OPTIONS] -- PROG [ARGS...]\n\n"
		"Run PROG again and again under BPF probes on its pthread synchronization and,\n"
		"with a steering strategy, under concsched's sched_ext scheduler, which stops\n"
		"threads at lock/condvar/create/join points and delays or reorders them. Every\n"
		"run is checked by the oracles (exit status, fatal signal, hang, deadlock,\n"
		"sanitizer/assertion output, --check) and stored with its coverage and its\n"
		"decisions in the campaign directory; a failing run can be replayed.\n\n"
		"Options:\n"
		"  -s, --strategy NAME   the steering strategy: one of the list below (default\n"
		"                        %s: the runs shared among map, random, pct and\n"
		"                        fpair; with --serial, which it does not combine\n"
		"                        with, %s)\n"
		"      --estimate-runs K tsa, pct, --access: observed runs before the campaign\n"
		"                        that estimate the SP requirements / the number of\n"
		"                        steps / find shared variables (1)\n"
		"      --access          also probe memory accesses: the estimation runs probe "
		"every\n"
		"                        candidate site, later runs only the sites that touched\n"
		"                        variables two threads share (runs 4, 8, ... 32, then\n"
		"                        every 16th, probe every candidate again and add what\n"
		"                        they find shared); adds the lp, concurpairs,\n"
		"                        avio*, hbpair*, goodlock*, eraser*, goldilock-sc, fpair\n"
		"                        and map metrics and race warnings (map implies it)\n"
		"      --sites-include GLOB  candidate access sites: functions or source files\n"
		"                        matching GLOB (repeatable; default all)\n"
		"      --sites-exclude GLOB  drop functions or source files matching GLOB\n"
		"      --sites-object LIB    also probe the accesses of shared object LIB\n"
		"      --suppressions FILE  race warnings not to report, in Helgrind's or\n"
		"                        TSan's format (repeatable; races inside libc,\n"
		"                        ld.so, libstdc++, libgcc_s never are; docs/races.md)\n"
		"      --steer-cap N     steer the first N hits of each access site per run,\n"
		"                        then 1 in %d; the others go on at once and the\n"
		"                        report names the sites (default %d; 0: no cap)\n"
		"      --probe-cap N     probe each thread's first N hits of each access site\n"
		"                        per run; once two threads went past them there, the\n"
		"                        site's uprobe is taken away for the rest of the run\n"
		"                        (its hits no longer cost a trap) and the report\n"
		"                        names the site (default %d; 0: no cap; at least the\n"
		"                        steering cap)\n"
		"      --probe-budget N  once a run's hits at its access sites (probed or\n"
		"                        not) pass N, every site with more than 1/8 of the\n"
		"                        probe cap in hits closes as the probe cap closes it\n"
		"                        (default %d times the probe cap; 0: no budget)\n"
		"  -n, --runs N          exactly N runs (default: until the metric saturates,\n"
		"                        at most %d)\n"
		"  -j, --jobs N          N runs at once, each its own target and probe maps\n"
		"                        (1-%d, default 1; steered: at most 7, each run's\n"
		"                        target steered as if alone; random, noise, pct,\n"
		"                        tsa, map, ga, fpair, portfolio, --serial); the\n"
		"                        report says which runs overlapped\n"
		"      --time SEC        stop after SEC seconds\n"
		"      --run-timeout SEC past SEC under steering every thread is let go and\n"
		"                        steering stops (with --access the access probes\n"
		"                        stop too, steered or not); a run still going\n"
		"                        min(SEC, 30) s later, or twice the longest\n"
		"                        estimation run if longer (at most 300 s), is a\n"
		"                        hang, one that ends was only slow under steering\n"
		"                        or the probes (not a failure); a lock cycle that holds\n"
		"                        2 s once steering stops is a deadlock at once.\n"
		"                        Default: 20x the slowest clean run, at least 2 s\n"
		"                        (%g s until one has run)\n"
		"      --seed N          campaign seed (default: random, recorded)\n"
		"      --serial MODE     off (default) | fifo | random: one target thread at a\n"
		"                        time; at each point where all are parked the oldest\n"
		"                        (fifo) or a seeded random one (random) goes on (not\n"
		"                        with tsa, map, pct, portfolio: they pick who runs;\n"
		"                        without -s the strategy is then %s)\n"
		"      --slice-us N      the target threads' time slice (default 5000, at most\n"
		"                        2000000); a serial run's thread also yields the CPU\n"
		"                        when its slice ends, so a long one makes the serial\n"
		"                        schedule depend on the synchronization points only\n"
		"      --keep-going      do not stop at the first failure\n"
		"      --max-failures K  stop once K runs have failed (implies --keep-going;\n"
		"                        default 1, --keep-going alone: no limit)\n"
		"      --replay-check K  replay each failing steered run K times in its\n"
		"                        recorded order before going on (default 1; 0: no\n"
		"                        check); one that fails again in none of them is\n"
		"                        tried with its steps in another order, and the\n"
		"                        report says how each replayed\n"
		"  -o, --out DIR         campaign directory (default: concsched-PROG-DATE-TIME)\n"
		"      --json            final summary as JSON on stdout (concsched-report/1)\n"
		"      --metric NAME     metric whose saturation ends the campaign: sp (default),\n"
		"                        goodlock, hbpair, sync; with --access also lp,\n"
		"                        concurpairs, avio*, hbpair*, goodlock*, eraser*,\n"
		"                        goldilock-sc, fpair, map\n"
		"      --saturation W,T  window and slope threshold (default 50,0.1; 120s,0.1)\n"
		"      --expect-exit N   the exit status of a good run (default 0)\n"
		"      --check CMD       shell command after each run; non-zero means failure\n"
		"                        (env: CONCSCHED_RUN, CONCSCHED_EXIT, CONCSCHED_OUT_FILE)\n"
		"      --user USER       run PROG as USER (default: the sudo caller)\n"
		"      --no-follow-forks probe and steer only PROG's own process (default:\n"
		"                        also the processes it forks, and what they exec)\n"
		"      --vm              run the whole campaign in the sched_ext VM (for kernels\n"
		"                        without sched_ext; see concsched doctor)\n"
		"      --vm-cpus N       virtual CPUs of that VM (default 2)\n"
		"  -h, --help            this text\n\n",
		RUN_DEFAULT_STRATEGY, RUN_FALLBACK_STRATEGY, STEER_SAMPLE, STEER_DEFAULT_CAP,
		PROBE_DEFAULT_CAP, PROBE_BUDGET_FACTOR, RUN_DEFAULT_CAP, RUN_MAX_JOBS,
		RUN_DEFAULT_TIMEOUT, RUN_FALLBACK_STRATEGY);
	fprintf(f, "Strategies (-s NAME; with --access, pct's steps, random and noise\n"
		   "configurations act at the probed accesses to shared variables too):\n");
	strategy_list_print(f, RUN_DEFAULT_STRATEGY);
	fprintf(f,
		"\nExamples:\n"
		"  sudo concsched run -- ./mytest                  # the portfolio until "
		"saturation\n"
		"  sudo concsched run -s random -- ./mytest        # one strategy alone\n"
		"  sudo concsched run --vm -o camp -- ./mytest      # host without sched_ext\n"
		"  sudo concsched run -s rnd-s10:0.3 -n 200 --keep-going -o camp -- ./mytest\n"
		"  sudo concsched run -s none -n 100 -- ./mytest    # no steering, probes only\n"
		"  sudo concsched run -s none -n 1000 -j 2 -- ./mytest  # two runs at once\n"
		"  sudo concsched run --vm -s pct:2 -j 2 -- ./mytest  # two steered at once\n"
		"  sudo concsched run -s tsa -n 200 -o camp -- ./mytest  # SP-directed (seed 000)\n"
		"  sudo concsched run -s map -n 100 --vm -- ./mytest      # MAP-directed (seed "
		"001)\n"
		"  sudo concsched run -s pct:2 -n 100 -o camp -- ./mytest  # PCT, bug depth 2\n"
		"  sudo concsched run -s pct:2 --access -n 100 -o camp -- ./mytest\n"
		"                        # PCT with a step at each shared load and store too,\n"
		"                        # change points where one thread writes, another reads\n"
		"  sudo concsched run -s ga:2,8 -n 64 -o camp -- ./mytest  # 4 GA generations\n"
		"  sudo concsched run -s fpair -n 100 -o camp -- ./mytest  # function pairs\n"
		"  sudo concsched run -s portfolio -n 200 -o camp -- ./mytest  # all of them\n"
		"  sudo concsched run -s 'sharedVar-all@300/sleep:200' --access -n 100 -- "
		"./mytest\n"
		"  sudo concsched run -s none -n 20 --access --sites-include 'worker*' -- "
		"./mytest\n"
		"  sudo concsched run --serial random --check './verify out.txt' -- ./mytest\n"
		"  concsched report camp --html camp.html\n"
		"  sudo concsched replay camp --run 17\n\n"
		"Exit status: 0 no failure, 1 a failure was found, 2 usage or environment error,\n"
		"130 interrupted.\n");
}

/* Whether strategy s combines with the other options; the reason on
 * stderr when report is set. */
static bool strategy_fits(const struct run_opts *o, const struct strategy *s, bool report)
{
	bool access = o->access || strategy_has(s, STRAT_F_ACCESS);

	if (strategy_has(s, STRAT_F_NEEDS_ACCESS) && (!access || o->serial != CS_SERIAL_OFF)) {
		if (report)
			log_err(access ? "--strategy %s acts at memory accesses, which --serial "
					 "does not steer: drop --serial"
				       : "--strategy %s acts at memory accesses: add --access (its "
					 "estimation runs find the shared variables to probe)",
				o->strategy);
		return false;
	}
	if (o->serial != CS_SERIAL_OFF && strategy_has(s, STRAT_F_PICKS)) {
		if (report)
			log_err("--serial does not combine with --strategy %s (%s picks who runs)",
				o->strategy, strategy_name(s));
		return false;
	}
	return true;
}

static int new_strategy(struct run_opts *o, struct strategy **s)
{
	char err[200] = "";

	if (strategy_new(o->strategy, s, err, sizeof(err))) {
		log_err("--strategy %s: %s (see concsched run --help)", o->strategy, err);
		return -EINVAL;
	}
	return 0;
}

/*
 * The strategy string through the registry; --serial wraps it. Without
 * -s, a default that does not combine with the options (the portfolio
 * with --serial) gives way to RUN_FALLBACK_STRATEGY; an explicit -s keeps
 * its error.
 */
static int make_strategy(struct run_opts *o)
{
	struct strategy *s;

	if (new_strategy(o, &s))
		return -EINVAL;
	if (!o->strategy_set && !strategy_fits(o, s, false)) {
		log_debug("no --strategy, and the default %s does not combine with the "
			  "options: strategy %s",
			  o->strategy, RUN_FALLBACK_STRATEGY);
		strategy_free(s);
		o->strategy = RUN_FALLBACK_STRATEGY;
		if (new_strategy(o, &s))
			return -EINVAL;
	}
	if (!strategy_fits(o, s, true)) {
		strategy_free(s);
		return -EINVAL;
	}
	/* An option of access probing asks for it as --access does (the
	 * portfolio then keeps it on whatever the estimation run cost). */
	o->access_asked = o->access || o->steer_cap_set || o->probe_cap_set ||
			  o->probe_budget_set || o->sites.ninclude || o->sites.nexclude ||
			  o->nsite_objects || o->nsuppressions;
	if (strategy_has(s, STRAT_F_ACCESS))
		o->access = true;
	if (o->serial != CS_SERIAL_OFF)
		s = serial_wrap(s, o->serial);
	o->strat = s;
	return 0;
}

static int run_vm(struct run_opts *o, int argc, char **argv)
{
	struct target_info ti;
	char **gargv;
	char *out_alloc = NULL;
	const char **carry;
	size_t k, nc = 1;
	int i, n = 0, ret;
	unsigned timeout = 0;

	if (target_inspect(o->argv[0], &ti))
		return EXIT_USAGE;
	if (!o->out)
		o->out = out_alloc = campaign_default_out(ti.path);
	if (access(o->out, F_OK) == 0) {
		log_err("%s already exists (choose another --out, or remove it)", o->out);
		free(out_alloc);
		return EXIT_USAGE;
	}
	/* concsched run <options without --vm/-o> -o /out/campaign -- PROG... */
	gargv = xcalloc((size_t)argc + 8, sizeof(*gargv));
	gargv[n++] = "concsched";
	gargv[n++] = "run";
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--vm"))
			continue;
		if (!strncmp(argv[i], "--vm-cpus", 9)) {
			if (!strchr(argv[i], '='))
				i++;
			continue;
		}
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--out=", 6) || (!strncmp(argv[i], "-o", 2) && argv[i][2]))
			continue;
		gargv[n++] = argv[i];
	}
	gargv[n++] = "-o";
	gargv[n++] = VM_GUEST_OUT "/campaign";
	gargv[n++] = "--";
	gargv[n++] = ti.path;
	for (i = 1; i < o->argc; i++)
		gargv[n++] = o->argv[i];
	carry = xcalloc(o->nsite_objects + o->nsuppressions + 2, sizeof(*carry));
	carry[0] = ti.path;
	/* --sites-object given as a path must exist in the guest too. */
	for (k = 0; k < o->nsite_objects; k++)
		if (strchr(o->site_objects[k], '/'))
			carry[nc++] = o->site_objects[k];
	/* So must a suppression file (by its absolute path). */
	for (k = 0; k < o->nsuppressions; k++)
		if (o->suppressions[k][0] == '/')
			carry[nc++] = o->suppressions[k];
	if (o->time_s > 0)
		timeout = (unsigned)(o->time_s + o->run_timeout_s * 3 + 60);
	fprintf(stderr, "concsched: booting the sched_ext VM for the campaign (%s)\n",
		vm_host_kvm_usable() ? "KVM" : "TCG emulation: slower");
	ret = vm_campaign_run(gargv, o->out, "campaign", carry, timeout, o->vm_cpus);
	if ((ret == 0 || ret == 1) && !o->json) {
		char q[PATH_MAX];

		fprintf(stderr, "concsched: campaign stored in %s (%s report %s)\n", o->out,
			self_command(false), shell_quote(o->out, q, sizeof(q)));
	}
	free(gargv);
	free(carry);
	free(out_alloc);
	return ret;
}

/* ---- options -----------------------------------------------------------------------------------
 */

static int parse_seconds(const char *opt, const char *s, double *out)
{
	if (parse_double(s, out) || *out <= 0) {
		log_err("%s %s: not a positive number of seconds", opt, s);
		return -EINVAL;
	}
	return 0;
}

static void push_str(const char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

/* Read every --suppressions file now: a usage error before any run. */
static int check_suppressions(const struct run_opts *o)
{
	struct suppressions *s = suppress_new();
	int err = 0;

	for (size_t i = 0; !err && i < o->nsuppressions; i++) {
		err = suppress_load(s, o->suppressions[i]);
		if (err && err != -EINVAL)
			log_err("--suppressions %s: %s", o->suppressions[i], strerror(-err));
	}
	suppress_free(s);
	return err;
}

static int parse_run_args(struct run_opts *o, int argc, char **argv)
{
	enum {
		O_TIME = 256,
		O_RUN_TIMEOUT,
		O_SEED,
		O_SERIAL,
		O_KEEP,
		O_NO_FOLLOW,
		O_JSON,
		O_METRIC,
		O_SAT,
		O_EXPECT,
		O_CHECK,
		O_USER,
		O_VM,
		O_VM_CPUS,
		O_EST,
		O_ACCESS,
		O_SINC,
		O_SEXC,
		O_SOBJ,
		O_SUPP,
		O_STEER_CAP,
		O_PROBE_CAP,
		O_PROBE_BUDGET,
		O_REPLAY_CHECK,
		O_MAX_FAILURES,
		O_SLICE
	};
	static const struct option opts[] = {
		{ "strategy", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, O_TIME },
		{ "run-timeout", required_argument, NULL, O_RUN_TIMEOUT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "serial", required_argument, NULL, O_SERIAL },
		{ "slice-us", required_argument, NULL, O_SLICE },
		{ "keep-going", no_argument, NULL, O_KEEP },
		{ "max-failures", required_argument, NULL, O_MAX_FAILURES },
		{ "no-follow-forks", no_argument, NULL, O_NO_FOLLOW },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, O_JSON },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "saturation", required_argument, NULL, O_SAT },
		{ "expect-exit", required_argument, NULL, O_EXPECT },
		{ "check", required_argument, NULL, O_CHECK },
		{ "user", required_argument, NULL, O_USER },
		{ "vm", no_argument, NULL, O_VM },
		{ "vm-cpus", required_argument, NULL, O_VM_CPUS },
		{ "estimate-runs", required_argument, NULL, O_EST },
		{ "access", no_argument, NULL, O_ACCESS },
		{ "sites-include", required_argument, NULL, O_SINC },
		{ "sites-exclude", required_argument, NULL, O_SEXC },
		{ "sites-object", required_argument, NULL, O_SOBJ },
		{ "suppressions", required_argument, NULL, O_SUPP },
		{ "steer-cap", required_argument, NULL, O_STEER_CAP },
		{ "probe-cap", required_argument, NULL, O_PROBE_CAP },
		{ "probe-budget", required_argument, NULL, O_PROBE_BUDGET },
		{ "replay-check", required_argument, NULL, O_REPLAY_CHECK },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, err;

	o->strategy = RUN_DEFAULT_STRATEGY;
	o->metric = "sp";
	o->run_timeout_s = RUN_DEFAULT_TIMEOUT;
	o->steer_cap = STEER_DEFAULT_CAP;
	o->probe_cap = PROBE_DEFAULT_CAP;
	o->replay_check = 1;
	o->vm_cpus = 2;
	o->estimate_runs = 1;
	saturation_config_default(&o->sat);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+s:n:o:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->strategy = optarg;
			o->strategy_set = true;
			break;
		case 'n':
			if (parse_u64(optarg, &o->runs) || !o->runs) {
				log_err("--runs %s: not a positive number", optarg);
				return -EINVAL;
			}
			break;
		case 'j':
			if (parse_u64(optarg, &v) || !v || v > RUN_MAX_JOBS) {
				log_err("--jobs %s: 1-%d runs at once", optarg, RUN_MAX_JOBS);
				return -EINVAL;
			}
			o->jobs = (unsigned)v;
			break;
		case O_TIME:
			if (parse_seconds("--time", optarg, &o->time_s))
				return -EINVAL;
			break;
		case O_RUN_TIMEOUT:
			if (parse_seconds("--run-timeout", optarg, &o->run_timeout_s))
				return -EINVAL;
			o->run_timeout_set = true;
			break;
		case O_SEED:
			if (parse_u64(optarg, &o->seed)) {
				log_err("--seed %s: not a number", optarg);
				return -EINVAL;
			}
			o->seed_set = true;
			break;
		case O_SERIAL:
			if (serial_mode_parse(optarg, &o->serial)) {
				log_err("--serial %s: use off, fifo or random", optarg);
				return -EINVAL;
			}
			break;
		case O_NO_FOLLOW:
			o->no_follow_forks = true;
			break;
		case O_KEEP:
			o->keep_going = true;
			break;
		case O_SLICE:
			if (parse_u64(optarg, &v) || v < RUN_SLICE_MIN_US || v > RUN_SLICE_MAX_US) {
				log_err("--slice-us %s: a time slice in microseconds, %u to %u",
					optarg, RUN_SLICE_MIN_US, RUN_SLICE_MAX_US);
				return -EINVAL;
			}
			o->sched_slice_us = (unsigned)v;
			break;
		case O_MAX_FAILURES:
			if (parse_u64(optarg, &v) || !v || v > UINT32_MAX) {
				log_err("--max-failures %s: a number of failing runs, at least 1",
					optarg);
				return -EINVAL;
			}
			o->keep_going = true;
			o->max_failures = (unsigned)v;
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_METRIC:
			if (campaign_metric_index(optarg) < 0) {
				log_err("--metric %s: use sp, goodlock, hbpair or sync (with "
					"--access "
					"also lp, concurpairs, avio*, hbpair*, goodlock*, eraser*, "
					"goldilock-sc, fpair, map)",
					optarg);
				return -EINVAL;
			}
			o->metric = optarg;
			break;
		case O_ACCESS:
			o->access = true;
			break;
		case O_SINC:
			push_str(&o->sites.include, &o->sites.ninclude, optarg);
			break;
		case O_SEXC:
			push_str(&o->sites.exclude, &o->sites.nexclude, optarg);
			break;
		case O_SOBJ:
			push_str(&o->site_objects, &o->nsite_objects, optarg);
			break;
		case O_SUPP:
			push_str(&o->suppressions, &o->nsuppressions, optarg);
			break;
		case O_SAT:
			if (saturation_parse(optarg, &o->sat)) {
				log_err("--saturation %s: expected WINDOW,THRESHOLD like 50,0.1 or "
					"120s,0.1",
					optarg);
				return -EINVAL;
			}
			o->sat_spec = optarg;
			break;
		case O_EXPECT:
			if (parse_u64(optarg, &v) || v > 255) {
				log_err("--expect-exit %s: an exit status is 0-255", optarg);
				return -EINVAL;
			}
			o->expect_exit_set = true;
			o->expect_exit = (int)v;
			break;
		case O_CHECK:
			o->check = optarg;
			break;
		case O_USER:
			o->user = optarg;
			break;
		case O_VM:
			o->vm = true;
			break;
		case O_VM_CPUS:
			if (parse_u64(optarg, &v) || !v || v > 64) {
				log_err("--vm-cpus %s: 1-64", optarg);
				return -EINVAL;
			}
			o->vm_cpus = (unsigned)v;
			break;
		case O_STEER_CAP:
			if (parse_u64(optarg, &v)) {
				log_err("--steer-cap %s: a number of hits (0: no cap)", optarg);
				return -EINVAL;
			}
			o->steer_cap = v;
			o->steer_cap_set = true;
			break;
		case O_PROBE_CAP:
			if (parse_u64(optarg, &v)) {
				log_err("--probe-cap %s: a number of hits (0: no cap)", optarg);
				return -EINVAL;
			}
			o->probe_cap = v;
			o->probe_cap_set = true;
			break;
		case O_PROBE_BUDGET:
			if (parse_u64(optarg, &v)) {
				log_err("--probe-budget %s: a number of hits a run (0: no budget)",
					optarg);
				return -EINVAL;
			}
			o->probe_budget = v;
			o->probe_budget_set = true;
			break;
		case O_REPLAY_CHECK:
			if (parse_u64(optarg, &v) || v > 100) {
				log_err("--replay-check %s: replays of each failing steered run, "
					"0-100 "
					"(0: no check)",
					optarg);
				return -EINVAL;
			}
			o->replay_check = (unsigned)v;
			break;
		case O_EST:
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				log_err("--estimate-runs %s: 1-1000", optarg);
				return -EINVAL;
			}
			o->estimate_runs = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "(see concsched run --help)\n");
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (!o->argc) {
		log_err("run: no program given (concsched run [OPTIONS] -- PROG ARGS)");
		return -EINVAL;
	}
	if (!o->sat_spec) {
		static char def[48];

		o->sat_spec = saturation_format(&o->sat, def, sizeof(def));
	}
	err = make_strategy(o);
	if (err)
		return err;
	if (o->steer_cap_set && !o->access) {
		log_err("--steer-cap bounds the steering at access sites: add --access (or a "
			"strategy that implies it)");
		return -EINVAL;
	}
	if (o->probe_cap_set && !o->access) {
		log_err("--probe-cap bounds the probing of access sites: add --access (or a "
			"strategy that implies it)");
		return -EINVAL;
	}
	if (o->probe_budget_set && !o->access) {
		log_err("--probe-budget bounds the probing of access sites: add --access (or a "
			"strategy that implies it)");
		return -EINVAL;
	}
	if (o->probe_cap && (!o->steer_cap || o->probe_cap < o->steer_cap)) {
		if (o->probe_cap_set) {
			log_err("--probe-cap %" PRIu64 " is below the steering cap (%" PRIu64
				"%s): a site must be probed to be steered",
				o->probe_cap, o->steer_cap, o->steer_cap ? "" : ", no cap");
			return -EINVAL;
		}
		o->probe_cap = o->steer_cap ? o->steer_cap : 0; /* follows --steer-cap */
	}
	if (!o->probe_budget_set)
		o->probe_budget = PROBE_BUDGET_FACTOR * o->probe_cap;
	if (!o->probe_cap && o->probe_budget) {
		if (o->probe_budget_set) {
			log_err("--probe-budget closes hot access sites as the probe cap does: "
				"not with --probe-cap 0");
			return -EINVAL;
		}
		o->probe_budget = 0; /* no cap, no budget */
	}
	if ((o->sites.ninclude || o->sites.nexclude || o->nsite_objects) && !o->access) {
		log_err("--sites-include/--sites-exclude/--sites-object choose access sites: add "
			"--access (or --strategy map)");
		return -EINVAL;
	}
	if (o->nsuppressions && !o->access) {
		log_err("--suppressions filters the race warnings of --access: add --access");
		return -EINVAL;
	}
	if (check_suppressions(o))
		return -EINVAL;
	if (o->jobs > 1 && strategy_has(o->strat, STRAT_F_STEERS) &&
	    !strategy_has(o->strat, STRAT_F_JOBS)) {
		log_err("--jobs %u: --strategy %s decides each run's steps from state the "
			"campaign's runs share while they run (its coverage, in one engine): use "
			"-j 1 (docs/run.md, \"Steered runs at once\")",
			o->jobs, o->strategy);
		return -EINVAL;
	}
	if (o->jobs > CS_SCHED_MAX_TARGETS - 1 && strategy_has(o->strat, STRAT_F_STEERS)) {
		log_err("--jobs %u: at most %d steered runs at once (the scheduler's targets)",
			o->jobs, CS_SCHED_MAX_TARGETS - 1);
		return -EINVAL;
	}
	if (campaign_metric_index(o->metric) == SYNCOV__COUNT && !o->access) {
		log_err("--metric %s is a metric of memory accesses: add --access", o->metric);
		return -EINVAL;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	int err;

	err = parse_run_args(&o, argc, argv);
	if (!err)
		vm_campaign_scratch_sweep(o.out);
	if (!err)
		err = o.vm ? run_vm(&o, argc, argv) : campaign_run(&o);
	else
		err = err > 0 ? 0 : EXIT_USAGE;
	free(o.sites.include);
	free(o.sites.exclude);
	free(o.site_objects);
	free(o.suppressions);
	strategy_free(o.strat);
	return err;
}
