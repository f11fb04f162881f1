// SPDX-License-Identifier: MIT
/* Pure parts of userspace/kernel/sync.c: reading `ld.so --list`, recognising
 * entries x86 uprobes refuse and glibc's spin-lock shape, and finding the
 * probed functions in the system libc. */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/sync.h"
#include "kernel/symbolize.h"
#include "tap.h"

static const char ldso_out[] = "\tlinux-vdso.so.1 (0x00007ffd5a9f2000)\n"
			       "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0c)\n"
			       "\tlibc.so.6 => /opt/glibc/lib/libc.so.6 (0x00007f0c1a000000)\n"
			       "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c1a3f0000)\n";

static void write_fixture(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(b, 1, n, f);
	fclose(f);
}

/* The main program's executable segment as the dynamic linker mapped it
 * (its first dl_iterate_phdr entry): what sync_exec_segment must read
 * from the file. */
static int main_text(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sync_text *t = data;
	uint64_t base = 0;
	bool have_base = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (!have_base) {
			base = ph->p_vaddr & ~(uint64_t)0xfff;
			have_base = true;
		}
		if (ph->p_flags & PF_X) {
			t->off_lo = ph->p_offset;
			t->off_hi = ph->p_offset + ph->p_filesz;
			t->va_lo = ph->p_vaddr - base;
			t->va_hi = ph->p_vaddr + ph->p_memsz - base;
			break;
		}
	}
	return 1; /* the main program only */
}

static void test_exec_segment(const char *notelf)
{
	struct sync_text got, want = { 0 };

	dl_iterate_phdr(main_text, &want);
	tap_is_int(sync_exec_segment("/proc/self/exe", &got), 0,
		   "this test's executable segment read from its file");
	tap_ok(want.off_hi > want.off_lo && got.off_lo == want.off_lo && got.off_hi == want.off_hi,
	       "... its file offsets as the dynamic linker mapped them (0x%llx-0x%llx)",
	       (unsigned long long)want.off_lo, (unsigned long long)want.off_hi);
	tap_ok(got.va_lo == want.va_lo && got.va_hi == want.va_hi,
	       "... its addresses from the load base (0x%llx-0x%llx)",
	       (unsigned long long)want.va_lo, (unsigned long long)want.va_hi);
	tap_ok(sync_exec_segment(notelf, &got) < 0 && !got.off_hi, "not an ELF file: an error");
	tap_is_int(sync_exec_segment("/nonexistent/libc.so.6", &got), -ENOENT,
		   "missing file: -ENOENT");
}

