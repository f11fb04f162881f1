// SPDX-License-Identifier: MIT
/* Where this concsched is and how the user types it (self.h). */
#include "lib/self.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array_size.h"
#include "lib/shell.h"
#include "lib/xalloc.h"

const char *self_cache_dir(void)
{
	static char buf[PATH_MAX];
	const char *e;

	if ((e = getenv("CONCSCHED_CACHE")) && *e)
		snprintf(buf, sizeof(buf), "%s", e);
	else if ((e = getenv("XDG_CACHE_HOME")) && *e)
		snprintf(buf, sizeof(buf), "%s/concsched", e);
	else
		snprintf(buf, sizeof(buf), "%s/.cache/concsched",
			 (e = getenv("HOME")) && *e ? e : "/root");
	return buf;
}

const char *self_dir(void)
{
	static char buf[PATH_MAX];
	ssize_t n;
	char *slash;

	if (buf[0])
		return buf;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0) {
		strcpy(buf, ".");
		return buf;
	}
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return buf;
}

char *self_find_helper(const char *name)
{
	const char *e = getenv("CONCSCHED_LIBDIR");
	const char *self = self_dir();
	char *cands[3];
	char *found = NULL;
	size_t i;

	cands[0] = e && *e ? xasprintf("%s/%s", e, name) : NULL;
	cands[1] = xasprintf("%s/../tools/%s", self, name);
	cands[2] = xasprintf("%s/../lib/concsched/%s", self, name);
	for (i = 0; i < ARRAY_SIZE(cands); i++) {
		if (!found && cands[i] && access(cands[i], X_OK) == 0)
			found = realpath(cands[i], NULL);
		free(cands[i]);
	}
	return found;
}

/* The invoking user is root: euid 0 and not a sudo from another user. */
static bool invoker_is_root(void)
{
	const char *su = getenv("SUDO_USER");

	return geteuid() == 0 && (!su || !*su || !strcmp(su, "root"));
}

/* This binary as the user would type it (see self_command). */
static const char *self_path(void)
{
	static char buf[PATH_MAX + 8];
	char *self, *onpath, *real = NULL, cwd[PATH_MAX];
	const char *show;
	size_t n;

	if (buf[0])
		return buf;
	self = realpath("/proc/self/exe", NULL);
	onpath = shell_find_in_path("concsched");
	if (onpath)
		real = realpath(onpath, NULL);
	if (!self || (real && !strcmp(real, self))) {
		snprintf(buf, sizeof(buf), "concsched");
	} else {
		show = self;
		if (getcwd(cwd, sizeof(cwd)) && (n = strlen(cwd)) > 1 && !strncmp(self, cwd, n) &&
		    self[n] == '/')
			show = self + n + 1;
		if (!strchr(show, '/')) {
			char *dot = xasprintf("./%s", show);

			shell_quote(dot, buf, sizeof(buf));
			free(dot);
		} else {
			shell_quote(show, buf, sizeof(buf));
		}
	}
	free(self);
	free(onpath);
	free(real);
	return buf;
}

const char *self_command(bool privileged)
{
	static char cmd[2][PATH_MAX + 16];
	const char *host = getenv("CONCSCHED_HOST_CMD"), *hsudo = getenv("CONCSCHED_HOST_SUDO");
	bool sudo;

	if (host && *host)
		sudo = hsudo && !strcmp(hsudo, "1");
	else
		sudo = !invoker_is_root();
	snprintf(cmd[privileged], sizeof(cmd[0]), "%s%s", privileged && sudo ? "sudo " : "",
		 host && *host ? host : self_path());
	return cmd[privileged];
}

void self_command_env(const char **cmd, const char **sudo)
{
	static char c[PATH_MAX + 32];

	snprintf(c, sizeof(c), "CONCSCHED_HOST_CMD=%s", self_command(false));
	*cmd = c;
	*sudo = !strncmp(self_command(true), "sudo ", 5) ? "CONCSCHED_HOST_SUDO=1"
							 : "CONCSCHED_HOST_SUDO=0";
}
