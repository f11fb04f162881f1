// SPDX-License-Identifier: MIT
/* Pure parts of userspace/kernel/probes.c: reading `ld.so --list`, recognising
 * entries x86 uprobes refuse and glibc's spin-lock shape, and finding the
 * probed functions in the system libc. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/probes.h"
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

int main(void)
{
	static const unsigned char spin[] = {
		0x90, 0xf0, 0xff, 0x0f, 0x75, 0x0b, 0x31, 0xc0, 0xc3
	};
	static const unsigned char push[] = { 0x41, 0x56, 0x41, 0x55, 0x55, 0x53, 0x90, 0x90 };
	static const unsigned char f0pfx[] = { 0x66, 0xf0, 0x0f, 0xb1, 0x17, 0x90, 0x90, 0x90 };
	enum cs_sync_fn fns[CS_FN__COUNT];
	unsigned long offs[CS_FN__COUNT];
	char buf[sizeof(ldso_out)], path[256], fx[] = "/tmp/cs-test-probes-XXXXXX";
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	uint64_t off;
	int n, i, j, fd, dup;
	bool lock = false, spin_acq = false;

	tap_plan(12);
	memcpy(buf, ldso_out, sizeof(buf));
	tap_is_int(sync_parse_ldso_list(buf, "libc.so", path, sizeof(path)), 0,
		   "ld.so --list: libc found");
	tap_is_str(path, "/opt/glibc/lib/libc.so.6", "... the path after =>");
	memcpy(buf, ldso_out, sizeof(buf));
	tap_ok(sync_parse_ldso_list(buf, "libpthread.so", path, sizeof(path)) < 0,
	       "absent library: -ENOENT");

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
	unlink(fx);

	if (access(libc, R_OK)) {
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc offsets");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc spin lock");
		tap_skip("no glibc at /lib/x86_64-linux-gnu", "system libc offsets unique");
		return tap_done();
	}
	n = sync_find_offsets(libc, fns, offs);
	for (i = 0; i < n; i++) {
		lock |= fns[i] == CS_FN_MUTEX_LOCK;
		spin_acq |= fns[i] == CS_FN_SPIN_LOCK_ACQUIRED;
	}
	tap_ok(n > 20 && lock, "system libc: %d probed functions, pthread_mutex_lock among them",
	       n);
	tap_ok(spin_acq, "system libc: pthread_spin_lock probed on its success return");
	dup = 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			dup += offs[i] == offs[j];
	tap_is_int(dup, 0, "offsets are unique (aliases probed once)");
	return tap_done();
}
