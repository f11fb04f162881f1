/* SPDX-License-Identifier: MIT */
/*
 * Oracles: what counts as a failed run (DESIGN.md, Oracles). A finished run
 * is classified from its wait status, the timeout flag, the expected exit
 * code (--expect-exit), the target's captured stdout/stderr (sanitizer
 * reports, glibc assertion and fatal heap/stack messages) and the result of
 * the user's --check command. When a timed-out run had every thread blocked
 * on a lock, oracle_deadlock_analyze() turns the lock graph into the cycle report.
 *
 * Precedence when several apply (the most specific evidence wins):
 *   sanitizer > deadlock > assertion > timeout > signal > exit-code >
 *   check-failed > pass.
 * A sanitizer or assertion report explains the abort/exit that follows it;
 * a deadlock explains the timeout.
 */
#ifndef CONCSCHED_ORACLE_H
#define CONCSCHED_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum run_outcome {
	OUTCOME_PASS,
	OUTCOME_EXIT_CODE,    /* exited with a status other than expected */
	OUTCOME_SIGNAL,	      /* killed by a fatal signal */
	OUTCOME_TIMEOUT,      /* hang: the per-run timeout expired */
	OUTCOME_DEADLOCK,     /* timeout with a lock cycle */
	OUTCOME_SANITIZER,    /* ASan/TSan/UBSan/LSan/MSan report in the output */
	OUTCOME_ASSERTION,    /* "Assertion `...' failed." */
	OUTCOME_CHECK_FAILED, /* the --check command failed */
	OUTCOME_COUNT
};

/* "pass", "exit-code", "signal", "timeout", "deadlock", "sanitizer",
 * "assertion", "check-failed": the names the store and reports use. */
const char *oracle_outcome_name(enum run_outcome o);
/* -EINVAL for an unknown name, else the outcome. */
int oracle_outcome_parse(const char *name);
static inline bool outcome_is_failure(enum run_outcome o)
{
	return o != OUTCOME_PASS;
}

struct oracle_input {
	int wait_status; /* from waitpid; ignored when timed_out */
	bool timed_out;	 /* the launcher killed it at --run-timeout */
	bool expect_exit_set;
	int expect_exit; /* --expect-exit N (default: 0) */
	const char *out; /* captured stdout, may be NULL */
	size_t out_len;
	const char *err; /* captured stderr, may be NULL */
	size_t err_len;
	bool check_ran;		     /* a --check command ran after the run */
	int check_status;	     /* its wait status */
	const char *deadlock_report; /* oracle_deadlock_analyze() text, NULL if none */
	/* How a timeout was confirmed: after timeout_s under steering every
	 * thread was let go and steering stopped; the program was still
	 * running grace_s later (0: not steered, no grace period). */
	double timeout_s;
	double grace_s;
	/* What stopped at the timeout (NULL: "every thread was let go and
	 * steering stopped"). */
	const char *grace_stop;
	/* A deadlock confirmed before the run timeout: the cycle was found
	 * found_s into the run and its threads stayed blocked confirm_s after
	 * every thread was let go (0: confirmed at the timeout, as above). */
	double found_s;
	double confirm_s;
};

struct oracle_verdict {
	enum run_outcome outcome;
	char summary[320]; /* one line: what happened and where */
	/* The evidence, multi-line (sanitizer report head, assertion line,
	 * deadlock cycle); empty when none. */
	char detail[2048];
};

void oracle_classify(const struct oracle_input *in, struct oracle_verdict *v);

/* Building blocks, exposed for tests and for the live progress line. Each
 * scans text (not NUL-terminated; len bytes) and writes a one-line
 * description into buf, returning true when found. */
bool oracle_find_sanitizer(const char *text, size_t len, char *buf, size_t buflen);
bool oracle_find_assertion(const char *text, size_t len, char *buf, size_t buflen);
/* glibc fatal messages: stack smashing, double free, heap corruption,
 * and C++ std::terminate. */
bool oracle_find_fatal_message(const char *text, size_t len, char *buf, size_t buflen);

/*
 * Deadlock analysis. Input: the target's threads at the timeout, each with
 * the locks it holds (and where it took them) and the lock it is blocked
 * on (and where). A deadlock is a cycle in the wait-for graph: T waits for
 * lock L held by T'. Locks are compared by `lock` (address or abstract id);
 * a lock may be held by several threads (rwlock readers).
 */
struct dl_held {
	uint64_t lock;
	const char *lock_name; /* "mutex A (0x4040a0)"; NULL: hex of lock */
	const char *site;      /* where it was taken: "function file:line" */
};

struct dl_thread {
	const char *name; /* "thread 2 (tid 4242)" */
	bool blocked;	  /* its last action is a request for `waits_for` */
	uint64_t waits_for;
	const char *waits_name;
	const char *wait_site; /* where it waits */
	const struct dl_held *held;
	size_t nheld;
	/* It ran (was put on a CPU) while the confirmation said it waited:
	 * a thread blocked in a lock request sleeps, so this one is not
	 * blocked for good and is in no cycle (a slow thread, or one between
	 * its request and the acquisition the probe has not shown yet). */
	bool ran;
};

/*
 * Find a cycle; when found, write "thread A holds L1 (taken at S1) and waits
 * for L2 at S2; thread B holds L2 (taken at S3) and waits for L1 at S4"
 * into buf and the cycle's thread indices into cycle[] (may be NULL,
 * capacity n). Returns the cycle length (>= 1: a thread waiting for a lock
 * it holds itself is a 1-cycle; the caller leaves out the requests that
 * never wait for good, such as a recursive mutex's re-lock by its holder),
 * 0 when there is no cycle (a hang, not a deadlock; buf then lists what
 * each blocked thread waits for, and which ran). A thread that ran is
 * never in a cycle.
 */
size_t oracle_deadlock_analyze(const struct dl_thread *t, size_t n, size_t *cycle, char *buf,
			       size_t buflen);

#endif
