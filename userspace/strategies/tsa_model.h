/* SPDX-License-Identifier: MIT */
/*
 * An observed run's thread model as seed 000's model (tsa.h): every lock
 * acquisition with its site, the locks held when it began, and the
 * creation order of the threads; then the SP requirements estimate of one
 * run (AC1-AC4). Sites are whatever site_of gives for a site key
 * ("OBJECT+0xOFF"): the campaign store's site ids for `run`, a table of
 * its own for `estimate`.
 */
#ifndef CONCSCHED_TSA_MODEL_H
#define CONCSCHED_TSA_MODEL_H

#include <stdint.h>

#include "coverage/syncov.h"
#include "coverage/thread_model.h"
#include "strategies/tsa.h"

typedef int64_t (*tsa_site_of_fn)(void *ctx, const char *key);

/* The estimate of one observed run, added to out; its statistics added
 * to st (st->requirements is left to the caller). 0 or -errno. */
int tsa_model_estimate(const struct thread_model *tm, const struct site_resolver *res,
		       tsa_site_of_fn site_of, void *ctx, struct tsa_pairset *out,
		       struct tsa_estimate_stats *st);

#endif
