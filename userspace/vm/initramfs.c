// SPDX-License-Identifier: MIT
/*
 * newc cpio writer and "carry" for the VM initramfs (initramfs.h).
 *
 * newc (Documentation/driver-api/early-userspace/buffer-format.rst): a
 * 110-byte ASCII header "070701" + 13 eight-digit hex fields, the
 * NUL-terminated name, padding to 4, the data, padding to 4. The kernel
 * does not create missing parent directories, so carry emits every parent
 * before its children and remembers what it emitted in a hash set.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "vm/initramfs.h"
#include "lib/array_size.h"
#include "lib/fnv1a64.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* Where glibc's ld.so looks after RUNPATH on Debian x86-64 (the multiarch
 * directories come first; ld.so.cache is not in the guest). */
static const char *const std_lib_dirs[] = {
	"/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu",
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
};

/* Symlink chains longer than this are loops (the kernel's own limit). */
#define CARRY_MAX_LINKS 40

static void path_set_grow(struct cpio_writer *w)
{
	size_t cap = w->cap_paths ? w->cap_paths * 2 : 1024, i;
	char **n = xcalloc(cap, sizeof(*n));

	for (i = 0; i < w->cap_paths; i++) {
		size_t h;

		if (!w->paths[i])
			continue;
		h = fnv1a64(w->paths[i], strlen(w->paths[i]), FNV1A64_INIT) & (cap - 1);
		while (n[h])
			h = (h + 1) & (cap - 1);
		n[h] = w->paths[i];
	}
	free(w->paths);
	w->paths = n;
	w->cap_paths = cap;
}

static size_t path_slot(const struct cpio_writer *w, const char *path)
{
	size_t h = fnv1a64(path, strlen(path), FNV1A64_INIT) & (w->cap_paths - 1);

	while (w->paths[h] && strcmp(w->paths[h], path))
		h = (h + 1) & (w->cap_paths - 1);
	return h;
}

bool initramfs_has(const struct cpio_writer *w, const char *path)
{
	return w->cap_paths && w->paths[path_slot(w, path)];
}

void initramfs_mark(struct cpio_writer *w, const char *path)
{
	size_t h;

	if (2 * (w->n_paths + 1) > w->cap_paths)
		path_set_grow(w);
	h = path_slot(w, path);
	if (w->paths[h])
		return;
	w->paths[h] = xstrdup(path);
	w->n_paths++;
}

void initramfs_init(struct cpio_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->ino = 1000;
	initramfs_mark(w, "/");
}

void initramfs_free(struct cpio_writer *w)
{
	size_t i;

	for (i = 0; i < w->cap_paths; i++)
		free(w->paths[i]);
	free(w->paths);
	w->paths = NULL;
	w->cap_paths = w->n_paths = 0;
}

static int cpio_pad(struct cpio_writer *w, unsigned align)
{
	static const char zeros[512];
	size_t n = (align - (w->bytes % align)) % align;

	if (n && fwrite(zeros, 1, n, w->f) != n)
		return -EIO;
	w->bytes += n;
	return 0;
}

static int cpio_header(struct cpio_writer *w, const char *path, mode_t mode, uint64_t size,
		       uint32_t mtime, unsigned rmajor, unsigned rminor)
{
	/* Names are stored without the leading '/', like `cpio -o` from /. */
	const char *name = path[0] == '/' && path[1] ? path + 1 : path;
	size_t namesize = strlen(name) + 1;
	char hdr[111];

	if (size > 0xffffffffULL)
		return -EFBIG;
	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 w->ino++, (unsigned)mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u, mtime, (unsigned)size,
		 0u, 0u, rmajor, rminor, (unsigned)namesize, 0u);
	if (fwrite(hdr, 1, 110, w->f) != 110 || fwrite(name, 1, namesize, w->f) != namesize)
		return -EIO;
	w->bytes += 110 + namesize;
	return cpio_pad(w, 4);
}

