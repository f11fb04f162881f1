// SPDX-License-Identifier: MIT
/*
 * race_one_of_20 — the stats handler, one of 20 request handlers, must read
 * the table geometry between the resizer's two plain stores (or straddle
 * them). The program is race_one_of_n.h with 20 handlers.
 */
#define HANDLERS 20
#include "race_one_of_n.h"
