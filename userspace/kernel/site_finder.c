// SPDX-License-Identifier: MIT
/*
 * Site finder (see site_finder.h): linear sweep of .text with capstone
 * (x86-64, detail on), keeping non-stack memory operands with the decode the
 * access probe evaluates at run time.
 */
#include "kernel/site_finder.h"

#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/symbolize.h"
#include "lib/array_size.h"
#include "lib/xalloc.h"

/* capstone register -> pt_regs slot; CS_REG_NONE for "no register";
 * -1 for registers the probe cannot read (32-bit address registers,
 * vector registers of VSIB operands). */
static int site_reg(unsigned reg)
{
	switch (reg) {
	case X86_REG_INVALID:
		return CS_REG_NONE;
	case X86_REG_RAX:
		return CS_REG_AX;
	case X86_REG_RBX:
		return CS_REG_BX;
	case X86_REG_RCX:
		return CS_REG_CX;
	case X86_REG_RDX:
		return CS_REG_DX;
	case X86_REG_RSI:
		return CS_REG_SI;
	case X86_REG_RDI:
		return CS_REG_DI;
	case X86_REG_RBP:
		return CS_REG_BP;
	case X86_REG_RSP:
		return CS_REG_SP;
	case X86_REG_R8:
		return CS_REG_R8;
	case X86_REG_R9:
		return CS_REG_R9;
	case X86_REG_R10:
		return CS_REG_R10;
	case X86_REG_R11:
		return CS_REG_R11;
	case X86_REG_R12:
		return CS_REG_R12;
	case X86_REG_R13:
		return CS_REG_R13;
	case X86_REG_R14:
		return CS_REG_R14;
	case X86_REG_R15:
		return CS_REG_R15;
	case X86_REG_RIP:
		return CS_REG_IP;
	default:
		return -1;
	}
}

/* The 64-bit register a (sub)register is part of. */
static unsigned site_reg_parent(unsigned r)
{
	switch (r) {
	case X86_REG_AL:
	case X86_REG_AH:
	case X86_REG_AX:
	case X86_REG_EAX:
		return X86_REG_RAX;
	case X86_REG_BL:
	case X86_REG_BH:
	case X86_REG_BX:
	case X86_REG_EBX:
		return X86_REG_RBX;
	case X86_REG_CL:
	case X86_REG_CH:
	case X86_REG_CX:
	case X86_REG_ECX:
		return X86_REG_RCX;
	case X86_REG_DL:
	case X86_REG_DH:
	case X86_REG_DX:
	case X86_REG_EDX:
		return X86_REG_RDX;
	case X86_REG_SIL:
	case X86_REG_SI:
	case X86_REG_ESI:
		return X86_REG_RSI;
	case X86_REG_DIL:
	case X86_REG_DI:
	case X86_REG_EDI:
		return X86_REG_RDI;
	case X86_REG_BPL:
	case X86_REG_BP:
	case X86_REG_EBP:
		return X86_REG_RBP;
	case X86_REG_SPL:
	case X86_REG_SP:
	case X86_REG_ESP:
		return X86_REG_RSP;
	case X86_REG_R8B:
	case X86_REG_R8W:
	case X86_REG_R8D:
		return X86_REG_R8;
	case X86_REG_R9B:
	case X86_REG_R9W:
	case X86_REG_R9D:
		return X86_REG_R9;
	case X86_REG_R10B:
	case X86_REG_R10W:
	case X86_REG_R10D:
		return X86_REG_R10;
	case X86_REG_R11B:
	case X86_REG_R11W:
	case X86_REG_R11D:
		return X86_REG_R11;
	case X86_REG_R12B:
	case X86_REG_R12W:
	case X86_REG_R12D:
		return X86_REG_R12;
	case X86_REG_R13B:
	case X86_REG_R13W:
	case X86_REG_R13D:
		return X86_REG_R13;
	case X86_REG_R14B:
	case X86_REG_R14W:
	case X86_REG_R14D:
		return X86_REG_R14;
	case X86_REG_R15B:
	case X86_REG_R15W:
	case X86_REG_R15D:
		return X86_REG_R15;
	default:
		return r;
	}
}

/* The instruction before the current one in the sweep: a place to probe a
 * lock-prefixed instruction from, if control falls through from it. */
struct site_prev {
	bool usable;
	bool probed; /* a site probed at this instruction was pushed */
	uint64_t vaddr;
	uint8_t nwrites;
	uint16_t writes[64];
};

