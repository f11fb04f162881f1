// SPDX-License-Identifier: MIT
/*
 * race_trylock_wrap — a lock wrapper built on pthread_mutex_trylock whose
 * give-up path is wrong. tl_lock() tries the mutex up to TRIES times,
 * yielding between tries, so that a waiter never sleeps in the kernel;
 * when every try failed it takes the holder to be stuck and "breaks" the
 * lock: it returns as if it held the mutex (the bug: a holder that is only
 * slow is not stuck). Two workers each run ROUNDS critical sections
 * through the wrapper; inside, a worker counts itself in `inside` and
 * asserts it is alone, and updates the shared statistics under a second,
 * inner mutex. A worker held inside its section (at the inner lock, say)
 * while the other exhausts its TRIES tries lets both in at once: the
 * assertion aborts. Natively a section lasts well under a microsecond, TRIES
 * yields take tens of microseconds, and the second worker starts tens of
 * microseconds after the first: a plain run practically always exits 0.
 *
 * main creates the second worker only once the first is running (the
 * first_running flag), so that a first worker the kernel happens to start
 * late does not run side by side with the second, and the second computes
 * a digest of its batch (2^23 iterations, no call) before its sections:
 * plain runs stay apart (in the VM, where TCG can stall one vCPU while the
 * other runs on: 3 of 100 plain runs failed without the digest, 5 of 150
 * with 2^20 iterations, 0 of 150 with 2^23).
 * clean_trylock_wrap is the same program with a correct give-up path.
 */
#define PROG		 "race_trylock_wrap"
#define BREAK_STUCK_LOCK 1
#include "trylock_wrap.h"
