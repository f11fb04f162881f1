// SPDX-License-Identifier: MIT
/*
 * Symbolization (see symbolize.h). One parsed ELF object per path, cached
 * process-wide: its PT_LOAD segments (file offset <-> virtual address), its
 * function and variable symbols sorted by address, and its DWARF (libdw) for
 * file:line. A live-process symbolizer adds, per mapped object, the load
 * bias, so runtime address - bias = ELF virtual address for PIE, non-PIE,
 * shared objects and static binaries alike.
 */
#include "kernel/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/xalloc.h"

struct sym_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint64_t align;
};

struct sym_entry {
	uint64_t addr;
	uint64_t size;
	uint64_t span; /* size, or for size-0 functions (crt, asm) up to the
			* next symbol */
	const char *name;
	uint8_t is_func;
	uint8_t rank;	/* lower is a better display name among aliases */
	uint8_t hidden; /* dynsym entry of a non-default symbol version */
	uint8_t defined;
};

struct sym_object {
	char *path; /* canonical */
	int err;    /* 0, or why it could not be parsed */
	int fd;
	Elf *elf;
	Dwarf *dwarf;
	int debug_fd; /* the separate debug file, when one is used */
	Elf *debug_elf;
	char *debug_path;
	struct sym_segment *segs;
	size_t nsegs;
	struct sym_entry *syms;
	size_t nsyms;
	char **names; /* unversioned copies of "name@VERSION" symbols */
	size_t nnames;
};

struct sym_cache_slot {
	char *key;
	struct sym_object *obj;
};

static struct sym_cache_slot *sym_cache;
static size_t sym_cache_n;
static struct sym_object **sym_objects;
static size_t sym_objects_n;
/* The caches above and libdw's handles are shared by every run of -j N:
 * each public function holds this lock (recursive: they call each other). */
static pthread_mutex_t sym_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* Whether more than one thread may symbolize (symbolize_set_threaded): only
 * then the lock, whose pthread calls trap into the campaign's own libc
 * uprobes (attached for every process). */
static bool sym_threaded;

/* The value of call, made under sym_lock when threaded. */
#define SYM_LOCKED(call)                                                                           \
	({                                                                                         \
		__typeof__(call) _r;                                                               \
		bool _l = sym_threaded;                                                            \
		if (_l)                                                                            \
			pthread_mutex_lock(&sym_lock);                                             \
		_r = (call);                                                                       \
		if (_l)                                                                            \
			pthread_mutex_unlock(&sym_lock);                                           \
		_r;                                                                                \
	})

void symbolize_set_threaded(bool on)
{
	sym_threaded = on;
}

/* ---- ELF parsing -------------------------------------------------------- */

static int sym_load_segments(struct sym_object *o)
{
	size_t nph, i;

	if (elf_getphdrnum(o->elf, &nph))
		return -ENOEXEC;
	o->segs = xcalloc(nph ? nph : 1, sizeof(*o->segs));
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(o->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->segs[o->nsegs++] = (struct sym_segment){
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.align = ph.p_align ? ph.p_align : 1,
		};
	}
	return o->nsegs ? 0 : -ENOEXEC;
}

/* Display-name preference among aliases at one address: a global name over
 * a weak one over a local one; a name without leading '_' over one with. */
static uint8_t sym_rank(const char *name, int bind)
{
	uint8_t r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 2 : 4;

	if (name[0] == '_')
		r++;
	return r;
}

/* "name@@VERSION" (the default version) or "name@VERSION" (hidden: *hidden
 * set) as in a .symtab of a shared library (a separate debug file's
 * among them): NAME, copied into o. */
static const char *sym_unversioned(struct sym_object *o, const char *versioned, bool *hidden)
{
	size_t len = (size_t)(strchr(versioned, '@') - versioned);
	char *name = xcalloc(1, len + 1);

	*hidden = versioned[len + 1] != '@';
	memcpy(name, versioned, len);
	o->names = xrealloc(o->names, (o->nnames + 1) * sizeof(*o->names));
	o->names[o->nnames++] = name;
	return name;
}

