// SPDX-License-Identifier: MIT
/* probe_scope, forking a child at the end (see probe_scope.c). */
#define PROBE_SCOPE_FORK 1
#include "probe_scope.c"
