/* SPDX-License-Identifier: MIT */
/* A campaign command inside the sched_ext VM (vm_campaign.c). */
#ifndef CONCSCHED_VM_CAMPAIGN_H
#define CONCSCHED_VM_CAMPAIGN_H

/* Run `concsched ARGV...` in the VM with the guest's /out received into a
 * temporary directory next to host_out, then move /out/SUB (if sub) to
 * host_out. carry: host files the guest needs. Returns the exit status. */
int run_in_vm(char **guest_argv, const char *host_out, const char *sub, const char *const *carry,
	      unsigned timeout_s, unsigned cpus);

#endif
