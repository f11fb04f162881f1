// SPDX-License-Identifier: MIT
/*
 * Probe-cost benchmark (issue 3, item 7): nanoseconds per call of each
 * probed pthread function, in one run, under
 *   none   no probe at all;
 *   entry  a uprobe on the function's first instruction running an empty
 *          BPF program, when concsched probes it further in (sync.h
 *          sync_probe_point: an instruction the kernel emulates);
 *   bare   a uprobe where concsched probes the function, running an empty BPF program (the
 *          trap is the floor: KERNEL.md Q5);
 *   bare+r the same plus an empty uretprobe (the floor for the functions
 *          whose outcome concsched needs: acquisitions, waits);
 *   cs     concsched's sync probes (cs_sync_enter, plus cs_sync_return
 *          where the function has an outcome), recording into their maps
 *          and ring buffer exactly as in `concsched observe`.
 * Only the function under test is probed in each measurement; its partner
 * call (the unlock after a lock, ...) runs unprobed and is part of the
 * "call" in every column alike.
 *
 *   probe_cost [ITERATIONS]     (root; default 2000 calls per cell and round)
 * Five rounds alternate the four conditions; the cells are medians.
 * Prints a Markdown table (docs/perf.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "kernel/sync.h"
#include "kernel/symbolize.h"
#include "sync.skel.h"
#include "lib/array_size.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/parse.h"

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static sem_t sem;

/* One measured operation: the probed call plus its unprobed partner. */
static void op_mutex_lock(void)
{
	pthread_mutex_lock(&mtx);
	pthread_mutex_unlock(&mtx);
}
static void op_mutex_trylock(void)
{
	pthread_mutex_trylock(&mtx);
	pthread_mutex_unlock(&mtx);
}
static void op_rdlock(void)
{
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
}
static void op_wrlock(void)
{
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
}
static void op_spin_lock(void)
{
	pthread_spin_lock(&spin);
	pthread_spin_unlock(&spin);
}
static void op_spin_trylock(void)
{
	pthread_spin_trylock(&spin);
	pthread_spin_unlock(&spin);
}
static void op_cond_signal(void)
{
	pthread_cond_signal(&cond);
}
static void op_cond_broadcast(void)
{
	pthread_cond_broadcast(&cond);
}
static void op_sem_post(void)
{
	sem_post(&sem);
	sem_trywait(&sem);
}
static void op_barrier(void)
{
	pthread_barrier_wait(&barrier);
}

struct bench_case {
	enum cs_sync_fn fn; /* the probed function */
	void (*op)(void);
};

static const struct bench_case cases[] = {
	{ CS_FN_MUTEX_LOCK, op_mutex_lock },
	{ CS_FN_MUTEX_UNLOCK, op_mutex_lock },
	{ CS_FN_MUTEX_TRYLOCK, op_mutex_trylock },
	{ CS_FN_RW_RDLOCK, op_rdlock },
	{ CS_FN_RW_WRLOCK, op_wrlock },
	{ CS_FN_RW_UNLOCK, op_wrlock },
	{ CS_FN_SPIN_LOCK_ACQUIRED, op_spin_lock },
	{ CS_FN_SPIN_TRYLOCK, op_spin_trylock },
	{ CS_FN_SPIN_UNLOCK, op_spin_trylock },
	{ CS_FN_COND_SIGNAL, op_cond_signal },
	{ CS_FN_COND_BROADCAST, op_cond_broadcast },
	{ CS_FN_SEM_POST, op_sem_post },
	{ CS_FN_SEM_TRYWAIT, op_sem_post },
	{ CS_FN_BARRIER_WAIT, op_barrier },
};

static double measure(void (*op)(void), unsigned n)
{
	uint64_t t0;
	unsigned i;

	for (i = 0; i < n / 10 + 1; i++) /* warm up: page faults, caches */
		op();
	t0 = now_ns();
	for (i = 0; i < n; i++)
		op();
	return (double)(now_ns() - t0) / n;
}

static int empty_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_UPROBE_MULTI);

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "cs_bench_empty", "GPL", insns, 2, &o);
}

static int bare_attach(int prog, const char *libc, unsigned long off, bool ret)
{
	LIBBPF_OPTS(bpf_link_create_opts, o);

	o.uprobe_multi.path = libc;
	o.uprobe_multi.offsets = &off;
	o.uprobe_multi.cnt = 1;
	o.uprobe_multi.pid = getpid();
	o.uprobe_multi.flags = ret ? BPF_F_UPROBE_MULTI_RETURN : 0;
	return bpf_link_create(prog, 0, BPF_TRACE_UPROBE_MULTI, &o);
}

static int cs_attach(struct sync_probes *sp, const char *libc, enum cs_sync_fn fn,
		     unsigned long off, bool ret, struct bpf_link **links)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o);
	__u64 cookie = fn;

	o.offsets = &off;
	o.cookies = &cookie;
	o.cnt = 1;
	links[0] = bpf_program__attach_uprobe_multi(sp->skel->progs.cs_sync_enter, getpid(), libc,
						    NULL, &o);
	links[1] = NULL;
	if (!links[0])
		return -errno;
	if (!ret)
		return 0;
	o.retprobe = true;
	links[1] = bpf_program__attach_uprobe_multi(sp->skel->progs.cs_sync_return, getpid(), libc,
						    NULL, &o);
	return links[1] ? 0 : -errno;
}

#define ROUNDS 5

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), dbl_cmp);
	return v[ROUNDS / 2];
}

/* One round: each condition measured once, n calls each. 0 or -errno. */
static struct ring_buffer *events;

