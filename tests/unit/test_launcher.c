// SPDX-License-Identifier: MIT
/* launcher.c: the gate holds the child, exec errors come back as errno,
 * timeouts and group kills work, output redirection works; each launched
 * from the main thread and from another (a -j worker's), whose children
 * are the process's too. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/launcher.h"
#include "tap.h"
#include "lib/file.h"
#include "lib/now.h"
#include "lib/xalloc.h"

/* Processes of group pgid that are not zombies (a killed orphan may stay a
 * zombie until init reaps it; that is not a survivor). */
static int live_in_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], *buf, *rp;
		int pg = 0;
		char st = 0;

		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		buf = file_read(path, NULL);
		if (!buf)
			continue;
		rp = strrchr(buf, ')');
		if (rp && sscanf(rp + 2, "%c %*d %d", &st, &pg) == 2 && pg == pgid && st != 'Z')
			n++;
		free(buf);
	}
	if (d)
		closedir(d);
	return n;
}

static struct launch_opts opts(char *const *argv)
{
	struct launch_opts o = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };

	return o;
}

/* The parent of pid (/proc/PID/stat), or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], *buf, *rp;
	int pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = file_read(path, NULL);
	if (!buf)
		return -1;
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 2, "%*c %d", &pp) != 1)
		pp = -1;
	free(buf);
	return pp;
}

/* Launch o with its stdout to a pipe; what it wrote (at most len - 1
 * bytes). */
static const char *output_of(struct launch_opts *o, char *buf, size_t len)
{
	struct launch l;
	int p[2];
	ssize_t r;

	memset(buf, 0, len);
	if (pipe(p))
		exit(1);
	o->stdout_fd = p[1];
	launcher_prepare(o, &l);
	launcher_release(&l, o->argv[0]);
	close(p[1]);
	launcher_wait(&l, 5000);
	r = read(p[0], buf, len - 1);
	close(p[0]);
	return r > 0 ? buf : "";
}

/* Whether pid runs (a zombie does not). */
static bool running(pid_t pid)
{
	char path[64], *buf, *rp, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = file_read(path, NULL);
	if (!buf)
		return false;
	rp = strrchr(buf, ')');
	if (rp)
		st = rp[2];
	free(buf);
	return st && st != 'Z';
}

/* The cgroup a launch of o ran in (/proc/self/cgroup's v2 line), with
 * o's own_cgroup and keep_cg. */
static const char *cgroup_of(struct run_cgroup *kc, char *buf, size_t len)
{
	char *where[] = { "/bin/grep", "^0::", "/proc/self/cgroup", NULL };
	struct launch_opts o = opts(where);

	o.own_cgroup = true;
	o.keep_cg = kc;
	return output_of(&o, buf, len);
}

/* "0::/concsched/PID-N\n" for the cgroup directory path. */
static char *v2_line(const char *path)
{
	const char *c = path ? strstr(path, "/concsched/") : NULL;

	return xasprintf("0::%s\n", c ? c : "?");
}

/* A cgroup kept across launches (a campaign worker's): launches that leave
 * nothing share it; one that leaves a process outside its group has it
 * killed through the cgroup, which then goes (a killed cgroup is not
 * reused: cgroup.h), and the next launch makes another; destroy removes
 * it. */
