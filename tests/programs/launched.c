// SPDX-License-Identifier: MIT
/*
 * A target that says how it was launched (tests/host/49-spawner.t): the
 * launcher's spawners of the campaign that runs it (processes named
 * cs-spawner with the same parent) and how many mappings each has, its
 * parent's name and how many mappings it has, whether it leads
 * its own process group, its blocked signals (SigBlk of
 * /proc/self/status). With "kill-spawner" it kills those spawners (with
 * "kill-spawner-once FILE", only if it is the first to create FILE); with
 * "sleep" it then sleeps 30 s. Two threads take one lock, so the sync
 * probes see it.
 *
 *   launched [kill-spawner | kill-spawner-once FILE] [sleep]
 */
#include <dirent.h>
#include <fcntl.h>
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

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	counter++;
	pthread_mutex_unlock(&m);
	return NULL;
}

/* The name, parent and flags (PF_*) of pid, from /proc/PID/stat. 0 or -1. */
static int proc_stat(pid_t pid, char *comm, size_t len, pid_t *ppid, unsigned *flags)
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
	if (!l || !r || r < l || sscanf(r + 2, "%*c %d %*d %*d %*d %*d %u", &pp, flags) != 2)
		return -1;
	snprintf(comm, len, "%.*s", (int)(r - l - 1), l + 1);
	*ppid = pp;
	return 0;
}

/* How many mappings pid has (/proc/PID/maps lines): a spawner's (or with
 * -j 1 the controller's) grow by two a launch if it never unmaps its
 * children's stacks. */
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

static void spawners(bool kill_them)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t me = getppid();

	while (d && (e = readdir(d))) {
		char comm[64];
		pid_t pid = (pid_t)atoi(e->d_name), pp;
		unsigned flags;

		/* A spawner's child not yet at its exec still has the name
		 * (and PF_FORKNOEXEC, 0x40, which the spawner's own exec
		 * cleared). */
		if (pid <= 0 || proc_stat(pid, comm, sizeof(comm), &pp, &flags) || pp != me ||
		    strcmp(comm, "cs-spawner") || (flags & 0x40))
			continue;
		printf("spawner %d\n", (int)pid);
		printf("spawner-maps %d %d\n", (int)pid, map_count(pid));
		if (kill_them && !kill(pid, SIGKILL))
			printf("killed spawner %d\n", (int)pid);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	char comm[64] = "?", line[256];
	pthread_t t[2];
	bool kill_them = false;
	pid_t pp = 0;
	unsigned flags;
	FILE *f;
	int i;

	for (i = 1; i < argc; i++) {
		kill_them |= !strcmp(argv[i], "kill-spawner");
		/* kill-spawner-once FILE: only the run that creates FILE */
		if (!strcmp(argv[i], "kill-spawner-once") && i + 1 < argc)
			kill_them |= open(argv[++i], O_CREAT | O_EXCL | O_WRONLY, 0600) >= 0;
	}
	spawners(kill_them);
	proc_stat(getpid(), comm, sizeof(comm), &pp, &flags);
	proc_stat(pp, comm, sizeof(comm), &pp, &flags);
	printf("parent %s\n", comm);
	printf("parent-maps %d\n", map_count(getppid()));
	printf("group %s\n", getpgrp() == getpid() ? "own" : "other");
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7))
			printf("blocked %s", line + 7 + strspn(line + 7, " \t"));
	if (f)
		fclose(f);
	fflush(stdout);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "sleep"))
			sleep(30);
	return counter == 2 ? 0 : 1;
}