static void sym_load_table(struct sym_object *o, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			   Elf_Data *versym)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	o->syms = xrealloc(o->syms, (o->nsyms + n) * sizeof(*o->syms));
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;
		struct sym_entry *e;
		bool hidden = false;

		if (!gelf_getsym(data, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC &&
		    type != STT_TLS)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (strchr(name, '@'))
			name = sym_unversioned(o, name, &hidden);
		e = &o->syms[o->nsyms++];
		*e = (struct sym_entry){
			.addr = s.st_value,
			.size = s.st_size,
			.name = name,
			.is_func = type != STT_OBJECT && type != STT_TLS,
			.rank = sym_rank(name, GELF_ST_BIND(s.st_info)),
			.defined = s.st_shndx != SHN_UNDEF && type != STT_TLS,
			.hidden = hidden,
		};
		if (versym) {
			GElf_Versym v;

			/* Bit 15: hidden, i.e. not the default version of the name. */
			if (gelf_getversym(versym, i, &v) && (v & 0x8000))
				e->hidden = 1;
		}
	}
}

static int sym_entry_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->defined != y->defined)
		return x->defined ? -1 : 1;
	return (int)x->rank - (int)y->rank;
}

static void sym_set_spans(struct sym_object *o)
{
	size_t i, j;

	for (i = 0; i < o->nsyms; i++) {
		struct sym_entry *e = &o->syms[i];

		e->span = e->size ? e->size : 1;
		if (e->size || !e->is_func)
			continue;
		for (j = i + 1; j < o->nsyms && o->syms[j].addr == e->addr; j++)
			;
		if (j < o->nsyms && o->syms[j].addr - e->addr < (1u << 16))
			e->span = o->syms[j].addr - e->addr;
	}
}

/* The symbols of ELF: its .symtab, else its .dynsym. Returns whether it
 * had a .symtab. */
static bool sym_load_symbols(struct sym_object *o, Elf *elf)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	Elf_Data *versym = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_GNU_versym) {
			versym = elf_getdata(scn, NULL);
		}
	}
	/* .symtab is a superset of .dynsym when present; stripped objects
	 * keep only .dynsym (exported functions). */
	if (symtab)
		sym_load_table(o, elf, symtab, &symtab_sh, NULL);
	else if (dynsym)
		sym_load_table(o, elf, dynsym, &dynsym_sh, versym);
	if (o->nsyms)
		qsort(o->syms, o->nsyms, sizeof(*o->syms), sym_entry_cmp);
	sym_set_spans(o);
	return symtab != NULL;
}

/* ---- separate debug files ----------------------------------------------- */

static const char *sym_debug_root(void)
{
	const char *root = getenv("CONCSCHED_DEBUG_ROOT");

	return root && *root ? root : "/usr/lib/debug";
}

int symbolize_debug_file_paths(const char *object, const uint8_t *build_id, size_t id_len,
			       const char *debuglink, const char *root, char paths[][PATH_MAX],
			       int max)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(object, '/');
	int n = 0, len, i;
	size_t k;

	if (build_id && id_len >= 2 && n < max) {
		len = snprintf(paths[n], PATH_MAX, "%s/.build-id/%02x/", root, build_id[0]);
		for (k = 1; k < id_len && len + 3 < PATH_MAX; k++)
			len += snprintf(paths[n] + len, PATH_MAX - (size_t)len, "%02x",
					build_id[k]);
		if (len + 7 < PATH_MAX) {
			snprintf(paths[n] + len, PATH_MAX - (size_t)len, ".debug");
			n++;
		}
	}
	if (!debuglink || !*debuglink || strchr(debuglink, '/'))
		return n;
	/* The object's directory, "" for "/x"; "." for a bare name. */
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - object), object);
	else
		snprintf(dir, sizeof(dir), ".");
	for (i = 0; i < 3 && n < max; i++) {
		if (i == 0)
			len = snprintf(paths[n], PATH_MAX, "%s/%s", dir, debuglink);
		else if (i == 1)
			len = snprintf(paths[n], PATH_MAX, "%s/.debug/%s", dir, debuglink);
		else if (dir[0] == '/' || !dir[0])
			len = snprintf(paths[n], PATH_MAX, "%s%s/%s", root, dir, debuglink);
		else
			continue; /* a relative object has no place under the root */
		if (len > 0 && len < PATH_MAX)
			n++;
	}
	return n;
}

/* CRC-32 of the whole file, as .gnu_debuglink records it (zlib's). */
static int sym_file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t r;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)r);
	if (r < 0)
		return -errno;
	*crc = (uint32_t)c;
	return 0;
}

