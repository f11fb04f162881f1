// SPDX-License-Identifier: MIT
/*
 * concsched attach: perturb and observe processes that are already
 * running (issue 17, docs/attach.md). The selected processes (-p, --comm,
 * --cgroup) get the synchronization probes; when the strategy steers,
 * their threads are switched into SCHED_EXT one by one (the scheduler is
 * SCX_OPS_SWITCH_PARTIAL: nothing else on the machine changes class) and
 * the strategy decides at each synchronization point (and, with --access,
 * at each probed memory access: attach_access.c), as in a run. The
 * window ends at --duration, on Ctrl-C/SIGTERM, when the target exits or
 * crashes, or when the --check command fails; then every park is
 * released, every thread gets its old policy back, the probes go and the
 * scheduler unregisters. If concsched dies by SIGKILL, the scheduler's
 * link goes with its fds and sched_ext moves every SCHED_EXT task back to
 * the fair class. The coverage of the window is printed like observe's.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "run/attach.h"
#include "run/attach_access.h"
#include "run/onerun.h"
#include "run/strat_host.h"
#include "run/run_sites.h"
#include "run/run_types.h"
#include "results/cov_report.h"
#include "results/store.h"
#include "coverage/syncov.h"
#include "kernel/cgroup.h"
#include "kernel/launcher.h"
#include "kernel/policy.h"
#include "kernel/sync.h"
#include "kernel/procsel.h"
#include "kernel/scx_concsched.h"
#include "kernel/symbolize.h"
#include "lib/declog.h"
#include "lib/delayq.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/self.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"
#include "strategies/strategy.h"

#include "sync.skel.h"

#define ATTACH_SCAN_NS	  (200 * 1000 * 1000ULL)  /* new processes, threads, exits */
#define ATTACH_DRAIN_NS	  (1000 * 1000 * 1000ULL) /* reading what is left after the window */
#define ATTACH_MAX_DELAYS 1024
#define ATTACH_HALT_US	  20000 /* a halt: a delay this long (no all-parked wait) */
#define CHECK_TIMEOUT_NS  (30 * 1000000000ULL)

enum attach_end {
	END_NONE,
	END_DURATION,
	END_SIGNAL,
	END_EXITED,
	END_CRASH,
	END_CHECK,
	END_EJECTED,
};

static const char *const end_names[] = {
	[END_NONE] = "running",
	[END_DURATION] = "duration",
	[END_SIGNAL] = "signal",
	[END_EXITED] = "exited",
	[END_CRASH] = "crash",
	[END_CHECK] = "check-failed",
	[END_EJECTED] = "scheduler-ejected",
};

struct attach_proc {
	pid_t pid;
	char comm[32];
	bool gone, have_code;
	int exit_code; /* the leader's wait status, from the exit event */
};

struct attach {
	const struct attach_opts *o;
	uid_t uid; /* the invoking user (SUDO_UID), who runs --check */
	gid_t gid;
	bool drop;
	/* the session */
	bool steer;
	struct strategy *strat;
	struct strat_run sr;
	struct declog log;
	struct sched_ctl *ctl;
	struct policy *pol;
	struct sync_runtime rt;
	struct sync_probes sp;
	bool sp_open;
	struct ring_buffer *rb;
	struct site_resolver res;
	size_t told;		   /* res's files the probes know of (syncov_resolver_tell) */
	struct attach_access *acc; /* --access */
	struct procsel ps;
	struct attach_proc *procs;
	size_t nprocs;
	pid_t *refused;
	size_t nrefused;
	struct strat_host host; /* the strategy's thread table, verdicts, delays */
	/* the window */
	uint64_t t0, t1, next_scan, next_epoch, epochs;
	/* the window's end (0: none), the end of reading what is left after
	 * it (0: not yet), and events read since the last look at them from
	 * inside the ring buffer's callback */
	uint64_t deadline, drain_deadline;
	uint32_t events_unchecked;
	uint64_t points, apoints;
	enum attach_end end;
	char end_text[256];
	/* --check */
	pid_t check_pid;
	int check_fd;
	uint64_t check_t0, next_check;
	unsigned checks, checks_failed;
	char *check_output;
	int check_status;
	/* results */
	struct store *st; /* -o DIR: the window as a campaign of one run */
	int64_t started_ns;
	struct syncov_run run;
	uint64_t stats[CS_SSTAT__COUNT];
	struct cs_sched_stats sstats;
	unsigned rescue_ms;	   /* the scheduler's starvation rescue (at detach) */
	uint64_t cpu0_ns, cpu1_ns; /* the controller's CPU time at t0 and t1 */
};

static volatile sig_atomic_t attach_stop;

/* The controller's own CPU time (user + system), all its threads: a
 * controller that keeps a CPU for seconds starves a steered thread pinned
 * there (sched_ext ranks below the fair class). */
static uint64_t controller_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static void on_signal(int sig)
{
	attach_stop = sig;
}

/* ---- processes ------------------------------------------------------------------- */

