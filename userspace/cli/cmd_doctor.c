// SPDX-License-Identifier: MIT
/*
 * concsched doctor: what this machine can do. One line per check, one line
 * per problem saying what to do, exit 0 only when `run` works here (natively
 * or through --vm).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/cmd_doctor.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/self.h"
#include "lib/xalloc.h"
#include "vm/vm.h"

static bool path_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static bool ksym_exists(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %255s", sym) == 1 && !strcmp(sym, name))
			found = true;
	fclose(f);
	return found;
}

static bool has_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	unsigned need[] = { 39 /* CAP_BPF */, 38 /* CAP_PERFMON */ };
	size_t i;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d))
		return false;
	if (d[0].effective & (1u << 21)) /* CAP_SYS_ADMIN covers both */
		return true;
	for (i = 0; i < ARRAY_SIZE(need); i++)
		if (!(d[need[i] / 32].effective & (1u << (need[i] % 32))))
			return false;
	return true;
}

void cmd_doctor_probe(struct doctor_report *r)
{
	struct utsname u;
	char *state;
	char *kpath;

	memset(r, 0, sizeof(*r));
	uname(&u);
	snprintf(r->kernel, sizeof(r->kernel), "%s", u.release);
	r->sched_ext = path_exists("/sys/kernel/sched_ext");
	state = r->sched_ext ? file_read_line("/sys/kernel/sched_ext/state") : NULL;
	snprintf(r->sched_ext_state, sizeof(r->sched_ext_state), "%s", state ? state : "absent");
	free(state);
	r->btf = path_exists("/sys/kernel/btf/vmlinux");
	r->uprobes = path_exists("/sys/bus/event_source/devices/uprobe");
	r->uprobe_multi = ksym_exists("bpf_uprobe_multi_link_attach");
	r->privileged = has_caps();
	r->libbpf_major = libbpf_major_version();
	r->libbpf_minor = libbpf_minor_version();
	kpath = xasprintf("%s/kernel/current/vmlinuz", self_cache_dir());
	r->vm_kernel = path_exists(kpath);
	if (r->vm_kernel) {
		char *vp = xasprintf("%s/kernel/current/version", self_cache_dir());
		char *v = file_read_line(vp);

		snprintf(r->vm_kernel_version, sizeof(r->vm_kernel_version), "%s", v ? v : "?");
		free(v);
		free(vp);
	}
	free(kpath);
	r->qemu = system("command -v qemu-system-x86_64 >/dev/null 2>&1") == 0;
	r->kvm = vm_host_kvm_usable();
	r->libbpf_ok = r->libbpf_major > 1 || (r->libbpf_major == 1 && r->libbpf_minor >= 4);
	r->native_ok = r->sched_ext && r->btf && r->uprobes && r->privileged && r->libbpf_ok;
	r->observe_ok = r->btf && r->uprobes && r->privileged && r->libbpf_ok;
	r->vm_ok = r->vm_kernel && r->qemu;
}

/* Debian 13 (trixie): its backported kernel has sched_ext. The file is
 * /etc/os-release ($CONCSCHED_OS_RELEASE in the tests). */
static bool debian_13(void)
{
	const char *p = getenv("CONCSCHED_OS_RELEASE");
	char *os = file_read(p && *p ? p : "/etc/os-release", NULL);
	bool yes = os && strstr(os, "\nID=debian") && strstr(os, "VERSION_ID=\"13\"");

	free(os);
	return yes;
}

static void line(const char *what, bool good, const char *detail)
{
	printf("%-14s %-4s %s\n", what, good ? "ok" : "--", detail);
}

