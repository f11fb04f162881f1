// SPDX-License-Identifier: MIT
/*
 * race_uaf_printf — a use after free whose window starts at an unlock and
 * ends at a plain access, with only stdio calls inside: no pthread call,
 * so no synchronization point, lies in the window. Only a decision point
 * on the stdio calls themselves (glibc locks the stream inside, with its
 * own lock no pthread probe sees) lets a strategy that switches threads at
 * points hold the logger inside it.
 *
 * The logger (uaf_printf.h) takes the current job from the job slot under
 * slot_lock, unlocks, formats a line about it into the job log with
 * fprintf, flushes the log, and then marks the job through the pointer it
 * kept: BUG, no reference holds the job alive past the unlock. The reaper
 * unpublishes the job under slot_lock, poisons and frees it. A reaper that
 * runs inside the logger's window (after its unlock, before the mark)
 * frees the job under its feet: the mark reads the poison and asserts.
 * (The magic sits past the first 16 bytes, which glibc's free() reuses for
 * its own links, so the poison survives the free; no ASan needed.)
 * Natively the window is long over when the reaper frees: a plain run
 * exits 0.
 */
#define PROG	       "race_uaf_printf"
#define HOLD_REFERENCE 0
#include "uaf_printf.h"