static struct attach_proc *proc_find(struct attach *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->nprocs; i++)
		if (a->procs[i].pid == pid)
			return &a->procs[i];
	return NULL;
}

static bool was_refused(struct attach *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->nrefused; i++)
		if (a->refused[i] == pid)
			return true;
	if (a->nrefused % 32 == 0)
		a->refused = xrealloc(a->refused, (a->nrefused + 32) * sizeof(*a->refused));
	a->refused[a->nrefused++] = pid;
	return false;
}

/* Take pid into the window: its threads into SCHED_EXT (steering). 0, or
 * -EPERM when refused (printed once). */
static int proc_take(struct attach *a, pid_t pid)
{
	const char *why;
	struct attach_proc *p;
	int n = 0;

	if (proc_find(a, pid))
		return 0;
	why = procsel_refusal(pid, a->uid, a->o->allow_other);
	if (why) {
		if (!was_refused(a, pid))
			log_err("%s", why);
		return -EPERM;
	}
	if (a->nprocs % 16 == 0)
		a->procs = xrealloc(a->procs, (a->nprocs + 16) * sizeof(*a->procs));
	p = &a->procs[a->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	procsel_comm(pid, p->comm, sizeof(p->comm));
	if (a->o->pid == 0) /* --comm/--cgroup: the probes found it by their filter */
		sync_probes_track(&a->sp, pid);
	syncov_resolver_scan_pid(&a->res, pid);
	if (a->sp_open)
		syncov_resolver_tell(&a->res, &a->sp, &a->told);
	if (a->acc && !attach_access_add_pid(a->acc, pid))
		log_warn("pid %d (%s) runs another program than the first process: its accesses "
			 "are not probed",
			 (int)pid, p->comm);
	if (a->steer) {
		n = procsel_switch(&a->ps, pid, SCHED_EXT);
		if (n < 0) {
			log_err("pid %d (%s): cannot switch its threads to SCHED_EXT: %s", (int)pid,
				p->comm, strerror(-n));
			return n;
		}
	}
	fprintf(stderr, "concsched: attached to pid %d (%s)%s\n", (int)pid, p->comm,
		a->steer ? ", its threads in SCHED_EXT" : "");
	return 0;
}

/* New processes of the selection, new threads of those taken (created
 * by a thread not switched yet), and the ones gone. */
static void scan(struct attach *a)
{
	pid_t *pids = NULL;
	size_t n = 0, i;
	bool all_gone = true;

	if (a->o->comm)
		n = procsel_by_comm(a->o->comm, &pids);
	else if (a->o->cgroup)
		n = procsel_by_cgroup(a->o->cgroup, &pids);
	for (i = 0; i < n; i++)
		proc_take(a, pids[i]); /* a refusal is printed once */
	free(pids);
	for (i = 0; i < a->nprocs; i++) {
		struct attach_proc *p = &a->procs[i];

		if (p->gone)
			continue;
		if (!procsel_alive(p->pid)) {
			p->gone = true;
			if (p->have_code && WIFSIGNALED(p->exit_code)) {
				a->end = END_CRASH;
				snprintf(a->end_text, sizeof(a->end_text),
					 "pid %d (%s) was killed by signal %d (%s)", (int)p->pid,
					 p->comm, WTERMSIG(p->exit_code),
					 strsignal(WTERMSIG(p->exit_code)));
			} else if (p->have_code) {
				snprintf(a->end_text, sizeof(a->end_text),
					 "pid %d (%s) exited with status %d", (int)p->pid, p->comm,
					 WEXITSTATUS(p->exit_code));
			} else {
				snprintf(a->end_text, sizeof(a->end_text),
					 "pid %d (%s) exited (its status is unknown)", (int)p->pid,
					 p->comm);
			}
			fprintf(stderr, "concsched: %s\n", a->end_text);
			continue;
		}
		all_gone = false;
		if (a->steer)
			procsel_switch(&a->ps, p->pid, SCHED_EXT);
	}
	/* -p: the window ends with its process; --comm/--cgroup wait for more. */
	if (a->o->pid && all_gone && a->end == END_NONE)
		a->end = END_EXITED;
}

/* ---- the strategy's decisions ------------------------------------------------------ */

static const uint16_t park_ops[] = {
	CS_OP_LOCK_REQ,	   CS_OP_RDLOCK_REQ,	 CS_OP_WRLOCK_REQ,   CS_OP_COND_WAIT,
	CS_OP_COND_SIGNAL, CS_OP_COND_BROADCAST, CS_OP_SEM_WAIT_REQ, CS_OP_SEM_POST,
	CS_OP_BARRIER,	   CS_OP_PROC_EXIT,	 CS_OP_START,	     CS_OP_STDIO,
};

static bool is_park_op(uint16_t op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(park_ops); i++)
		if (park_ops[i] == op)
			return true;
	return false;
}

static struct strat_thread *thread_of(struct attach *a, uint32_t pid, uint32_t tid)
{
	struct strat_thread *t = strat_host_thread_find(&a->host, tid);
	char path[48];

