// SPDX-License-Identifier: MIT
/*
 * concsched sched's run (sched_run.h): the scheduler loaded for n copies of
 * the program, their points set, the loop that answers the all-parked notes
 * and releases by the chosen rule, and the JSON summary of each copy.
 */
#include "run/sched_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

volatile sig_atomic_t sched_run_interrupted;

void sched_run_on_signal(int sig)
{
	sched_run_interrupted = sig;
}

static void samples_add(struct samples *s, int64_t v)
{
	if (s->n == s->cap) {
		if (s->cap >= SCHED_CMD_MAX_SAMPLES)
			return;
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = v;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static int64_t samples_pct(const struct samples *s, unsigned pct)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (s->n * pct + 99) / 100;
	return s->v[i ? i - 1 : 0];
}

static void json_samples_us(struct json *j, const char *key, struct samples *s)
{
	qsort(s->v, s->n, sizeof(*s->v), cmp_i64);
	json_obj_begin(j, key);
	json_kv_uint(j, "n", s->n);
	json_kv_dbl(j, "p50", samples_pct(s, 50) / 1000.0);
	json_kv_dbl(j, "p90", samples_pct(s, 90) / 1000.0);
	json_kv_dbl(j, "max", s->n ? s->v[s->n - 1] / 1000.0 : 0.0);
	json_kv_dbl(j, "min", s->n ? s->v[0] / 1000.0 : 0.0);
	json_obj_end(j);
}

/* Release the thread among tids that has been parked longest. */
static void release_oldest(struct sched_run *r, const uint32_t *tids, uint32_t n)
{
	struct cs_thread_ctl tc;
	uint64_t best_ts = UINT64_MAX;
	uint32_t i, best = 0;

	for (i = 0; i < n && i < CS_NOTE_MAX_TIDS; i++) {
		if (scx_concsched_thread(r->ctl, tids[i], &tc))
			continue;
		if (tc.state != CS_TS_PARKED)
			continue; /* delayed threads end on their own */
		if (tc.park_ts < best_ts) {
			best_ts = tc.park_ts;
			best = tids[i];
		}
	}
	log_debug("all parked: %u threads, releasing %u", n, best);
	if (best && scx_concsched_release(r->ctl, best) > 0)
		r->user_releases++;
}

static void note_park_ip(struct sched_run *r, uint64_t ip)
{
	int i;

	for (i = 0; i < r->nr_park_ips; i++)
		if (r->park_ips[i] == ip)
			return;
	if (r->nr_park_ips < (int)ARRAY_SIZE(r->park_ips))
		r->park_ips[r->nr_park_ips++] = ip;
}

static void on_note(const struct cs_sched_note *n, void *ctx)
{
	struct sched_run *r = ctx;

	if (n->kind == CS_NOTE_ALL_PARKED) {
		r->all_parked_notes++;
		if (r->rule == RELEASE_ALL_PARKED)
			release_oldest(r, n->tids, n->nr_parked);
		return;
	}
	if (n->kind != CS_NOTE_RESUMED)
		return;
	note_park_ip(r, n->park_ip);
	samples_add(&r->parked, (int64_t)n->parked_ns);
	samples_add(&r->to_park, (int64_t)n->to_park_ns);
	if (n->reason == CS_REL_DELAY)
		samples_add(&r->delay_late, (int64_t)n->late_ns);
	else if (n->reason == CS_REL_USER)
		samples_add(&r->release_lat, (int64_t)n->late_ns);
}

/* --release after:USEC: release parks older than the bound. */
static void release_expired(struct sched_run *r)
{
	uint32_t tids[256];
	struct cs_thread_ctl tc;
	uint64_t now = now_ns();
	int i, n;

	n = scx_concsched_parked(r->ctl, tids, ARRAY_SIZE(tids));
	for (i = 0; i < n && i < (int)ARRAY_SIZE(tids); i++) {
		if (scx_concsched_thread(r->ctl, tids[i], &tc) || tc.state != CS_TS_PARKED)
			continue;
		if (now >= tc.park_ts + r->release_after_ns &&
		    scx_concsched_release(r->ctl, tids[i]) > 0)
			r->user_releases++;
	}
}

static void observe_sched_ext(struct sched_run *r)
{
	char *ops;

	snprintf(r->state_during, sizeof(r->state_during), "%s", scx_concsched_state());
	ops = file_read_line("/sys/kernel/sched_ext/root/ops");
	snprintf(r->ops_during, sizeof(r->ops_during), "%s", ops ? ops : "");
	free(ops);
}

/* copy: -1 when PROG runs alone (no "copy" and "target" fields). */
static void report(struct sched_run *r, const struct launch *l, int exit_code, bool timed_out,
		   bool pretty, int copy)
{
	struct cs_sched_stats st;
	struct json j;
	int i;

	scx_concsched_stats(r->ctl, &st);
	json_init(&j, stdout, pretty);
	json_obj_begin(&j, NULL);
	if (copy >= 0) {
		json_kv_int(&j, "copy", copy);
		json_kv_uint(&j, "target", scx_concsched_target_index(r->ctl));
	}
	json_kv_int(&j, "pid", l->pid);
	json_kv_int(&j, "exit_code", exit_code);
	json_kv_bool(&j, "timed_out", timed_out);
	json_kv_str(&j, "sched_ext_state_during", r->state_during);
	json_kv_str(&j, "sched_ext_ops_during", r->ops_during);
	json_kv_uint(&j, "parks", st.parks);
	json_kv_uint(&j, "delays", st.delays);
	json_kv_uint(&j, "yields", st.yields);
	json_kv_uint(&j, "releases", st.releases);
	json_kv_uint(&j, "user_releases", r->user_releases);
	json_kv_uint(&j, "event_releases", st.event_releases);
	json_kv_uint(&j, "park_cancels", st.park_cancels);
	json_kv_uint(&j, "watchdog_releases", st.watchdog);
	json_kv_uint(&j, "all_parked_notes", r->all_parked_notes);
	json_kv_uint(&j, "notes_dropped", st.notes_dropped);
	json_kv_uint(&j, "kicks", scx_concsched_kicks(r->ctl));
	json_kv_uint(&j, "enqueues", st.enqueues);
	json_kv_uint(&j, "dispatches", st.dispatches);
	json_kv_uint(&j, "serial_preempts", st.serial_preempts);
	json_kv_uint(&j, "prio_preempts", st.prio_preempts);
	json_kv_uint(&j, "release_rekicks", st.release_rekicks);
	json_kv_uint(&j, "timer_errors", st.timer_errors);
	json_kv_uint(&j, "notes_repeated", st.notes_repeated);
	json_kv_uint(&j, "serial_kicks_kept", st.serial_kicks_kept);
	json_kv_uint(&j, "serial_stalls", st.serial_stalls);
	json_kv_uint(&j, "starved", st.starved);
	json_kv_uint(&j, "rescued", st.rescued);
	json_kv_int(&j, "max_threads", r->max_threads);
	json_samples_us(&j, "release_to_run_us", &r->release_lat);
	json_samples_us(&j, "delay_late_us", &r->delay_late);
	json_samples_us(&j, "stopped_us", &r->parked);
	json_samples_us(&j, "probe_to_park_us", &r->to_park);
	json_arr_begin(&j, "park_ips");
	for (i = 0; i < r->nr_park_ips; i++) {
		char ip[24];

		snprintf(ip, sizeof(ip), "0x%llx", (unsigned long long)r->park_ips[i]);
		json_kv_str(&j, NULL, ip);
	}
	json_arr_end(&j);
	json_kv_int(&j, "exit_kind", scx_concsched_exit_kind(r->ctl));
	json_kv_bool(&j, "ejected", scx_concsched_ejected(r->ctl));
	json_kv_str(&j, "sched_ext_state_after", scx_concsched_state());
	json_obj_end(&j);
	json_end(&j);
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* Handle the copies' notes and watch their children until each has exited
 * or the run times out. One epoll set waits on every copy's notes, so a
 * copy's release never waits for another copy's. */
static int run_loop(struct sched_run *r, struct launch *l, int n, unsigned run_timeout_ms,
		    bool *timed_out)
{
	uint64_t deadline = now_ns() + (uint64_t)run_timeout_ms * 1000000ULL;
	struct epoll_event ev = { .events = EPOLLIN }, evs[SCHED_CMD_MAX_COPIES];
	struct cs_sched_stats st;
	bool observed = false, done[SCHED_CMD_MAX_COPIES] = { false }, after = false;
	int rc = 0, k, left, ep;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	for (k = 0; k < n; k++) {
		after |= r[k].rule == RELEASE_AFTER;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, scx_concsched_notes_fd(r[k].ctl), &ev)) {
			rc = -errno;
			goto out;
		}
	}
	for (;;) {
		epoll_wait(ep, evs, n, after ? 1 : 10);
		for (k = 0, left = 0; k < n; k++) {
			if (done[k])
				continue;
			scx_concsched_poll(r[k].ctl, 0, on_note, &r[k]);
			if (r[k].rule == RELEASE_AFTER)
				release_expired(&r[k]);
			scx_concsched_stats(r[k].ctl, &st);
			if ((int)st.nr_threads > r[k].max_threads)
				r[k].max_threads = (int)st.nr_threads;
			if (!observed)
				observe_sched_ext(&r[k]);
			rc = launcher_reap(&l[k]);
			if (rc < 0)
				goto out;
			done[k] = rc > 0;
			left += !done[k];
		}
		observed = true;
		rc = 0;
		if (!left)
			break;
		if (sched_run_interrupted || now_ns() >= deadline) {
			*timed_out = !sched_run_interrupted;
			/* A parked thread cannot die until it runs. */
			for (k = 0; k < n; k++) {
				scx_concsched_quiesce(r[k].ctl);
				if (!done[k])
					launcher_kill(&l[k]);
			}
			break;
		}
		/* The kernel ejected the scheduler: say so now, the target
		 * runs on under the default scheduler. */
		if (scx_concsched_exited(r[0].ctl))
			scx_concsched_print_exit(r[0].ctl, stderr);
	}
out:
	close(ep);
	return rc;
}