static void kept_cgroup(const char *how)
{
	char *leaver[] = { "/bin/sh", "-c", "setsid sleep 100 </dev/null >/dev/null & echo $!",
			   NULL };
	struct run_cgroup kc = { 0 };
	struct launch_opts o;
	struct launch l;
	char buf[256] = { 0 }, *first, *want;
	pid_t left;
	int p[2];

	cgroup_of(&kc, buf, sizeof(buf));
	first = kc.path ? xstrdup(kc.path) : NULL;
	want = v2_line(first);
	tap_is_str(buf, want, "%s: a launch runs in the kept cgroup", how);
	tap_is_str(cgroup_of(&kc, buf, sizeof(buf)), want,
		   "%s: the next launch runs in the same one", how);
	free(want);

	o = opts(leaver);
	o.own_cgroup = true;
	o.keep_cg = &kc;
	if (pipe(p))
		exit(1);
	o.stdout_fd = p[1];
	launcher_prepare(&o, &l);
	/* A write to cgroup.procs takes a global lock and may wait for an
	 * RCU grace period: clone3 makes the child in its cgroup. */
	tap_ok(l.born_in_cg, "%s: the child is cloned into its cgroup, not moved in", how);
	launcher_release(&l, "sh");
	close(p[1]);
	launcher_wait(&l, 5000);
	if (read(p[0], buf, sizeof(buf) - 1) <= 0)
		buf[0] = 0;
	close(p[0]);
	left = (pid_t)atoi(buf);
	tap_ok(left > 0 && running(left), "%s: a launch left a process behind (%d)", how,
	       (int)left);
	launcher_end(&l);
	tap_ok(left > 0 && tap_poll(!running(left), 5000),
	       "%s: launcher_end killed it through the cgroup", how);
	tap_ok(!kc.path && first && access(first, F_OK) != 0,
	       "%s: ... and removed the killed cgroup", how);

	cgroup_of(&kc, buf, sizeof(buf));
	want = v2_line(kc.path);
	tap_ok(kc.path && first && strcmp(kc.path, first), "%s: the next launch makes another (%s)",
	       how, kc.path ? kc.path : "none");
	tap_is_str(buf, want, "%s: ... and runs in it", how);
	free(want);
	free(first);

	/* Killed while empty (a run killed at its timeout, a cancelled
	 * launch): the next launch does not clone into it, where it would
	 * die at birth. */
	first = kc.path ? xstrdup(kc.path) : NULL;
	cgroup_kill(&kc);
	cgroup_of(&kc, buf, sizeof(buf));
	want = v2_line(kc.path);
	tap_ok(kc.path && first && strcmp(kc.path, first),
	       "%s: after a kill of the empty cgroup, the next launch makes another", how);
	tap_is_str(buf, want, "%s: ... and runs in it", how);
	free(want);
	free(first);
	first = kc.path ? xstrdup(kc.path) : NULL;
	cgroup_destroy(&kc);
	tap_ok(!kc.path && first && access(first, F_OK) != 0, "%s: cgroup_destroy removes it", how);
	free(first);
}

/* The calling thread's Cpus_allowed_list, with its newline. */
static void thread_cpus(char *buf, size_t len)
{
	FILE *f = fopen("/proc/thread-self/status", "re");
	char line[256];

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			snprintf(buf, len, "%s", line + 18 + strspn(line + 18, " \t"));
	if (f)
		fclose(f);
}

/* A caller that keeps to one CPU (a -j worker, campaign.c) gives its
 * child launch_opts.cpus; without them the child inherits the one CPU. */