static void print_text(const struct doctor_report *r)
{
	char buf[256];

	line("kernel", true, r->kernel);
	snprintf(buf, sizeof(buf), "%s", r->sched_ext ? r->sched_ext_state : "not in this kernel");
	line("sched_ext", r->sched_ext, buf);
	line("BTF", r->btf, r->btf ? "/sys/kernel/btf/vmlinux" : "missing");
	line("uprobes", r->uprobes, r->uprobes ? "supported" : "missing (CONFIG_UPROBE_EVENTS)");
	line("uprobe_multi", r->uprobe_multi,
	     r->uprobe_multi ? "supported" : "not found (needs Linux >= 6.6; or not root)");
	line("privileges", r->privileged,
	     r->privileged ? "root or CAP_BPF+CAP_PERFMON" : "missing CAP_BPF/CAP_PERFMON");
	snprintf(buf, sizeof(buf), "%d.%d%s", r->libbpf_major, r->libbpf_minor,
		 r->libbpf_ok ? "" : " (need >= 1.4)");
	line("libbpf", r->libbpf_ok, buf);
	snprintf(buf, sizeof(buf), "%s", r->vm_kernel ? r->vm_kernel_version : "not cached");
	line("VM kernel", r->vm_kernel, buf);
	line("qemu", r->qemu, r->qemu ? "qemu-system-x86_64" : "missing");
	line("KVM", r->kvm,
	     r->kvm ? "hardware KVM usable" : "not usable: the VM runs under TCG (slower)");

	if (!r->privileged)
		printf("problem: no BPF privileges: run as root (%s ...)\n", self_command(true));
	if (!r->btf)
		printf("problem: kernel has no BTF: boot a kernel with CONFIG_DEBUG_INFO_BTF=y, "
		       "or use --vm\n");
	if (!r->libbpf_ok)
		printf("problem: libbpf too old: install libbpf >= 1.4 (sudo make deps)\n");
	if (!r->sched_ext)
		printf("problem: kernel %s lacks sched_ext: use 'concsched run --vm', or "
		       "'concsched observe' (no scheduling control)\n",
		       r->kernel);
	if (!r->sched_ext && debian_13())
		printf("advice: Debian 13 gets sched_ext on the host from trixie-backports' "
		       "kernel:\n"
		       "  echo 'deb http://deb.debian.org/debian trixie-backports main' |\n"
		       "    sudo tee /etc/apt/sources.list.d/trixie-backports.list\n"
		       "  sudo apt-get update && sudo apt-get install -t trixie-backports "
		       "linux-image-amd64\n"
		       "  then reboot into it (the VM tests run on that kernel too: make "
		       "test-kernels)\n");
	if (!r->native_ok && !r->vm_kernel)
		printf("problem: no VM kernel cached: run 'sudo make deps' "
		       "(fetches Debian sid's sched_ext kernel)\n");
	if (!r->native_ok && !r->qemu)
		printf("problem: qemu-system-x86_64 missing: apt-get install qemu-system-x86\n");
	if (r->native_ok)
		printf("verdict: concsched run works natively here\n");
	else if (r->vm_ok)
		printf("verdict: concsched run works here with --vm%s\n",
		       r->observe_ok ? "; observe works natively" : "");
	else
		printf("verdict: concsched run cannot work here yet (fix the problems above)\n");
}

static void print_json(const struct doctor_report *r)
{
	struct json j;

	json_init(&j, stdout, true);
	json_obj_begin(&j, NULL);
	json_kv_str(&j, "kernel", r->kernel);
	json_kv_bool(&j, "sched_ext", r->sched_ext);
	json_kv_str(&j, "sched_ext_state", r->sched_ext_state);
	json_kv_bool(&j, "btf", r->btf);
	json_kv_bool(&j, "uprobes", r->uprobes);
	json_kv_bool(&j, "uprobe_multi", r->uprobe_multi);
	json_kv_bool(&j, "privileged", r->privileged);
	json_obj_begin(&j, "libbpf");
	json_kv_int(&j, "major", r->libbpf_major);
	json_kv_int(&j, "minor", r->libbpf_minor);
	json_kv_bool(&j, "ok", r->libbpf_ok);
	json_obj_end(&j);
	json_kv_str(&j, "vm_kernel", r->vm_kernel ? r->vm_kernel_version : NULL);
	json_kv_bool(&j, "qemu", r->qemu);
	json_kv_bool(&j, "kvm", r->kvm);
	json_kv_bool(&j, "run_native", r->native_ok);
	json_kv_bool(&j, "run_vm", r->vm_ok);
	json_kv_bool(&j, "observe", r->observe_ok);
	json_obj_end(&j);
	json_end(&j);
}

static void doctor_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched doctor [--json]\n\n"
		"Check kernel, BPF, privileges and the VM, and say how concsched can run here.\n"
		"Exit status 0 when 'concsched run' works (natively or with --vm), 1 otherwise.\n\n"
		"Examples:\n"
		"  sudo concsched doctor\n"
		"  sudo concsched doctor --json | jq .run_vm\n");
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct doctor_report r;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			doctor_usage(stdout);
			return 0;
		default:
			doctor_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		log_err("doctor: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	cmd_doctor_probe(&r);
	if (json)
		print_json(&r);
	else
		print_text(&r);
	return r.native_ok || r.vm_ok ? 0 : 1;
}
