/* SPDX-License-Identifier: MIT */
/*
 * A lock without libc's pthread calls, for sections that run often (each
 * access event of `run -j N --access`): concsched's own pthread calls trap
 * into the campaign's libc uprobes, which are attached for every process.
 * A futex (Drepper, "Futexes are tricky", mutex 2): a waiter sleeps in the
 * kernel, so one that waits out another worker's --check burns no CPU.
 */
#ifndef CONCSCHED_FUTEX_LOCK_H
#define CONCSCHED_FUTEX_LOCK_H

/* held: 0 free, 1 held, 2 held with waiters. Not recursive. */
struct futex_lock {
	int held;
};

void futex_lock_acquire(struct futex_lock *s);
void futex_lock_release(struct futex_lock *s);

#endif
