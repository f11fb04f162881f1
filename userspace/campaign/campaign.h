/* SPDX-License-Identifier: MIT */
/*
 * A campaign (campaign.c): `concsched run` once its options are parsed.
 */
#ifndef CONCSCHED_CAMPAIGN_H
#define CONCSCHED_CAMPAIGN_H

#include "run/run_types.h"

#define RUN_DEFAULT_METRIC "sp"

/* Run the campaign o describes; the process exit status (0 no failure,
 * 1 a failure, 2 usage or environment error, 128+N interrupted). */
int campaign_run(struct run_opts *o);
/* One run of c's target under the probes only (no scheduler); the caller
 * reads r->tm / r->cov, then calls onerun_cleanup. */
int campaign_observe_once(struct campaign *c, struct onerun *r);
/* 0..3: a sync probe metric; SYNCOV__COUNT: a metric of --access; -1. */
int campaign_metric_index(const char *name);
/* concsched-PROG-DATE-TIME */
char *campaign_default_out(const char *prog);

#endif