static void site_prev_update(csh h, const cs_insn *in, bool branch, struct site_prev *p)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0, i;

	p->usable = !branch && in->detail->x86.prefix[0] != X86_PREFIX_LOCK &&
		    cs_regs_access(h, in, rd, &nrd, wr, &nwr) == CS_ERR_OK;
	p->vaddr = in->address;
	p->probed = false;
	p->nwrites = 0;
	for (i = 0; p->usable && i < nwr && i < ARRAY_SIZE(p->writes); i++)
		p->writes[p->nwrites++] = (uint16_t)site_reg_parent(wr[i]);
}

static bool site_prev_writes(const struct site_prev *p, unsigned reg)
{
	uint8_t i;

	if (reg == X86_REG_INVALID || reg == X86_REG_RIP)
		return false;
	for (i = 0; i < p->nwrites; i++)
		if (p->writes[i] == site_reg_parent(reg))
			return true;
	return false;
}

const char *site_finder_access_str(uint8_t flags)
{
	switch (flags & (CS_ACC_READ | CS_ACC_WRITE)) {
	case CS_ACC_READ:
		return "R";
	case CS_ACC_WRITE:
		return "W";
	default:
		return "RW";
	}
}

void site_finder_site_text(const struct mem_site *s, char *buf, size_t len)
{
	struct sym_site ss = { .object = s->object,
			       .offset = s->offset,
			       .symbol = s->function,
			       .sym_offset = s->func_offset,
			       .file = s->file,
			       .line = s->line };

	symbolize_site_format(&ss, buf, len);
}

bool site_finder_filter_match(const struct site_filter *f, const char *function, const char *file)
{
	const char *base = file ? strrchr(file, '/') : NULL;
	size_t i;
	bool in;

	base = base ? base + 1 : file;
#define SITE_GLOB_HIT(g)                                                                           \
	((function && !fnmatch((g), function, 0)) || (file && !fnmatch((g), file, 0)) ||           \
	 (base && !fnmatch((g), base, 0)))
	if (!f)
		return true;
	in = f->ninclude == 0;
	for (i = 0; i < f->ninclude && !in; i++)
		in = SITE_GLOB_HIT(f->include[i]);
	for (i = 0; i < f->nexclude && in; i++)
		in = !SITE_GLOB_HIT(f->exclude[i]);
#undef SITE_GLOB_HIT
	return in;
}

/* Is this instruction's group a control transfer (call/jmp through memory
 * reads a code pointer, not program data)? */
static bool site_is_branch(csh h, const cs_insn *in)
{
	return cs_insn_group(h, in, X86_GRP_JUMP) || cs_insn_group(h, in, X86_GRP_CALL) ||
	       cs_insn_group(h, in, X86_GRP_RET);
}

static bool site_no_access(unsigned id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH:
	case X86_INS_CLFLUSHOPT:
	case X86_INS_CLWB:
		return true;
	default:
		return false;
	}
}

static const x86_op_mem *site_mem_operand(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	int i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return &x->operands[i].mem;
	return NULL;
}

/* Decode one instruction into *site. 0: keep; 1: drop (counted). */
static int site_decode(csh h, const cs_insn *in, struct site_set *set, struct mem_site *site)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *mem = NULL;
	int i, nmem = 0, base, index;
	uint8_t acc;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM) {
			mem = &x->operands[i];
			nmem++;
		}
	if (!nmem)
		return 1;
	if (site_no_access(in->id)) {
		set->skipped_noaccess++;
		return 1;
	}
	if (site_is_branch(h, in)) {
		set->skipped_branch++;
		return 1;
	}
	if (nmem > 1) {
		set->skipped_multi++;
		return 1;
	}
	if (mem->mem.segment == X86_REG_FS || mem->mem.segment == X86_REG_GS) {
		set->skipped_tls++;
		return 1;
	}
	if (mem->mem.base == X86_REG_RSP || mem->mem.base == X86_REG_RBP) {
		set->skipped_stack++;
		return 1;
	}
	base = site_reg(mem->mem.base);
	index = site_reg(mem->mem.index);
	if (base < 0 || index < 0 || index == CS_REG_IP) {
		set->skipped_reg++;
		return 1;
	}
	/* capstone 4 leaves access 0 on a few opcodes; an explicit memory
	 * operand is at least read. */
	acc = 0;
	if (mem->access & CS_AC_READ)
		acc |= CS_ACC_READ;
	if (mem->access & CS_AC_WRITE)
		acc |= CS_ACC_WRITE;
	if (!acc)
		acc = CS_ACC_READ;
	/* capstone 4 marks test's memory operand written in its immediate
	 * forms (F6 /0, F7 /0: `testb $0x46,(%rcx,%rsi)`); test only reads.
	 * A read taken for a write made sqlite3's const sqlite3CtypeMap a
	 * written, racing variable (docs/races.md). */
	if (in->id == X86_INS_TEST)
		acc &= ~CS_ACC_WRITE;
	if (x->prefix[0] == X86_PREFIX_LOCK || in->id == X86_INS_XCHG)
		acc |= CS_ACC_LOCK;
	/* A lock prefix is only valid on read-modify-write instructions, and
	 * capstone 4 marks cmpxchg's memory operand read-only. */
	if ((acc & CS_ACC_LOCK) || in->id == X86_INS_CMPXCHG || in->id == X86_INS_CMPXCHG8B ||
	    in->id == X86_INS_CMPXCHG16B || in->id == X86_INS_XADD)
		acc |= CS_ACC_READ | CS_ACC_WRITE;
	site->decode = (struct cs_access_site){
		.disp = mem->mem.disp,
		.base = (uint8_t)base,
		.index = (uint8_t)index,
		.scale = (uint8_t)(mem->mem.scale ? mem->mem.scale : 1),
		.size = mem->size,
		.flags = acc,
	};
	if (base == CS_REG_IP) {
		/* capstone's disp is relative to the next instruction; make it
		 * relative to the probe address (the instruction itself). */
		site->decode.base = CS_REG_NONE;
		site->decode.disp += in->size;
		site->decode.flags |= CS_ACC_RIP;
	}
	site->len = in->size;
	/* Long AVX operand strings are cut; the text is for display only. */
	if (snprintf(site->insn, sizeof(site->insn), "%.15s %.47s", in->mnemonic, in->op_str) < 0)
		site->insn[0] = 0;
	return 0;
}