/* Is the file at fd (opened as elf) the debug file of o? Its build ID
 * must equal the object's when both have one; otherwise, for a debuglink
 * candidate, its CRC must be the link's (gdb's rules). */
static bool sym_debug_file_matches(struct sym_object *o, Elf *elf, int fd, bool by_link,
				   GElf_Word link_crc)
{
	const void *id = NULL, *dbg_id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(o->elf, &id);
	ssize_t dn = dwelf_elf_gnu_build_id(elf, &dbg_id);
	uint32_t crc = 0;

	if (n > 0 && dn > 0)
		return n == dn && !memcmp(id, dbg_id, (size_t)n);
	if (!by_link)
		return false;
	return sym_file_crc(fd, &crc) == 0 && crc == link_crc;
}

/* Open candidate PATH as o's separate debug file: 0, or -errno. */
static int sym_debug_open(struct sym_object *o, const char *path, bool by_link, GElf_Word crc)
{
	struct stat self, st;
	Elf *elf;
	int fd;

	if (stat(path, &st) ||
	    (fstat(o->fd, &self) == 0 && self.st_dev == st.st_dev && self.st_ino == st.st_ino))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    !sym_debug_file_matches(o, elf, fd, by_link, crc)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOENT;
	}
	o->debug_fd = fd;
	o->debug_elf = elf;
	o->debug_path = xstrdup(path);
	return 0;
}

/* Find o's separate debug file (symbolize_debug_file_paths' order), if any. */
static int sym_debug_find(struct sym_object *o)
{
	char paths[4][PATH_MAX];
	const void *id = NULL;
	ssize_t id_len = dwelf_elf_gnu_build_id(o->elf, &id);
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(o->elf, &crc);
	int n, i;

	n = symbolize_debug_file_paths(o->path, id_len > 0 ? id : NULL,
				       id_len > 0 ? (size_t)id_len : 0, link, sym_debug_root(),
				       paths, 4);
	/* paths[0] is the build-id path when the object has a build ID. */
	for (i = 0; i < n; i++)
		if (!sym_debug_open(o, paths[i], !(i == 0 && id_len >= 2), crc))
			return 0;
	return -ENOENT;
}

/* Symbols and DWARF the object lacks, from its separate debug file. */
static void sym_load_debug_file(struct sym_object *o, bool has_symtab)
{
	if (sym_debug_find(o))
		return;
	if (!has_symtab) {
		size_t had = o->nsyms;
		struct sym_entry *old = o->syms;

		o->syms = NULL;
		o->nsyms = 0;
		if (sym_load_symbols(o, o->debug_elf)) {
			free(old);
		} else {
			free(o->syms);
			o->syms = old;
			o->nsyms = had;
		}
	}
	if (!o->dwarf)
		o->dwarf = dwarf_begin_elf(o->debug_elf, DWARF_C_READ, NULL);
}

static struct sym_object *sym_object_parse(const char *path)
{
	struct sym_object *o = xcalloc(1, sizeof(*o));
	GElf_Ehdr eh;
	bool has_symtab;

	o->path = xstrdup(path);
	o->debug_fd = -1;
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0) {
		o->err = -errno;
		return o;
	}
	elf_version(EV_CURRENT);
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF || !gelf_getehdr(o->elf, &eh)) {
		o->err = -ENOEXEC;
		return o;
	}
	o->err = sym_load_segments(o);
	if (o->err)
		return o;
	has_symtab = sym_load_symbols(o, o->elf);
	/* NULL when the object has no DWARF (stripped, distro libraries). */
	o->dwarf = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL);
	if (!o->dwarf || !has_symtab)
		sym_load_debug_file(o, has_symtab);
	return o;
}

static void sym_object_free(struct sym_object *o)
{
	if (!o)
		return;
	if (o->dwarf)
		dwarf_end(o->dwarf);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	if (o->debug_elf)
		elf_end(o->debug_elf);
	if (o->debug_fd >= 0)
		close(o->debug_fd);
	free(o->debug_path);
	while (o->nnames)
		free(o->names[--o->nnames]);
	free(o->names);
	free(o->segs);
	free(o->syms);
	free(o->path);
	free(o);
}

/* The cached object for PATH (parsed on first use; parse errors are cached
 * too, in o->err). Keyed both by the caller's spelling and the realpath. */
static struct sym_object *sym_object_get(const char *path)
{
	char canon[PATH_MAX];
	struct sym_object *o = NULL;
	size_t i;

