// SPDX-License-Identifier: MIT
/*
 * A run's session (run_session.h): the probes and the scheduler a run works
 * under, shared with the links of other sessions, closed after the run or
 * the campaign; and the bounded read of the run's events.
 */
#include <unistd.h>

#include "run/run_session.h"

#include "kernel/scx_concsched.h"

#include "sync.skel.h"
#include "lib/log.h"
#include "lib/now.h"

int run_session_consume(struct onerun *r)
{
	struct run_session *s = r->sess;
	int err;

	s->consume_until = now_ns() + RUN_CONSUME_NS;
	s->consume_n = 0;
	err = ring_buffer__consume(r->rb);
	s->consume_until = 0;
	if (err == -EAGAIN) {
		r->consume_cut++;
		err = 0;
	}
	return err;
}

static int share_maps(struct bpf_object *obj, void *arg)
{
	return scx_concsched_share_maps(arg, obj);
}

void run_session_close(struct run_session *s)
{
	const struct site_set *aset = s->aset;
	const char *aprog = s->aprog;
	uint64_t steer_cap = s->steer_cap, probe_cap = s->probe_cap, probe_budget = s->probe_budget;
	bool sched_target = s->sched_target;

	if (s->ctl)
		scx_concsched_quiesce(s->ctl);
	cgroup_destroy(&s->cg);
	syncov_resolver_free(&s->paths);
	if (s->rb) { /* ep came with it */
		ring_buffer__free(s->rb);
		close(s->ep);
	}
	if (s->ap_open)
		access_probes_close(&s->ap);
	if (s->sp_open)
		sync_probes_close(&s->sp);
	policy_free(s->pol);
	scx_concsched_close(s->ctl);
	memset(s, 0, sizeof(*s));
	s->aset = aset;
	s->aprog = aprog;
	s->steer_cap = steer_cap; /* the campaign's, like aset (it was lost) */
	s->probe_cap = probe_cap;
	s->probe_budget = probe_budget;
	s->sched_target = sched_target; /* closed: not to be loaded again */
}

/* The scheduler goes: what was loaded with its maps shared goes too. */
static void session_unshare(struct run_session *s)
{
	if (s->ap_open) { /* loaded without the scheduler's maps */
		access_probes_close(&s->ap);
		s->ap_open = false;
	}
	if (s->sp_open) {
		if (s->rb) { /* on sp's map */
			ring_buffer__free(s->rb);
			close(s->ep);
			s->rb = NULL;
		}
		sync_probes_close(&s->sp);
		s->sp_open = false;
	}
}

int run_session_sched(struct run_session *s, const struct run_opts *o, enum cs_serial_mode serial,
		      uint64_t seed)
{
	struct scx_concsched_opts so = { 0 };
	int err;

	if (s->ctl)
		return 0;
	so.serial = serial;
	so.seed = seed;
	so.watchdog_ms = o->sched_watchdog_ms;
	so.rescue_ms = o->sched_rescue_ms;
	so.slice_us = o->sched_slice_us;
	err = scx_concsched_open(&s->ctl, &so);
	if (err)
		return err;
	s->pol = policy_new_sched(s->ctl);
	session_unshare(s);
	return 0;
}

int run_session_target(struct run_session *w, struct run_session *owner)
{
	int err;

	if (!owner->ctl)
		return -EINVAL;
	err = scx_concsched_target_open(owner->ctl, &w->ctl);
	if (err)
		return err;
	w->pol = policy_new_sched(w->ctl);
	w->sched_target = true;
	session_unshare(w);
	return 0;
}

static int share_maps_ap(struct bpf_object *obj, void *arg)
{
	struct run_session *s = arg;

	return s->ctl ? scx_concsched_share_maps(s->ctl, obj) : 0;
}

/* The access probe object, loaded once with the whole candidate table,
 * writing into the sync probes' ring buffer. */
static int session_access(struct run_session *s)
{
	struct access_probes_opts ao = { .run_events = true };
	char *alloc;
	int err;

	if (s->ap_open || !s->aset)
		return 0;
	alloc = access_probes_alloc_object(s->aprog);
	ao.alloc_object = alloc;
	ao.sync_events_fd = sync_probes_map_fd(&s->sp, "cs_sync_events");
	ao.steer_cap = s->steer_cap;
	ao.steer_sample = STEER_SAMPLE;
	ao.probe_cap = s->probe_cap;
	ao.probe_budget = s->probe_budget;
	ao.before_load = share_maps_ap;
	ao.before_load_arg = s;
	err = access_probes_load(&s->ap, s->aset, &ao);
	free(alloc);
	if (err)
		return err;
	s->ap_open = true;
	s->dontfork = false;
	s->ap_kicked = false;
	return 0;
}

/* The scheduler and the probe object stay loaded for the whole campaign
 * (loading them costs ~1.5 s per run under TCG); each run gets fresh maps,
 * its own uprobe links and its own site policy. */
int run_session_prepare(struct run_session *s, struct onerun *r)
{
	struct sync_probe_opts po = { .scope = CS_SCOPE_TRACKED,
				      .follow_forks = !r->o->no_follow_forks };
	int err;

	if (s->ctl && scx_concsched_exited(s->ctl)) {
		/* The kernel ejected it (printed): start over, unless it is
		 * the campaign's, shared with the other -j workers. */
		scx_concsched_print_exit(s->ctl, stderr);
		if (s->sched_target) {
			log_err("the kernel ended the scheduler that the -j runs share: the "
				"campaign "
				"stops (its runs so far are stored)");
			return -ECANCELED;
		}
		run_session_close(s);
	}
	if (s->sched_target && !s->ctl)
		return -ECANCELED;
	if ((r->steer || s->want_sched) && !s->ctl) {
		r->tm_sched = now_ns();
		err = run_session_sched(s, r->o, r->sr.sched_serial, r->seed);
		r->tm_sched = now_ns() - r->tm_sched;
		if (err)
			return err;
	}
	if (s->ctl)
		scx_concsched_reset(s->ctl);
	if (s->ap_open)
		access_probes_reset(&s->ap);
	if (s->sp_open) {
		err = sync_probes_reset(&s->sp);
		return err ? err : session_access(s);
	}
	if (s->ctl) {
		po.before_load = share_maps;
		po.before_load_arg = s->ctl;
		po.commit = true;
	}
	r->tm_probes = now_ns();
	err = sync_probes_open(&s->sp, &po);
	if (!err) {
		s->sp_open = true;
		s->dontfork = false;
		s->kicked = false;
		err = session_access(s);
	}
	r->tm_probes = now_ns() - r->tm_probes;
	return err;
}
