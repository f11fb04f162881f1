// SPDX-License-Identifier: MIT
/*
 * clean_trylock_wrap — race_trylock_wrap with a correct give-up path: a
 * lock wrapper built on pthread_mutex_trylock that tries the mutex up to
 * TRIES times, yielding between tries, and then blocks on it (a holder
 * that is slow is waited for, never taken to be stuck). Two workers run
 * ROUNDS critical sections each and assert they are alone inside. No bug:
 * correct under every interleaving; exits 0, or aborts (assert) / exits 1.
 */
#define PROG		 "clean_trylock_wrap"
#define BREAK_STUCK_LOCK 0
#include "trylock_wrap.h"
