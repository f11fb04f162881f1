// SPDX-License-Identifier: MIT
/*
 * A target that says how it was launched (tests/host/49-launch.t): its
 * parent's name and how many mappings the parent has, whether it leads
 * its own process group, its blocked signals (SigBlk of
 * /proc/self/status), and the CPUs it and each of its threads may run on
 * (Cpus_allowed_list). With "sleep" it then sleeps 30 s. Two threads take
 * one lock, so the sync probes see it.
 *
 *   launched [sleep]
 */
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

/* "cpus WHO LIST": the CPUs the calling thread may run on. */
static void print_cpus(const char *who)
{
	char line[256];
	FILE *f = fopen("/proc/thread-self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			printf("cpus %s %s", who, line + 18 + strspn(line + 18, " \t"));
	if (f)
		fclose(f);
	fflush(stdout);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	counter++;
	print_cpus("thread");
	pthread_mutex_unlock(&m);
	return NULL;
}

/* The name and parent of pid, from /proc/PID/stat. 0 or -1. */
static int proc_stat(pid_t pid, char *comm, size_t len, pid_t *ppid)
{
	char path[64], buf[512], *l, *r;
	FILE *f;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	l = strchr(buf, '(');
	r = strrchr(buf, ')');
	if (!l || !r || r < l || sscanf(r + 2, "%*c %d", &pp) != 1)
		return -1;
	snprintf(comm, len, "%.*s", (int)(r - l - 1), l + 1);
	*ppid = pp;
	return 0;
}

/* How many mappings pid has (/proc/PID/maps lines): the controller's grow
 * by two a launch if it never unmaps its children's stacks. */
static int map_count(pid_t pid)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strchr(line, '\n') != NULL;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	char comm[64] = "?", line[256];
	pthread_t t[2];
	pid_t pp = 0;
	FILE *f;
	int i;

	proc_stat(getpid(), comm, sizeof(comm), &pp);
	proc_stat(pp, comm, sizeof(comm), &pp);
	printf("parent %s\n", comm);
	printf("parent-maps %d\n", map_count(getppid()));
	printf("group %s\n", getpgrp() == getpid() ? "own" : "other");
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7))
			printf("blocked %s", line + 7 + strspn(line + 7, " \t"));
	if (f)
		fclose(f);
	print_cpus("main");
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "sleep"))
			sleep(30);
	return counter == 2 ? 0 : 1;
}
