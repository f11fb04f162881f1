/* SPDX-License-Identifier: MIT */
/* A campaign command inside the sched_ext VM (vm_campaign.c). */
#ifndef CONCSCHED_VM_CAMPAIGN_H
#define CONCSCHED_VM_CAMPAIGN_H

#include <stddef.h>

/* Run `concsched ARGV...` in the VM. When sub, the guest's /out comes back
 * into a private scratch directory under $TMPDIR (or /tmp) and /out/SUB is
 * moved to host_out. carry: host files the guest needs. Returns the exit
 * status. */
int vm_campaign_run(char **guest_argv, const char *host_out, const char *sub,
		    const char *const *carry, unsigned timeout_s, unsigned cpus);
/* The same; records of kinds the campaign stream does not know (stream.h)
 * go to record_fn, which also turns the stream on without sub (a replay's
 * result). */
int vm_campaign_run_records(char **guest_argv, const char *host_out, const char *sub,
			    const char *const *carry, unsigned timeout_s, unsigned cpus,
			    int (*record_fn)(char kind, const void *data, size_t len, void *arg),
			    void *record_arg);

/* Remove what VM campaigns killed with SIGKILL left: scratch directories
 * of processes that are gone, and an empty host_out.vm-XXXXXX (older
 * versions put the scratch directory there). host_out may be NULL. */
void vm_campaign_scratch_sweep(const char *host_out);

#endif