static int cpio_entry(struct cpio_writer *w, const char *path, mode_t mode, const void *data,
		      size_t len)
{
	int err;

	if (initramfs_has(w, path))
		return 0;
	err = cpio_header(w, path, mode, len, 0, 0, 0);
	if (err)
		return err;
	if (len && fwrite(data, 1, len, w->f) != len)
		return -EIO;
	w->bytes += len;
	initramfs_mark(w, path);
	return cpio_pad(w, 4);
}

int initramfs_add_dir(struct cpio_writer *w, const char *path, mode_t mode)
{
	return cpio_entry(w, path, S_IFDIR | (mode & 07777), NULL, 0);
}

int initramfs_add_symlink(struct cpio_writer *w, const char *path, const char *target)
{
	return cpio_entry(w, path, S_IFLNK | 0777, target, strlen(target));
}

int initramfs_add_data(struct cpio_writer *w, const char *path, mode_t mode, const void *data,
		       size_t len)
{
	return cpio_entry(w, path, S_IFREG | (mode & 07777), data, len);
}

int initramfs_add_chardev(struct cpio_writer *w, const char *path, mode_t mode, unsigned major,
			  unsigned minor)
{
	int err;

	if (initramfs_has(w, path))
		return 0;
	err = cpio_header(w, path, S_IFCHR | (mode & 07777), 0, 0, major, minor);
	if (!err)
		initramfs_mark(w, path);
	return err;
}

int initramfs_add_file(struct cpio_writer *w, const char *path, mode_t mode, const char *host_path)
{
	char buf[65536];
	struct stat st;
	uint64_t left;
	int fd, err;

	if (initramfs_has(w, path))
		return 0;
	fd = open(host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	/* Keep the mtime: make and friends in the guest compare them. */
	err = cpio_header(w, path, S_IFREG | (mode & 07777), st.st_size, (uint32_t)st.st_mtime, 0,
			  0);
	if (err)
		goto cleanup;
	/* A file that shrinks while we copy would corrupt the archive: pad it
	 * with zeros to the size the header announced. */
	for (left = st.st_size; left;) {
		ssize_t n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0) {
			memset(buf, 0, sizeof(buf));
			n = left < sizeof(buf) ? left : sizeof(buf);
		}
		if (fwrite(buf, 1, n, w->f) != (size_t)n) {
			err = -EIO;
			goto cleanup;
		}
		left -= n;
	}
	w->bytes += st.st_size;
	w->payload += st.st_size;
	w->files++;
	initramfs_mark(w, path);
	err = cpio_pad(w, 4);
cleanup:
	close(fd);
	return err;
}

int initramfs_finish(struct cpio_writer *w)
{
	int err = cpio_header(w, "TRAILER!!!", 0, 0, 0, 0, 0);

	if (!err)
		err = cpio_pad(w, 512);
	if (!err && fflush(w->f))
		err = -EIO;
	return err;
}

char *initramfs_path_normalize(const char *path)
{
	char *out = xcalloc(1, strlen(path) + 2);
	const char *p = path;
	size_t n = 0;

	while (*p) {
		const char *s = p;
		size_t len;

		while (*p && *p != '/')
			p++;
		len = p - s;
		if (*p)
			p++;
		if (len == 0 || (len == 1 && s[0] == '.'))
			continue;
		if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, s, len);
		n += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = 0;
	return out;
}

static void elf_deps_add_needed(struct elf_deps *d, const char *name)
{
	d->needed = xrealloc(d->needed, (d->n_needed + 1) * sizeof(*d->needed));
	d->needed[d->n_needed++] = xstrdup(name);
}

static void elf_deps_scan_dynamic(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct elf_deps *d)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	char *rpath = NULL, *runpath = NULL;
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Dyn dyn;
		const char *s;

		if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
			continue;
		s = elf_strptr(e, sh->sh_link, dyn.d_un.d_val);
		if (!s)
			continue;
		if (dyn.d_tag == DT_NEEDED)
			elf_deps_add_needed(d, s);
		else if (dyn.d_tag == DT_RUNPATH && !runpath)
			runpath = xstrdup(s);
		else if (dyn.d_tag == DT_RPATH && !rpath)
			rpath = xstrdup(s);
	}
	/* ld.so ignores DT_RPATH when DT_RUNPATH is present. */
	d->runpath = runpath ? runpath : rpath;
	if (runpath)
		free(rpath);
}

