/* SPDX-License-Identifier: MIT */
/*
 * What a campaign's decision logs (lib/declog.h) say about its strategy,
 * summed over its runs for `concsched report`: the report hands every
 * run's log over and prints the lines, and only this room knows which
 * strategy logs what. Today: tsa and tsa-h log each release with the rule
 * that chose it (enum tsa_rule), summed as "releases: rule 1 N, ...".
 */
#ifndef CONCSCHED_DECLOG_SUMMARY_H
#define CONCSCHED_DECLOG_SUMMARY_H

#include <stdio.h>

struct declog;
struct declog_summary;
struct json;

/* A summary for a campaign of strategy, NULL when the strategy's logs
 * have nothing to sum (then the calls below take NULL too). */
struct declog_summary *declog_summary_new(const char *strategy);
void declog_summary_add(struct declog_summary *s, const struct declog *dl);
/* The text report's lines ("releases:  ..."), none when nothing was summed. */
void declog_summary_text(const struct declog_summary *s, FILE *f);
/* The JSON report's "releases" member: an object, or null when nothing
 * was summed (docs/report.md). */
void declog_summary_json(const struct declog_summary *s, struct json *j);
void declog_summary_free(struct declog_summary *s);

#endif
