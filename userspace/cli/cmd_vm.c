// SPDX-License-Identifier: MIT
/*
 * concsched vm: the command-line face of the VM runner (vm.h, docs/vm.md).
 * Parses the options into struct vm_opts, runs vm_run() and maps the
 * outcome to the exit status: the command's own, 124 timeout, 125 VM died,
 * 128+N interrupted, 2 usage/environment.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "vm/vm.h"

static void vm_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched vm [OPTIONS] -- COMMAND [ARGS...]\n\n"
		"Run COMMAND inside a qemu VM that boots the cached sched_ext kernel\n"
		"(tools/vm-kernel.sh; `sudo make deps` fetches it). The command, its shared\n"
		"libraries, concsched itself, every --carry path and every argument naming an\n"
		"existing file are copied into the guest at the same absolute paths. Its\n"
		"stdout and stderr stream back separately; files it writes under %s (also\n"
		"$CONCSCHED_OUT) come back into --out DIR, even when it fails or times out.\n"
		"The guest has busybox, /sys/kernel/sched_ext, BTF, debugfs, tracefs and bpffs.\n\n"
		"Options:\n"
		"  -t, --timeout SEC    kill the command after SEC seconds (exit status 124)\n"
		"  -b, --boot-limit SEC a boot that has not started the command after SEC\n"
		"                       seconds (or died before it) is tried again, 3 boots\n"
		"                       in all (default $CONCSCHED_VM_BOOT_LIMIT, else 120;\n"
		"                       exit status 125 when all fail)\n"
		"  -c, --cpus N         virtual CPUs (default 2)\n"
		"  -m, --mem MB         guest memory (default 1024; carried files live in it)\n"
		"  -C, --carry PATH     copy a host file or directory into the guest (repeatable)\n"
		"  -e, --env NAME=VAL   set an environment variable for the command (repeatable)\n"
		"  -o, --out DIR        receive the guest's %s into host directory DIR\n"
		"  -d, --cwd DIR        guest working directory (default: the current one)\n"
		"  -L, --keep-log FILE  save the guest kernel log to FILE\n"
		"  -v, --verbose        print the guest kernel log and timings\n"
		"  -h, --help           this text\n\n"
		"Exit status: the command's own (0-255; 128+N if killed by signal N), 124 when\n"
		"it timed out, 125 when the VM died under it (guest panic/oops: the kernel log\n"
		"tail is printed), 128+N when concsched got signal N (^C: 130), 2 on usage or "
		"environment errors (no\n"
		"VM kernel, no qemu, command not found).\n\n"
		"Examples:\n"
		"  concsched vm -- uname -r\n"
		"  concsched vm -- cat /sys/kernel/sched_ext/state\n"
		"  concsched vm --timeout 60 -- build/tests/programs/four_threads\n"
		"  concsched vm --carry build/bpf --out results -- sh -c 'ls /sys/kernel/btf > "
		"/out/btf'\n"
		"  concsched vm --cpus 4 --env SEED=7 -- concsched run ./prog\n",
		VM_GUEST_OUT, VM_GUEST_OUT);
}

static int parse_uint_opt(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v < min || v > max) {
		log_err("vm: %s wants a number from %u to %u, got '%s'", opt, min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static void push(const char ***list, size_t *n, const char *s)
{
	*list = xrealloc(*list, (*n + 2) * sizeof(**list));
	(*list)[(*n)++] = s;
	(*list)[*n] = NULL;
}

static int vm_exit_status(const struct vm_opts *o, const struct vm_result *r)
{
	if (log_verbose || o->show_log)
		fprintf(stderr,
			"concsched: vm: %s, boot-to-command %.2f s (guest kernel %.2f s), command "
			"%.2f s, whole run %.2f s, initramfs %.1f MB\n",
			r->accel, r->boot_s, r->guest_boot_s, r->cmd_s, r->total_s,
			r->initrd_bytes / 1e6);
	if (o->out_dir && !r->out_complete)
		log_warn("vm: %s may be incomplete: the guest did not finish sending %s",
			 o->out_dir, VM_GUEST_OUT);
	switch (r->outcome) {
	case VM_EXITED:
		return r->exit_code;
	case VM_TIMEOUT:
		log_err("vm: %s", r->reason);
		return VM_EXIT_TIMEOUT;
	case VM_INTERRUPTED:
		log_err("vm: %s; qemu stopped", r->reason);
		return 128 + r->signal;
	case VM_DIED:
	default:
		log_err("vm: %s", r->reason);
		return VM_EXIT_VM_DIED;
	}
}

int cmd_vm(int argc, char **argv)
{
	static const struct option opts[] = { { "timeout", required_argument, NULL, 't' },
					      { "boot-limit", required_argument, NULL, 'b' },
					      { "cpus", required_argument, NULL, 'c' },
					      { "mem", required_argument, NULL, 'm' },
					      { "carry", required_argument, NULL, 'C' },
					      { "env", required_argument, NULL, 'e' },
					      { "out", required_argument, NULL, 'o' },
					      { "cwd", required_argument, NULL, 'd' },
					      { "keep-log", required_argument, NULL, 'L' },
					      { "verbose", no_argument, NULL, 'v' },
					      { "help", no_argument, NULL, 'h' },
					      {} };
	struct vm_opts o = { .stdout_fd = -1, .stderr_fd = -1 };
	const char **carry = NULL, **env = NULL;
	size_t n_carry = 0, n_env = 0;
	struct vm_result r;
	int c, err, status = EXIT_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+t:b:c:m:C:e:o:d:L:vh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			err = parse_uint_opt("--timeout", optarg, 1, 86400 * 7, &o.timeout_s);
			break;
		case 'b':
			err = parse_uint_opt("--boot-limit", optarg, 1, 3600, &o.boot_limit_s);
			break;
		case 'c':
			err = parse_uint_opt("--cpus", optarg, 1, 64, &o.cpus);
			break;
		case 'm':
			err = parse_uint_opt("--mem", optarg, 128, 1 << 20, &o.mem_mb);
			break;
		case 'C':
			push(&carry, &n_carry, optarg);
			err = 0;
			break;
		case 'e':
			push(&env, &n_env, optarg);
			err = 0;
			break;
		case 'o':
			o.out_dir = optarg;
			err = 0;
			break;
		case 'd':
			o.cwd = optarg;
			err = 0;
			break;
		case 'L':
			o.keep_log = optarg;
			err = 0;
			break;
		case 'v':
			o.show_log = true;
			err = 0;
			break;
		case 'h':
			vm_usage(stdout);
			status = 0;
			goto cleanup;
		default:
			log_err("vm: see concsched vm --help");
			goto cleanup;
		}
		if (err)
			goto cleanup;
	}
	if (optind >= argc) {
		log_err("vm: no command given (concsched vm [OPTIONS] -- COMMAND [ARGS...])");
		goto cleanup;
	}
	o.show_log = o.show_log || log_verbose;
	o.argv = argv + optind;
	o.carry = carry;
	o.env = env;
	err = vm_run(&o, &r);
	if (err == -EINTR)
		status = 128 + SIGINT; /* ^C before qemu started */
	if (err)
		goto cleanup;
	status = vm_exit_status(&o, &r);
cleanup:
	free(carry);
	free(env);
	return status;
}