	if (t)
		return t;
	snprintf(path, sizeof(path), "%u/%u", pid, tid);
	return strat_host_thread_add(&a->host, tid, path);
}

static void release(struct attach *a, uint32_t tid)
{
	attach_access_pass(a->acc, tid); /* a held access executes now */
	policy_release(a->pol, tid);
}

/* strat_host hooks: a thread goes on from its point, or from a delay. */
static void go_on(void *ctx, struct strat_thread *t)
{
	release(ctx, t->tid);
}

static void delay_over(void *ctx, uint32_t tid)
{
	release(ctx, tid);
}

static void on_parked(struct attach *a, const struct cs_event *e, const struct cov_event *acc,
		      bool split)
{
	struct strat_thread *t = thread_of(a, e->pid, e->tid);
	struct strat_point p = { 0 };

	p.t = t;
	p.k = t->points++;
	p.e = e;
	p.access = acc;
	p.split = split;
	a->points++;
	a->apoints += cov_event_op_is_access(e->op);
	strat_host_decide(&a->host, &p);
}

static void svc_release(struct strat_run *sr, struct strat_thread *t, int64_t arg)
{
	struct attach *a = sr->ctx;

	strat_host_release(&a->host, t, arg);
}

static void svc_drain(struct strat_run *sr)
{
	struct attach *a = sr->ctx;

	if (a->rb)
		ring_buffer__consume(a->rb);
}

static uint32_t svc_site_id(struct strat_run *sr, const struct cs_event *e)
{
	return 0; /* no store: sites are known by address */
}

/* A target whose threads make events faster than the controller reads
 * them (memcached's under --access) keeps one ring_buffer__poll() or
 * __consume() reading for good: every 1024 events, a signal or the end of
 * --duration stops it in the window, ATTACH_DRAIN_NS after it ends. */
static bool window_overdue(struct attach *a)
{
	if (++a->events_unchecked < 1024)
		return false;
	a->events_unchecked = 0;
	if (a->end != END_NONE)
		return a->drain_deadline && now_ns() >= a->drain_deadline;
	return attach_stop || (a->deadline && now_ns() >= a->deadline);
}

static void handle_event(struct attach *a, void *data, size_t len)
{
	const struct cs_event *e = data;
	const struct cov_event *acc = NULL;
	struct attach_proc *p;
	bool park, split = false;

	if (len < sizeof(*e))
		return;
	p = proc_find(a, (pid_t)e->pid);
	if (!p && a->o->pid == 0 && a->end == END_NONE && proc_take(a, (pid_t)e->pid) == 0)
		p = proc_find(a, (pid_t)e->pid);
	/* A new image, a new process, or a library mapped since (the
	 * event's site, lock or thread start is in a file without a path
	 * here): learn the paths while the process lives. */
	if (e->op == CS_OP_EXEC || e->op == CS_OP_FORK || (e->flags & CS_EV_NEWFILE)) {
		syncov_resolver_scan_pid(&a->res, (pid_t)e->pid);
		syncov_resolver_tell(&a->res, &a->sp, &a->told);
	}
	if (e->op == CS_OP_EXIT && e->tid == e->pid && p) {
		p->have_code = true;
		p->exit_code = (int)e->exit_code;
	}
	if (e->op == CS_OP_EXIT)
		strat_host_thread_drop(&a->host, e->tid);
	park = a->steer && (e->flags & CS_EV_PARKED) &&
	       (is_park_op(e->op) || (a->acc && cov_event_op_is_access(e->op)));
	if (a->acc && p)
		acc = attach_access_event(a->acc, e, park && a->end == END_NONE, &split);
	if (park) {
		if (p && a->end == END_NONE)
			on_parked(a, e, acc, split);
		else
			release(a, e->tid);
	}
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct attach *a = ctx;

	handle_event(a, data, len);
	/* back to attach_loop, which ends the window */
	return window_overdue(a) ? -EINTR : 0;
}

static void epoch_begin(struct attach *a)
{
	a->sr.seed = a->o->seed + a->epochs++;
	strategy_run_begin(a->strat, &a->sr);
	a->next_epoch = now_ns() + (uint64_t)(a->o->epoch_s * 1e9);
}

static void epoch_end(struct attach *a)
{
	struct strat_outcome o = { .ran = true };
	struct strat_campaign c = { .seed = a->o->seed, .quiet = true };

	strategy_run_end(a->strat, &a->sr, &c, &o);
}

/* ---- --check ------------------------------------------------------------------------ */

static void check_start(struct attach *a)
{
	pid_t pid;

	if (a->check_fd < 0)
		a->check_fd = memfd_create("concsched-check", MFD_CLOEXEC);
	if (a->check_fd < 0)
		return;
	if (ftruncate(a->check_fd, 0) || lseek(a->check_fd, 0, SEEK_SET))
		return;
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			dup2(fd, 0);
		dup2(a->check_fd, 1);
		dup2(a->check_fd, 2);
		setpgid(0, 0);
		/* As the invoking user, like run's --check. */
		if (a->drop && (setgroups(0, NULL) || setgid(a->gid) || setuid(a->uid)))
			_exit(126);
		execl("/bin/sh", "sh", "-c", a->o->check, (char *)NULL);
		_exit(127);
	}
	a->check_pid = pid;
	a->check_t0 = now_ns();
	a->checks++;
}