static int count_event(void *ctx, void *data, size_t len)
{
	(*(uint64_t *)ctx)++;
	return 0;
}

static int measure_round(struct sync_probes *sp, int prog, const char *libc,
			 const struct bench_case *bc, unsigned long entry, unsigned long off,
			 bool ret, unsigned n, double *none, double *bare_e, double *bare,
			 double *bare_r, double *cs)
{
	struct bpf_link *links[2];
	int l1, l2, err;

	*none = measure(bc->op, n);
	*bare_e = 0;
	if (entry != off) {
		l1 = bare_attach(prog, libc, entry, false);
		if (l1 < 0)
			return -errno;
		*bare_e = measure(bc->op, n);
		close(l1);
	}
	l1 = bare_attach(prog, libc, off, false);
	if (l1 < 0)
		return -errno;
	*bare = measure(bc->op, n);
	*bare_r = 0;
	if (ret) {
		l2 = bare_attach(prog, libc, off, true);
		if (l2 < 0) {
			err = -errno;
			close(l1);
			return err;
		}
		*bare_r = measure(bc->op, n);
		close(l2);
	}
	close(l1);
	err = cs_attach(sp, libc, bc->fn, off, ret, links);
	if (!err)
		*cs = measure(bc->op, n);
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	/* Drain the events, as observe's reader does every 50 ms: a full
	 * buffer would make every event force a reader wakeup. */
	ring_buffer__consume(events);
	return err;
}

static bool needs_return(enum cs_sync_fn fn)
{
	size_t i;

	for (i = 0; i < sync_nfns; i++)
		if (sync_fns[i].fn == fn)
			return sync_fns[i].ret;
	return false;
}

int main(int argc, char **argv)
{
	struct sync_probe_opts po = { .scope = CS_SCOPE_TRACKED };
	enum cs_sync_fn fns[CS_FN__COUNT];
	unsigned long offs[CS_FN__COUNT];
	struct sync_runtime rt;
	struct sync_probes sp;
	uint64_t nevents = 0, stats[CS_SSTAT__COUNT];
	unsigned n = 2000;
	uint64_t v;
	int prog, nf, i, err = 0;
	size_t c;

	if (argc > 1 && (parse_u64(argv[1], &v) || v == 0)) {
		fprintf(stderr, "usage: probe_cost [ITERATIONS]\n");
		return 2;
	}
	if (argc > 1)
		n = (unsigned)v;
	if (geteuid()) {
		log_err("probe_cost needs root (BPF uprobes)");
		return 2;
	}
	libbpf_set_print(NULL);
	pthread_spin_init(&spin, 0);
	pthread_barrier_init(&barrier, NULL, 1);
	sem_init(&sem, 0, 0);
	if (sync_runtime_for_pid(getpid(), &rt))
		return 2;
	nf = sync_find_offsets(rt.object, fns, offs);
	prog = empty_prog();
	if (nf <= 0 || prog < 0) {
		log_err("cannot set up: %s", strerror(nf <= 0 ? ENOENT : errno));
		return 2;
	}
	if (sync_probes_open(&sp, &po) || sync_probes_track(&sp, getpid()))
		return 2;
	events = ring_buffer__new(sync_probes_map_fd(&sp, "cs_sync_events"), count_event, &nevents,
				  NULL);
	if (!events)
		return 2;
	printf("| function | probe at | no probe | bare uprobe at the entry | bare uprobe | "
	       "bare uprobe + uretprobe | concsched | concsched / bare (same probe shape) |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		const struct bench_case *bc = &cases[c];
		bool ret = needs_return(bc->fn);
		double none[ROUNDS], bare_e[ROUNDS], bare[ROUNDS], bare_r[ROUNDS], cs[ROUNDS];
		uint64_t entry;
		char at_entry[32];
		int r;

		for (i = 0; i < nf && fns[i] != bc->fn; i++)
			;
		if (i == nf)
			continue;
		entry = offs[i];
		if (bc->fn != CS_FN_SPIN_LOCK_ACQUIRED &&
		    symbolize_lookup_function(rt.object, sync_fn_name(bc->fn), &entry, NULL))
			entry = offs[i];
		/* Rounds alternate the conditions so that drifting host load
		 * hits every column alike; the table shows medians. */
		for (r = 0; r < ROUNDS; r++) {
			err = measure_round(&sp, prog, rt.object, bc, entry, offs[i], ret, n,
					    &none[r], &bare_e[r], &bare[r], &bare_r[r], &cs[r]);
			if (err)
				break;
		}
		if (err) {
			log_err("%s: cannot attach: %s", sync_fn_name(bc->fn), strerror(-err));
			continue;
		}
		if (entry != offs[i])
			snprintf(at_entry, sizeof(at_entry), "%.0f", median(bare_e));
		else
			snprintf(at_entry, sizeof(at_entry), "(same)");
		printf("| %s | +%lu | %.0f | %s | %.0f |", sync_fn_name(bc->fn),
		       offs[i] - (unsigned long)entry, median(none), at_entry, median(bare));
		if (ret)
			printf(" %.0f | %.0f | %.2f |\n", median(bare_r), median(cs),
			       median(cs) / median(bare_r));
		else
			printf(" - | %.0f | %.2f |\n", median(cs), median(cs) / median(bare));
		fflush(stdout);
	}
	sync_probes_stats(&sp, stats);
	printf("\n%" PRIu64 " events recorded, %" PRIu64 " dropped\n", nevents,
	       stats[CS_SSTAT_RB_DROPS]);
	ring_buffer__free(events);
	sync_probes_close(&sp);
	close(prog);
	return 0;
}