static void kept_cpu(const char *how)
{
	char *cpus_of[] = { "/usr/bin/awk", "/^Cpus_allowed_list:/ { print $2 }",
			    "/proc/self/status", NULL };
	char all[64], one[64], buf[64];
	cpu_set_t set, pin;
	int cpu;
	struct launch_opts o;

	thread_cpus(all, sizeof(all));
	sched_getaffinity(0, sizeof(set), &set);
	for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
		;
	CPU_ZERO(&pin);
	CPU_SET(cpu, &pin);
	snprintf(one, sizeof(one), "%d\n", cpu);
	pthread_setaffinity_np(pthread_self(), sizeof(pin), &pin);
	o = opts(cpus_of);
	o.cpus = &set;
	tap_is_str(output_of(&o, buf, sizeof(buf)), all,
		   "%s, kept to CPU %d: the child takes the CPUs it is given", how, cpu);
	o = opts(cpus_of);
	tap_is_str(output_of(&o, buf, sizeof(buf)), one,
		   "%s, kept to CPU %d: without them it inherits the caller's", how, cpu);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* What launcher_at_exec's callback saw: the state and image of the child. */
struct at_exec_seen {
	char state;
	bool exe_is_prog;
};

static void see_at_exec(pid_t pid, void *arg)
{
	struct at_exec_seen *seen = arg;
	char path[64], exe[256] = "", *buf, *rp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = file_read(path, NULL);
	rp = buf ? strrchr(buf, ')') : NULL;
	if (rp)
		sscanf(rp + 2, "%c", &seen->state);
	free(buf);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	seen->exe_is_prog = n > 0 && !strcmp(exe, "/usr/bin/true");
}

/* stop_at_exec: the child stands stopped in its new image until the
 * callback returns, then runs to its end (sites --shared reads main's
 * stack that way). */
static void stopped_at_exec(const char *how)
{
	char *const argv[] = { "/usr/bin/true", NULL };
	struct launch_opts o = opts(argv);
	struct launch l;
	struct at_exec_seen seen = { 0 };
	int rc;

	o.stop_at_exec = true;
	if (launcher_prepare(&o, &l) || launcher_release(&l, argv[0])) {
		tap_ok(0, "%s: stop_at_exec launch", how);
		tap_ok(0, "%s: stop_at_exec runs on", how);
		return;
	}
	rc = launcher_at_exec(&l, see_at_exec, &seen);
	tap_ok(rc == 0 && seen.state == 't' && seen.exe_is_prog,
	       "%s: stop_at_exec: the callback sees the child stopped in its new image (%c)", how,
	       seen.state ? seen.state : '?');
	tap_ok(launcher_wait(&l, 5000) == 1 && WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0,
	       "%s: stop_at_exec: let go, it runs to its end (exit 0)", how);
}

static void cases(const char *how)
{
	char *sh_exit3[] = { "/bin/sh", "-c", "exit 3", NULL };
	char *sleeper[] = { "/bin/sh", "-c", "sleep 100 & sleep 100", NULL };
	char *missing[] = { "/nonexistent/prog", NULL };
	char *touch[] = { "/bin/sh", "-c", "echo ran > \"$0\"", "/tmp/concsched-launch-test",
			  NULL };
	char *echo[] = { "/bin/echo", "hello", NULL };
	char *pwd[] = { "/bin/sh", "-c", "pwd", NULL };
	struct launch_opts o;
	struct launch l;
	char buf[64] = { 0 };
	uint64_t t0;
	int r;

	unlink("/tmp/concsched-launch-test");
	o = opts(touch);
	tap_is_int(launcher_prepare(&o, &l), 0, "%s: prepare makes a gated child", how);
	tap_is_int(parent_of(l.pid), getpid(), "%s: the child is ours", how);
	usleep(100000);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) != 0,
	       "%s: child does not run before the gate opens", how);
	tap_is_int(launcher_release(&l, "sh"), 0, "%s: release execs", how);
	launcher_wait(&l, 0);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) == 0,
	       "%s: child ran after the gate opened", how);
	unlink("/tmp/concsched-launch-test");

	o = opts(sh_exit3);
	launcher_prepare(&o, &l);
	launcher_release(&l, "sh");
	r = launcher_wait(&l, 5000);
	tap_ok(r == 1 && WIFEXITED(l.status) && WEXITSTATUS(l.status) == 3,
	       "%s: exit status 3 is reported", how);

	o = opts(missing);
	launcher_prepare(&o, &l);
	tap_is_int(launcher_release(&l, "/nonexistent/prog"), -ENOENT,
		   "%s: exec failure returns -ENOENT", how);

	o = opts(sleeper);
	launcher_prepare(&o, &l);
	launcher_release(&l, "sh");
	t0 = now_ns();
	tap_is_int(launcher_wait(&l, 200), 0, "%s: wait times out on a hanging child", how);
	launcher_kill(&l);
	tap_ok(now_ns() - t0 < 3e9 * tap_scale() && l.reaped,
	       "%s: kill reaps the group leader promptly", how);
	tap_ok(tap_poll(live_in_group(l.pid) == 0, 5000), "%s: no process of the group survives",
	       how);

	o = opts(echo);
	tap_is_str(output_of(&o, buf, sizeof(buf)), "hello\n",
		   "%s: stdout redirection captures output", how);

	o = opts(pwd);
	o.cwd = "/tmp";
	tap_is_str(output_of(&o, buf, sizeof(buf)), "/tmp\n",
		   "%s: the child runs in the working directory asked", how);

	kept_cgroup(how);
	kept_cpu(how);
	stopped_at_exec(how);
}

static void *cases_thread(void *arg)
{
	cases(arg);
	return NULL;
}

int main(void)
{
	pthread_t th;

	tap_plan(54);
	cases("main thread");
	/* A -j worker launches from a thread of its own, with SIGINT,
	 * SIGTERM and SIGHUP blocked (campaign.c run_worker_main). */
	if (pthread_create(&th, NULL, cases_thread, "another thread") || pthread_join(th, NULL))
		return 1;
	return tap_done();
}
