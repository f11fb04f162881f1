// SPDX-License-Identifier: MIT
/* launcher.c: the gate holds the child, exec errors come back as errno,
 * timeouts and group kills work, output redirection works. */
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

int main(void)
{
	char *sh_exit3[] = { "/bin/sh", "-c", "exit 3", NULL };
	char *sleeper[] = { "/bin/sh", "-c", "sleep 100 & sleep 100", NULL };
	char *missing[] = { "/nonexistent/prog", NULL };
	char *touch[] = { "/bin/sh", "-c", "echo ran > \"$0\"", "/tmp/concsched-launch-test",
			  NULL };
	char *echo[] = { "/bin/echo", "hello", NULL };
	struct launch_opts o;
	struct launch l;
	char buf[64] = { 0 };
	int p[2];
	uint64_t t0;
	int r;

	tap_plan(10);

	unlink("/tmp/concsched-launch-test");
	o = opts(touch);
	tap_is_int(launch_prepare(&o, &l), 0, "prepare forks a gated child");
	usleep(100000);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) != 0,
	       "child does not run before the gate opens");
	tap_is_int(launch_release(&l, "sh"), 0, "release execs");
	launch_wait(&l, 0);
	tap_ok(access("/tmp/concsched-launch-test", F_OK) == 0, "child ran after the gate opened");
	unlink("/tmp/concsched-launch-test");

	o = opts(sh_exit3);
	launch_prepare(&o, &l);
	launch_release(&l, "sh");
	r = launch_wait(&l, 5000);
	tap_ok(r == 1 && WIFEXITED(l.status) && WEXITSTATUS(l.status) == 3,
	       "exit status 3 is reported");

	o = opts(missing);
	launch_prepare(&o, &l);
	tap_is_int(launch_release(&l, "/nonexistent/prog"), -ENOENT,
		   "exec failure returns -ENOENT");

	o = opts(sleeper);
	launch_prepare(&o, &l);
	launch_release(&l, "sh");
	t0 = now_ns();
	tap_is_int(launch_wait(&l, 200), 0, "wait times out on a hanging child");
	launch_kill(&l);
	tap_ok(now_ns() - t0 < 3000000000ULL && l.reaped, "kill reaps the group leader promptly");
	usleep(50000);
	tap_is_int(live_in_group(l.pid), 0, "no process of the group survives");

	if (pipe(p))
		return 1;
	o = opts(echo);
	o.stdout_fd = p[1];
	launch_prepare(&o, &l);
	launch_release(&l, "echo");
	close(p[1]);
	launch_wait(&l, 5000);
	r = read(p[0], buf, sizeof(buf) - 1);
	tap_is_str(r > 0 ? buf : "", "hello\n", "stdout redirection captures output");
	return tap_done();
}
