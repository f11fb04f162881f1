// SPDX-License-Identifier: MIT
/* A cgroup v2 per run of the target (cgroup.h). */
#include "kernel/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/file.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* How long cgroup_destroy waits for killed processes to go. */
#define CG_EMPTY_WAIT_MS 2000

static struct {
	bool done;
	int err;    /* setup failed: -errno */
	char *base; /* ROOT/concsched */
	bool warned;
	unsigned next; /* run counter of this process */
} cg_state;

static void warn_once(const char *what, int err)
{
	if (cg_state.warned)
		return;
	cg_state.warned = true;
	log_warn("%s: %s; processes a run leaves behind are killed through its process group "
		 "instead (one that leaves the group survives the run)",
		 what, strerror(-err));
}

static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The cgroup2 mount point: /sys/fs/cgroup when it is one, else the first
 * cgroup2 line of /proc/self/mountinfo. malloc'd or NULL. */
static char *cgroup2_root(void)
{
	const char *env = getenv("CONCSCHED_CGROUP_ROOT");
	char line[4096], *found = NULL;
	FILE *f;

	if (env && *env)
		return xstrdup(env);
	if (is_cgroup2("/sys/fs/cgroup"))
		return xstrdup("/sys/fs/cgroup");
	f = fopen("/proc/self/mountinfo", "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64];
		char *dash = strstr(line, " - ");

		/* id parent maj:min root mountpoint options... - fstype ... */
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		found = xstrdup(mnt);
	}
	if (f)
		fclose(f);
	return found;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(s);

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

static void kill_path(const char *dir)
{
	char *p = xasprintf("%s/cgroup.kill", dir);
	char *procs, *s, *end;
	int round;

	if (!write_str(p, "1")) {
		free(p);
		return;
	}
	free(p);
	/* Before Linux 5.14: kill what cgroup.procs lists until it is empty
	 * (a process forking meanwhile shows up in the next round). */
	p = xasprintf("%s/cgroup.procs", dir);
	for (round = 0; round < 100; round++) {
		procs = file_read(p, NULL);
		if (!procs || !*procs) {
			free(procs);
			break;
		}
		for (s = procs; *s; s = end) {
			long pid = strtol(s, &end, 10);

			if (end == s)
				break;
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
		}
		free(procs);
		usleep(1000);
	}
	free(p);
}

static bool populated_path(const char *dir)
{
	char *p = xasprintf("%s/cgroup.procs", dir);
	char *procs = file_read(p, NULL);
	bool pop = procs && *procs;

	free(p);
	free(procs);
	return pop;
}

/* Kill, wait until empty (up to wait_ms), rmdir. 0 or -errno. */
static int destroy_path(const char *dir, unsigned wait_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)wait_ms * 1000000ULL;
	int err;

	kill_path(dir);
	for (;;) {
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		err = -errno;
		if (err != -EBUSY || now_ns() >= deadline)
			return err;
		if (populated_path(dir))
			kill_path(dir);
		usleep(1000);
	}
}

/* Cgroups of a concsched that is gone (SIGKILL): empty and remove them. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		unsigned n;
		char *p;
		int pid;

		if (sscanf(e->d_name, "%d-%u", &pid, &n) != 2 || pid <= 0 || pid == (int)getpid() ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		p = xasprintf("%s/%s", base, e->d_name);
		if (destroy_path(p, 200))
			log_debug("cannot remove the stale cgroup %s", p);
		else
			log_debug("removed the cgroup %s of a concsched that is gone", p);
		free(p);
	}
	if (d)
		closedir(d);
}

/* Once per process, under cg_lock: -j N workers create their first
 * cgroups at the same moment (unlocked, one of them once saw `done` before
 * `base` was set, made no cgroup and left its run's setsid child alive). */
static int setup_locked(void)
{
	char *root;
	int err;

	if (cg_state.done)
		return cg_state.err;
	cg_state.done = true;
	root = cgroup2_root();
	if (!root || !is_cgroup2(root)) {
		cg_state.err = -ENOTSUP;
		if (!cg_state.warned) {
			cg_state.warned = true;
			log_warn("no cgroup v2 %s%s; processes a run leaves behind are killed "
				 "through its process group instead (one that leaves the group "
				 "survives the run)",
				 root ? "at " : "mounted", root ? root : "");
		}
		free(root);
		return cg_state.err;
	}
	cg_state.base = xasprintf("%s/concsched", root);
	free(root);
	if (mkdir(cg_state.base, 0755) && errno != EEXIST) {
		char *what;

		err = -errno;
		what = xasprintf("cannot create the cgroup %s", cg_state.base);
		warn_once(what, err);
		free(what);
		cg_state.err = err;
		return err;
	}
	sweep_stale(cg_state.base);
	return 0;
}

static int setup(void)
{
	static struct futex_lock cg_lock;
	int err;

	futex_lock_acquire(&cg_lock);
	err = setup_locked();
	futex_lock_release(&cg_lock);
	return err;
}

int cgroup_create(struct run_cgroup *cg)
{
	char *p;
	int err;

	cg->path = NULL;
	cg->killed = false;
	err = setup();
	if (err)
		return err;
	p = xasprintf("%s/%d-%u", cg_state.base, (int)getpid(),
		      __atomic_add_fetch(&cg_state.next, 1, __ATOMIC_RELAXED));
	if (mkdir(p, 0755) && errno != EEXIST) {
		char *what;

		err = -errno;
		what = xasprintf("cannot create the cgroup %s", p);
		warn_once(what, err);
		free(what);
		free(p);
		return err;
	}
	cg->path = p;
	return 0;
}

int cgroup_add(struct run_cgroup *cg, pid_t pid)
{
	char *p, buf[32], *what;
	int err;

	if (!cg->path)
		return -ENOENT;
	p = xasprintf("%s/cgroup.procs", cg->path);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	err = write_str(p, buf);
	if (err) {
		what = xasprintf("cannot move the target into the cgroup %s", cg->path);
		warn_once(what, err);
		free(what);
	}
	free(p);
	return err;
}

void cgroup_kill(struct run_cgroup *cg)
{
	if (cg->path) {
		kill_path(cg->path);
		cg->killed = true;
	}
}

bool cgroup_populated(const struct run_cgroup *cg)
{
	return cg->path && populated_path(cg->path);
}

bool cgroup_reusable(const struct run_cgroup *cg)
{
	return cg->path && !cg->killed && !populated_path(cg->path);
}

void cgroup_destroy(struct run_cgroup *cg)
{
	int err;

	if (!cg->path)
		return;
	err = destroy_path(cg->path, CG_EMPTY_WAIT_MS);
	if (err)
		log_warn("cannot remove the cgroup %s: %s (a later concsched removes it)", cg->path,
			 strerror(-err));
	free(cg->path);
	cg->path = NULL;
}

int cgroup_id_level(const char *path, uint64_t *id, uint32_t *level)
{
	char real[PATH_MAX];
	const char *p;
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISDIR(st.st_mode)) {
		log_err("--cgroup %s: no such cgroup directory", path);
		return -ENOENT;
	}
	if (strncmp(real, "/sys/fs/cgroup", 14)) {
		log_err("--cgroup %s: not under /sys/fs/cgroup (cgroup v2)", path);
		return -EINVAL;
	}
	*id = st.st_ino; /* cgroup v2: the directory's inode is the cgroup id */
	*level = 0;
	for (p = real + 14; *p; p++)
		if (*p == '/' && p[1])
			(*level)++;
	return 0;
}