static void check_done(struct attach *a, int status, bool timed_out)
{
	size_t len;

	a->check_pid = 0;
	a->next_check = now_ns() + (uint64_t)(a->o->check_every_s * 1e9);
	if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	a->checks_failed++;
	a->check_status = status;
	free(a->check_output);
	a->check_output = onerun_read_capture(a->check_fd, &len);
	a->end = END_CHECK;
	if (timed_out)
		snprintf(a->end_text, sizeof(a->end_text), "--check timed out after %.0f s",
			 CHECK_TIMEOUT_NS / 1e9);
	else if (WIFSIGNALED(status))
		snprintf(a->end_text, sizeof(a->end_text), "--check was killed by signal %d",
			 WTERMSIG(status));
	else
		snprintf(a->end_text, sizeof(a->end_text), "--check failed with exit status %d",
			 WEXITSTATUS(status));
	fprintf(stderr, "concsched: %s; its output:\n%s%s", a->end_text, a->check_output,
		len && a->check_output[len - 1] != '\n' ? "\n" : "");
}

static void check_tick(struct attach *a)
{
	int status;

	if (!a->o->check)
		return;
	if (a->check_pid) {
		pid_t w = waitpid(a->check_pid, &status, WNOHANG);

		if (w == a->check_pid) {
			check_done(a, status, false);
		} else if (now_ns() - a->check_t0 > CHECK_TIMEOUT_NS) {
			kill(-a->check_pid, SIGKILL);
			waitpid(a->check_pid, &status, 0);
			check_done(a, status, true);
		}
		return;
	}
	if (now_ns() >= a->next_check)
		check_start(a);
}

static void check_stop(struct attach *a)
{
	if (a->check_pid) {
		kill(-a->check_pid, SIGKILL);
		waitpid(a->check_pid, NULL, 0);
		a->check_pid = 0;
	}
	if (a->check_fd >= 0)
		close(a->check_fd);
	a->check_fd = -1;
}

/* ---- setup, loop, detach ---------------------------------------------------------------- */

static int share_maps(struct bpf_object *obj, void *arg)
{
	return scx_concsched_share_maps(arg, obj);
}

static int attach_setup(struct attach *a)
{
	struct sync_probe_opts po = { 0 };
	struct scx_concsched_opts so = { 0 };
	pid_t *pids = NULL, first;
	size_t n = 0, i;
	int err;

	/* The libc the probes sit on: the target's, or (a selection that
	 * may grow) the first selected process's, else this system's. */
	if (a->o->comm)
		n = procsel_by_comm(a->o->comm, &pids);
	else if (a->o->cgroup)
		n = procsel_by_cgroup(a->o->cgroup, &pids);
	for (i = 0; i < n && pids[i] == getpid(); i++)
		;
	first = a->o->pid ? a->o->pid : i < n ? pids[i] : 0;
	err = sync_runtime_for_pid(first ? first : getpid(), &a->rt);
	free(pids);
	if (err)
		return err;
	if (a->steer) {
		so.serial = a->strat->sched_serial;
		so.seed = a->o->seed;
		err = scx_concsched_open(&a->ctl, &so);
		if (err)
			return err;
		a->pol = policy_new_sched(a->ctl);
		po.before_load = share_maps;
		po.before_load_arg = a->ctl;
		po.commit = true;
	}
	po.scope = a->o->pid ? CS_SCOPE_TRACKED : CS_SCOPE_ALL;
	po.comm = a->o->comm;
	if (a->o->cgroup) {
		err = cgroup_id_level(a->o->cgroup, &po.cgroup_id, &po.cgroup_level);
		if (err)
			return err;
	}
	err = sync_probes_open(&a->sp, &po);
	if (err)
		return err;
	a->sp_open = true;
	if (a->o->pid) {
		err = sync_probes_track(&a->sp, a->o->pid);
		if (err)
			return err;
	}
	err = sync_probes_attach(&a->sp, &a->rt, a->o->pid ? a->o->pid : -1);
	if (err)
		return err;
	syncov_resolver_add_path(&a->res, a->rt.object);
	syncov_resolver_add_path(&a->res, a->rt.ldso);
	syncov_resolver_tell(&a->res, &a->sp, &a->told);
	if (a->o->access) {
		struct attach_access_opts ao = {
			.pid = first,
			.sp = &a->sp,
			.ctl = a->ctl,
			.pol = a->pol,
			.steer_cap = a->o->steer_cap,
			.include = a->o->inc,
			.ninclude = a->o->ninc,
			.exclude = a->o->exc,
			.nexclude = a->o->nexc,
		};

		if (!first) {
			log_err("--access: no process of the selection is running yet: its program "
				"is not known");
			return -ESRCH;
		}
		err = attach_access_open(&a->acc, &ao);
		if (err)
			return err;
	}
	a->rb = ring_buffer__new(sync_probes_map_fd(&a->sp, "cs_sync_events"), on_event, a, NULL);
	if (!a->rb) {
		err = -errno;
		log_err("cannot open the event ring buffer: %s", strerror(-err));
		return err;
	}
	if (a->steer) {
		err = scx_concsched_attach_kick(a->ctl, a->sp.skel->progs.cs_sync_commit);
		if (!err)
			err = scx_concsched_guard(a->ctl);
		for (i = 0; i < ARRAY_SIZE(park_ops) && !err; i++)
			err = policy_park_site(a->pol, CS_SITE_OP_KEY(park_ops[i]), 0, 0, 0);
		if (!err)
			err = policy_serialize(a->pol, a->strat->sched_serial, a->o->seed);
		if (!err)
			err = scx_concsched_set_active(a->ctl, true);
		if (err) {
			log_err("cannot set the scheduler's policy: %s", strerror(-err));
			return err;
		}
	}
	a->sr.seed = a->o->seed;
	a->sr.pol = a->pol;
	a->sr.log = &a->log;
	a->sr.ctx = a;
	a->sr.release = svc_release;
	a->sr.drain = svc_drain;
	a->sr.site_id = svc_site_id;
	a->host = (struct strat_host){ .strat = a->strat,
				       .sr = &a->sr,
				       .max_delays = ATTACH_MAX_DELAYS,
				       .halt_us = ATTACH_HALT_US,
				       .ctx = a,
				       .go = go_on,
				       .resume = delay_over };
	declog_init(&a->log, a->o->seed, NULL);
	epoch_begin(a);
	if (a->o->pid) {
		err = proc_take(a, a->o->pid);
		if (err)
			return err;
	}
	return 0;
}

