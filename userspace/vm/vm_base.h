/* SPDX-License-Identifier: MIT */
/*
 * The VM's base initramfs (vm.c, step 1): a static busybox and
 * tools/vm-init.sh as /init, cached under self_cache_dir()/vm keyed by the
 * content hash of both, with the list of busybox's applets beside it.
 */
#ifndef CONCSCHED_VM_BASE_H
#define CONCSCHED_VM_BASE_H

#include <stddef.h>

struct vm_base {
	char *cpio;	   /* cached base archive */
	char *applets;	   /* cached `busybox --list` output */
	char *applet_list; /* its contents */
};

/* Guest paths the base archive provides (per-run archives skip them). */
extern const char *const vm_base_dirs[];
extern const size_t vm_base_ndirs;

/* The cached base archive, made when missing: 0 or -errno (one line said). */
int vm_base_get(struct vm_base *b);
void vm_base_free(struct vm_base *b);

#endif
