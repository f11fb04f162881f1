// SPDX-License-Identifier: MIT
/*
 * concsched observe's run (observe.h): the probes on the target (launched,
 * attached to, or every process of this libc), the event loop that keeps
 * the thread model, the harvest of the coverage and its report as text or
 * JSON (docs/observe.md).
 */
#include "run/observe.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <bpf/libbpf.h>

#include "results/cov_report.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

static volatile sig_atomic_t observe_stop;

static void on_signal(int sig)
{
	observe_stop = sig;
}

/* ---- event loop ------------------------------------------------------------- */

static bool seen_tgid(struct observe *o, uint32_t tgid, uint32_t gen)
{
	uint32_t key = tgid << 8 | (gen & 0xff);
	size_t i;

	for (i = 0; i < o->nseen; i++)
		if (o->seen[i] == key)
			return true;
	if (o->nseen == o->capseen) {
		o->capseen = o->capseen ? 2 * o->capseen : 16;
		o->seen = xrealloc(o->seen, o->capseen * sizeof(*o->seen));
	}
	o->seen[o->nseen++] = key;
	return false;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct observe *o = ctx;
	const struct cs_event *e = data;

	if (len < sizeof(*e))
		return 0;
	/* Learn the paths of what the process maps while it still lives:
	 * the probe's mapping table knows inodes, not paths. A library
	 * mapped after the exec flags the event that follows (its first
	 * site, lock or thread start in it: CS_EV_NEWFILE). */
	if (!seen_tgid(o, e->pid, e->gen) || e->op == CS_OP_EXEC || (e->flags & CS_EV_NEWFILE)) {
		char exe[64], path[PATH_MAX];
		ssize_t n;

		snprintf(exe, sizeof(exe), "/proc/%u/exe", e->pid);
		n = readlink(exe, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = 0;
			syncov_resolver_add_path(&o->res, path);
		}
		syncov_resolver_scan_pid(&o->res, e->pid);
		syncov_resolver_tell(&o->res, &o->sp, &o->told);
	}
	thread_model_add_event(&o->tm, e);
	return 0;
}

bool observe_pid_alive(pid_t pid)
{
	char path[64], *s, *p;
	bool alive;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = file_read(path, NULL);
	if (!s)
		return false;
	p = strrchr(s, ')');
	alive = p && p[1] && p[2] != 'Z' && p[2] != 'X';
	free(s);
	return alive;
}

static bool observe_done(struct observe *o)
{
	if (observe_stop)
		return true;
	if (o->duration_s > 0 && now_ns() - o->t0 >= (uint64_t)(o->duration_s * 1e9))
		return true;
	if (o->mode == OBS_LAUNCH)
		return launcher_wait(&o->l, 1) == 1;
	if (o->mode == OBS_PID)
		return !observe_pid_alive(o->pid);
	return false;
}

static void attach_at_exec(pid_t pid, void *arg)
{
	struct observe *o = arg;

	o->at_exec_err = sync_probes_attach(&o->sp, &o->rt, pid);
}

/* -p and --all: one line on stderr once every probe is in, so that a
 * user (or a script waiting for it) starts the load when it is seen. */
static void observe_tell_start(const struct observe *o)
{
	char dur[64] = "";

	if (o->mode == OBS_LAUNCH)
		return;
	if (o->duration_s > 0)
		snprintf(dur, sizeof(dur), " for %g s", o->duration_s);
	if (o->mode == OBS_PID)
		fprintf(stderr, "concsched: observing pid %d%s (Ctrl-C stops)\n", (int)o->pid, dur);
	else
		fprintf(stderr,
			"concsched: observing every process of %s%s%s%s%s%s (Ctrl-C stops)\n",
			o->rt.object, o->comm ? " named " : "", o->comm ? o->comm : "",
			o->cgroup ? " in " : "", o->cgroup ? o->cgroup : "", dur);
}

static int observe_loop(struct observe *o)
{
	struct ring_buffer *rb;
	int err;

	rb = ring_buffer__new(sync_probes_map_fd(&o->sp, "cs_sync_events"), on_event, o, NULL);
	if (!rb) {
		err = -errno;
		log_err("cannot open the event ring buffer: %s", strerror(-err));
		return err;
	}
	if (o->launched) {
		err = launcher_release(&o->l, o->ti.path);
		if (!err && o->attach_at_exec) {
			err = launcher_at_exec(&o->l, attach_at_exec, o);
			if (!err)
				err = o->at_exec_err;
			if (err)
				launcher_kill(&o->l);
		}
		if (err) {
			ring_buffer__free(rb);
			return err;
		}
	}
	observe_tell_start(o);
	while (!observe_done(o)) {
		err = ring_buffer__poll(rb, 50);
		if (err < 0 && err != -EINTR) {
			log_err("reading events: %s", strerror(-err));
			break;
		}
	}
	o->stopped = observe_stop || (o->mode == OBS_LAUNCH && !o->l.reaped);
	if (o->mode == OBS_LAUNCH && !o->l.reaped)
		launcher_kill(&o->l);
	if (o->mode == OBS_LAUNCH)
		o->exit_status = o->l.status;
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	o->t1 = now_ns();
	return 0;
}