static void elf_deps_scan(Elf *e, struct elf_deps *d)
{
	Elf_Scn *scn = NULL;
	size_t i, nph;

	if (elf_getphdrnum(e, &nph) == 0) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;
			size_t len;
			char *raw;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_INTERP)
				continue;
			raw = elf_rawfile(e, &len);
			if (raw && ph.p_offset < len && ph.p_filesz < sizeof(d->interp) &&
			    ph.p_offset + ph.p_filesz <= len)
				snprintf(d->interp, sizeof(d->interp), "%.*s", (int)ph.p_filesz,
					 raw + ph.p_offset);
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC) {
			elf_deps_scan_dynamic(e, scn, &sh, d);
			break;
		}
	}
	d->is_static = !d->interp[0] && !d->n_needed;
}

int initramfs_elf_deps(const char *path, struct elf_deps *d)
{
	unsigned char magic[4];
	int fd, err = 0;
	Elf *e = NULL;

	memset(d, 0, sizeof(*d));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, magic, 4, 0) != 4 || memcmp(magic, ELFMAG, SELFMAG))
		goto cleanup;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto cleanup;
	d->is_elf = true;
	elf_deps_scan(e, d);
cleanup:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

void initramfs_elf_deps_free(struct elf_deps *d)
{
	size_t i;

	for (i = 0; i < d->n_needed; i++)
		free(d->needed[i]);
	free(d->needed);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

/* A library candidate must be a 64-bit x86 ELF: /usr/lib may hold others. */
static bool elf_is_x86_64(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, h, sizeof(h), 0) == sizeof(h) && !memcmp(h, ELFMAG, SELFMAG) &&
	     h[EI_CLASS] == ELFCLASS64 && h[18] == EM_X86_64 && h[19] == 0;
	close(fd);
	return ok;
}

static char *lib_in_dir(const char *dir, size_t dlen, const char *needed)
{
	char *p = xasprintf("%.*s/%s", (int)dlen, dir, needed);
	char *norm;

	if (!elf_is_x86_64(p)) {
		free(p);
		return NULL;
	}
	norm = initramfs_path_normalize(p);
	free(p);
	return norm;
}

/* One RUNPATH entry with $ORIGIN / ${ORIGIN} replaced by the owner's dir. */
static char *expand_origin(const char *entry, size_t len, const char *owner)
{
	const char *slash = strrchr(owner, '/');
	int olen = slash ? (int)(slash - owner) : 0;
	char *out = xcalloc(1, len + olen * 4 + 1);
	size_t i = 0, n = 0;

	while (i < len) {
		if (!strncmp(entry + i, "$ORIGIN", 7) && 7 <= len - i) {
			memcpy(out + n, owner, olen);
			n += olen;
			i += 7;
		} else if (!strncmp(entry + i, "${ORIGIN}", 9) && 9 <= len - i) {
			memcpy(out + n, owner, olen);
			n += olen;
			i += 9;
		} else {
			out[n++] = entry[i++];
		}
	}
	out[n] = 0;
	return out;
}

char *initramfs_find_library(const char *needed, const char *owner, const char *runpath)
{
	const char *p = runpath;
	char *found = NULL;
	size_t i;

	if (strchr(needed, '/'))
		return needed[0] == '/' && elf_is_x86_64(needed) ? initramfs_path_normalize(needed)
								 : NULL;
	while (p && *p && !found) {
		size_t len = strcspn(p, ":");
		char *dir = expand_origin(p, len, owner);

		if (dir[0] == '/')
			found = lib_in_dir(dir, strlen(dir), needed);
		free(dir);
		p += len + (p[len] == ':');
	}
	for (i = 0; !found && i < ARRAY_SIZE(std_lib_dirs); i++)
		found = lib_in_dir(std_lib_dirs[i], strlen(std_lib_dirs[i]), needed);
	return found;
}

