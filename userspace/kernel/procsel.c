// SPDX-License-Identifier: MIT
/*
 * Processes already running (procsel.h): selection, refusals, and the
 * per-thread switch into SCHED_EXT and back, for `concsched attach`.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/procsel.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h */

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* Fields of /proc/PID/stat after the comm: state is field 3. */
static bool stat_fields(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], *s, *p;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = file_read(path, NULL);
	if (!s)
		return false;
	p = strrchr(s, ')');
	n = p ? sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) : 0;
	free(s);
	return n == 2;
}

bool procsel_alive(pid_t pid)
{
	unsigned long flags;
	char state;

	return stat_fields(pid, &state, &flags) && state != 'Z' && state != 'X';
}

const char *procsel_comm(pid_t pid, char *buf, size_t len)
{
	char path[64], *s;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	s = file_read(path, NULL);
	snprintf(buf, len, "%s", s ? s : "");
	free(s);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return buf;
}

static bool real_uid(pid_t pid, uid_t *uid)
{
	char path[64], *s, *p;
	unsigned long u;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = file_read(path, NULL);
	if (!s)
		return false;
	p = strstr(s, "\nUid:");
	if (p && sscanf(p + 5, "%lu", &u) == 1) {
		*uid = (uid_t)u;
		ok = true;
	}
	free(s);
	return ok;
}

const char *procsel_refusal(pid_t pid, uid_t uid, bool allow_other)
{
	static char why[160];
	char comm[32], state;
	unsigned long flags;
	uid_t owner;

	if (!stat_fields(pid, &state, &flags) || state == 'Z' || state == 'X') {
		snprintf(why, sizeof(why), "pid %d: no such process", (int)pid);
		return why;
	}
	procsel_comm(pid, comm, sizeof(comm));
	if (pid == 1)
		snprintf(why, sizeof(why), "pid 1 (%s): refusing to steer init", comm);
	else if (flags & PF_KTHREAD_FLAG)
		snprintf(why, sizeof(why), "pid %d (%s): refusing to steer a kernel thread",
			 (int)pid, comm);
	else if (pid == getpid())
		snprintf(why, sizeof(why), "pid %d (%s): refusing to steer concsched itself",
			 (int)pid, comm);
	else if (!real_uid(pid, &owner))
		snprintf(why, sizeof(why), "pid %d (%s): cannot read its owner", (int)pid, comm);
	else if (owner != uid && !allow_other)
		snprintf(why, sizeof(why),
			 "pid %d (%s): belongs to uid %u, not to uid %u (--allow-other-users)",
			 (int)pid, comm, (unsigned)owner, (unsigned)uid);
	else
		return NULL;
	return why;
}

static void pid_add(pid_t **v, size_t *n, pid_t pid)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i] == pid)
			return;
	if (*n % 32 == 0)
		*v = xrealloc(*v, (*n + 32) * sizeof(**v));
	(*v)[(*n)++] = pid;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static pid_t dir_pid(const char *name)
{
	uint64_t v;

	if (parse_u64(name, &v) || !v || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

size_t procsel_by_comm(const char *name, pid_t **out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char comm[32];
	size_t n = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = dir_pid(de->d_name);

		if (pid && !strncmp(procsel_comm(pid, comm, sizeof(comm)), name, 15) &&
		    strlen(comm) == (strlen(name) < 15 ? strlen(name) : 15))
			pid_add(out, &n, pid);
	}
	closedir(d);
	qsort(*out, n, sizeof(**out), pid_cmp);
	return n;
}

static void cgroup_walk(const char *dir, pid_t **out, size_t *n, int depth)
{
	char path[PATH_MAX], *s, *p, *end;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	s = file_read(path, NULL);
	for (p = s; p && *p; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0)
			pid_add(out, n, (pid_t)v);
	}
	free(s);
	if (depth > 32 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			cgroup_walk(path, out, n, depth + 1);
		}
	closedir(d);
}

size_t procsel_by_cgroup(const char *cgdir, pid_t **out)
{
	size_t n = 0;

	*out = NULL;
	cgroup_walk(cgdir, out, &n, 0);
	qsort(*out, n, sizeof(**out), pid_cmp);
	return n;
}