static void attach_loop(struct attach *a)
{
	uint64_t deadline = a->o->duration_s > 0 ? a->t0 + (uint64_t)(a->o->duration_s * 1e9) : 0;

	a->deadline = deadline;
	a->next_check = a->t0 + (uint64_t)(a->o->check_every_s * 1e9);
	/* Exit codes before the exits, here too: a target that crashed
	 * between "attached to pid" and this first look (44-attach, once,
	 * with the host's speed scale at 10) was "exited (its status is
	 * unknown)" with its exit event unread in the ring. */
	if (a->rb)
		ring_buffer__consume(a->rb);
	scan(a);
	while (a->end == END_NONE) {
		uint64_t now;
		int err = ring_buffer__poll(a->rb,
					    a->steer ? strat_host_next_delay_ms(&a->host) : 50);

		if (err < 0 && err != -EINTR) {
			log_err("reading events: %s", strerror(-err));
			break;
		}
		now = now_ns();
		if (a->steer) {
			strat_host_delays_due(&a->host, false);
			policy_poll(a->pol, 0);
			if (scx_concsched_exited(a->ctl)) {
				scx_concsched_print_exit(a->ctl, stderr);
				a->end = END_EJECTED;
				snprintf(a->end_text, sizeof(a->end_text),
					 "the kernel ejected the scheduler");
				break;
			}
		}
		if (attach_stop) {
			a->end = END_SIGNAL;
			snprintf(a->end_text, sizeof(a->end_text), "stopped by signal %d (%s)",
				 (int)attach_stop, strsignal(attach_stop));
			break;
		}
		if (deadline && now >= deadline) {
			a->end = END_DURATION;
			snprintf(a->end_text, sizeof(a->end_text), "the window of %.3g s ended",
				 a->o->duration_s);
			break;
		}
		if (now >= a->next_scan) {
			ring_buffer__consume(a->rb); /* exit codes before the exits */
			scan(a);
			a->next_scan = now + ATTACH_SCAN_NS;
		}
		check_tick(a);
		if (a->end == END_NONE && a->o->epoch_s > 0 && now >= a->next_epoch) {
			epoch_end(a);
			epoch_begin(a);
		}
	}
	a->t1 = now_ns();
	a->cpu1_ns = controller_cpu_ns();
}

/* Every way the window ends comes here (kill -9 aside: the kernel then
 * unregisters the scheduler, and sched_ext puts every SCHED_EXT task
 * back in the fair class). */
static void attach_detach(struct attach *a)
{
	if (a->ctl) {
		/* No more parks; every parked thread goes on. */
		scx_concsched_stats(a->ctl, &a->sstats);
		a->rescue_ms = scx_concsched_rescue_ms(a->ctl);
		scx_concsched_quiesce(a->ctl);
		strat_host_delays_due(&a->host, true);
	}
	procsel_restore(&a->ps, SCHED_EXT);
	attach_access_detach(a->acc);
	if (a->sp_open) {
		a->drain_deadline = now_ns() + ATTACH_DRAIN_NS;
		if (a->rb)
			ring_buffer__consume(a->rb);
		sync_probes_stats(&a->sp, a->stats);
		sync_probes_detach(&a->sp);
		syncov_resolver_load_vmas(&a->res, sync_probes_map_fd(&a->sp, "cs_sync_vmas"),
					  sync_probes_map_fd(&a->sp, "cs_sync_execs"));
		syncov_harvest(&a->sp, &a->res, NULL, false, &a->run);
	}
	if (a->ctl) {
		scx_concsched_close(a->ctl);
		a->ctl = NULL;
	}
	check_stop(a);
}

