// SPDX-License-Identifier: MIT
/*
 * Where a pthread function's entry probe sits (sync.h,
 * sync_probe_point). x86 uprobes emulate a few instructions in the trap
 * (jmp, jcc, call rel32, push reg, nop) and single-step every other one out
 * of line, which costs a second trap: ~19 µs against ~0.7 µs on the
 * development host (docs/perf.md, "Sync probes"). glibc's
 * pthread_mutex_lock begins "mov 0x10(%rdi),%eax; ...; jne", so its entry
 * is single-stepped on every call while the jne five instructions on is
 * emulated. The probe may move there when nothing the entry program reads
 * has changed on the way: the stack pointer (the return address on top of
 * the stack is the call site), the argument registers it reads, and no
 * memory was written, so the event still comes before the call does
 * anything another thread can see.
 */
#include "kernel/sync.h"

#include <capstone/capstone.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/xalloc.h"

/* At most this many instructions from the entry (a prologue, not a body). */
#define POINT_MAX_INSNS 8
/* Functions longer than this are scanned for branch targets this far. */
#define POINT_MAX_BODY 16384

/* The 64-bit register a capstone register is part of (rsp, rdi, rsi, rdx,
 * rcx and their sub-registers), else the register itself. */
static unsigned reg64(unsigned r)
{
	switch (r) {
	case X86_REG_SPL:
	case X86_REG_SP:
	case X86_REG_ESP:
		return X86_REG_RSP;
	case X86_REG_DIL:
	case X86_REG_DI:
	case X86_REG_EDI:
		return X86_REG_RDI;
	case X86_REG_SIL:
	case X86_REG_SI:
	case X86_REG_ESI:
		return X86_REG_RSI;
	case X86_REG_DL:
	case X86_REG_DH:
	case X86_REG_DX:
	case X86_REG_EDX:
		return X86_REG_RDX;
	case X86_REG_CL:
	case X86_REG_CH:
	case X86_REG_CX:
	case X86_REG_ECX:
		return X86_REG_RCX;
	default:
		return r;
	}
}

/* The kernel emulates it in the trap (arch/x86/kernel/uprobes.c:
 * branch_setup_xol_ops, push_setup_xol_ops); no 0x66 prefix (refused). */
static bool emulated(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = x->op_count ? &x->operands[0] : NULL;

	if (x->prefix[0] || x->prefix[2]) /* rep/bnd/lock, 0x66: not emulated */
		return false;
	switch (in->id) {
	case X86_INS_JMP:
	case X86_INS_CALL:
		return op && op->type == X86_OP_IMM; /* relative, not indirect */
	case X86_INS_JAE:
	case X86_INS_JA:
	case X86_INS_JBE:
	case X86_INS_JB:
	case X86_INS_JE:
	case X86_INS_JGE:
	case X86_INS_JG:
	case X86_INS_JLE:
	case X86_INS_JL:
	case X86_INS_JNE:
	case X86_INS_JNO:
	case X86_INS_JNP:
	case X86_INS_JNS:
	case X86_INS_JO:
	case X86_INS_JP:
	case X86_INS_JS:
		return true;
	case X86_INS_PUSH:
		return op && op->type == X86_OP_REG && op->size == 8;
	case X86_INS_NOP:
		return in->size == 1;
	default:
		return false;
	}
}

/* May the probe move past it: no branch, no memory write, none of the
 * kept registers (mask of 1 << reg64) written, no lock prefix. */
static bool passable(csh h, const cs_insn *in, uint64_t kept)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0, i;

	if (x->prefix[0] == 0xf0 || cs_regs_access(h, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return false;
	for (i = 0; i < in->detail->groups_count; i++)
		switch (in->detail->groups[i]) {
		case CS_GRP_JUMP:
		case CS_GRP_CALL:
		case CS_GRP_RET:
		case CS_GRP_INT:
		case CS_GRP_IRET:
			return false;
		default:
			break;
		}
	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE))
			return false;
	/* push, stos, movs, ... write memory without a written operand; all
	 * of them write rsp or rdi, which are always kept. */
	for (i = 0; i < nwr; i++) {
		unsigned r = reg64(wr[i]);

		if (r == X86_REG_RSP || r == X86_REG_RIP || (r < 64 && (kept & (1ULL << r))))
			return false;
	}
	return true;
}

/* Is any address in (lo, hi] the target of a direct jump or call in the
 * function body [base, base + len)? */
static bool branch_into(csh h, const uint8_t *code, size_t len, uint64_t base, uint64_t lo,
			uint64_t hi)
{
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	uint64_t addr = base;
	size_t left = len;
	bool hit = false;

	while (!hit && left) {
		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			p++;
			left--;
			addr++;
			continue;
		}
		for (uint8_t g = 0; g < in->detail->groups_count; g++)
			if (in->detail->groups[g] == CS_GRP_JUMP ||
			    in->detail->groups[g] == CS_GRP_CALL) {
				const cs_x86 *x = &in->detail->x86;

				if (x->op_count && x->operands[0].type == X86_OP_IMM &&
				    (uint64_t)x->operands[0].imm > lo &&
				    (uint64_t)x->operands[0].imm <= hi)
					hit = true;
				break;
			}
	}
	cs_free(in, 1);
	return hit;
}

uint64_t sync_probe_point(const char *object, uint64_t off, uint64_t size, enum cs_sync_fn fn)
{
	uint64_t kept = 1ULL << X86_REG_RDI, point = off, addr = off;
	size_t len = size ? (size < POINT_MAX_BODY ? size : POINT_MAX_BODY) : 0, left;
	const uint8_t *p;
	uint8_t *code;
	cs_insn *in;
	ssize_t got;
	csh h;
	int fd, i;

	_Static_assert(X86_REG_RDI < 64 && X86_REG_RSI < 64 && X86_REG_RDX < 64 && X86_REG_RCX < 64,
		       "kept registers fit the mask");
	if (fn == CS_FN_COND_WAIT || fn == CS_FN_COND_TIMEDWAIT || fn == CS_FN_COND_CLOCKWAIT)
		kept |= 1ULL << X86_REG_RSI; /* the mutex */
	if (fn == CS_FN_CREATE)
		kept |= 1ULL << X86_REG_RDX; /* the start routine */
	if (fn >= CS_FN_FPUTS && fn <= CS_FN_PUTC)
		kept |= 1ULL << X86_REG_RSI; /* the stream */
	if (fn == CS_FN_FWRITE)
		kept |= 1ULL << X86_REG_RCX; /* the stream */
	if (!len)
		return off;
	fd = open(object, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return off;
	code = xcalloc(1, len);
	got = pread(fd, code, len, (off_t)off);
	close(fd);
	if (got != (ssize_t)len || cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		free(code);
		return off;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	p = code;
	left = len;
	for (i = 0; i < POINT_MAX_INSNS && cs_disasm_iter(h, &p, &left, &addr, in); i++) {
		if (emulated(in)) {
			point = in->address;
			break;
		}
		if (!passable(h, in, kept))
			break;
	}
	cs_free(in, 1);
	/* Only where every call passes once: not inside a loop of the body. */
	if (point != off && branch_into(h, code, len, off, off, point))
		point = off;
	cs_close(&h);
	free(code);
	return point;
}
