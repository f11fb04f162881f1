/* SPDX-License-Identifier: MIT */
/*
 * Site finder (issue 7 item 1): the load/store instructions of a program's
 * .text (and of named shared objects) that access memory other than the
 * stack, found by decoding the code with capstone. Each site carries the
 * operand decode the access probe needs to compute the effective address
 * from the registers (struct cs_access_site, bpf/concsched_abi.h) and its
 * attribution (function, file:line) from the symbolizer.
 *
 * Kept: every instruction with one explicit memory operand that is read,
 * written or both (lock-prefixed read-modify-write, xchg, cmpxchg, SSE/AVX
 * loads and stores). Dropped, with a count per reason: rsp/rbp-relative
 * operands (thread stacks are not shared variables), fs/gs-segment operands
 * (thread-local storage), lea/nop/prefetch (no access), calls and jumps
 * through memory (GOT/vtable loads, not data), instructions with two memory
 * operands (string instructions) and operands using registers the probe
 * cannot read (32-bit address registers, vector index registers), and
 * lock-prefixed instructions that can be probed neither just before nor
 * just after (see probe_offset).
 */
#ifndef CONCSCHED_SITE_FINDER_H
#define CONCSCHED_SITE_FINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concsched_abi.h"

struct mem_site {
	const char *object; /* object path (owned by the symbolizer cache) */
	uint64_t offset;    /* file offset of the instruction (the site key) */
	uint64_t vaddr;	    /* ELF virtual address */
	/*
	 * Where the uprobe goes: offset, except for lock-prefixed
	 * instructions, which x86 uprobes refuse (-ENOTSUPP). Those are
	 * probed at the instruction before when control falls through from
	 * it and it leaves the address registers alone (a jump straight to
	 * the locked instruction is then missed), else at the one after when
	 * the locked instruction leaves them alone (a jump to that one then
	 * counts too). decode is relative to the probe address.
	 */
	uint64_t probe_offset;
	struct cs_access_site decode;
	uint8_t len;	      /* instruction length */
	const char *function; /* NULL: unknown (stripped) */
	uint64_t func_offset;
	const char *file; /* NULL: no line info */
	int line;
	char insn[64]; /* "add dword ptr [rip + 0x2e8b], 1" */
};

struct site_filter {
	const char **include; /* fnmatch globs on function, file or file basename */
	size_t ninclude;      /* 0: everything is included */
	const char **exclude;
	size_t nexclude;
};

struct site_set {
	struct mem_site *sites;
	size_t n, cap;
	/* Instructions decoded and dropped, by reason (see the comment above). */
	size_t insns;
	size_t skipped_stack, skipped_tls, skipped_noaccess, skipped_branch;
	size_t skipped_multi, skipped_reg, skipped_filter;
	size_t skipped_lock; /* lock-prefixed, probeable neither before nor after
			      * without sharing another site's probe */
};

/* Append the memory-access sites of OBJECT's .text that pass the filter
 * (NULL: all). 0 or -errno (-ENOENT no file, -ENOEXEC not an x86-64 ELF or
 * no .text). Strings in the sites stay valid until symbolize_cache_flush(). */
int site_finder_find(const char *object, const struct site_filter *filter, struct site_set *set);
void site_finder_set_free(struct site_set *set);
/* Does FUNCTION/FILE pass the filter? (exposed for tests and the CLI) */
bool site_finder_filter_match(const struct site_filter *filter, const char *function,
			      const char *file);

/* The shared object NAME as the program TARGET would load it: NAME itself if
 * it is a path, else searched in TARGET's RPATH/RUNPATH ($ORIGIN expanded),
 * LD_LIBRARY_PATH and the system library directories, trying NAME,
 * NAME.so and NAME*.so* ("libc" finds libc.so.6). malloc'd path or NULL. */
char *site_finder_resolve_object(const char *target, const char *name);

/* "R", "W", "RW" for a site's flags. */
const char *site_finder_access_str(uint8_t flags);
/* Where site S is, as symbolize_site_format() writes a resolved site
 * (function+offset, file:line when known), into buf of len bytes. */
void site_finder_site_text(const struct mem_site *s, char *buf, size_t len);

#endif