/* ---- report -------------------------------------------------------------------------- */

static void report_text(struct attach *a, FILE *f)
{
	size_t i;

	fprintf(f, "attach: %.3f s, ended: %s\n", (a->t1 - a->t0) / 1e9,
		a->end_text[0] ? a->end_text : end_names[a->end]);
	for (i = 0; i < a->nprocs; i++)
		fprintf(f, "  pid %d (%s)%s\n", (int)a->procs[i].pid, a->procs[i].comm,
			a->procs[i].gone ? " gone" : "");
	fprintf(f, "strategy: %s (seed %" PRIu64 ", %" PRIu64 " epochs)", a->o->spec, a->o->seed,
		a->epochs);
	if (a->steer && a->acc)
		fprintf(f, ": %" PRIu64 " points (%" PRIu64 " at accesses)", a->points, a->apoints);
	else if (a->steer)
		fprintf(f, ": %" PRIu64 " points", a->points);
	if (a->steer) {
		fprintf(f,
			", %" PRIu64 " delays, %" PRIu64 " yields, %" PRIu64
			" halts; scheduler %llu parks, %llu watchdog releases",
			a->host.ndelayed, a->host.nyields, a->host.nhalts,
			(unsigned long long)a->sstats.parks,
			(unsigned long long)a->sstats.watchdog);
		if (a->sstats.timer_errors)
			fprintf(f, " (%llu of them parks whose timer the kernel could not arm)",
				(unsigned long long)a->sstats.timer_errors);
		fputc('\n', f);
		if (a->sstats.rescued)
			fprintf(f,
				"  %llu thread(s) waited over %u ms for a CPU that other work "
				"held; moved to the fair class, unsteered since\n",
				(unsigned long long)a->sstats.rescued, a->rescue_ms);
	} else
		fprintf(f, ": observed only\n");
	if (a->steer)
		fprintf(f,
			"threads: %zu in SCHED_EXT in the window; at detach %zu restored, %zu "
			"created meanwhile reset to SCHED_OTHER, %zu exited before\n",
			a->ps.nthreads, a->ps.restored, a->ps.reset, a->ps.gone);
	if (a->o->check)
		fprintf(f, "checks: %u run, %u failed\n", a->checks, a->checks_failed);
	fprintf(f, "events: %" PRIu64 "; drops: ring buffer %" PRIu64 "\n",
		a->stats[CS_SSTAT_EVENTS], a->stats[CS_SSTAT_RB_DROPS]);
	if (a->t1 > a->t0 && a->cpu1_ns >= a->cpu0_ns)
		fprintf(f, "controller: %.3f s of CPU in the window (%.0f%% of one CPU)\n",
			(a->cpu1_ns - a->cpu0_ns) / 1e9,
			100.0 * (double)(a->cpu1_ns - a->cpu0_ns) / (double)(a->t1 - a->t0));
	cov_report_text(f, &a->run.tasks);
	if (a->acc)
		attach_access_report_text(a->acc, f);
}