static int sched_setup_points(struct sched_run *r, pid_t pid, const char *binary)
{
	struct cs_site_policy sp;
	int i, err;

	for (i = 0; i < r->nr_points; i++) {
		struct point_spec *p = &r->points[i];

		err = scx_concsched_add_point(r->ctl, pid, binary, p->symbol, &p->index);
		if (err)
			return err;
		memset(&sp, 0, sizeof(sp));
		sp.action = p->act;
		sp.delay_ns = p->delay_ns;
		sp.skip = p->skip;
		sp.count = p->count;
		err = scx_concsched_set_site(r->ctl, CS_SITE_FUNC_KEY(p->index), &sp);
		if (err)
			return err;
	}
	return 0;
}

static void sched_run_clear(struct sched_run *r)
{
	r->all_parked_notes = r->user_releases = 0;
	r->release_lat.n = r->delay_late.n = r->parked.n = r->to_park.n = 0;
	r->max_threads = 0;
	r->nr_park_ips = 0;
	r->state_during[0] = r->ops_during[0] = '\0';
}

int sched_run_once(struct sched_run *r, int n, const struct scx_concsched_opts *so,
		   const struct launch_opts *lo, const char *path, unsigned run_timeout_ms,
		   bool pretty)
{
	struct launch l[SCHED_CMD_MAX_COPIES];
	bool timed_out = false, launched[SCHED_CMD_MAX_COPIES] = { false };
	int err, rc = EXIT_USAGE, k, code;

	for (k = 0; k < n; k++) {
		memset(&l[k], 0, sizeof(l[k]));
		l[k].pid = -1;
		sched_run_clear(&r[k]);
	}
	err = scx_concsched_open(&r[0].ctl, so);
	for (k = 1; k < n && !err; k++)
		err = scx_concsched_target_open(r[0].ctl, &r[k].ctl);
	if (err)
		goto cleanup;
	for (k = 0; k < n; k++) {
		err = launcher_prepare(lo, &l[k]);
		if (err) {
			log_err("cannot start %s: %s", path, strerror(-err));
			goto cleanup;
		}
		launched[k] = true;
		err = scx_concsched_own(r[k].ctl, l[k].pid);
		if (err) {
			log_err("cannot give %s to the scheduler's target %u: %s", path,
				scx_concsched_target_index(r[k].ctl), strerror(-err));
			goto cleanup;
		}
		if (sched_setup_points(&r[k], l[k].pid, path))
			goto cleanup;
		scx_concsched_set_active(r[k].ctl, true);
	}
	for (k = 0; k < n; k++) {
		if (launcher_release(&l[k], path)) {
			launched[k] = false;
			goto cleanup;
		}
	}
	err = run_loop(r, l, n, run_timeout_ms, &timed_out);
	if (err) {
		log_err("waiting for %s: %s", path, strerror(-err));
		goto cleanup;
	}
	rc = timed_out || sched_run_interrupted ? 1 : 0;
	/* Notes still in flight (the last resumes); the copies' handles go
	 * before the scheduler's, whose detach unregisters it. */
	for (k = n - 1; k >= 0; k--) {
		scx_concsched_poll(r[k].ctl, 0, on_note, &r[k]);
		scx_concsched_detach(r[k].ctl);
		code = exit_code_of(l[k].status);
		if (!rc)
			rc = code;
	}
	for (k = 0; k < n; k++)
		report(&r[k], &l[k], exit_code_of(l[k].status), timed_out, pretty, n > 1 ? k : -1);
	scx_concsched_print_exit(r[0].ctl, stderr);
cleanup:
	for (k = 0; k < n; k++) {
		if (launched[k] && !l[k].reaped) {
			scx_concsched_quiesce(r[k].ctl);
			launcher_kill(&l[k]);
		}
	}
	for (k = n - 1; k >= 0; k--) {
		scx_concsched_close(r[k].ctl);
		r[k].ctl = NULL;
	}
	return rc;
}
