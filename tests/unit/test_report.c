// SPDX-License-Identifier: MIT
/*
 * Reports on a campaign built through the store API: text, JSON fields,
 * HTML with one inline SVG chart per metric and no external assets.
 *
 * Also the fixture maker for tests/host/report-merge.t (no root needed):
 *   test_report.t --make-campaign DIR HASH [STRATEGY SEED WHERE HOST]
 *                                            a finished 40-run campaign
 *                                            (default random 1234 native
 *                                            fixture-host)
 *   test_report.t --make-killed DIR HASH     the same, then a writer
 *                                            SIGKILLed in the middle of run 41
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/report.h"
#include "results/report_junit.h"
#include "results/report_sarif.h"
#include "results/store.h"
#include "tap.h"
#include "lib/xalloc.h"

#define FIXTURE_RUNS 40
#define FAILING_RUN  30

/*
 * Metric "sp": 10 new tasks per run for runs 1..5, then nothing; with the
 * campaign's saturation "5,0.1" the window ending at run 8 (y = 40 50 50 50
 * 50) has slope 2 and the one ending at run 9 is flat: saturated at run 9.
 * Metric "map": one new task per run, never saturated. 100 sp requirements
 * are estimated, so sp is 50 % covered.
 */
static int make_campaign_as(const char *dir, const char *hash, const char *strategy, uint64_t seed,
			    const char *where, const char *host)
{
	struct store_campaign c = { .program = "/opt/bank",
				    .binary_hash = (char *)hash,
				    .args_json = "[\"--accounts\",\"4\"]",
				    .strategy = (char *)strategy,
				    .config_json = "{\"noise\":\"sleep\"}",
				    .metric = "sp",
				    .saturation = "5,0.1",
				    .seed = seed,
				    .host = (char *)host,
				    .where = (char *)where,
				    .kernel = "7.2.0",
				    .created_ns = 1700000000000000000LL };
	struct store_site sa = { .object = "/opt/bank",
				 .offset = 0x1130,
				 .function = "transfer",
				 .file = "bank.c",
				 .line = 42 };
	struct store_site sb = { .object = "/opt/bank",
				 .offset = 0x11a0,
				 .function = "audit",
				 .file = "bank.c",
				 .line = 77 };
	struct store *s;
	int64_t run, sites[2];
	char key[64];
	int i, k;

	if (store_create(dir, &c, &s))
		return -1;
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "req%d", i);
		store_add_requirement(s, "sp", key, "sp-estimate");
	}
	for (i = 1; i <= FIXTURE_RUNS; i++) {
		struct store_run_info ri = { .seed = 1234 + i,
					     .strategy_config_json = "{}",
					     .started_ns = c.created_ns + i * 1000000000LL };
		struct store_run_result res = { .outcome = "pass", .duration_ns = 250000000 };

		/* the failing run lost its steering once (onerun_config_steering) */
		if (i == FAILING_RUN)
			ri.strategy_config_json = "{\"serial\":\"off\",\"steering\":{"
						  "\"watchdog_releases\":1,\"rescued_threads\":0,"
						  "\"serial_preempts\":1}}";
		if (store_begin_run(s, &ri, &run))
			return -1;
		sites[0] = store_add_site(s, &sa);
		sites[1] = store_add_site(s, &sb);
		for (k = 0; i <= 5 && k < 10; k++) {
			snprintf(key, sizeof(key), "sp%d", (i - 1) * 10 + k);
			store_cover_task(s, "sp", key, 1);
		}
		snprintf(key, sizeof(key), "@%lld>@%lld:%d", (long long)sites[0],
			 (long long)sites[1], i);
		store_cover_task(s, "map", key, 1);
		if (i == 10 || i == 11)
			store_record_warning(s, "race", "balance", sites, 2, "t1,t2", "{}");
		if (i == 12)
			store_record_warning(s, "race", "audit_count", sites + 1, 1, "t3", NULL);
		/* Lock-order pairs: no sites, the variable names the first lock
		 * only; run 14 records one pair twice. */
		if (i == 13 || i == 14)
			store_record_warning(s, "lock-order", "L1", NULL, 0, NULL,
					     "L1, L2 (taken in both orders)");
		if (i == 14) {
			store_record_warning(s, "lock-order", "L1", NULL, 0, NULL,
					     "L1, L2 (taken in both orders)");
			store_record_warning(s, "lock-order", "L1", NULL, 0, NULL,
					     "L1, L3 (taken in both orders)");
		}
		if (i == FAILING_RUN) {
			res.outcome = "deadlock";
			res.summary = "deadlock: thread A holds L1 and waits for L2";
			store_record_failure(s, "deadlock", res.summary,
					     "thread A holds L1 (taken at transfer bank.c:42) ...",
					     sites, 2);
		}
		if (store_end_run(s, &res))
			return -1;
	}
	store_close(s);
	return 0;
}

