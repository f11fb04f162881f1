// SPDX-License-Identifier: MIT
/*
 * clean_uaf_printf — race_uaf_printf with its bug fixed: the logger takes a
 * reference to the job under slot_lock, so the job outlives the logger's
 * window (unlock, fprintf and fflush to a memory stream, the mark) whoever
 * runs in between; the last of the slot and the logger to drop its
 * reference frees it. No interleaving, and no hold of the logger at its
 * stdio calls, can fail it: exits 0, or aborts if the mark ever saw a
 * freed job.
 */
#define PROG	       "clean_uaf_printf"
#define HOLD_REFERENCE 1
#include "uaf_printf.h"
