/* SPDX-License-Identifier: MIT */
/*
 * Processes already running, for `concsched attach` (docs/attach.md): which
 * ones a selection names (-p, --comm, --cgroup), which must be refused
 * (PID 1, kernel threads, concsched itself, other users' processes), and
 * moving their threads into SCHED_EXT and back: each thread's policy and
 * priority before the switch are kept and restored at detach; threads
 * created meanwhile (they inherited SCHED_EXT) go back to SCHED_OTHER.
 */
#ifndef CONCSCHED_PROCSEL_H
#define CONCSCHED_PROCSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct procsel_thread {
	pid_t tid, pid;
	int policy;   /* before the switch (SCHED_RESET_ON_FORK kept) */
	int priority; /* its sched_priority */
	bool switched;
};

struct procsel {
	pid_t *pids; /* processes switched (their threads are in threads) */
	size_t npids;
	struct procsel_thread *threads;
	size_t nthreads;
	size_t restored, reset, gone; /* at procsel_restore */
};

/* Why pid may not be attached, as "pid N (comm): reason"; NULL if it may.
 * uid: the invoking user (processes of others are refused unless
 * allow_other). The text is static. */
const char *procsel_refusal(pid_t pid, uid_t uid, bool allow_other);
/* The leader comm of pid (no newline) into buf; "" if gone. */
const char *procsel_comm(pid_t pid, char *buf, size_t len);
/* Whether pid is a live process (not a zombie). */
bool procsel_alive(pid_t pid);

/* Processes whose comm is name, or in the cgroup v2 directory cgdir (or
 * below), ascending; each once. The caller frees *out. */
size_t procsel_by_comm(const char *name, pid_t **out);
size_t procsel_by_cgroup(const char *cgdir, pid_t **out);

bool procsel_has(const struct procsel *s, pid_t pid);
/* Move every thread of pid not yet switched into policy (SCHED_EXT),
 * remembering what it had. The number of threads switched now, or
 * -errno when none could be (printed with -v). */
int procsel_switch(struct procsel *s, pid_t pid, int policy);
/* Put every thread back: a thread we switched gets its old policy, a
 * thread of a switched process, or of a process it forked meanwhile,
 * still in `policy` gets SCHED_OTHER. */
void procsel_restore(struct procsel *s, int policy);
void procsel_free(struct procsel *s);

/* The policy of thread tid (sched_getscheduler), -1 if gone. */
int procsel_policy(pid_t tid);

#endif