/* ---- setup -------------------------------------------------------------------- */

static int observe_setup(struct observe *o)
{
	struct sync_probe_opts po = { 0 };
	struct launch_opts lo = { 0 };
	pid_t filter = -1;
	int err;

	if (o->mode == OBS_LAUNCH) {
		err = target_inspect(o->argv[0], &o->ti);
		if (err)
			return err;
		err = sync_runtime_for_exec(&o->ti, &o->rt);
	} else if (o->mode == OBS_PID) {
		err = sync_runtime_for_pid(o->pid, &o->rt);
	} else {
		err = sync_runtime_for_pid(getpid(), &o->rt);
	}
	if (err)
		return err;
	po.scope = o->mode == OBS_ALL ? CS_SCOPE_ALL : CS_SCOPE_TRACKED;
	po.follow_forks = o->follow_forks;
	po.comm = o->comm;
	if (o->cgroup) {
		err = cgroup_id_level(o->cgroup, &po.cgroup_id, &po.cgroup_level);
		if (err)
			return err;
	}
	err = sync_probes_open(&o->sp, &po);
	if (err)
		return err;
	if (o->mode == OBS_LAUNCH) {
		o->argv[0] = o->ti.path;
		lo.argv = o->argv;
		lo.stdin_fd = lo.stdout_fd = lo.stderr_fd = -1;
		err = launcher_resolve_user(NULL, &lo.uid, &lo.gid, &lo.drop_privs);
		if (err)
			return err;
		/* The target's output must not mix into a report on stdout. */
		if (!o->out_path)
			lo.stdout_fd = STDERR_FILENO;
		o->attach_at_exec = !o->follow_forks;
		lo.stop_at_exec = o->attach_at_exec;
		err = launcher_prepare(&lo, &o->l);
		if (err) {
			log_err("cannot start %s: %s", o->ti.path, strerror(-err));
			return err;
		}
		o->launched = true;
		o->pid = o->l.pid;
	}
	if (o->mode != OBS_ALL) {
		err = sync_probes_track(&o->sp, o->pid);
		if (err)
			return err;
		/* Followed children have their own mm: only an unfiltered
		 * attach reaches them; BPF filters on the tracked tgids. */
		filter = o->follow_forks ? -1 : o->pid;
	}
	if (!o->attach_at_exec) {
		err = sync_probes_attach(&o->sp, &o->rt, filter);
		if (err)
			return err;
	}
	syncov_resolver_add_path(&o->res, o->rt.object);
	syncov_resolver_add_path(&o->res, o->rt.ldso);
	syncov_resolver_add_paths(&o->res, o->rt.libs);
	if (o->mode == OBS_LAUNCH)
		syncov_resolver_add_path(&o->res, o->ti.path);
	if (o->mode == OBS_PID)
		syncov_resolver_scan_pid(&o->res, o->pid);
	syncov_resolver_tell(&o->res, &o->sp, &o->told);
	return 0;
}

/* ---- report --------------------------------------------------------------------- */

static bool static_internal_action(const struct tm_thread *t, uint64_t site, void *arg)
{
	struct observe *o = arg;
	struct site_ref s;

	syncov_resolve(&o->res, t->tgid, t->gen, site, &s);
	return syncov_static_internal(o->rt.object, &s);
}

static uint64_t internal_calls(const struct observe *o)
{
	return o->stats[CS_SSTAT_INTERNAL] + o->internal_static;
}

static char *addr_text(struct observe *o, const struct syncov_thread *t, uint64_t addr, char *buf,
		       size_t len)
{
	struct site_ref s;
	char key[PATH_MAX + 32];
	struct sym_site ss;

	if (!addr)
		return strcpy(buf, "-");
	syncov_resolve(&o->res, t->tgid, t->gen, addr, &s);
	syncov_site_describe(syncov_site_key(&s, key, sizeof(key)), &ss, buf, len);
	return buf;
}

