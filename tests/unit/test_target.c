// SPDX-License-Identifier: MIT
/* target.c: program resolution and the bad-input classification. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "kernel/target.h"
#include "lib/self.h"
#include "lib/xalloc.h"

int main(int argc, char **argv)
{
	struct target_info ti;
	char *bank = xasprintf("%s/../../examples/bank", self_dir());
	const char *script = "/tmp/concsched-target-script";
	FILE *f;

	tap_plan(12);
	tap_is_int(target_inspect("/nonexistent/prog", &ti), -ENOENT, "missing file is ENOENT");
	tap_is_int(target_inspect("no-such-prog-in-path-xyz", &ti), -ENOENT,
		   "missing in PATH is ENOENT");
	tap_is_int(target_inspect("/tmp", &ti), -EISDIR, "a directory is rejected");

	f = fopen(script, "w");
	fputs("#!/bin/sh\necho hi\n", f);
	fclose(f);
	chmod(script, 0644);
	tap_is_int(target_inspect(script, &ti), -EACCES, "a non-executable file is rejected");
	chmod(script, 0755);
	tap_is_int(target_inspect(script, &ti), -ENOEXEC, "a script is not an ELF program");
	unlink(script);

	tap_is_int(target_inspect("sh", &ti), 0, "sh is found through PATH");
	tap_ok(ti.path[0] == '/' && !ti.is_static, "resolved absolute, dynamically linked");

	tap_is_int(target_inspect(bank, &ti), 0, "the example program is accepted");
	tap_ok(ti.is_pie && ti.has_symtab && ti.has_debuginfo && !ti.is_static,
	       "example is PIE with symbols and debug info");
	tap_ok(ti.hash[0] && ti.hash[16] == 0, "content hash computed");

	if (access("/bin/busybox", X_OK) == 0) {
		tap_is_int(target_inspect("/bin/busybox", &ti), 0, "static busybox accepted");
		tap_ok(ti.is_static && !ti.has_symtab, "busybox is static and stripped");
	} else {
		tap_skip("busybox-static not installed (run: make deps)", "static binary accepted");
		tap_skip("busybox-static not installed (run: make deps)", "static and stripped");
	}
	free(bank);
	return tap_done();
}
