// SPDX-License-Identifier: MIT
/*
 * A target whose child outlives it: main forks and returns at once, the
 * child sleeps 20 s (issue 15 item 5). With --setsid the child first
 * leaves the process group (setsid), so only a cgroup still holds it.
 * Every run of it under concsched must leave no process behind.
 */
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (fork() == 0) {
		if (argc > 1 && !strcmp(argv[1], "--setsid"))
			setsid();
		sleep(20);
		return 0;
	}
	return 0;
}
