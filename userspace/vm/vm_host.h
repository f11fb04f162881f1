/* SPDX-License-Identifier: MIT */
/*
 * What the host offers the VM runner (vm.h): hardware KVM, and the cached
 * kernel to boot.
 */
#ifndef CONCSCHED_VM_HOST_H
#define CONCSCHED_VM_HOST_H

#include <stdbool.h>

/* KVM really works: the CPU has VMX/SVM, /dev/kvm opens, API version 12,
 * KVM_CREATE_VM succeeds. $CONCSCHED_VM_ACCEL=kvm|tcg overrides. */
bool vm_host_kvm_usable(void);

/* The cached VM kernel to boot: its vmlinux when it has a PVH entry note
 * (faster), else its vmlinuz; NULL with a "run: sudo make deps" line. */
char *vm_host_kernel_path(void);

#endif