	for (i = 0; i < sym_cache_n; i++)
		if (!strcmp(sym_cache[i].key, path))
			return sym_cache[i].obj;
	if (!realpath(path, canon))
		snprintf(canon, sizeof(canon), "%s", path);
	for (i = 0; i < sym_objects_n; i++)
		if (!strcmp(sym_objects[i]->path, canon))
			o = sym_objects[i];
	if (!o) {
		o = sym_object_parse(canon);
		sym_objects = xrealloc(sym_objects, (sym_objects_n + 1) * sizeof(*sym_objects));
		sym_objects[sym_objects_n++] = o;
	}
	sym_cache = xrealloc(sym_cache, (sym_cache_n + 1) * sizeof(*sym_cache));
	sym_cache[sym_cache_n++] = (struct sym_cache_slot){ .key = xstrdup(path), .obj = o };
	return o;
}

static void sym_cache_flush_u(void)
{
	size_t i;

	for (i = 0; i < sym_cache_n; i++)
		free(sym_cache[i].key);
	for (i = 0; i < sym_objects_n; i++)
		sym_object_free(sym_objects[i]);
	free(sym_cache);
	free(sym_objects);
	sym_cache = NULL;
	sym_objects = NULL;
	sym_cache_n = sym_objects_n = 0;
}

void symbolize_cache_flush(void)
{
	bool l = sym_threaded;

	if (l)
		pthread_mutex_lock(&sym_lock);
	sym_cache_flush_u();
	if (l)
		pthread_mutex_unlock(&sym_lock);
}

