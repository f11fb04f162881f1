// SPDX-License-Identifier: MIT
/*
 * Symbolizer fixture (tests/unit/test_symbolize.c). Known functions and
 * variables whose runtime addresses and source line ranges the program
 * prints itself, so the test's expectations come from the program, not from
 * nm or addr2line:
 *   NAME ADDR FIRST_LINE LAST_LINE
 * then it waits until stdin closes, so the test can read /proc/PID/maps.
 * Built plain, -nopie, -static and -stripped (tests/programs/VARIANTS).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sym_counter = 7;	    /* .data */
static long sym_table[256]; /* .bss  */

enum { SYM_ALPHA_FIRST = __LINE__ };
__attribute__((noinline)) int sym_alpha(int x)
{
	sym_counter += x;
	__asm__ volatile("" ::: "memory");
	return sym_counter * 3;
}
enum { SYM_ALPHA_LAST = __LINE__ };

enum { SYM_BETA_FIRST = __LINE__ };
__attribute__((noinline)) static long sym_beta(int i)
{
	sym_table[i & 255] += i;
	__asm__ volatile("" ::: "memory");
	return sym_table[(i + 1) & 255];
}
enum { SYM_BETA_LAST = __LINE__ };

int main(int argc, char **argv)
{
	char buf[64];

	if (argc < 2 || strcmp(argv[1], "--addrs")) {
		printf("%d %ld\n", sym_alpha(argc), sym_beta(argc));
		return 0;
	}
	printf("sym_alpha %p %d %d\n", (void *)sym_alpha, SYM_ALPHA_FIRST, SYM_ALPHA_LAST);
	printf("sym_beta %p %d %d\n", (void *)sym_beta, SYM_BETA_FIRST, SYM_BETA_LAST);
	printf("sym_counter %p 0 0\n", (void *)&sym_counter);
	printf("sym_table %p 0 0\n", (void *)&sym_table[10]);
	printf("end\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return sym_alpha(0) == -1;
}