/* Where a site's probe sits (it differs from vaddr for a lock prefix). */
static uint64_t site_probe_vaddr(const struct mem_site *s)
{
	return s->vaddr - (s->offset - s->probe_offset);
}

static void site_push(struct site_set *set, const struct mem_site *s)
{
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 256;
		set->sites = xrealloc(set->sites, set->cap * sizeof(*set->sites));
	}
	set->sites[set->n++] = *s;
}

static Elf_Scn *site_text_section(Elf *e, GElf_Shdr *text)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, text) || text->sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(e, shstrndx, text->sh_name);
		if (name && !strcmp(name, ".text"))
			return scn;
	}
	return NULL;
}

static int site_sweep(const char *object, const uint8_t *code, size_t size, uint64_t addr,
		      const struct site_filter *filter, struct site_set *set)
{
	struct site_prev prev = { 0 };
	csh h;
	cs_insn *in;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	while (size) {
		struct mem_site site = { 0 };
		struct sym_site sym;
		int64_t delta = 0;

		if (!cs_disasm_iter(h, &code, &size, &addr, in)) {
			/* Data or padding capstone cannot decode: resync a byte on. */
			code++;
			size--;
			addr++;
			continue;
		}
		set->insns++;
		if (site_decode(h, in, set, &site)) {
			site_prev_update(h, in, site_is_branch(h, in), &prev);
			continue;
		}
		if (in->detail->x86.prefix[0] == X86_PREFIX_LOCK) {
			const x86_op_mem *m = site_mem_operand(in);
			struct site_prev self;

			site_prev_update(h, in, false, &self);
			/* Not on another site's probe: one trap, one access
			 * point (two points at one trap cannot be told apart
			 * in a schedule, nor held apart in a replay). */
			if (prev.usable && !prev.probed && prev.vaddr + 15 >= in->address &&
			    !site_prev_writes(&prev, m->base) &&
			    !site_prev_writes(&prev, m->index)) {
				delta = (int64_t)(in->address - prev.vaddr);
			} else if (!site_prev_writes(&self, m->base) &&
				   !site_prev_writes(&self, m->index)) {
				/* Probe the next instruction: reached by falling
				 * through, the address registers unchanged. */
				delta = -(int64_t)in->size;
			} else {
				set->skipped_lock++;
				site_prev_update(h, in, false, &prev);
				continue;
			}
			if (site.decode.flags & CS_ACC_RIP)
				site.decode.disp += delta;
		}
		site_prev_update(h, in, false, &prev);
		if (symbolize_resolve_vaddr(object, in->address, &sym))
			continue;
		if (!site_finder_filter_match(filter, sym.symbol, sym.file)) {
			set->skipped_filter++;
			continue;
		}
		if (!delta && set->n && site_probe_vaddr(&set->sites[set->n - 1]) == in->address) {
			/* The lock-prefixed site before is probed here, after
			 * itself: this access keeps its own probe, that one has
			 * no place of its own left. */
			set->n--;
			set->skipped_lock++;
		}
		site.object = sym.object;
		site.offset = sym.offset;
		site.probe_offset = sym.offset - (uint64_t)delta;
		site.vaddr = in->address;
		site.function = sym.symbol;
		site.func_offset = sym.sym_offset;
		site.file = sym.file;
		site.line = sym.line;
		site_push(set, &site);
		prev.probed = !delta;
	}
	cs_free(in, 1);
	cs_close(&h);
	return 0;
}

