/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: runtime address -> site (ALGORITHMS.md §8: tasks are keyed
 * by sites, never by raw addresses, so they match across runs).
 *
 * A site is (object path, file offset). That pair is the stable key: it does
 * not change with ASLR and it is exactly what a uprobe attaches to. For
 * humans a site is also resolved to "function+0xoff (file.c:line)" from the
 * object's .symtab (else .dynsym) and its DWARF line table (libdw).
 *
 * Two ways in:
 *  - struct symbolizer: follows one live process. symbolize_refresh()
 *    snapshots /proc/PID/maps; call it again whenever new objects may have
 *    been mapped (after exec, after dlopen, when an address does not
 *    resolve). Every mapping ever seen is kept, so addresses recorded while
 *    the target lived still resolve after it exited — but the maps must have
 *    been read while it was alive. Data addresses (.data/.bss, including the
 *    anonymous tail of .bss) resolve too, to the global variable's symbol.
 *  - symbolize_resolve_offset(): (object path, file offset) -> symbol, file:line,
 *    no process needed (reports from a stored campaign, the site finder).
 *
 * Works for PIE, non-PIE, shared objects, static and stripped binaries
 * (stripped: object+offset, plus the function from .dynsym if it has one).
 * An object without .symtab or without DWARF takes them from its separate
 * debug file when one is installed, found as gdb finds it: by build ID
 * under the debug root ($CONCSCHED_DEBUG_ROOT, default /usr/lib/debug),
 * then by .gnu_debuglink next to the object, in its .debug/ and under the
 * debug root (symbolize_debug_file_paths).
 * Parsed objects are cached process-wide by path (symbolize_cache_flush() drops
 * them). Strings in struct sym_site point into that cache: they stay valid
 * until symbolize_cache_flush(); copy them if you need them longer.
 * Not thread-safe: use from one thread at a time.
 */
#ifndef CONCSCHED_SYMBOLIZE_H
#define CONCSCHED_SYMBOLIZE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sym_site {
	const char *object;  /* absolute path of the mapped file; NULL: not in
			      * any file mapping (heap, stack, anon) */
	uint64_t offset;     /* file offset in object (for .bss: the offset
			      * the address would have, p_offset + delta) */
	uint64_t vaddr;	     /* ELF virtual address (st_value space) */
	const char *symbol;  /* function or variable name; NULL: unknown */
	uint64_t sym_offset; /* address - symbol start */
	uint64_t sym_size;   /* st_size of symbol (0 unknown) */
	bool is_func;	     /* symbol is STT_FUNC (else data/other) */
	const char *file;    /* source file from DWARF (as recorded, often
			      * absolute); NULL: no line info */
	int line;	     /* 0: unknown */
};

/* ---- live process ---------------------------------------------------- */

struct symbolizer;

/* A symbolizer for PID (reads its maps once). pid 0: the calling process.
 * Returns NULL with errno set if /proc/PID/maps cannot be read. */
struct symbolizer *symbolize_new(pid_t pid);
/* Re-read /proc/PID/maps, adding mappings not seen before. 0 or -errno
 * (-ESRCH once the process is gone; what was seen stays usable). */
int symbolize_refresh(struct symbolizer *s);
void symbolize_free(struct symbolizer *s);

/* Fast path for event loops: runtime address -> (object, file offset) only,
 * no symbol or line lookup. 0, or -ENOENT if no file mapping covers addr
 * (out->object NULL). The rest of *out is zeroed. */
int symbolize_site(struct symbolizer *s, uint64_t addr, struct sym_site *out);
/* Full resolution: site + symbol + file:line. 0 if at least the object is
 * known, -ENOENT otherwise. Tries one refresh on a miss while pid lives. */
int symbolize_resolve(struct symbolizer *s, uint64_t addr, struct sym_site *out);
/* Runtime address of (object, file offset) in this process; 0 if that
 * object is not mapped (or was never seen mapped). The object path must
 * match the one in /proc/PID/maps (realpath). */
uint64_t symbolize_runtime_addr(struct symbolizer *s, const char *object, uint64_t offset);
/* Path of the first mapped object whose basename starts with PREFIX (e.g.
 * "libc.so"), or NULL. Points into the symbolizer. */
const char *symbolize_find_object(struct symbolizer *s, const char *prefix);

/* ---- no process ------------------------------------------------------ */

/* (object, file offset) -> symbol + file:line. 0, -ENOENT (offset not in a
 * loadable segment), or -errno opening/parsing the object. */
int symbolize_resolve_offset(const char *object, uint64_t offset, struct sym_site *out);
/* ELF virtual address in object -> site (symbol, file:line, file offset). */
int symbolize_resolve_vaddr(const char *object, uint64_t vaddr, struct sym_site *out);
/* Function NAME in object -> file offset of its entry and st_size (for
 * attaching uprobes by offset: KERNEL.md Q5, libbpf 1.4.6 cannot resolve
 * symbols in libc for uprobe_multi). Looks in .symtab then .dynsym; skips
 * undefined and non-default-version (hidden) dynsym entries. 0 or -ENOENT. */
int symbolize_lookup_function(const char *object, const char *name, uint64_t *offset,
			      uint64_t *size);
/* Global variable NAME -> ELF virtual address and size. 0 or -ENOENT. */
int symbolize_lookup_variable(const char *object, const char *name, uint64_t *vaddr,
			      uint64_t *size);
/* File offset <-> ELF virtual address via PT_LOAD. 0 or -ENOENT. */
int symbolize_offset_to_vaddr(const char *object, uint64_t offset, uint64_t *vaddr);
int symbolize_vaddr_to_offset(const char *object, uint64_t vaddr, uint64_t *offset);
/* Where a separate debug file of OBJECT may be, in the order gdb tries
 * them: ROOT/.build-id/NN/REST.debug for a BUILD_ID of ID_LEN >= 2 bytes
 * (NN its first byte in hex, REST the others), then for a DEBUGLINK name
 * (.gnu_debuglink; NULL: none) DIR/DEBUGLINK, DIR/.debug/DEBUGLINK and
 * ROOT/DIR/DEBUGLINK, DIR being OBJECT's directory. Fills up to MAX paths;
 * returns how many. A candidate found by build ID must carry the same
 * build ID; one found by debuglink the same build ID, or without one the
 * link's CRC-32. */
int symbolize_debug_file_paths(const char *object, const uint8_t *build_id, size_t id_len,
			       const char *debuglink, const char *root, char paths[][PATH_MAX],
			       int max);
/* Drop every cached object (frees the strings sym_site points to). */
void symbolize_cache_flush(void);

/* ---- formatting ------------------------------------------------------ */

/* "function+0xoff (file.c:line)" when the symbol and line are known,
 * "function+0xoff (libx.so+0xoff)" without a line, "libx.so+0xoff" without a
 * symbol, "0xADDR" (vaddr) without an object. Basenames of file and object.
 * Returns the snprintf length. */
int symbolize_site_format(const struct sym_site *site, char *buf, size_t len);
/* Stable key "OBJECT+0xOFF" with the full object path (store, matching). */
int symbolize_site_key(const struct sym_site *site, char *buf, size_t len);

/* More than one thread symbolizes from now on (on) or no longer (off):
 * the functions above take a lock meanwhile (run -j N). Set it while one
 * thread runs. */
void symbolize_set_threaded(bool on);

#endif