static int make_campaign(const char *dir, const char *hash)
{
	return make_campaign_as(dir, hash, "random", 1234, "native", "fixture-host");
}

/* make_campaign, then a writer killed with run 41's transaction open. */
static int make_killed(const char *dir, const char *hash)
{
	int status;
	pid_t pid;

	if (make_campaign(dir, hash))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct store_run_info ri = { .seed = 41 };
		struct store *s;
		char key[32];
		int64_t run;
		int i;

		if (store_open(dir, false, &s) || store_begin_run(s, &ri, &run))
			_exit(3);
		for (i = 0; i < 5000; i++) {
			snprintf(key, sizeof(key), "lost%d", i);
			store_cover_task(s, "map", key, 1);
		}
		raise(SIGKILL);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? 0 : -1;
}

static char *render(const struct report *r, void (*fn)(const struct report *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(r, f);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void test_reports(const char *dir)
{
	struct report_options ro = { .dir = dir };
	struct report *r = NULL;
	struct store *s = NULL;
	char *text, *json, *html, want[256];

	tap_is_int(make_campaign(dir, "abc123"), 0, "fixture campaign built");
	tap_is_int(store_open(dir, true, &s), 0, "open read-only");
	tap_is_int(report_load(s, &ro, &r), 0, "report loads");
	{
		char *t = report_tasks_key_text(s, "@1>@2:3");

		tap_is_str(t, "transfer (bank.c:42)>audit (bank.c:77):3",
			   "task text: site references resolved");
		free(t);
		t = report_tasks_key_text(s, "p3 v@999 f@1 @2 x@ 7");
		tap_is_str(t, "p3 v=@999 f=transfer audit (bank.c:77) x@ 7",
			   "task text: named refs, unknown site and bare '@'");
		free(t);
	}
	tap_is_int(report_model_failure_count(r), 1, "one failure");

	text = render(r, report_write_text);
	snprintf(want, sizeof(want), "replay: sudo concsched replay %s --run 30", dir);
	tap_ok(strstr(text, want) != NULL, "text: exact replay command");
	tap_ok(strstr(text, "runs:      40 (pass 39, deadlock 1)") != NULL, "text: outcomes");
	tap_ok(strstr(text, "50 tasks of 100 estimated (50.0%), saturated at run 9") != NULL,
	       "text: sp coverage, estimate, saturation point");
	tap_ok(strstr(text, "[stopping metric]") != NULL, "text: stopping metric marked");
	tap_ok(strstr(text, "map") && strstr(text, "40 tasks, not saturated (slope 1/run"),
	       "text: map grows, not saturated");
	tap_ok(strstr(text, "sites:  transfer bank.c:42, audit bank.c:77") != NULL,
	       "text: failure sites as function file:line");
	tap_ok(strstr(text, "    steering: not kept throughout (1 parked thread(s) went on by the "
			    "scheduler's watchdog, 0 starved thread(s) left it, 1 serial turn(s) "
			    "taken back)") != NULL,
	       "text: the failing run's steering lost, from its configuration");
	tap_ok(strstr(text, "race on balance: transfer bank.c:42, audit bank.c:77; threads t1,t2;"
			    " locks {} (2 runs, first run 10)") != NULL,
	       "text: warnings grouped over runs");
	tap_ok(strstr(text, "lock-order on L1; locks L1, L2 (taken in both orders) (2 runs, first "
			    "run 13)") != NULL,
	       "text: a lock-order pair counted once per run that had it");
	tap_ok(strstr(text, "lock-order on L1; locks L1, L3 (taken in both orders) (1 run, first "
			    "run 14)") != NULL,
	       "text: another pair on the same first lock is a group of its own");
	if (!tap_ok(strstr(text, "warnings:  4") != NULL, "text: four warning groups"))
		tap_diag("%s", text);

	json = render(r, report_write_json);
	tap_ok(strstr(json, "\"schema\": \"concsched-report/1\"") != NULL, "json: schema");
	tap_ok(strstr(json, "\"total\": 40") != NULL, "json: run total");
	tap_ok(strstr(json, "\"deadlock\": 1") != NULL, "json: outcome counts");
	tap_ok(strstr(json, "\"saturated_at_run\": 9") != NULL, "json: saturation point");
	tap_is_int(count(json, "\"saturated_at_run\": null"), 1, "json: map has none");
	tap_ok(strstr(json, "\"percent\": 50") != NULL, "json: percent of estimate");
	snprintf(want, sizeof(want), "\"replay\": \"sudo concsched replay %s --run 30\"", dir);
	tap_ok(strstr(json, want) != NULL, "json: replay command");
	tap_ok(strstr(json, "\"function\": \"transfer\"") && strstr(json, "\"line\": 42"),
	       "json: failure sites");
	tap_is_int(count(json, "\"run\": "), 40 + 1, "json: run list and failure");
	tap_ok(strstr(json, "\"steered_throughout\": false") &&
		       strstr(json, "\"watchdog_releases\": 1") &&
		       strstr(json, "\"rescued_threads\": 0"),
	       "json: the failure not steered throughout, with its counts");
	{
		struct report_ci_suite suite = { "camp", s, report_ci_model(r) };
		char *junit = NULL, *sarif = NULL;
		size_t len;
		FILE *f = open_memstream(&junit, &len);

		report_write_junit(&suite, 1, f);
		fclose(f);
		f = open_memstream(&sarif, &len);
		report_write_sarif(&suite, 1, f);
		fclose(f);
		tap_ok(strstr(junit,
			      "\nsteering: not kept throughout (1 parked thread(s) went on by "
			      "the scheduler&#39;s watchdog, 0 starved thread(s) left it, 1 serial "
			      "turn(s) taken back): the failure may not follow from the "
			      "schedule, and a replay may pass\nsites:") != NULL,
		       "junit: the failure's text says its steering was not kept throughout");
		tap_ok(strstr(sarif, "\"steered_throughout\": false") &&
			       strstr(sarif,
				      "(run 30 of campaign camp). Steering not kept throughout "
				      "(1 parked thread(s) went on by the scheduler's watchdog, "
				      "0 starved thread(s) left it, 1 serial turn(s) taken back): "
				      "the failure may not follow from the schedule. Replay: "),
		       "sarif: the result's message and properties say so too");
		free(junit);
		free(sarif);
		json_decref(suite.model);
	}

	html = render(r, report_html_write);
	tap_is_int(count(html, "<svg"), 2, "html: one <svg> per metric");
	tap_is_int(count(html, "</svg>"), 2, "html: svgs closed");
	tap_ok(strstr(html, "saturated at run 9</text>") != NULL,
	       "html: saturation point on chart");
	tap_is_int(count(html, "class=\"fail\""), 2, "html: failing run marked on both charts");
	tap_ok(!strstr(html, "<script") && !strstr(html, "src=") && !strstr(html, "href=") &&
		       !strstr(html, "@import"),
	       "html: self-contained (no scripts or external assets)");
	tap_ok(strstr(html, "sudo concsched replay") && strstr(html, "transfer bank.c:42"),
	       "html: replay command and sites");
	free(text);
	free(json);
	free(html);
	report_free(r);
	store_close(s);
}

static void test_killed(const char *dir)
{
	struct report_options ro = { .dir = dir };
	struct report *r = NULL;
	struct store *s = NULL;
	char *json;

	tap_is_int(make_killed(dir, "abc123"), 0, "campaign with a writer killed mid-run");
	tap_is_int(store_open(dir, false, &s), 0, "open killed campaign");
	tap_is_int(report_load(s, &ro, &r), 0, "report loads it");
	json = r ? render(r, report_write_json) : xstrdup("");
	tap_ok(strstr(json, "\"total\": 40") != NULL, "only the 40 committed runs");
	free(json);
	report_free(r);
	store_close(s);
}

/* -j N: which runs ran beside which, from hand-made spans (start s,
 * length s): 1 [0, 1) and 2 [0.5, 1.5) overlap; 3 [2, 2.5), 4 [2.4, 2.6)
 * and 5 [2.5, 3) chain (3 ends as 5 starts: not beside); 6 has no start
 * (an old store): beside none. */
static void test_overlaps(const char *dir)
{
	static const double span[][2] = { { 0, 1 },	{ 0.5, 1 },   { 2, 0.5 },
					  { 2.4, 0.2 }, { 2.5, 0.5 }, { -1, 1 } };
	struct store_campaign c = { .program = "/opt/bank",
				    .binary_hash = "j2",
				    .strategy = "none",
				    .config_json = "{\"jobs\":2}",
				    .metric = "sp",
				    .created_ns = 1700000000000000000LL };
	struct report_options ro = { .dir = dir };
	struct report *r = NULL;
	struct store *s = NULL;
	char *json, *text;
	size_t i;
	int64_t run;

	if (store_create(dir, &c, &s)) {
		tap_ok(0, "overlaps: campaign created");
		return;
	}
	for (i = 0; i < sizeof(span) / sizeof(span[0]); i++) {
		struct store_run_info ri = { .seed = i + 1, .strategy_config_json = "{}" };
		struct store_run_result res = { .outcome = "pass",
						.duration_ns = (int64_t)(span[i][1] * 1e9) };

		ri.started_ns = span[i][0] < 0 ? 0 : c.created_ns + (int64_t)(span[i][0] * 1e9);
		if (store_begin_run(s, &ri, &run) || store_end_run(s, &res))
			break;
	}
	store_close(s);
	s = NULL;
	tap_ok(i == 6 && !store_open(dir, true, &s) && !report_load(s, &ro, &r) && r,
	       "overlaps: 6 runs stored and loaded");
	if (!r) {
		store_close(s);
		return;
	}
	json = render(r, report_write_json);
	text = render(r, report_write_text);
	tap_ok(strstr(json, "\"jobs\": 2") && strstr(json, "\"overlapped\": 5"),
	       "overlaps: -j 2, 5 runs ran beside another");
	tap_ok(strstr(text, "at once:   5 of 6 runs ran beside another (-j 2)") != NULL,
	       "overlaps: the text report says so");
	tap_is_int(count(json, "\"beside\""), 5, "overlaps: 5 runs have a beside list (not run 6)");
	for (i = 0; i < 6; i++) {
		static const char *const want[] = { "2", "1", "4", "3 5", "4", "" };
		int64_t b[8];
		size_t n = report_model_run_beside(r, (int64_t)i + 1, b, 8), k, len = 0;
		char got[64] = "";

		for (k = 0; k < n && k < 8; k++)
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%lld",
						k ? " " : "", (long long)b[k]);
		tap_is_str(got, want[i], "overlaps: run %zu is beside runs {%s}", i + 1, want[i]);
	}
	free(json);
	free(text);
	report_free(r);
	store_close(s);
}

static void test_replay_quoting(void)
{
	char buf[256];

	tap_is_str(report_replay_command("camp", 3, buf, sizeof(buf)),
		   "sudo concsched replay camp --run 3", "plain dir unquoted");
	tap_is_str(report_replay_command("my camp's", 12, buf, sizeof(buf)),
		   "sudo concsched replay 'my camp'\\''s' --run 12", "dir with space and quote");
	/* The host's answer for a user who is root: no sudo. */
	setenv("CONCSCHED_HOST_CMD", "build/concsched", 1);
	setenv("CONCSCHED_HOST_SUDO", "0", 1);
	tap_is_str(report_replay_command("camp", 3, buf, sizeof(buf)),
		   "build/concsched replay camp --run 3", "the host's command, root: no sudo");
	setenv("CONCSCHED_HOST_CMD", "concsched", 1);
	setenv("CONCSCHED_HOST_SUDO", "1", 1);
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/cs-report-XXXXXX", dir[128], cmd[160];

	if (argc == 4 && !strcmp(argv[1], "--make-campaign"))
		return make_campaign(argv[2], argv[3]) ? 1 : 0;
	if (argc == 8 && !strcmp(argv[1], "--make-campaign"))
		return make_campaign_as(argv[2], argv[3], argv[4], strtoull(argv[5], NULL, 10),
					argv[6], argv[7])
			       ? 1
			       : 0;
	if (argc == 4 && !strcmp(argv[1], "--make-killed"))
		return make_killed(argv[2], argv[3]) ? 1 : 0;
	if (!mkdtemp(tmp))
		return 1;
	/* Printed commands as the host would print them for a sudo user
	 * with concsched on PATH (self_command; tests/host/report-merge.t
	 * checks how a real binary names itself). */
	setenv("CONCSCHED_HOST_CMD", "concsched", 1);
	setenv("CONCSCHED_HOST_SUDO", "1", 1);
	tap_plan(52);
	snprintf(dir, sizeof(dir), "%s/camp", tmp);
	test_reports(dir);
	snprintf(dir, sizeof(dir), "%s/killed", tmp);
	test_killed(dir);
	snprintf(dir, sizeof(dir), "%s/overlaps", tmp);
	test_overlaps(dir);
	test_replay_quoting();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		tap_diag("cannot remove %s", tmp);
	return tap_done();
}