int site_finder_find(const char *object, const struct site_filter *filter, struct site_set *set)
{
	GElf_Ehdr eh;
	GElf_Shdr text;
	Elf_Scn *scn;
	Elf_Data *data;
	Elf *e = NULL;
	int fd, err;

	fd = open(object, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = -ENOEXEC;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		goto cleanup;
	scn = site_text_section(e, &text);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf)
		goto cleanup;
	err = site_sweep(object, data->d_buf, data->d_size, text.sh_addr, filter, set);
cleanup:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* Append dir entries of RPATH/RUNPATH (":"-separated, $ORIGIN expanded). */
static void site_dt_paths(const char *target, char ***dirs, size_t *n)
{
	char origin[PATH_MAX], *slash;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd;

	fd = open(target, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	snprintf(origin, sizeof(origin), "%s", target);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *v;
			char *copy, *tok, *save = NULL;

			if (!gelf_getdyn(d, i, &dyn) ||
			    (dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH))
				continue;
			v = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!v)
				continue;
			copy = xstrdup(v);
			for (tok = strtok_r(copy, ":", &save); tok;
			     tok = strtok_r(NULL, ":", &save)) {
				*dirs = xrealloc(*dirs, (*n + 1) * sizeof(**dirs));
				if (!strncmp(tok, "$ORIGIN", 7))
					(*dirs)[(*n)++] = xasprintf("%s%s", origin, tok + 7);
				else
					(*dirs)[(*n)++] = xstrdup(tok);
			}
			free(copy);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

/* An ELF file (the dev "libc.so" is a linker script, not a library). */
static bool site_is_elf(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, m, 4) == 4 && !memcmp(m, ELFMAG, SELFMAG);
	close(fd);
	return ok;
}

static char *site_search_glob(const char *dir, const char *pattern)
{
	struct dirent *de;
	char *p = NULL;
	DIR *d = opendir(dir);

	if (!d)
		return NULL;
	while (!p && (de = readdir(d))) {
		if (fnmatch(pattern, de->d_name, 0))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (!site_is_elf(p)) {
			free(p);
			p = NULL;
		}
	}
	closedir(d);
	return p;
}

/* NAME, NAME.so.*, NAME.so, NAME*.so* in that order: "libc" finds
 * libc.so.6, not the linker script libc.so. */
static char *site_search_dir(const char *dir, const char *name)
{
	static const char *const forms[] = { "%s", "%s.so.*", "%s.so", "%s*.so*" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(forms); i++) {
		char *pat = xasprintf(forms[i], name), *p = site_search_glob(dir, pat);

		free(pat);
		if (p)
			return p;
	}
	return NULL;
}

char *site_finder_resolve_object(const char *target, const char *name)
{
	static const char *const sysdirs[] = {
		"/lib/x86_64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu",
		"/lib64",
		"/usr/lib64",
		"/lib",
		"/usr/lib",
		"/usr/local/lib",
	};
	char **dirs = NULL, *found = NULL, canon[PATH_MAX];
	const char *ld = getenv("LD_LIBRARY_PATH");
	size_t n = 0, i;

	if (strchr(name, '/'))
		return realpath(name, canon) ? xstrdup(canon) : NULL;
	if (target)
		site_dt_paths(target, &dirs, &n);
	if (ld && *ld) {
		char *copy = xstrdup(ld), *tok, *save = NULL;

		for (tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			dirs = xrealloc(dirs, (n + 1) * sizeof(*dirs));
			dirs[n++] = xstrdup(tok);
		}
		free(copy);
	}
	for (i = 0; i < ARRAY_SIZE(sysdirs); i++) {
		dirs = xrealloc(dirs, (n + 1) * sizeof(*dirs));
		dirs[n++] = xstrdup(sysdirs[i]);
	}
	for (i = 0; i < n && !found; i++)
		found = site_search_dir(dirs[i], name);
	for (i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	if (found && realpath(found, canon)) {
		free(found);
		return xstrdup(canon);
	}
	return found;
}

void site_finder_set_free(struct site_set *set)
{
	free(set->sites);
	memset(set, 0, sizeof(*set));
}