static void report_json(struct attach *a, FILE *f)
{
	struct json j;
	size_t i;

	json_init(&j, f, true);
	json_obj_begin(&j, NULL);
	json_kv_str(&j, "schema", "concsched.attach/1");
	json_kv_str(&j, "end", end_names[a->end]);
	json_kv_str(&j, "end_text", a->end_text);
	json_kv_dbl(&j, "duration_s", (a->t1 - a->t0) / 1e9);
	json_kv_dbl(&j, "controller_cpu_s",
		    a->cpu1_ns >= a->cpu0_ns ? (a->cpu1_ns - a->cpu0_ns) / 1e9 : 0);
	json_arr_begin(&j, "processes");
	for (i = 0; i < a->nprocs; i++) {
		const struct attach_proc *p = &a->procs[i];

		json_obj_begin(&j, NULL);
		json_kv_int(&j, "pid", p->pid);
		json_kv_str(&j, "comm", p->comm);
		json_kv_bool(&j, "gone", p->gone);
		if (p->gone && p->have_code && WIFSIGNALED(p->exit_code))
			json_kv_int(&j, "signal", WTERMSIG(p->exit_code));
		else if (p->gone && p->have_code)
			json_kv_int(&j, "exit_status", WEXITSTATUS(p->exit_code));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_begin(&j, "strategy");
	json_kv_str(&j, "spec", a->o->spec);
	json_kv_uint(&j, "seed", a->o->seed);
	json_kv_uint(&j, "epochs", a->epochs);
	json_kv_bool(&j, "steers", a->steer);
	json_kv_uint(&j, "points", a->points);
	json_kv_uint(&j, "access_points", a->apoints);
	json_kv_uint(&j, "delays", a->host.ndelayed);
	json_kv_uint(&j, "yields", a->host.nyields);
	json_kv_uint(&j, "halts", a->host.nhalts);
	json_kv_uint(&j, "parks", a->sstats.parks);
	json_kv_uint(&j, "watchdog_releases", a->sstats.watchdog);
	json_kv_uint(&j, "rescued", a->sstats.rescued);
	json_obj_end(&j);
	json_obj_begin(&j, "threads");
	json_kv_uint(&j, "switched", a->ps.nthreads);
	json_kv_uint(&j, "restored", a->ps.restored);
	json_kv_uint(&j, "reset", a->ps.reset);
	json_kv_uint(&j, "gone", a->ps.gone);
	json_obj_end(&j);
	json_obj_begin(&j, "checks");
	json_kv_uint(&j, "run", a->checks);
	json_kv_uint(&j, "failed", a->checks_failed);
	if (a->check_output)
		json_kv_str(&j, "output", a->check_output);
	json_obj_end(&j);
	json_kv_uint(&j, "events", a->stats[CS_SSTAT_EVENTS]);
	cov_report_json(&j, &a->run.tasks, false);
	if (a->acc)
		attach_access_report_json(a->acc, &j);
	json_obj_end(&j);
	json_end(&j);
}

static void attach_report(struct attach *a)
{
	if (a->o->json)
		report_json(a, stdout);
	else
		report_text(a, stdout);
	fflush(stdout);
}

/* ---- -o DIR: the window as a campaign of one run (docs/store.md) ------------------------- */

static char *proc_args_json(pid_t pid)
{
	char path[64], *buf;
	struct json_mem m;
	size_t len = 0, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	buf = file_read(path, &len);
	json_mem_open(&m);
	json_arr_begin(&m.j, NULL);
	/* argv[1..], NUL-separated */
	for (i = buf ? strlen(buf) + 1 : 0; buf && i < len; i += strlen(buf + i) + 1)
		json_kv_str(&m.j, NULL, buf + i);
	json_arr_end(&m.j);
	free(buf);
	return json_mem_close(&m);
}

static char *campaign_json(const struct attach *a)
{
	struct json_mem m;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_str(&m.j, "strategy", a->o->spec);
	json_kv_str(&m.j, "serial", "off");
	json_kv_bool(&m.j, "attach", true);
	if (a->o->pid)
		json_kv_int(&m.j, "pid", a->o->pid);
	json_kv_str(&m.j, "comm", a->o->comm);
	json_kv_str(&m.j, "cgroup", a->o->cgroup);
	json_kv_dbl(&m.j, "duration_s", a->o->duration_s);
	json_kv_dbl(&m.j, "epoch_s", a->o->epoch_s);
	json_kv_str(&m.j, "check", a->o->check);
	json_kv_bool(&m.j, "access", a->o->access);
	json_obj_end(&m.j);
	return json_mem_close(&m);
}

/* Created before the window, so a bad DIR is refused before anything is
 * attached. The program is the first selected process's, when known. */
static int store_start(struct attach *a)
{
	struct store_campaign info = { 0 };
	char exe[64], path[PATH_MAX], hash[17];
	pid_t first = a->o->pid;
	pid_t *pids = NULL;
	ssize_t n;
	int err;

	if (!first && a->o->comm && procsel_by_comm(a->o->comm, &pids))
		first = pids[0] == getpid() && pids[1] ? pids[1] : pids[0];
	else if (!first && a->o->cgroup && procsel_by_cgroup(a->o->cgroup, &pids))
		first = pids[0];
	free(pids);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)first);
	n = first ? readlink(exe, path, sizeof(path) - 1) : -1;
	if (n > 0) {
		path[n] = 0;
		info.program = path;
		if (!file_hash_hex(path, hash))
			info.binary_hash = hash;
		info.args_json = proc_args_json(first);
	}
	info.strategy = (char *)a->o->spec;
	info.config_json = campaign_json(a);
	info.metric = "sp";
	info.seed = a->o->seed;
	info.where = getenv("CONCSCHED_VM") ? "vm" : "native";
	err = store_create(a->o->dir, &info, &a->st);
	free(info.args_json);
	free(info.config_json);
	return err;
}

