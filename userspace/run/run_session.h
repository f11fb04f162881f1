/* SPDX-License-Identifier: MIT */
/*
 * A run's session (run_types.h, struct run_session): the probes, the
 * scheduler and the links a run works under, made ready for a run and
 * read while it runs. run_session_close, _sched and _target are declared
 * with struct run_session in run_types.h.
 */
#ifndef CONCSCHED_RUN_SESSION_H
#define CONCSCHED_RUN_SESSION_H

#include "run/run_types.h"

/* Make session s ready for run r: the probes, the scheduler (when r
 * steers), the access probes (--access). 0 or -errno. */
int run_session_prepare(struct run_session *s, struct onerun *r);
/*
 * A read of the run's events while its target runs. ring_buffer__consume
 * reads until the buffer is empty; a target whose probes produce events
 * faster than the controller handles them (millions of accesses, a slow
 * TCG guest: the buffer stays full and drops) would keep it reading until
 * the target ends, past the run timeout, the deadlock watch and steering.
 * So the loop's reads stop after RUN_CONSUME_NS and the loop goes on; the
 * rest is read on its next pass. Reads after the target's end drain all.
 */
#define RUN_CONSUME_NS (50 * 1000 * 1000ULL)
int run_session_consume(struct onerun *r);

#endif