static uint64_t thread_events(struct observe *o, const struct syncov_thread *t)
{
	struct tm_thread *mt = thread_model_thread(&o->tm, t->tgid, t->gen, t->tid, false, NULL);

	return mt ? mt->nevents : 0;
}

static const struct syncov_thread *thread_by_tid(struct observe *o, uint32_t tid)
{
	return syncov_run_thread(&o->run, tid);
}

static void report_text(struct observe *o, FILE *f)
{
	char a[1024], b[1024];
	size_t i;

	if (o->mode == OBS_LAUNCH) {
		fprintf(f, "observed %s (pid %d): ", o->ti.path, (int)o->pid);
		if (o->stopped)
			fprintf(f, "stopped after %.3f s\n", (o->t1 - o->t0) / 1e9);
		else if (WIFSIGNALED(o->exit_status))
			fprintf(f, "killed by signal %d after %.3f s\n", WTERMSIG(o->exit_status),
				(o->t1 - o->t0) / 1e9);
		else
			fprintf(f, "exit status %d after %.3f s\n", WEXITSTATUS(o->exit_status),
				(o->t1 - o->t0) / 1e9);
	} else {
		fprintf(f, "observed %s for %.3f s\n", o->mode == OBS_PID ? "pid" : "the system",
			(o->t1 - o->t0) / 1e9);
	}
	fprintf(f, "probes: %d pthread functions in %s%s\n", o->sp.nprobes, o->rt.object,
		o->rt.is_static ? " (static)" : "");
	fprintf(f, "threads: %zu\n", o->run.nthreads);
	for (i = 0; i < o->run.nthreads; i++) {
		const struct syncov_thread *t = &o->run.threads[i];
		const struct syncov_thread *p = thread_by_tid(o, t->parent_tid);

		fprintf(f, "  %-14s pid %-7u tid %-7u events %-6" PRIu64, t->id, t->tgid, t->tid,
			thread_events(o, t));
		if (t->main)
			fprintf(f, " main thread\n");
		else
			fprintf(f, " created by %s at %s, start %s\n", p ? p->id : "?",
				addr_text(o, t, t->create_site, a, sizeof(a)),
				addr_text(o, t, t->start_routine, b, sizeof(b)));
	}
	fprintf(f, "events: %" PRIu64, o->tm.events);
	for (i = 0; i < CS_OP__COUNT; i++)
		if (o->tm.by_op[i])
			fprintf(f, ", %s %" PRIu64, thread_model_op_name(i), o->tm.by_op[i]);
	fprintf(f,
		"\ndrops: ring buffer %" PRIu64 ", lost per thread %" PRIu64 ", map full %" PRIu64
		", lockset overflow %" PRIu64 "; libc-internal calls "
		"ignored %" PRIu64 "\n",
		o->stats[CS_SSTAT_RB_DROPS], o->tm.seq_gaps, o->stats[CS_SSTAT_MAP_FULL],
		o->stats[CS_SSTAT_LOCKSET_OVF], internal_calls(o));
	cov_report_text(f, &o->run.tasks);
}

