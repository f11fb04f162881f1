// SPDX-License-Identifier: MIT
/*
 * race_one_of_100 — the stats handler, one of 100 request handlers, must read
 * the table geometry between the resizer's two plain stores (or straddle
 * them). The program is race_one_of_n.h with 100 handlers.
 */
#define HANDLERS 100
#include "race_one_of_n.h"
