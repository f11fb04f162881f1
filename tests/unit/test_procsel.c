// SPDX-License-Identifier: MIT
/*
 * procsel.c (concsched attach): refusals, selection by comm, and the
 * per-thread switch and restore, here with SCHED_BATCH standing in for
 * SCHED_EXT (no privilege or sched_ext needed): a switched process, a
 * thread it creates and a process it forks afterwards all inherit the
 * class; restore gives the switched threads their old policy and resets
 * the others to SCHED_OTHER.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "kernel/procsel.h"

static int go[2], done[2];

static void *idle_thread(void *arg)
{
	pause();
	return arg;
}

/* The target: waits for a byte, then creates a thread and forks a child
 * (both inherit its class), reports the child's pid and waits. */
static void target(void)
{
	pthread_t t;
	pid_t child;
	char c;

	prctl(PR_SET_NAME, "cs-procsel-t");
	if (read(go[0], &c, 1) != 1)
		_exit(1);
	pthread_create(&t, NULL, idle_thread, NULL);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (write(done[1], &child, sizeof(child)) != sizeof(child))
		_exit(1);
	pause();
	_exit(0);
}

static int count_policy(pid_t pid, int policy, int *total)
{
	char path[64];
	int n = 0;
	FILE *f;

	*total = 0;
	snprintf(path, sizeof(path), "ls /proc/%d/task", (int)pid);
	f = popen(path, "r");
	while (f && fgets(path, sizeof(path), f)) {
		(*total)++;
		n += procsel_policy(atoi(path)) == policy;
	}
	if (f)
		pclose(f);
	return n;
}

int main(void)
{
	struct procsel s = { 0 };
	pid_t pid, child, *pids;
	const char *why;
	char buf[64];
	size_t n, i;
	bool found;
	int total;

	tap_plan(14);
	why = procsel_refusal(1, getuid(), false);
	tap_ok(why && strstr(why, "pid 1 (") && strstr(why, "refusing to steer init"), "PID 1");
	why = procsel_refusal(getpid(), getuid(), false);
	tap_ok(why && strstr(why, "concsched itself"), "this process");
	why = procsel_refusal(4194000, getuid(), false);
	tap_ok(why && strstr(why, "no such process"), "no such pid");

	if (pipe(go) || pipe(done))
		return 1;
	pid = fork();
	if (pid == 0)
		target();
	/* the child names itself first thing: wait for that, not a fixed time */
	tap_poll(procsel_comm(pid, buf, sizeof(buf)) && !strcmp(buf, "cs-procsel-t"), 5000);
	why = procsel_refusal(pid, getuid() + 1, false);
	tap_ok(why && strstr(why, "belongs to uid") && strstr(why, "--allow-other-users"),
	       "another user's process");
	tap_ok(!procsel_refusal(pid, getuid() + 1, true), "... allowed with --allow-other-users");
	tap_ok(!procsel_refusal(pid, getuid(), false), "our own child is not refused");
	tap_is_str(procsel_comm(pid, buf, sizeof(buf)), "cs-procsel-t", "its comm");
	n = procsel_by_comm("cs-procsel-t", &pids);
	for (i = 0, found = false; i < n; i++)
		found |= pids[i] == pid;
	free(pids);
	tap_ok(found, "selected by comm");

	tap_is_int(procsel_switch(&s, pid, SCHED_BATCH), 1, "its one thread switched");
	tap_is_int(procsel_switch(&s, pid, SCHED_BATCH), 0, "switched once");
	if (write(go[1], "x", 1) != 1 || read(done[0], &child, sizeof(child)) != sizeof(child))
		return 1;
	usleep(100000);
	tap_ok(count_policy(pid, SCHED_BATCH, &total) == 2 && total == 2,
	       "the thread it created inherited the class");
	tap_is_int(procsel_policy(child), SCHED_BATCH, "so did the process it forked");
	procsel_restore(&s, SCHED_BATCH);
	tap_ok(count_policy(pid, SCHED_OTHER, &total) == 2 && total == 2 && s.restored == 1 &&
		       s.reset == 2,
	       "restored: the switched thread back, the new thread and the forked process reset");
	tap_is_int(procsel_policy(child), SCHED_OTHER, "the forked process reset too");
	procsel_free(&s);
	kill(child, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return tap_done();
}
