/* SPDX-License-Identifier: MIT */
/*
 * What the controller needs to know about the program under test before it
 * launches it: where it is, whether it is an x86-64 ELF executable, static or
 * dynamic, stripped or not. target_inspect() is the single place bad-input
 * errors for the program come from.
 */
#ifndef CONCSCHED_TARGET_H
#define CONCSCHED_TARGET_H

#include <limits.h>
#include <stdbool.h>

struct target_info {
	char path[PATH_MAX]; /* absolute, symlinks resolved */
	bool is_static;	     /* no PT_INTERP: probe its own pthread copy */
	bool is_pie;	     /* ET_DYN */
	bool has_symtab;     /* false: stripped, sites as object+offset */
	bool has_debuginfo;  /* .debug_info present: file:line available */
	char hash[17];	     /* content hash (identifies "the same program") */
};

/* Resolve NAME like execvp does (PATH search when it has no '/') and check
 * it. On failure prints one actionable line and returns -errno-ish. */
int target_inspect(const char *name, struct target_info *ti);

#endif
