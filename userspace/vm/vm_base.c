// SPDX-License-Identifier: MIT
/*
 * The VM's base initramfs (vm_base.h): found, written and cached.
 */
#include "vm/vm_base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm/initramfs.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/fnv1a64.h"
#include "lib/log.h"
#include "lib/self.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

/* Bump when the base archive layout changes: it is part of the cache key. */
#define VM_BASE_FORMAT 1

/* Guest paths the base archive provides (per-run archives skip them). */
const char *const vm_base_dirs[] = {
	"/.concsched", "/.concsched/run", "/dev", "/proc", "/sys", "/tmp",
	"/etc",	       "/root",		  "/run", "/out",  "/usr",
};
const size_t vm_base_ndirs = ARRAY_SIZE(vm_base_dirs);
static const char etc_passwd[] = "root:x:0:0:root:/root:/bin/sh\n";
static const char etc_group[] = "root:x:0:\n";

static char *find_static_busybox(void)
{
	static const char *const cands[] = { "/bin/busybox", "/usr/bin/busybox",
					     "/usr/lib/initramfs-tools/bin/busybox" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cands); i++) {
		struct elf_deps d;
		bool ok;

		if (initramfs_elf_deps(cands[i], &d))
			continue;
		ok = d.is_elf && d.is_static;
		initramfs_elf_deps_free(&d);
		if (ok)
			return xstrdup(cands[i]);
	}
	log_err("no static busybox found (run: sudo make deps, it installs busybox-static)");
	return NULL;
}

static int file_fnv(const char *path, uint64_t *h)
{
	size_t len;
	char *data = file_read(path, &len);

	if (!data)
		return -errno;
	*h = fnv1a64(data, len, *h);
	free(data);
	return 0;
}

void vm_base_free(struct vm_base *b)
{
	free(b->cpio);
	free(b->applets);
	free(b->applet_list);
}

static int base_write(const char *path, const char *busybox, const char *init)
{
	struct cpio_writer w;
	size_t i;
	FILE *f;
	int err;

	f = fopen(path, "we");
	if (!f)
		return -errno;
	initramfs_init(&w, f);
	err = 0;
	for (i = 0; i < vm_base_ndirs && !err; i++)
		err = initramfs_add_dir(&w, vm_base_dirs[i], 0755);
	/* The kernel opens /dev/console for /init before devtmpfs exists. */
	err = err ?: initramfs_add_chardev(&w, "/dev/console", 0600, 5, 1);
	err = err ?: initramfs_add_file(&w, "/.concsched/busybox", 0755, busybox);
	err = err ?: initramfs_add_file(&w, "/init", 0755, init);
	err = err ?: initramfs_add_data(&w, "/etc/passwd", 0644, etc_passwd, strlen(etc_passwd));
	err = err ?: initramfs_add_data(&w, "/etc/group", 0644, etc_group, strlen(etc_group));
	err = err ?: initramfs_finish(&w);
	initramfs_free(&w);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static int applets_write(const char *path, const char *busybox)
{
	char *cmd = xasprintf("'%s' --list > '%s'", busybox, path);
	int rc = system(cmd);

	free(cmd);
	return rc == 0 ? 0 : -EIO;
}

/* The base archive changes only with busybox or vm-init.sh, so it is built
 * once per content and shared by every run (and user of the cache). */
int vm_base_get(struct vm_base *b)
{
	char *busybox = NULL, *init = NULL, *dir = NULL, *tmp = NULL;
	uint64_t h = fnv1a64("vm-base", 7, FNV1A64_INIT) + VM_BASE_FORMAT;
	int err = -ENOENT;

	memset(b, 0, sizeof(*b));
	busybox = find_static_busybox();
	if (!busybox)
		goto cleanup;
	init = self_find_helper("vm-init.sh");
	if (!init) {
		log_err("vm-init.sh not found next to concsched (tools/ or lib/concsched/; "
			"set CONCSCHED_LIBDIR)");
		goto cleanup;
	}
	if ((err = file_fnv(busybox, &h)) || (err = file_fnv(init, &h))) {
		log_err("cannot read %s or %s: %s", busybox, init, strerror(-err));
		goto cleanup;
	}
	dir = xasprintf("%s/vm", self_cache_dir());
	err = tree_mkdir_p(dir, 0755);
	if (err) {
		log_err("cannot create %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	b->cpio = xasprintf("%s/base-%016llx.cpio", dir, (unsigned long long)h);
	b->applets = xasprintf("%s/applets-%016llx.txt", dir, (unsigned long long)h);
	tmp = xasprintf("%s.%d.tmp", b->cpio, getpid());
	if (access(b->cpio, R_OK)) {
		err = base_write(tmp, busybox, init);
		if (!err && rename(tmp, b->cpio))
			err = -errno;
		if (err) {
			unlink(tmp);
			log_err("cannot write the VM base initramfs %s: %s", b->cpio,
				strerror(-err));
			goto cleanup;
		}
	}
	free(tmp);
	tmp = xasprintf("%s.%d.tmp", b->applets, getpid());
	if (access(b->applets, R_OK)) {
		err = applets_write(tmp, busybox);
		if (!err && rename(tmp, b->applets))
			err = -errno;
		if (err) {
			unlink(tmp);
			log_err("cannot list the applets of %s", busybox);
			goto cleanup;
		}
	}
	b->applet_list = file_read(b->applets, NULL);
	err = b->applet_list ? 0 : -errno;
cleanup:
	free(busybox);
	free(init);
	free(dir);
	free(tmp);
	return err;
}
