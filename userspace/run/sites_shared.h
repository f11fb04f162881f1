/* SPDX-License-Identifier: MIT */
/*
 * concsched sites --shared (cli/cmd_sites.c parses its options): run a
 * program once under the access probes of kernel/access_probes.c and print
 * the variables two or more of its threads touched, with the sites that
 * touched them (docs/sites.md).
 */
#ifndef CONCSCHED_SITES_SHARED_H
#define CONCSCHED_SITES_SHARED_H

#include <stdbool.h>

#include "kernel/site_finder.h"

/* Launch ARGV (argv[0] = resolved PROG) with access probes on SET, wait up
 * to timeout_ms, print the shared variables (text, or JSON with json).
 * Returns the exit status of the command. */
int sites_shared_run(const struct site_set *set, const char *prog, char **argv, unsigned timeout_ms,
		     bool json);

#endif
