// SPDX-License-Identifier: MIT
#include "kernel/target.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/file.h"
#include "lib/log.h"
#include "lib/xalloc.h"

static int resolve_path(const char *name, char *out)
{
	const char *path = getenv("PATH");
	char *dirs, *d, *save = NULL, cand[PATH_MAX];
	int err = -ENOENT;

	if (strchr(name, '/'))
		return realpath(name, out) ? 0 : -errno;
	dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(cand, sizeof(cand), "%s/%s", *d ? d : ".", name);
		if (access(cand, X_OK) == 0 && realpath(cand, out)) {
			err = 0;
			break;
		}
	}
	free(dirs);
	return err;
}

static int elf_scan(const char *name, int fd, struct target_info *ti)
{
	Elf *e;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx, i, nph;
	int err = 0;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		log_err("%s: not an ELF executable (concsched runs compiled programs; for a "
			"script, "
			"pass its interpreter: concsched run -- /bin/sh script.sh)",
			name);
		err = -ENOEXEC;
		goto cleanup;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		log_err("%s: not an x86-64 program (concsched supports x86-64 ELF only)", name);
		err = -ENOEXEC;
		goto cleanup;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		log_err("%s: ELF file is not an executable (type %d)", name, eh.e_type);
		err = -ENOEXEC;
		goto cleanup;
	}
	ti->is_pie = eh.e_type == ET_DYN;
	ti->is_static = true;
	if (elf_getphdrnum(e, &nph) == 0) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_INTERP)
				ti->is_static = false;
		}
	}
	if (elf_getshdrstrndx(e, &shstrndx))
		goto cleanup;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *sn;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB)
			ti->has_symtab = true;
		if (sn && !strcmp(sn, ".debug_info"))
			ti->has_debuginfo = true;
	}
cleanup:
	if (e)
		elf_end(e);
	return err;
}

int target_inspect(const char *name, struct target_info *ti)
{
	struct stat st;
	int fd, err;

	memset(ti, 0, sizeof(*ti));
	err = resolve_path(name, ti->path);
	if (err) {
		log_err("%s: no such program%s", name,
			strchr(name, '/') ? "" : " in PATH (give a path like ./prog)");
		return err;
	}
	if (stat(ti->path, &st)) {
		err = -errno;
		log_err("%s: %s", name, strerror(errno));
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		log_err("%s: is a directory, not a program", name);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		log_err("%s: not a regular file", name);
		return -EINVAL;
	}
	if (!(st.st_mode & 0111)) {
		log_err("%s: not executable (chmod +x %s)", name, name);
		return -EACCES;
	}
	fd = open(ti->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		log_err("%s: cannot open: %s", name, strerror(errno));
		return err;
	}
	err = elf_scan(name, fd, ti);
	close(fd);
	if (err)
		return err;
	return file_hash_hex(ti->path, ti->hash);
}