int main(void)
{
	static const unsigned char spin[] = {
		0x90, 0xf0, 0xff, 0x0f, 0x75, 0x0b, 0x31, 0xc0, 0xc3
	};
	static const unsigned char push[] = { 0x41, 0x56, 0x41, 0x55, 0x55, 0x53, 0x90, 0x90 };
	static const unsigned char f0pfx[] = { 0x66, 0xf0, 0x0f, 0xb1, 0x17, 0x90, 0x90, 0x90 };
	/* mov 0x10(%rdi),%eax; mov %eax,%edx; and $0x17f,%edx; and $0x7c,%eax;
	 * jne +1; push %rbx; ret */
	static const unsigned char mlock[] = {
		0x8b, 0x47, 0x10, 0x89, 0xc2, 0x81, 0xe2, 0x7f, 0x01,
		0x00, 0x00, 0x83, 0xe0, 0x7c, 0x75, 0x01, 0x53, 0xc3
	};
	/* movl $1,(%rdi); jne +0; ret */
	static const unsigned char store[] = {
		0xc7, 0x07, 0x01, 0x00, 0x00, 0x00, 0x75, 0x00, 0xc3
	};
	/* mov %rsi,%rdi; jmp +0; ret */
	static const unsigned char rdi[] = { 0x48, 0x89, 0xf7, 0xeb, 0x00, 0xc3 };
	/* mov $1,%esi; jmp +0; ret */
	static const unsigned char esi[] = { 0xbe, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x00, 0xc3 };
	/* mov $1,%ecx; jmp +0; ret */
	static const unsigned char ecx[] = { 0xb9, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x00, 0xc3 };
	/* 0: mov (%rdi),%rax; 3: test %eax,%eax; 5: je +2; 7: jne 3; 9: ret */
	static const unsigned char loop[] = { 0x48, 0x8b, 0x07, 0x85, 0xc0,
					      0x74, 0x02, 0x75, 0xfa, 0xc3 };
	enum cs_sync_fn fns[CS_FN__COUNT];
	unsigned long offs[CS_FN__COUNT];
	char buf[sizeof(ldso_out)], path[256], fx[] = "/tmp/cs-test-probes-XXXXXX";
	char libs[256];
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	uint64_t off;
	int n, i, j, fd, dup;
	bool lock = false, spin_acq = false;
	int stdio = 0;

	tap_plan(37);
	memcpy(buf, ldso_out, sizeof(buf));
	tap_is_int(sync_parse_ldso_list(buf, "libc.so", path, sizeof(path)), 0,
		   "ld.so --list: libc found");
	tap_is_str(path, "/opt/glibc/lib/libc.so.6", "... the path after =>");
	memcpy(buf, ldso_out, sizeof(buf));
	tap_ok(sync_parse_ldso_list(buf, "libpthread.so", path, sizeof(path)) < 0,
	       "absent library: -ENOENT");
	tap_is_int((int)sync_parse_ldso_libs(ldso_out, libs, sizeof(libs)), 2,
		   "ld.so --list: the two libraries after =>");
	tap_ok(!strcmp(libs, "/lib/x86_64-linux-gnu/libm.so.6") &&
		       !strcmp(libs + strlen(libs) + 1, "/opt/glibc/lib/libc.so.6") &&
		       !libs[strlen(libs) + 1 + strlen("/opt/glibc/lib/libc.so.6") + 1],
	       "... each NUL-terminated, an empty name last");
	tap_is_int((int)sync_parse_ldso_libs(ldso_out, libs, 40), 1,
		   "... those past the room left out (the first fits in 40 bytes)");

	fd = mkstemp(fx);
	close(fd);
	write_fixture(fx, spin, sizeof(spin));
	tap_ok(sync_starts_with_lock_prefix(fx, 1), "lock decl: lock-prefixed entry");
	tap_ok(!sync_starts_with_lock_prefix(fx, 0), "nop: not lock-prefixed");
	off = 1;
	tap_ok(sync_spin_lock_success_return(fx, &off) && off == 6,
	       "spin-lock shape: success return at +5");
	write_fixture(fx, push, sizeof(push));
	off = 0;
	tap_ok(!sync_spin_lock_success_return(fx, &off) && off == 0,
	       "other code: not the spin-lock shape");
	tap_ok(!sync_starts_with_lock_prefix(fx, 0), "push: not lock-prefixed");
	write_fixture(fx, f0pfx, sizeof(f0pfx));
	tap_ok(sync_starts_with_lock_prefix(fx, 0), "lock behind an operand-size prefix");

	/* Where the entry probe sits (sync_probe_point). */
	write_fixture(fx, mlock, sizeof(mlock));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(mlock), CS_FN_MUTEX_LOCK), 14,
		   "mutex_lock shape: probe on the jne after four register-only loads");
	write_fixture(fx, push, sizeof(push));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(push), CS_FN_COND_WAIT), 0,
		   "push at the entry: probe stays on it (emulated)");
	write_fixture(fx, store, sizeof(store));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(store), CS_FN_SPIN_UNLOCK), 0,
		   "a store before the branch: probe stays on the entry");
	write_fixture(fx, rdi, sizeof(rdi));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(rdi), CS_FN_MUTEX_UNLOCK), 0,
		   "rdi (the object) written before the branch: stays on the entry");
	write_fixture(fx, esi, sizeof(esi));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(esi), CS_FN_MUTEX_UNLOCK), 5,
		   "mutex_unlock shape (mov $1,%%esi; jmp): probe on the jmp");
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(esi), CS_FN_COND_WAIT), 0,
		   "... but not for a function whose second argument the probe reads");
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(esi), CS_FN_FPUTS), 0,
		   "... nor for fputs (the stream is its second argument)");
	write_fixture(fx, ecx, sizeof(ecx));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(ecx), CS_FN_FWRITE), 0,
		   "fwrite (the stream in rcx): a write of ecx keeps the probe on the entry");
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(ecx), CS_FN_VFPRINTF), 5,
		   "vfprintf (the stream in rdi): the same code moves it to the jmp");
	write_fixture(fx, loop, sizeof(loop));
	tap_is_int((int)sync_probe_point(fx, 0, sizeof(loop), CS_FN_SEM_TRYWAIT), 0,
		   "a loop back into the prologue: stays on the entry");
	tap_is_int((int)sync_probe_point(fx, 0, 7, CS_FN_SEM_TRYWAIT), 5,
		   "... the same code without the loop's branch: on the je");
	test_exec_segment(fx);
	unlink(fx);

	{
		enum cs_sync_fn hf[] = { CS_FN_MUTEX_LOCK, CS_FN_PRINTF, CS_FN_JOIN,
					 CS_FN_FWRITE,	   CS_FN_FPUTS,	 CS_FN_PROC_EXIT };
		unsigned long ho[] = { 10, 20, 30, 40, 50, 60 };

		tap_is_int(sync_drop_stdio(hf, ho, 6), 3,
			   "unsteered: printf, fwrite and fputs dropped, 3 of 6 left");
		tap_ok(hf[0] == CS_FN_MUTEX_LOCK && hf[1] == CS_FN_JOIN && hf[2] == CS_FN_PROC_EXIT,
		       "... mutex_lock, join and exit kept, in order");
		tap_ok(ho[0] == 10 && ho[1] == 30 && ho[2] == 60, "... with their own offsets");
	}

	if (access(libc, R_OK)) {
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc offsets");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc unsteered set");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc spin lock");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc stdio");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc offsets unique");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc probe points");
		return tap_done();
	}
	n = sync_find_offsets(libc, fns, offs);
	for (i = 0; i < n; i++) {
		lock |= fns[i] == CS_FN_MUTEX_LOCK;
		spin_acq |= fns[i] == CS_FN_SPIN_LOCK_ACQUIRED;
		stdio += fns[i] >= CS_FN_PRINTF && fns[i] <= CS_FN_FWRITE;
	}
	tap_ok(n > 20 && lock, "system libc: %d probed functions, pthread_mutex_lock among them",
	       n);
	tap_ok(spin_acq, "system libc: pthread_spin_lock probed on its success return");
	tap_is_int(stdio, CS_FN_FWRITE - CS_FN_PRINTF + 1,
		   "system libc: every stdio output function probed, each at its own address");
	{
		enum cs_sync_fn kf[CS_FN__COUNT];
		unsigned long ko[CS_FN__COUNT];
		int kept, left = 0;

		memcpy(kf, fns, sizeof(kf));
		memcpy(ko, offs, sizeof(ko));
		kept = sync_drop_stdio(kf, ko, n);
		for (i = 0; i < kept; i++)
			left += sync_fn_is_stdio(kf[i]);
		tap_ok(kept == n - stdio && left == 0,
		       "system libc unsteered: %d of %d functions, no stdio output among them",
		       kept, n);
	}
	dup = 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			dup += offs[i] == offs[j];
	tap_is_int(dup, 0, "offsets are unique (aliases probed once)");
	{
		uint64_t entry;
		int moved = 0, near = 0;

		for (i = 0; i < n; i++) {
			if (fns[i] == CS_FN_SPIN_LOCK_ACQUIRED ||
			    symbolize_lookup_function(libc, sync_fn_name(fns[i]), &entry, NULL))
				continue;
			moved += offs[i] != entry;
			near += offs[i] >= entry && offs[i] < entry + 64;
		}
		tap_ok(moved > 0 && near == n - 1,
		       "system libc: %d entry probes moved to an emulated instruction, all "
		       "within 64 bytes of their entries",
		       moved);
	}
	return tap_done();
}