static int obj_offset_to_vaddr(const struct sym_object *o, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct sym_segment *s = &o->segs[i];

		if (off >= s->offset && off < s->offset + s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	/* Not in the file: the .bss offsets obj_vaddr_to_offset makes up. */
	for (i = 0; i < o->nsegs; i++) {
		const struct sym_segment *s = &o->segs[i];

		if (off >= s->offset && off < s->offset + s->memsz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* For .bss (beyond p_filesz) the result is the offset the byte would have
 * if the segment were stored in full: stable, and unique within the object. */
static int obj_vaddr_to_offset(const struct sym_object *o, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct sym_segment *s = &o->segs[i];

		if (vaddr >= s->vaddr && vaddr < s->vaddr + s->memsz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

/* Innermost symbol containing vaddr; aliases were sorted best-first. */
static const struct sym_entry *obj_symbol_at(const struct sym_object *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nsyms, i, steps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo = first entry above vaddr. Walk back over the entries at or below
	 * it: nested symbols (a small object inside a bigger one) are rare, so
	 * a short walk suffices. */
	for (i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
		const struct sym_entry *e = &o->syms[i - 1];
		if (!e->defined)
			continue;
		if (vaddr < e->addr + e->span) {
			/* Move to the best-ranked alias at this address. */
			while (i > 1 && o->syms[i - 2].addr == e->addr && o->syms[i - 2].defined)
				e = &o->syms[--i - 1];
			return e;
		}
	}
	return NULL;
}

static void obj_dwarf_lookup(const struct sym_object *o, uint64_t vaddr, struct sym_site *out)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *line;
	int n, i, lineno;

	if (!o->dwarf || !dwarf_addrdie(o->dwarf, vaddr, &cu))
		return;
	line = dwarf_getsrc_die(&cu, vaddr);
	if (line && dwarf_lineno(line, &lineno) == 0) {
		out->file = dwarf_linesrc(line, NULL, NULL);
		out->line = lineno;
	}
	if (out->symbol)
		return;
	/* No ELF symbol (e.g. static functions in an object without .symtab
	 * but with DWARF): take the enclosing subprogram's name. */
	n = dwarf_getscopes(&cu, vaddr, &scopes);
	for (i = 0; i < n; i++) {
		Dwarf_Addr low;

		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		out->symbol = dwarf_diename(&scopes[i]);
		out->is_func = true;
		if (dwarf_lowpc(&scopes[i], &low) == 0 && low <= vaddr)
			out->sym_offset = vaddr - low;
		break;
	}
	free(scopes);
}

static void obj_resolve_vaddr(const struct sym_object *o, uint64_t vaddr, struct sym_site *out)
{
	const struct sym_entry *e = obj_symbol_at(o, vaddr);

	out->object = o->path;
	out->vaddr = vaddr;
	if (e) {
		out->symbol = e->name;
		out->sym_offset = vaddr - e->addr;
		out->sym_size = e->size;
		out->is_func = e->is_func;
	}
	obj_dwarf_lookup(o, vaddr, out);
}

/* ---- no process --------------------------------------------------------- */

static int sym_resolve_vaddr_u(const char *object, uint64_t vaddr, struct sym_site *out)
{
	struct sym_object *o = sym_object_get(object);

	memset(out, 0, sizeof(*out));
	if (o->err)
		return o->err;
	if (obj_vaddr_to_offset(o, vaddr, &out->offset))
		return -ENOENT;
	obj_resolve_vaddr(o, vaddr, out);
	return 0;
}

int symbolize_resolve_vaddr(const char *object, uint64_t vaddr, struct sym_site *out)
{
	return SYM_LOCKED(sym_resolve_vaddr_u(object, vaddr, out));
}

static int sym_resolve_offset_u(const char *object, uint64_t offset, struct sym_site *out)
{
	struct sym_object *o = sym_object_get(object);
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	if (o->err)
		return o->err;
	if (obj_offset_to_vaddr(o, offset, &vaddr))
		return -ENOENT;
	out->offset = offset;
	obj_resolve_vaddr(o, vaddr, out);
	return 0;
}

int symbolize_resolve_offset(const char *object, uint64_t offset, struct sym_site *out)
{
	return SYM_LOCKED(sym_resolve_offset_u(object, offset, out));
}

static const struct sym_entry *obj_find_name(const struct sym_object *o, const char *name,
					     bool func)
{
	const struct sym_entry *best = NULL;
	size_t i;

	for (i = 0; i < o->nsyms; i++) {
		const struct sym_entry *e = &o->syms[i];

		if (!e->defined || e->hidden || (bool)e->is_func != func || strcmp(e->name, name))
			continue;
		if (!best || e->rank < best->rank)
			best = e;
	}
	return best;
}

static int sym_lookup_function_u(const char *object, const char *name, uint64_t *offset,
				 uint64_t *size)
{
	struct sym_object *o = sym_object_get(object);
	const struct sym_entry *e;

	if (o->err)
		return o->err;
	e = obj_find_name(o, name, true);
	if (!e || obj_vaddr_to_offset(o, e->addr, offset))
		return -ENOENT;
	if (size)
		*size = e->size;
	return 0;
}

int symbolize_lookup_function(const char *object, const char *name, uint64_t *offset,
			      uint64_t *size)
{
	return SYM_LOCKED(sym_lookup_function_u(object, name, offset, size));
}

static int sym_lookup_variable_u(const char *object, const char *name, uint64_t *vaddr,
				 uint64_t *size)
{
	struct sym_object *o = sym_object_get(object);
	const struct sym_entry *e;

	if (o->err)
		return o->err;
	e = obj_find_name(o, name, false);
	if (!e)
		return -ENOENT;
	*vaddr = e->addr;
	if (size)
		*size = e->size;
	return 0;
}

int symbolize_lookup_variable(const char *object, const char *name, uint64_t *vaddr, uint64_t *size)
{
	return SYM_LOCKED(sym_lookup_variable_u(object, name, vaddr, size));
}

static int sym_offset_to_vaddr_u(const char *object, uint64_t offset, uint64_t *vaddr)
{
	struct sym_object *o = sym_object_get(object);

	return o->err ? o->err : obj_offset_to_vaddr(o, offset, vaddr);
}

int symbolize_offset_to_vaddr(const char *object, uint64_t offset, uint64_t *vaddr)
{
	return SYM_LOCKED(sym_offset_to_vaddr_u(object, offset, vaddr));
}

static int sym_vaddr_to_offset_u(const char *object, uint64_t vaddr, uint64_t *offset)
{
	struct sym_object *o = sym_object_get(object);

	return o->err ? o->err : obj_vaddr_to_offset(o, vaddr, offset);
}

int symbolize_vaddr_to_offset(const char *object, uint64_t vaddr, uint64_t *offset)
{
	return SYM_LOCKED(sym_vaddr_to_offset_u(object, vaddr, offset));
}

/* ---- live process ------------------------------------------------------- */

/* One loaded copy of an object: runtime = bias + ELF vaddr. */
struct sym_load {
	struct sym_object *obj;
	uint64_t bias;
	uint64_t lo, hi; /* runtime span of all its PT_LOAD segments */
};

struct symbolizer {
	pid_t pid;
	struct sym_load *loads;
	size_t nloads;
};

/* Does the load of o at bias already explain a mapping of pgoff at start?
 * A mapping may begin below its segment's vaddr (page alignment). */
static bool sym_load_explains(const struct sym_object *o, uint64_t bias, uint64_t start,
			      uint64_t pgoff)
{
	uint64_t v = start - bias;
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct sym_segment *g = &o->segs[i];
		uint64_t vpage = g->vaddr & ~(g->align - 1);

		if (v >= vpage && v < g->vaddr + g->memsz && g->offset - (g->vaddr - v) == pgoff)
			return true;
	}
	return false;
}

/* Segment a mapping of file offset pgoff with permissions perms ("r-xp")
 * comes from. pgoff alone is ambiguous (the page holding the end of one
 * segment often starts the next), so the execute/write bits must agree;
 * RELRO pages of a writable segment are read-only once relocated. */
static int sym_mapping_segment(const struct sym_object *o, uint64_t pgoff, const char *perms)
{
	bool x = perms[2] == 'x', w = perms[1] == 'w';
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct sym_segment *g = &o->segs[i];
		uint64_t page = g->offset & ~(g->align - 1);
		GElf_Phdr ph;
		size_t k, nph, seen = 0;
		bool gx = false, gw = false;

		if (pgoff < page || pgoff >= g->offset + (g->filesz ? g->filesz : 1))
			continue;
		/* Recover p_flags of the i-th PT_LOAD. */
		if (elf_getphdrnum(o->elf, &nph))
			continue;
		for (k = 0; k < nph; k++) {
			if (!gelf_getphdr(o->elf, k, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (seen++ == i) {
				gx = ph.p_flags & PF_X;
				gw = ph.p_flags & PF_W;
				break;
			}
		}
		if (x != gx || (w && !gw))
			continue;
		return (int)i;
	}
	return -ENOENT;
}

static void symbolizer_add_mapping(struct symbolizer *s, uint64_t start, uint64_t pgoff,
				   const char *perms, const char *path)
{
	struct sym_object *o = sym_object_get(path);
	uint64_t bias, lo = UINT64_MAX, hi = 0;
	size_t i;
	int seg;

	if (o->err)
		return;
	for (i = 0; i < s->nloads; i++)
		if (s->loads[i].obj == o && sym_load_explains(o, s->loads[i].bias, start, pgoff))
			return;
	seg = sym_mapping_segment(o, pgoff, perms);
	if (seg < 0)
		return;
	/* The mapping starts at file offset pgoff, whose ELF vaddr is
	 * seg.vaddr + (pgoff - seg.offset). */
	bias = start - (o->segs[seg].vaddr + pgoff - o->segs[seg].offset);
	for (i = 0; i < o->nsegs; i++) {
		if (o->segs[i].vaddr + bias < lo)
			lo = o->segs[i].vaddr + bias;
		if (o->segs[i].vaddr + o->segs[i].memsz + bias > hi)
			hi = o->segs[i].vaddr + o->segs[i].memsz + bias;
	}
	s->loads = xrealloc(s->loads, (s->nloads + 1) * sizeof(*s->loads));
	s->loads[s->nloads++] = (struct sym_load){ .obj = o, .bias = bias, .lo = lo, .hi = hi };
}

static int symbolizer_refresh_u(struct symbolizer *s)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", s->pid ? (int)s->pid : (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, pgoff;
		char perms[8];
		int pathpos = 0;
		char *file, *nl;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms, &pgoff,
			   &pathpos) < 4 ||
		    !pathpos)
			continue;
		file = line + pathpos;
		nl = strchr(file, '\n');
		if (nl)
			*nl = 0;
		/* Only file mappings; "(deleted)" files cannot be reopened. */
		if (file[0] != '/' || strstr(file, " (deleted)"))
			continue;
		symbolizer_add_mapping(s, start, pgoff, perms, file);
	}
	free(line);
	fclose(f);
	return 0;
}

int symbolize_refresh(struct symbolizer *s)
{
	return SYM_LOCKED(symbolizer_refresh_u(s));
}

static struct symbolizer *symbolizer_new_u(pid_t pid)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	int err;

	s->pid = pid;
	err = symbolize_refresh(s);
	if (err) {
		free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

struct symbolizer *symbolize_new(pid_t pid)
{
	return SYM_LOCKED(symbolizer_new_u(pid));
}

void symbolize_free(struct symbolizer *s)
{
	if (!s)
		return;
	free(s->loads);
	free(s);
}

/* Latest load covering addr (a later dlopen may reuse a range). */
static const struct sym_load *symbolizer_load_at(const struct symbolizer *s, uint64_t addr)
{
	size_t i;

	for (i = s->nloads; i > 0; i--) {
		const struct sym_load *l = &s->loads[i - 1];

		if (addr >= l->lo && addr < l->hi &&
		    obj_vaddr_to_offset(l->obj, addr - l->bias, &(uint64_t){ 0 }) == 0)
			return l;
	}
	return NULL;
}

static int symbolizer_site_u(struct symbolizer *s, uint64_t addr, struct sym_site *out)
{
	const struct sym_load *l = symbolizer_load_at(s, addr);

	memset(out, 0, sizeof(*out));
	if (!l) {
		out->vaddr = addr;
		return -ENOENT;
	}
	out->object = l->obj->path;
	out->vaddr = addr - l->bias;
	return obj_vaddr_to_offset(l->obj, out->vaddr, &out->offset);
}

int symbolize_site(struct symbolizer *s, uint64_t addr, struct sym_site *out)
{
	return SYM_LOCKED(symbolizer_site_u(s, addr, out));
}

static int symbolizer_resolve_u(struct symbolizer *s, uint64_t addr, struct sym_site *out)
{
	const struct sym_load *l = symbolizer_load_at(s, addr);

	if (!l && symbolize_refresh(s) == 0)
		l = symbolizer_load_at(s, addr);
	memset(out, 0, sizeof(*out));
	if (!l) {
		out->vaddr = addr;
		return -ENOENT;
	}
	obj_vaddr_to_offset(l->obj, addr - l->bias, &out->offset);
	obj_resolve_vaddr(l->obj, addr - l->bias, out);
	return 0;
}

int symbolize_resolve(struct symbolizer *s, uint64_t addr, struct sym_site *out)
{
	return SYM_LOCKED(symbolizer_resolve_u(s, addr, out));
}

static uint64_t symbolizer_runtime_addr_u(struct symbolizer *s, const char *object, uint64_t offset)
{
	struct sym_object *o = sym_object_get(object);
	uint64_t vaddr;
	size_t i;

	if (o->err || obj_offset_to_vaddr(o, offset, &vaddr))
		return 0;
	for (i = s->nloads; i > 0; i--)
		if (s->loads[i - 1].obj == o)
			return s->loads[i - 1].bias + vaddr;
	return 0;
}

uint64_t symbolize_runtime_addr(struct symbolizer *s, const char *object, uint64_t offset)
{
	return SYM_LOCKED(symbolizer_runtime_addr_u(s, object, offset));
}

const char *symbolize_find_object(struct symbolizer *s, const char *prefix)
{
	size_t i;

	for (i = 0; i < s->nloads; i++) {
		const char *base = strrchr(s->loads[i].obj->path, '/');

		base = base ? base + 1 : s->loads[i].obj->path;
		if (!strncmp(base, prefix, strlen(prefix)))
			return s->loads[i].obj->path;
	}
	return NULL;
}

/* ---- formatting --------------------------------------------------------- */

static const char *sym_basename(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

int symbolize_site_format(const struct sym_site *site, char *buf, size_t len)
{
	if (!site->object)
		return snprintf(buf, len, "0x%" PRIx64, site->vaddr);
	if (!site->symbol)
		return snprintf(buf, len, "%s+0x%" PRIx64, sym_basename(site->object),
				site->offset);
	if (site->file && site->line)
		return snprintf(buf, len, "%s+0x%" PRIx64 " (%s:%d)", site->symbol,
				site->sym_offset, sym_basename(site->file), site->line);
	return snprintf(buf, len, "%s+0x%" PRIx64 " (%s+0x%" PRIx64 ")", site->symbol,
			site->sym_offset, sym_basename(site->object), site->offset);
}

int symbolize_site_key(const struct sym_site *site, char *buf, size_t len)
{
	if (!site->object)
		return snprintf(buf, len, "0x%" PRIx64, site->vaddr);
	return snprintf(buf, len, "%s+0x%" PRIx64, site->object, site->offset);
}
