/* SPDX-License-Identifier: MIT */
/* Directory trees: mkdir -p, rm -rf, cp -a, mv. 0 or -errno. */
#ifndef CONCSCHED_TREE_H
#define CONCSCHED_TREE_H

/* mkdir -p. */
int tree_mkdir_p(const char *path, unsigned mode);
/* rm -rf PATH without following symlinks (ENOENT is 0). */
int tree_remove(const char *path);
/* cp -a FROM TO (directories, regular files with their modes, symlinks);
 * TO must not exist. A partial TO is removed. */
int tree_copy(const char *from, const char *to);
/* mv FROM TO: rename(2), or across filesystems (EXDEV) a copy and the
 * removal of FROM. */
int tree_move(const char *from, const char *to);

#endif
