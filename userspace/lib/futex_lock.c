// SPDX-License-Identifier: MIT
/* A lock without pthread calls (futex_lock.h). */
#include "lib/futex_lock.h"

#include <linux/futex.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

static void futex_call(int *addr, int op, int val)
{
	syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void futex_lock_acquire(struct futex_lock *s)
{
	int c = 0;

	if (__atomic_compare_exchange_n(&s->held, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&s->held, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex_call(&s->held, FUTEX_WAIT, 2);
		c = __atomic_exchange_n(&s->held, 2, __ATOMIC_ACQUIRE);
	}
}

void futex_lock_release(struct futex_lock *s)
{
	if (__atomic_fetch_sub(&s->held, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
		futex_call(&s->held, FUTEX_WAKE, 1);
	}
}
