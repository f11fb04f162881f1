/* SPDX-License-Identifier: MIT */
/* Where this concsched is, how the user types it, and where it keeps its cache. */
#ifndef CONCSCHED_SELF_H
#define CONCSCHED_SELF_H

#include <stdbool.h>

/* $CONCSCHED_CACHE, else $XDG_CACHE_HOME/concsched, else ~/.cache/concsched
 * (same rule as tools/vm-kernel.sh). Returns a static buffer. */
const char *self_cache_dir(void);
/* Directory of the running binary (for tools/ and build/ lookups). */
const char *self_dir(void);
/* Find a helper script: $CONCSCHED_LIBDIR/NAME, <self>/../tools/NAME,
 * <self>/../lib/concsched/NAME. Returns malloc'd path or NULL. */
char *self_find_helper(const char *name);
/* How the user types this concsched again, for the commands it prints:
 * "concsched" when the one found on PATH is this binary, else the path of
 * the running binary (relative to the cwd when under it, "./x" in it),
 * with "sudo " in front when privileged and the invoking user is not root
 * (SUDO_USER set to another user, or euid != 0). In the VM the host's
 * answer comes in $CONCSCHED_HOST_CMD and $CONCSCHED_HOST_SUDO
 * (self_command_env). Static buffers, one per value of privileged. */
const char *self_command(bool privileged);
/* "CONCSCHED_HOST_CMD=..." and "CONCSCHED_HOST_SUDO=0|1" for a guest's
 * environment; static buffers. */
void self_command_env(const char **cmd, const char **sudo);

#endif