bool procsel_has(const struct procsel *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->npids; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

static struct procsel_thread *thread_find(struct procsel *s, pid_t pid, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid && s->threads[i].pid == pid)
			return &s->threads[i];
	return NULL;
}

int procsel_policy(pid_t tid)
{
	int p = sched_getscheduler(tid);

	return p < 0 ? -1 : p & ~SCHED_RESET_ON_FORK;
}

int procsel_switch(struct procsel *s, pid_t pid, int policy)
{
	struct sched_param zero = { 0 };
	char path[64];
	struct dirent *de;
	int n = 0, err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	if (!procsel_has(s, pid))
		pid_add(&s->pids, &s->npids, pid);
	while ((de = readdir(d))) {
		pid_t tid = dir_pid(de->d_name);
		struct procsel_thread *t;
		struct sched_param sp;
		int cur, base;

		if (!tid || thread_find(s, pid, tid))
			continue;
		cur = sched_getscheduler(tid);
		if (cur < 0 || sched_getparam(tid, &sp))
			continue; /* exited meanwhile */
		base = cur & ~SCHED_RESET_ON_FORK;
		if (base != SCHED_OTHER && base != SCHED_BATCH && base != SCHED_IDLE &&
		    base != policy) {
			log_debug("attach: tid %d keeps its real-time policy %d", (int)tid, base);
			continue;
		}
		if (s->nthreads % 64 == 0)
			s->threads = xrealloc(s->threads, (s->nthreads + 64) * sizeof(*s->threads));
		t = &s->threads[s->nthreads++];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->pid = pid;
		/* Already in the class: a thread created since the switch. */
		t->policy = base == policy ? SCHED_OTHER : cur;
		t->priority = base == policy ? 0 : sp.sched_priority;
		if (base == policy) {
			t->switched = true;
			continue;
		}
		if (sched_setscheduler(tid, policy | (cur & SCHED_RESET_ON_FORK), &zero)) {
			err = -errno;
			log_debug("attach: tid %d: cannot switch to policy %d: %s", (int)tid,
				  policy, strerror(errno));
			continue;
		}
		t->switched = true;
		n++;
	}
	closedir(d);
	return n || !err ? n : err;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], *buf, *p;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = file_read(path, NULL);
	p = buf ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	free(buf);
	return (pid_t)ppid;
}

/* Processes forked by the switched ones (and theirs) during the window:
 * they inherited the class; their threads are reset like new threads. */
static void add_descendants(struct procsel *s)
{
	size_t before;
	int rounds = 0;

	do {
		DIR *d = opendir("/proc");
		struct dirent *de;

		before = s->npids;
		if (!d)
			return;
		while ((de = readdir(d))) {
			pid_t pid = dir_pid(de->d_name);

			if (pid && !procsel_has(s, pid) && procsel_has(s, parent_of(pid)))
				pid_add(&s->pids, &s->npids, pid);
		}
		closedir(d);
	} while (s->npids != before && ++rounds < 8);
}

void procsel_restore(struct procsel *s, int policy)
{
	struct sched_param zero = { 0 };
	size_t i;

	if (s->npids)
		add_descendants(s);
	for (i = 0; i < s->npids; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pids[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			pid_t tid = dir_pid(de->d_name);
			struct procsel_thread *t = tid ? thread_find(s, s->pids[i], tid) : NULL;

			if (t && t->switched) {
				struct sched_param sp = { .sched_priority = t->priority };

				if (!sched_setscheduler(tid, t->policy, &sp))
					s->restored++;
				t->switched = false;
			} else if (tid && !t && procsel_policy(tid) == policy &&
				   !sched_setscheduler(tid, SCHED_OTHER, &zero)) {
				s->reset++;
			}
		}
		closedir(d);
	}
	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].switched) {
			s->threads[i].switched = false;
			s->gone++;
		}
}

void procsel_free(struct procsel *s)
{
	free(s->pids);
	free(s->threads);
	memset(s, 0, sizeof(*s));
}