static void report_json(struct observe *o, FILE *f)
{
	char key[PATH_MAX + 32];
	struct json j;
	size_t i;
	int a;

	json_init(&j, f, true);
	json_obj_begin(&j, NULL);
	json_kv_str(&j, "schema", "concsched.observe/1");
	json_kv_str(&j, "mode",
		    o->mode == OBS_LAUNCH ? "launch"
		    : o->mode == OBS_PID  ? "pid"
					  : "all");
	json_obj_begin(&j, "target");
	if (o->mode == OBS_LAUNCH) {
		json_kv_str(&j, "path", o->ti.path);
		json_arr_begin(&j, "argv");
		for (a = 0; a < o->argc; a++)
			json_kv_str(&j, NULL, o->argv[a]);
		json_arr_end(&j);
	}
	if (o->mode != OBS_ALL)
		json_kv_int(&j, "pid", o->pid);
	if (o->mode == OBS_LAUNCH && !o->stopped && WIFEXITED(o->exit_status))
		json_kv_int(&j, "exit_status", WEXITSTATUS(o->exit_status));
	else
		json_kv_null(&j, "exit_status");
	if (o->mode == OBS_LAUNCH && !o->stopped && WIFSIGNALED(o->exit_status))
		json_kv_int(&j, "signal", WTERMSIG(o->exit_status));
	else
		json_kv_null(&j, "signal");
	json_kv_bool(&j, "stopped", o->stopped);
	json_obj_end(&j);
	json_kv_dbl(&j, "duration_s", (o->t1 - o->t0) / 1e9);
	json_obj_begin(&j, "probes");
	json_kv_str(&j, "object", o->rt.object);
	json_kv_bool(&j, "static", o->rt.is_static);
	json_kv_int(&j, "functions", o->sp.nprobes);
	json_obj_end(&j);

	json_arr_begin(&j, "threads");
	for (i = 0; i < o->run.nthreads; i++) {
		const struct syncov_thread *t = &o->run.threads[i];
		const struct syncov_thread *p = thread_by_tid(o, t->parent_tid);
		struct site_ref s;

		json_obj_begin(&j, NULL);
		json_kv_str(&j, "id", t->id);
		json_kv_uint(&j, "pid", t->tgid);
		json_kv_uint(&j, "tid", t->tid);
		json_kv_bool(&j, "main", t->main);
		json_kv_str(&j, "parent", p ? p->id : NULL);
		if (t->create_site) {
			syncov_resolve(&o->res, t->tgid, t->gen, t->create_site, &s);
			cov_report_json_site(&j, "creation_site",
					     syncov_site_key(&s, key, sizeof(key)));
		}
		if (t->start_routine) {
			syncov_resolve(&o->res, t->tgid, t->gen, t->start_routine, &s);
			cov_report_json_site(&j, "start_routine",
					     syncov_site_key(&s, key, sizeof(key)));
		}
		json_kv_uint(&j, "events", thread_events(o, t));
		json_kv_bool(&j, "exited", t->exited);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_obj_begin(&j, "events");
	json_kv_uint(&j, "total", o->tm.events);
	json_obj_begin(&j, "by_kind");
	for (i = 0; i < CS_OP__COUNT; i++)
		if (o->tm.by_op[i])
			json_kv_uint(&j, thread_model_op_name(i), o->tm.by_op[i]);
	json_obj_end(&j);
	json_obj_end(&j);
	json_obj_begin(&j, "drops");
	json_kv_uint(&j, "ring_buffer", o->stats[CS_SSTAT_RB_DROPS]);
	json_kv_uint(&j, "lost_per_thread", o->tm.seq_gaps);
	json_kv_uint(&j, "map_full", o->stats[CS_SSTAT_MAP_FULL]);
	json_kv_uint(&j, "lockset_overflow", o->stats[CS_SSTAT_LOCKSET_OVF]);
	json_kv_uint(&j, "model_truncated", o->tm.truncated);
	json_obj_end(&j);
	json_kv_uint(&j, "internal_calls_ignored", internal_calls(o));

	cov_report_json(&j, &o->run.tasks, true);
	json_obj_end(&j);
	json_end(&j);
}

static int observe_report(struct observe *o)
{
	FILE *f = stdout;

	if (o->out_path) {
		f = fopen(o->out_path, "w");
		if (!f) {
			log_err("cannot write %s: %s", o->out_path, strerror(errno));
			return -errno;
		}
	}
	if (o->json)
		report_json(o, f);
	else
		report_text(o, f);
	if (f != stdout && fclose(f)) {
		log_err("cannot write %s: %s", o->out_path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int observe_run(struct observe *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int err, ret = EXIT_USAGE;

	libbpf_set_print(NULL);
	observe_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	syncov_resolver_init(&o->res);
	thread_model_init(&o->tm, OBSERVE_MAX_ACTIONS);
	o->t0 = now_ns();
	err = observe_setup(o);
	if (err)
		goto cleanup;
	o->t0 = now_ns();
	err = observe_loop(o);
	if (err)
		goto cleanup;
	sync_probes_stats(&o->sp, o->stats);
	/* Uprobes go before the harvest: nothing of the target runs probed
	 * from here on. */
	sync_probes_detach(&o->sp);
	syncov_resolver_load_vmas(&o->res, sync_probes_map_fd(&o->sp, "cs_sync_vmas"),
				  sync_probes_map_fd(&o->sp, "cs_sync_execs"));
	syncov_harvest(&o->sp, &o->res, o->rt.is_static ? o->rt.object : NULL, false, &o->run);
	if (o->rt.is_static)
		o->internal_static = thread_model_drop_internal(&o->tm, static_internal_action, o);
	ret = observe_report(o) ? EXIT_USAGE : 0;
cleanup:
	if (o->launched && !o->l.reaped)
		launcher_kill(&o->l);
	syncov_run_free(&o->run);
	sync_probes_close(&o->sp);
	thread_model_free(&o->tm);
	syncov_resolver_free(&o->res);
	free(o->seen);
	return ret;
}