static int carry_one(struct cpio_writer *w, const char *path, int depth, bool shallow);

/* glibc dlopen()s libgcc_s for pthread_cancel/pthread_exit unwinding; a
 * threaded program without it aborts at thread exit. */
static int carry_glibc_extras(struct cpio_writer *w, const char *owner, int depth)
{
	char *lib = initramfs_find_library("libgcc_s.so.1", owner, NULL);
	int err = 0;

	if (lib && !initramfs_has(w, lib))
		err = carry_one(w, lib, depth + 1, false);
	free(lib);
	return err;
}

static int carry_elf_deps(struct cpio_writer *w, const char *path, int depth)
{
	struct elf_deps d;
	bool libc = false;
	size_t i;
	int err;

	err = initramfs_elf_deps(path, &d);
	if (err || !d.is_elf || d.is_static)
		goto cleanup;
	if (d.interp[0] && !initramfs_has(w, d.interp)) {
		err = carry_one(w, d.interp, depth + 1, false);
		if (err)
			goto cleanup;
	}
	for (i = 0; i < d.n_needed; i++) {
		char *lib = initramfs_find_library(d.needed[i], path, d.runpath);

		if (!lib) {
			log_err("cannot find %s (needed by %s) in its RUNPATH or the standard "
				"library directories",
				d.needed[i], path);
			err = -ENOENT;
			goto cleanup;
		}
		if (!strcmp(d.needed[i], "libc.so.6"))
			libc = true;
		if (!initramfs_has(w, lib))
			err = carry_one(w, lib, depth + 1, false);
		free(lib);
		if (err)
			goto cleanup;
	}
	if (libc)
		err = carry_glibc_extras(w, path, depth);
cleanup:
	initramfs_elf_deps_free(&d);
	return err;
}

/* A directory is in the archive either whole (carried) or as a bare
 * parent of something carried inside it. The walked ones are marked with a
 * key no normalised path has (a trailing '/'), so carrying a directory
 * whose file came first (`--carry DIR -- DIR/run.sh`) still walks it. */
static char *walked_key(const char *path)
{
	return xasprintf("%s/", strcmp(path, "/") ? path : "");
}

static bool dir_walked(const struct cpio_writer *w, const char *path)
{
	char *key = walked_key(path);
	bool walked = initramfs_has(w, key);

	free(key);
	return walked;
}

void initramfs_exclude(struct cpio_writer *w, const char *path)
{
	char *key = walked_key(path);

	initramfs_mark(w, path);
	initramfs_mark(w, key);
	free(key);
}

static int carry_dir_entries(struct cpio_writer *w, const char *path, int depth)
{
	struct dirent **ents = NULL;
	char *key = walked_key(path);
	int n, i, err = 0;

	initramfs_mark(w, key);
	free(key);
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		log_err("cannot read directory %s: %s", path, strerror(errno));
		return -errno;
	}
	w->dir_walk++;
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *child;

		if (!err && strcmp(name, ".") && strcmp(name, "..")) {
			child = xasprintf("%s/%s", strcmp(path, "/") ? path : "", name);
			err = carry_one(w, child, depth, false);
			free(child);
		}
		free(ents[i]);
	}
	w->dir_walk--;
	free(ents);
	return err;
}

