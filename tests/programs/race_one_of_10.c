// SPDX-License-Identifier: MIT
/*
 * race_one_of_10 — the stats handler, one of 10 request handlers, must read
 * the table geometry between the resizer's two plain stores (or straddle
 * them). The program is race_one_of_n.h with 10 handlers.
 */
#define HANDLERS 10
#include "race_one_of_n.h"