static void store_window(struct attach *a)
{
	struct store_run_info ri = { .seed = a->o->seed, .started_ns = a->started_ns };
	struct store_run_result res = { .outcome = "pass", .exit_status = 0 };
	struct json_mem m;
	int64_t index;
	char *cfg;
	size_t i;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_str(&m.j, "strategy", a->o->spec);
	json_kv_uint(&m.j, "seed", a->o->seed);
	json_kv_uint(&m.j, "epochs", a->epochs);
	json_kv_uint(&m.j, "points", a->points);
	json_kv_uint(&m.j, "delays", a->host.ndelayed);
	json_arr_begin(&m.j, "pids");
	for (i = 0; i < a->nprocs; i++)
		json_kv_int(&m.j, NULL, a->procs[i].pid);
	json_arr_end(&m.j);
	json_obj_end(&m.j);
	cfg = json_mem_close(&m);
	ri.strategy_config_json = cfg;
	if (store_begin_run(a->st, &ri, &index)) {
		log_err("cannot store the window: %s", store_errmsg(a->st));
		free(cfg);
		return;
	}
	for (i = 0; i < a->run.tasks.n; i++) {
		const struct syncov_task *t = &a->run.tasks.tasks[i];
		char *k = run_sites_store_key(a->st, t->key);

		store_cover_task(a->st, syncov_metric_name(t->metric), k, t->hits);
		free(k);
	}
	if (a->acc)
		attach_access_store(a->acc, a->st);
	if (a->end == END_CRASH || a->end == END_CHECK) {
		res.outcome = a->end == END_CRASH ? "signal" : "check-failed";
		res.summary = a->end_text;
		store_record_failure(a->st, res.outcome, a->end_text, a->check_output, NULL, 0);
	} else {
		res.summary = a->end_text;
	}
	for (i = 0; i < a->nprocs; i++) {
		const struct attach_proc *p = &a->procs[i];

		if (!p->gone || !p->have_code)
			continue;
		res.exit_status = WIFSIGNALED(p->exit_code) ? -1 : WEXITSTATUS(p->exit_code);
		res.signal = WIFSIGNALED(p->exit_code) ? WTERMSIG(p->exit_code) : 0;
	}
	res.duration_ns = (int64_t)(a->t1 - a->t0);
	if (a->check_output) {
		res.out = a->check_output;
		res.out_len = strlen(a->check_output);
	}
	if (store_end_run(a->st, &res))
		log_err("cannot store the window: %s", store_errmsg(a->st));
	free(cfg);
}

/* ---- the window ---------------------------------------------------------------------------- */

static int make_strategy(struct attach *a)
{
	char why[256];
	int err = strategy_new(a->o->spec, &a->strat, why, sizeof(why));

	if (err) {
		log_err("--strategy %s: %s", a->o->spec, why);
		return err;
	}
	if (strategy_has(a->strat,
			 STRAT_F_ESTIMATE | STRAT_F_ACCESS | STRAT_F_SERIAL | STRAT_F_PICKS)) {
		log_err("--strategy %s: attach takes a noise strategy (random, a noise "
			"configuration, none): this one needs estimation runs or whole runs",
			a->o->spec);
		return -EINVAL;
	}
	if (strategy_has(a->strat, STRAT_F_NEEDS_ACCESS) && !a->o->access) {
		log_err("--strategy %s acts only at memory accesses: add --access", a->o->spec);
		return -EINVAL;
	}
	a->steer = strategy_has(a->strat, STRAT_F_STEERS);
	return 0;
}

int attach_run(const struct attach_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct attach a = { .o = o, .check_fd = -1 };
	int err, ret = EXIT_USAGE;

	if (make_strategy(&a))
		goto out;
	if (a.o->pid) {
		const char *why;

		if (launcher_resolve_user(NULL, &a.uid, &a.gid, &a.drop))
			goto out;
		why = procsel_refusal(a.o->pid, a.uid, a.o->allow_other);
		if (why) {
			log_err("%s", why);
			goto out;
		}
	}
	if (geteuid() != 0) {
		log_err("attach needs root to load BPF probes and the scheduler (try: %s attach "
			"...)",
			self_command(true));
		goto out;
	}
	if (!a.o->pid && launcher_resolve_user(NULL, &a.uid, &a.gid, &a.drop))
		goto out;
	if (a.o->dir && store_start(&a))
		goto out;
	if (a.steer && access("/sys/kernel/sched_ext/state", R_OK)) {
		log_err("this kernel has no sched_ext, which --strategy %s needs: run attach in "
			"the sched_ext VM (concsched vm) or use --strategy none",
			a.o->spec);
		goto out;
	}
	libbpf_set_print(NULL);
	attach_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	syncov_resolver_init(&a.res);
	err = attach_setup(&a);
	a.t0 = now_ns();
	a.cpu0_ns = controller_cpu_ns();
	a.started_ns = (int64_t)now_realtime_ns();
	if (!err)
		attach_loop(&a);
	else
		a.t1 = a.t0;
	if (a.strat && a.sr.priv)
		epoch_end(&a);
	attach_detach(&a);
	if (!err) {
		if (a.st)
			store_window(&a);
		attach_report(&a);
		ret = a.end == END_CRASH || a.end == END_CHECK ? 1 : 0;
	}
	syncov_run_free(&a.run);
	if (a.rb)
		ring_buffer__free(a.rb);
	attach_access_free(a.acc);
	if (a.sp_open)
		sync_probes_close(&a.sp);
	policy_free(a.pol);
	syncov_resolver_free(&a.res);
	declog_free(&a.log);
	procsel_free(&a.ps);
	free(a.sr.threads);
	free(a.procs);
	free(a.refused);
	free(a.check_output);
out:
	store_close(a.st);
	strategy_free(a.strat);
	return ret;
}
