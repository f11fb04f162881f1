/* SPDX-License-Identifier: MIT */
/*
 * JUnit XML of campaign reports (`concsched report DIR --junit FILE`,
 * docs/report.md "JUnit XML"), the de-facto format of Ant's JUnit task
 * that Jenkins, GitLab CI and GitHub Actions' test reporters read: one
 * <testsuite> per campaign, one <testcase> per failing run (a <failure>
 * with its kind, summary, sites and replay command) or, when no run
 * failed, one passing <testcase> for the program. Valid against both
 * Jenkins' junit-4.xsd and Ant's JUnit.xsd (tests/host/62-report-ci.t).
 */
#ifndef CONCSCHED_REPORT_JUNIT_H
#define CONCSCHED_REPORT_JUNIT_H

#include <stdio.h>

#include "results/report_ci.h"

/* Number of failures written. */
size_t report_write_junit(const struct report_ci_suite *suites, size_t n, FILE *f);

#endif
