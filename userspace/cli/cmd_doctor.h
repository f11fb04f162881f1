/* SPDX-License-Identifier: MIT */
/* Machine capability probe shared by `doctor`, `run` (native or --vm?) and
 * `observe`. */
#ifndef CONCSCHED_CMD_DOCTOR_H
#define CONCSCHED_CMD_DOCTOR_H

#include <stdbool.h>

struct doctor_report {
	char kernel[128];
	bool sched_ext;
	char sched_ext_state[32];
	bool btf, uprobes, uprobe_multi, privileged;
	int libbpf_major, libbpf_minor;
	bool libbpf_ok;
	bool vm_kernel;
	char vm_kernel_version[64];
	bool qemu, kvm;
	bool native_ok; /* run works on this kernel */
	bool vm_ok;	/* run works through --vm */
	bool observe_ok;
};

void cmd_doctor_probe(struct doctor_report *r);

#endif
