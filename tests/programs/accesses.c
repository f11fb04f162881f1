// SPDX-License-Identifier: MIT
/*
 * Known loads and stores for the site finder (tests/unit/test_site_finder.c)
 * and the access probes (tests/host/30-access-probes.t). Each kind of access sits
 * in its own noinline function so a test can check its classification:
 *   acc_store_global  W  rip-relative, 4 bytes
 *   acc_load_global   R  rip-relative, 4 bytes
 *   acc_inc_global    R and W (counter++)
 *   acc_deref         R  [rdi], 4 bytes
 *   acc_array_store   W  [base + rdi*8], 8 bytes
 *   acc_atomic_add    RW lock-prefixed, 8 bytes
 *   acc_xchg          RW xchg (implicitly locked), 8 bytes
 *   acc_cas           RW lock cmpxchg, 4 bytes
 *   acc_stack_local   stack only: no site
 *   acc_test_flag     R  test $imm, 1 byte (capstone 4 says written)
 *   acc_pair_store_lock  a store, then a lock add: the lock add cannot be
 *                        probed on the store's probe, so it is after itself
 *   acc_pair_lock_load   a lock add at the entry, then a load: its only
 *                        place is the load's probe, so it is no site
 * (the two pairs and acc_test_flag are never called: they are for the
 * site finder only)
 * Run: accesses [ITERATIONS] — prints the variables' addresses, then two
 * threads both run every function ITERATIONS times (default 100), so each
 * global is shared; each thread's stack local is not. acc_deref also reads
 * a heap int both threads share (shared, reported as heap) and a local of
 * main's stack both threads read (a thread stack: never a shared variable).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int acc_written;
int acc_read = 3;
int acc_counter;
long acc_array[64];
long acc_atomic;
long acc_swapped;
int acc_cas_word;
static int acc_main_only;
unsigned char acc_flags;

#define NOINLINE __attribute__((noinline))

NOINLINE void acc_store_global(int v)
{
	acc_written = v;
}

NOINLINE int acc_load_global(void)
{
	return acc_read;
}

NOINLINE void acc_inc_global(void)
{
	acc_counter++;
}

NOINLINE int acc_test_flag(void)
{
	return (acc_flags & 0x46) != 0;
}

NOINLINE int acc_deref(int *p)
{
	return *p;
}

NOINLINE void acc_array_store(long i, long v)
{
	acc_array[i & 63] = v;
}

NOINLINE void acc_atomic_add(void)
{
	__atomic_fetch_add(&acc_atomic, 1, __ATOMIC_SEQ_CST);
}

NOINLINE long acc_xchg(long v)
{
	return __atomic_exchange_n(&acc_swapped, v, __ATOMIC_SEQ_CST);
}

NOINLINE int acc_cas(int old, int new)
{
	return __atomic_compare_exchange_n(&acc_cas_word, &old, new, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

NOINLINE int acc_stack_local(int x)
{
	volatile int local = x;

	local += 1;
	return local;
}

int acc_pair_flag;
long acc_pair_count;

NOINLINE void acc_pair_store_lock(void)
{
	*(volatile int *)&acc_pair_flag = 1;
	__atomic_fetch_add(&acc_pair_count, 1, __ATOMIC_RELAXED);
}

NOINLINE int acc_pair_lock_load(void)
{
	__atomic_fetch_add(&acc_pair_count, 1, __ATOMIC_RELAXED);
	return *(volatile int *)&acc_pair_flag;
}

static long iterations = 100;

struct acc_arg {
	int *heap_int;
	int *main_stack_int;
};

static void *acc_worker(void *arg)
{
	struct acc_arg *a = arg;
	long i, sum = 0;

	for (i = 0; i < iterations; i++) {
		acc_store_global((int)i);
		sum += acc_load_global();
		acc_inc_global();
		sum += acc_deref(&acc_read);
		sum += acc_deref(a->heap_int);
		sum += acc_deref(a->main_stack_int);
		acc_array_store(i, i);
		acc_atomic_add();
		sum += acc_xchg(i);
		sum += acc_cas((int)i, (int)i + 1);
		sum += acc_stack_local((int)i);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i, on_stack = 5;
	struct acc_arg arg = { .heap_int = malloc(sizeof(int)), .main_stack_int = &on_stack };

	if (!arg.heap_int)
		return 1;
	*arg.heap_int = 4;
	if (argc > 1)
		iterations = atol(argv[1]);
	printf("acc_written %p\nacc_read %p\nacc_counter %p\nacc_array %p\n"
	       "acc_atomic %p\nacc_swapped %p\nacc_cas_word %p\nheap_int %p\nmain_stack_int %p\n",
	       (void *)&acc_written, (void *)&acc_read, (void *)&acc_counter, (void *)acc_array,
	       (void *)&acc_atomic, (void *)&acc_swapped, (void *)&acc_cas_word,
	       (void *)arg.heap_int, (void *)&on_stack);
	fflush(stdout);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, acc_worker, &arg);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("counter %d atomic %ld unused %d\n", acc_counter, acc_atomic, acc_main_only);
	free(arg.heap_int);
	return 0;
}
