/* SPDX-License-Identifier: MIT */
/*
 * Test suites as experiment programs (docs/experiment.md "Test suites"): a
 * SPEC program entry {"gtest": BINARY} or {"ctest": BUILD_DIR} stands for
 * one program per test case, listed by the suite itself: a GoogleTest
 * binary's `--gtest_list_tests` (each case run as BINARY
 * --gtest_filter=Suite.Case), or `ctest --test-dir DIR --show-only=json-v1`
 * (each test run as the command CTest would run). So one cell per test
 * case, and a racy case is a failing cell.
 */
#ifndef CONCSCHED_EXP_SUITE_H
#define CONCSCHED_EXP_SUITE_H

#include <jansson.h>
#include <stdbool.h>

/* The entry names a suite (has a "gtest" or "ctest" key). */
bool suite_entry(const json_t *entry);

/* The entry as plain program entries, one per test case: the entry's other
 * keys kept, "path" and "args" (the case's, then the entry's) set, "name"
 * the case's full name (after the entry's "name" and a dot when it has
 * one). Relative paths start at dir. A new array, or NULL with one line
 * printed (file and where name the entry). */
json_t *suite_expand(const json_t *entry, const char *dir, const char *file, const char *where);

#endif
