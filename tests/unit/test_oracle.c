// SPDX-License-Identifier: MIT
/*
 * Oracles on captured outputs (fixtures copied in the shape the runtimes
 * print them) and the deadlock cycle analysis on hand-built lock graphs.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "results/oracle.h"
#include "tap.h"

#define W_EXIT(code)  ((code) << 8)
#define W_SIGNAL(sig) (sig)

static const char asan_uaf[] =
	"=================================================================\n"
	"==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc "
	"0x55d0c2a1b1c9 bp 0x7ffc5b0e1f00 sp 0x7ffc5b0e1ef0\n"
	"READ of size 4 at 0x602000000010 thread T1\n"
	"    #0 0x55d0c2a1b1c8 in reader /src/uaf.c:14\n"
	"    #1 0x7f1e2c8a0ea6 in start_thread nptl/pthread_create.c:477\n"
	"\n"
	"0x602000000010 is located 0 bytes inside of 4-byte region "
	"[0x602000000010,0x602000000014)\n"
	"freed by thread T2 here:\n"
	"    #0 0x7f1e2cb0f7cf in __interceptor_free asan_malloc_linux.cpp:52\n"
	"    #1 0x55d0c2a1b20a in writer /src/uaf.c:22\n"
	"\n"
	"SUMMARY: AddressSanitizer: heap-use-after-free /src/uaf.c:14 in reader\n"
	"Shadow bytes around the buggy address:\n"
	"==12345==ABORTING\n";

static const char tsan_race[] =
	"==================\n"
	"WARNING: ThreadSanitizer: data race (pid=4242)\n"
	"  Write of size 4 at 0x55f1c0a04014 by thread T2:\n"
	"    #0 worker /src/race.c:9 (race+0x12a9)\n"
	"  Previous read of size 4 at 0x55f1c0a04014 by thread T1:\n"
	"    #0 worker /src/race.c:9 (race+0x1293)\n"
	"  Location is global 'counter' of size 4 at 0x55f1c0a04014 (race+0x000000004014)\n"
	"SUMMARY: ThreadSanitizer: data race /src/race.c:9 in worker\n"
	"==================\n"
	"ThreadSanitizer: reported 1 warnings\n";

static const char ubsan[] = "result: 1\n/src/ovf.c:7:11: runtime error: signed integer overflow: "
			    "2147483647 + 1 cannot be represented in type 'int'\n";

static const char lsan[] = "=================================================================\n"
			   "==777==ERROR: LeakSanitizer: detected memory leaks\n\n"
			   "Direct leak of 40 byte(s) in 1 object(s) allocated from:\n"
			   "    #0 0x7f3c in malloc\n"
			   "    #1 0x55a1 in main /src/leak.c:5\n\n"
			   "SUMMARY: AddressSanitizer: 40 byte(s) leaked in 1 allocation(s).\n";

static const char assert_out[] = "transferring...\n"
				 "bank: bank.c:42: transfer: Assertion `total == 1000' failed.\n";

static struct oracle_verdict v;

static void classify(int status, bool timeout, const char *out, const char *err)
{
	struct oracle_input in = { .wait_status = status,
				   .timed_out = timeout,
				   .out = out,
				   .out_len = out ? strlen(out) : 0,
				   .err = err,
				   .err_len = err ? strlen(err) : 0 };

	oracle_classify(&in, &v);
}

static void test_outputs(void)
{
	classify(W_EXIT(1), false, "", asan_uaf);
	tap_is_str(oracle_outcome_name(v.outcome), "sanitizer", "ASan report -> sanitizer");
	tap_is_str(v.summary, "AddressSanitizer: heap-use-after-free (/src/uaf.c:14 in reader)",
		   "ASan summary names kind and location");
	tap_ok(strstr(v.detail, "freed by thread T2") != NULL, "ASan detail keeps the report");
	classify(W_EXIT(66), false, NULL, tsan_race);
	tap_is_str(v.summary, "ThreadSanitizer: data race (/src/race.c:9 in worker)",
		   "TSan data race");
	classify(W_EXIT(0), false, ubsan, NULL);
	tap_is_str(v.summary,
		   "UndefinedBehaviorSanitizer: signed integer overflow: 2147483647 + 1 cannot be "
		   "represented in type 'int' at /src/ovf.c:7:11",
		   "UBSan runtime error on stdout, even with exit 0");
	classify(W_EXIT(23), false, NULL, lsan);
	tap_is_str(v.summary,
		   "LeakSanitizer: detected memory leaks (40 byte(s) leaked in 1 allocation(s).)",
		   "LeakSanitizer");
	classify(W_SIGNAL(SIGABRT), false, NULL, assert_out);
	tap_is_str(oracle_outcome_name(v.outcome), "assertion", "glibc assert -> assertion");
	tap_is_str(v.summary, "assertion `total == 1000' failed in transfer at bank.c:42",
		   "assertion names expression, function, file:line");
	classify(W_SIGNAL(SIGABRT), false, NULL, "*** stack smashing detected ***: terminated\n");
	tap_is_str(v.summary,
		   "killed by SIGABRT (Aborted): *** stack smashing detected ***: terminated",
		   "stack smashing explains SIGABRT");
	classify(W_SIGNAL(SIGABRT) | 0x80, false, NULL,
		 "free(): double free detected in tcache 2\n");
	tap_is_str(v.summary,
		   "killed by SIGABRT (Aborted), core dumped: free(): double free detected in "
		   "tcache 2",
		   "double free, core dumped");
	classify(W_SIGNAL(SIGABRT), false, NULL, "double free or corruption (out)\n");
	tap_ok(v.outcome == OUTCOME_SIGNAL && strstr(v.summary, "double free or corruption (out)"),
	       "double free or corruption");
	classify(W_SIGNAL(SIGSEGV), false, "", "");
	tap_is_str(v.summary, "killed by SIGSEGV (Segmentation fault)", "segfault");
	tap_is_str(oracle_outcome_name(v.outcome), "signal", "segfault -> signal");
}

static void test_status(void)
{
	struct oracle_input in = { .wait_status = W_EXIT(3) };

	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_EXIT_CODE &&
		       !strcmp(v.summary, "exited with status 3 (expected 0)"),
	       "exit 3 -> exit-code");
	in.expect_exit_set = true;
	in.expect_exit = 3;
	oracle_classify(&in, &v);
	tap_is_int(v.outcome, OUTCOME_PASS, "--expect-exit 3 and exit 3 -> pass");
	in.wait_status = W_EXIT(0);
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_EXIT_CODE &&
		       !strcmp(v.summary, "exited with status 0 (expected 3)"),
	       "--expect-exit 3 and exit 0 -> exit-code");
	memset(&in, 0, sizeof(in));
	in.check_ran = true;
	in.check_status = W_EXIT(1);
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_CHECK_FAILED &&
		       !strcmp(v.summary, "--check command failed (exit status 1)"),
	       "--check failing -> check-failed");
	in.check_status = 0;
	oracle_classify(&in, &v);
	tap_is_int(v.outcome, OUTCOME_PASS, "clean exit and passing check -> pass");
	in.timed_out = true;
	oracle_classify(&in, &v);
	tap_is_str(oracle_outcome_name(v.outcome), "timeout",
		   "timeout without a lock cycle -> timeout");
	in.deadlock_report = "thread A holds L1 (taken at f a.c:1) and waits for L2 at f a.c:2";
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_DEADLOCK &&
		       !strncmp(v.summary, "deadlock: thread A holds L1", 27),
	       "timeout with a lock cycle -> deadlock");
	tap_ok(!strchr(v.detail, '\n'), "no grace period: the detail is the cycle alone");
	in.timeout_s = 2;
	in.grace_s = 2;
	oracle_classify(&in, &v);
	tap_ok(strstr(v.detail, "\nconfirmed: the cycle's threads were blocked in lock requests "
				"2 s after every thread was let go and steering stopped at the 2 s "
				"run timeout") != NULL,
	       "a deadlock says how it was confirmed");
	in.found_s = 0.25;
	in.confirm_s = 2;
	in.timeout_s = 30;
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_DEADLOCK &&
		       strstr(v.detail, "\nconfirmed: the cycle's threads stayed blocked in lock "
					"requests 2 s after every thread was let go and steering "
					"stopped (the cycle was found 0.25 s into the run; run "
					"timeout 30 s)") != NULL,
	       "a deadlock confirmed before the timeout says when it was found");
	in.grace_s = 0;
	oracle_classify(&in, &v);
	tap_ok(strstr(v.detail, "2 s (the run was not steered) (the cycle was found") != NULL,
	       "... and that nothing was steered in an unsteered run");
	in.found_s = in.confirm_s = 0;
	in.timeout_s = in.grace_s = 2;
	in.deadlock_report = NULL;
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_TIMEOUT &&
		       !strcmp(v.detail, "confirmed: still running 2 s after every thread was let "
					 "go and steering stopped at the 2 s run timeout"),
	       "a hang says how it was confirmed");
	in.grace_stop = "its access probes stopped";
	oracle_classify(&in, &v);
	tap_ok(v.outcome == OUTCOME_TIMEOUT &&
		       !strcmp(v.detail, "confirmed: still running 2 s after its access probes "
					 "stopped at the 2 s run timeout"),
	       "... an unsteered run's, that the access probes stopped (%s)", v.detail);
	in.grace_stop = NULL;
	in.deadlock_report = "thread A holds L1 (taken at f a.c:1) and waits for L2 at f a.c:2";
	in.err = asan_uaf;
	in.err_len = strlen(asan_uaf);
	oracle_classify(&in, &v);
	tap_is_int(v.outcome, OUTCOME_SANITIZER, "sanitizer report outranks the deadlock");
	tap_is_int(oracle_outcome_parse("check-failed"), OUTCOME_CHECK_FAILED,
		   "oracle_outcome_parse");
	tap_is_int(oracle_outcome_parse("bogus"), -EINVAL,
		   "oracle_outcome_parse rejects unknown names");
}

static void test_deadlocks(void)
{
	struct dl_held a_h[] = { { 0x10, "mutex L1", "worker_a dl.c:10" } };
	struct dl_held b_h[] = { { 0x20, "mutex L2", "worker_b dl.c:20" } };
	struct dl_held c_h[] = { { 0x30, "mutex L3", "worker_c dl.c:30" } };
	struct dl_thread two[] = {
		{ "A", true, 0x20, "mutex L2", "worker_a dl.c:11", a_h, 1 },
		{ "B", true, 0x10, "mutex L1", "worker_b dl.c:21", b_h, 1 },
	};
	struct dl_thread three[] = {
		{ "D", true, 0x10, "mutex L1", "main dl.c:50", NULL, 0 },
		{ "A", true, 0x20, "mutex L2", "worker_a dl.c:11", a_h, 1 },
		{ "B", true, 0x30, "mutex L3", "worker_b dl.c:21", b_h, 1 },
		{ "C", true, 0x10, "mutex L1", "worker_c dl.c:31", c_h, 1 },
	};
	struct dl_thread hang[] = {
		{ "A", true, 0x20, "mutex L2", "worker_a dl.c:11", a_h, 1 },
		{ "B", false, 0, NULL, NULL, b_h, 1 },
	};
	struct dl_held self_h[] = { { 0x40, NULL, "f s.c:3" } };
	struct dl_thread self[] = { { "T", true, 0x40, NULL, "f s.c:4", self_h, 1 } };
	struct dl_held rd[] = { { 0x50, "rwlock R", "reader r.c:5" } };
	struct dl_held m_h[] = { { 0x60, "mutex M", "writer r.c:9" } };
	struct dl_thread rw[] = {
		{ "W", true, 0x50, "rwlock R", "writer r.c:10", m_h, 1 },
		{ "R1", false, 0, NULL, NULL, rd, 1 },
		{ "R2", true, 0x60, "mutex M", "reader r.c:6", rd, 1 },
	};
	size_t cyc[4];
	char buf[1024];

	tap_is_int(oracle_deadlock_analyze(two, 2, cyc, buf, sizeof(buf)), 2, "2-cycle found");
	tap_is_str(
		buf,
		"thread A holds mutex L1 (taken at worker_a dl.c:10) and waits for mutex L2 at "
		"worker_a dl.c:11; thread B holds mutex L2 (taken at worker_b dl.c:20) and waits "
		"for mutex L1 at worker_b dl.c:21",
		"2-cycle report text");
	tap_is_int(oracle_deadlock_analyze(three, 4, cyc, buf, sizeof(buf)), 3, "3-cycle found");
	tap_ok(cyc[0] == 1 && cyc[1] == 2 && cyc[2] == 3, "3-cycle is A B C, not the waiter D");
	tap_is_str(
		buf,
		"thread A holds mutex L1 (taken at worker_a dl.c:10) and waits for mutex L2 at "
		"worker_a dl.c:11; thread B holds mutex L2 (taken at worker_b dl.c:20) and waits "
		"for mutex L3 at worker_b dl.c:21; thread C holds mutex L3 (taken at worker_c "
		"dl.c:30) and waits for mutex L1 at worker_c dl.c:31",
		"3-cycle report text");
	tap_is_int(oracle_deadlock_analyze(hang, 2, cyc, buf, sizeof(buf)), 0, "no cycle: a hang");
	tap_is_str(
		buf,
		"no lock cycle; thread A waits for mutex L2 at worker_a dl.c:11 (held by thread B)",
		"hang text names the holder");
	tap_is_int(oracle_deadlock_analyze(self, 1, cyc, buf, sizeof(buf)), 1,
		   "self-deadlock 1-cycle");
	tap_is_str(buf,
		   "thread T holds lock 0x40 (taken at f s.c:3) and waits for lock 0x40 at f s.c:4",
		   "unnamed lock shown by address");
	tap_is_int(oracle_deadlock_analyze(rw, 3, cyc, buf, sizeof(buf)), 2,
		   "rwlock with two readers: cycle through the blocked reader");
	tap_is_int(oracle_deadlock_analyze(NULL, 0, cyc, buf, sizeof(buf)), 0,
		   "no threads, no cycle");
	/* Issue 32's false verdict: SQLite's thread re-locking its connection
	 * mutex (recursive) in sqlite3_reset, called by sqlite3_step, which
	 * holds it. The thread ran in the confirmation window: not blocked. */
	{
		struct dl_held sq_h[] = { { 0x2a8, NULL, "sqlite3_step+0x3a" } };
		struct dl_thread sq[] = { { "0.5", true, 0x2a8, NULL, "sqlite3_reset+0x1b", sq_h, 1,
					    true } };

		tap_is_int(oracle_deadlock_analyze(sq, 1, cyc, buf, sizeof(buf)), 0,
			   "a holder's re-lock by a thread that ran is no 1-cycle");
		tap_is_str(buf,
			   "no lock cycle; thread 0.5 ran after its request for lock 0x2a8 at "
			   "sqlite3_reset+0x1b (not blocked)",
			   "... the hang text says it ran");
		two[1].ran = true;
		tap_is_int(oracle_deadlock_analyze(two, 2, cyc, buf, sizeof(buf)), 0,
			   "a 2-cycle one of whose threads ran is none");
		two[1].ran = false;
		self[0].ran = false;
		tap_is_int(oracle_deadlock_analyze(self, 1, cyc, buf, sizeof(buf)), 1,
			   "a self-deadlock whose thread did not run still is one");
	}
}

int main(void)
{
	tap_plan(44);
	test_outputs();
	test_status();
	test_deadlocks();
	return tap_done();
}