static int carry_symlink(struct cpio_writer *w, const char *path, int depth, bool shallow)
{
	char target[PATH_MAX], *dir, *resolved;
	struct stat st;
	ssize_t n;
	int err;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		log_err("cannot read symlink %s: %s", path, strerror(errno));
		return -errno;
	}
	target[n] = 0;
	err = initramfs_add_symlink(w, path, target);
	if (err)
		return err;
	if (target[0] == '/') {
		resolved = initramfs_path_normalize(target);
	} else {
		dir = xstrdup(path);
		*strrchr(dir, '/') = 0;
		resolved = xasprintf("%s/%s", dir, target);
		free(dir);
		dir = resolved;
		resolved = initramfs_path_normalize(dir);
		free(dir);
	}
	/* A link met inside a carried directory brings its target file, but
	 * not a whole directory tree from elsewhere (a link to / would carry
	 * the machine). A dangling link is carried as it is. */
	if (w->dir_walk && stat(resolved, &st) == 0 && S_ISDIR(st.st_mode))
		shallow = true;
	err = access(resolved, F_OK) == 0 ? carry_one(w, resolved, depth + 1, shallow) : 0;
	free(resolved);
	return err;
}

/* Replay the parents of PATH: directories as directories, symlinked
 * components (merged /usr: /lib -> usr/lib) as symlinks plus their target.
 * Returns 1 when a parent was a symlink: PATH itself is then carried under
 * its resolved name by the recursive call. */
static int carry_parents(struct cpio_writer *w, const char *path, int depth, bool shallow)
{
	char *p = xstrdup(path), *s;
	int err = 0;

	for (s = strchr(p + 1, '/'); s && !err; s = strchr(s + 1, '/')) {
		struct stat st;

		*s = 0;
		if (lstat(p, &st)) {
			err = -errno;
			log_err("cannot carry %s: %s: %s", path, p, strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			char *rest;

			err = carry_symlink(w, p, depth, true);
			if (!err) {
				char *real = realpath(p, NULL);

				rest = real ? xasprintf("%s/%s", real, s + 1) : NULL;
				free(real);
				err = rest ? carry_one(w, rest, depth + 1, shallow) : -errno;
				free(rest);
			}
			free(p);
			return err ? err : 1;
		} else if (!initramfs_has(w, p)) {
			err = initramfs_add_dir(w, p, st.st_mode);
		}
		*s = '/';
	}
	free(p);
	return err;
}

static int carry_one(struct cpio_writer *w, const char *path, int depth, bool shallow)
{
	struct stat st;
	int err;

	if (depth > CARRY_MAX_LINKS) {
		log_err("cannot carry %s: too many levels of symbolic links", path);
		return -ELOOP;
	}
	if (initramfs_has(w, path)) {
		/* Already there: only a directory met as a parent may still
		 * have its contents to bring. */
		if (shallow || dir_walked(w, path) || lstat(path, &st) || !S_ISDIR(st.st_mode))
			return 0;
		return carry_dir_entries(w, path, depth);
	}
	err = carry_parents(w, path, depth, shallow);
	if (err)
		return err < 0 ? err : 0;
	if (lstat(path, &st)) {
		log_err("cannot carry %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode))
		return carry_symlink(w, path, depth, shallow);
	if (S_ISDIR(st.st_mode)) {
		err = initramfs_add_dir(w, path, st.st_mode);
		return err || shallow ? err : carry_dir_entries(w, path, depth);
	}
	if (!S_ISREG(st.st_mode))
		return 0; /* sockets, fifos, devices: the guest has its own /dev */
	err = initramfs_add_file(w, path, st.st_mode, path);
	if (err) {
		log_err("cannot carry %s: %s", path, strerror(-err));
		return err;
	}
	/* Libraries are often mode 0644: look at every file's ELF header. */
	return carry_elf_deps(w, path, depth);
}

int initramfs_carry(struct cpio_writer *w, const char *path)
{
	char *norm;
	int err;

	if (path[0] != '/') {
		log_err("cannot carry %s: not an absolute path", path);
		return -EINVAL;
	}
	norm = initramfs_path_normalize(path);
	err = carry_one(w, norm, 0, false);
	free(norm);
	return err;
}

int initramfs_carry_skeleton(struct cpio_writer *w, const char *path)
{
	char *norm;
	int err;

	if (path[0] != '/')
		return -EINVAL;
	norm = initramfs_path_normalize(path);
	err = carry_one(w, norm, 0, true);
	free(norm);
	return err;
}
