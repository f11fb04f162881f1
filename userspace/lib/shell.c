// SPDX-License-Identifier: MIT
/* Commands as a POSIX shell sees them (shell.h). */
#include "lib/shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"

char *shell_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *found = NULL;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path && !found) {
		size_t len = strcspn(path, ":");
		char *cand = xasprintf("%.*s/%s", (int)len, path, name);
		struct stat st;

		if (len && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
		path += len + (path[len] == ':');
	}
	return found;
}

const char *shell_quote(const char *s, char *buf, size_t len)
{
	size_t pos = 0;
	const char *p;

	if (!len)
		return buf;
	if (*s && !strpbrk(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~")) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	if (len < 3) {
		buf[0] = '\0';
		return buf;
	}
	buf[pos++] = '\'';
	for (p = s; *p && pos + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + pos, "'\\''", 4);
			pos += 4;
		} else {
			buf[pos++] = *p;
		}
	}
	buf[pos++] = '\'';
	buf[pos] = '\0';
	return buf;
}
