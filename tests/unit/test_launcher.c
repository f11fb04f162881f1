// SPDX-License-Identifier: MIT
/* launcher.c: the gate holds the child, exec errors come back as errno,
 * timeouts and group kills work, output redirection works; each forked by
 * the controller and by a spawner (this binary exec'd as one: main's first
 * lines), whose children are ours. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/launcher.h"
#include "tap.h"
#include "lib/util.h"

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
		buf = read_file(path, NULL);
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
	buf = read_file(path, NULL);
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
	launch_prepare(o, &l);
	launch_release(&l, o->argv[0]);
	close(p[1]);
	launch_wait(&l, 5000);
	r = read(p[0], buf, len - 1);
	close(p[0]);
	return r > 0 ? buf : "";
}

static void cases(struct launch_spawner *sp, const char *how)
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
	o.spawner = sp;
	tap_is_int(launch_prepare(&o, &l), 0, "%s: prepare makes a gated child", how);
	tap_is_int(parent_of(l.pid), getpid(), "%s: the child is ours", how);
	usleep(100000);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) != 0,
	       "%s: child does not run before the gate opens", how);
	tap_is_int(launch_release(&l, "sh"), 0, "%s: release execs", how);
	launch_wait(&l, 0);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) == 0,
	       "%s: child ran after the gate opened", how);
	unlink("/tmp/concsched-launch-test");

	o = opts(sh_exit3);
	o.spawner = sp;
	launch_prepare(&o, &l);
	launch_release(&l, "sh");
	r = launch_wait(&l, 5000);
	tap_ok(r == 1 && WIFEXITED(l.status) && WEXITSTATUS(l.status) == 3,
	       "%s: exit status 3 is reported", how);

	o = opts(missing);
	o.spawner = sp;
	launch_prepare(&o, &l);
	tap_is_int(launch_release(&l, "/nonexistent/prog"), -ENOENT,
		   "%s: exec failure returns -ENOENT", how);

	o = opts(sleeper);
	o.spawner = sp;
	launch_prepare(&o, &l);
	launch_release(&l, "sh");
	t0 = now_ns();
	tap_is_int(launch_wait(&l, 200), 0, "%s: wait times out on a hanging child", how);
	launch_kill(&l);
	tap_ok(now_ns() - t0 < 3000000000ULL && l.reaped,
	       "%s: kill reaps the group leader promptly", how);
	usleep(50000);
	tap_is_int(live_in_group(l.pid), 0, "%s: no process of the group survives", how);

	o = opts(echo);
	o.spawner = sp;
	tap_is_str(output_of(&o, buf, sizeof(buf)), "hello\n",
		   "%s: stdout redirection captures output", how);

	o = opts(pwd);
	o.spawner = sp;
	o.cwd = "/tmp";
	tap_is_str(output_of(&o, buf, sizeof(buf)), "/tmp\n",
		   "%s: the child runs in the working directory asked", how);
}

int main(int argc, char **argv)
{
	struct launch_spawner sp = { 0 };
	pid_t spid;

	if (launch_spawner_is(argc, argv))
		return launch_spawner_main();
	tap_plan(27);
	cases(NULL, "fork");
	cases(&sp, "spawner");
	tap_ok(sp.pid > 0 && !sp.broken, "the spawner was started and kept");
	spid = sp.pid;
	tap_is_int(parent_of(spid), getpid(), "the spawner is ours");
	launch_spawner_stop(&sp);
	tap_ok(kill(spid, 0) != 0 && errno == ESRCH, "stopped: the spawner exited and was reaped");
	return tap_done();
}
