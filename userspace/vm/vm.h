/* SPDX-License-Identifier: MIT */
/*
 * The VM runner behind `concsched vm` and `run --vm` (docs/vm.md): boot the
 * cached sched_ext kernel (tools/vm-kernel.sh) under qemu with a busybox
 * initramfs that carries the command, its libraries and any files asked
 * for at their host paths; stream the command's stdout and stderr back on
 * two virtio-serial ports, its status on a third, the guest's /out as a
 * tar on a fourth, and (chan_fn) what the command streams on a fifth;
 * bound it with a timeout; always tear qemu down.
 */
#ifndef CONCSCHED_VM_H
#define CONCSCHED_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "vm/vm_host.h"

/* Where the guest's output directory lives (exported as CONCSCHED_OUT). */
#define VM_GUEST_OUT "/out"
/* cmd_vm's status when the guest enforced --timeout (like timeout(1)). */
#define VM_EXIT_TIMEOUT 124
/* cmd_vm's status when the VM died under the command (panic, oops, qemu). */
#define VM_EXIT_VM_DIED 125

/* What vm_opts.chan_fn receives. */
enum vm_chan {
	VM_CHAN_STDOUT,	 /* the command's stdout */
	VM_CHAN_STDERR,	 /* the command's stderr */
	VM_CHAN_STREAM,	 /* the port cs.stream (only with chan_fn): the guest finds
			  * it in $CONCSCHED_STREAM */
	VM_CHAN_STARTED, /* the command started; data is NULL, n the boot in ms */
};

/* Lists are NULL-terminated; a NULL list is empty. */
struct vm_opts {
	char *const *argv;	  /* command and arguments */
	unsigned timeout_s;	  /* command time limit in the guest; 0: none */
	unsigned boot_limit_s;	  /* qemu start -> command start; 0: 120 */
	unsigned cpus;		  /* 0: 2 */
	unsigned mem_mb;	  /* 0: 1024 */
	const char *const *carry; /* host files/dirs copied to the same path */
	const char *const *env;	  /* NAME=VALUE for the command */
	const char *out_dir;	  /* host dir receiving the guest's /out; NULL: none */
	const char *keep_log;	  /* copy the guest kernel log here; NULL: none */
	const char *cwd;	  /* guest working directory; NULL: the host's cwd */
	int stdout_fd;		  /* command stdout goes here; -1: STDOUT_FILENO */
	int stderr_fd;		  /* command stderr goes here; -1: STDERR_FILENO */
	bool show_log;		  /* print the kernel log even on success */
	/* When set: gets the command's output instead of stdout_fd/stderr_fd,
	 * the stream port's bytes, and the start of the command. */
	void (*chan_fn)(enum vm_chan chan, const void *data, size_t n, void *arg);
	void *chan_arg;
};

enum vm_outcome {
	VM_EXITED,	/* the command finished; exit_code holds its status */
	VM_TIMEOUT,	/* the command ran past timeout_s and was killed */
	VM_DIED,	/* guest kernel panic/oops, or qemu died: reason says which */
	VM_INTERRUPTED, /* SIGINT/SIGTERM/SIGHUP reached us; qemu was killed */
};

struct vm_result {
	enum vm_outcome outcome;
	int exit_code;			 /* VM_EXITED: 0-255, 128+N when killed by signal N */
	int signal;			 /* VM_INTERRUPTED: the signal we received */
	bool out_complete;		 /* the whole /out arrived (only with out_dir) */
	char reason[256];		 /* VM_DIED / VM_TIMEOUT: one line */
	char accel[8];			 /* "kvm" or "tcg" */
	double boot_s;			 /* qemu start -> command start (host clock) */
	double guest_boot_s;		 /* guest kernel start -> command start (guest uptime) */
	double cmd_s;			 /* command start -> command end (guest clock) */
	double total_s;			 /* vm_run() call -> return */
	unsigned long long initrd_bytes; /* size of the initramfs handed to qemu */
	int boot_attempts;		 /* boots tried: more than 1 when one stalled */
};

/* Boot, run o->argv in the guest, collect. Returns 0 when the VM ran (even
 * if the command failed, timed out or the guest died: see r->outcome), or
 * -errno when it could not start (no kernel, no qemu, command not found,
 * bad carry path; -EINTR: a signal came before qemu started): one actionable
 * line already printed. qemu never outlives
 * this call (nor the calling thread: PR_SET_PDEATHSIG). */
int vm_run(const struct vm_opts *o, struct vm_result *r);

#endif
