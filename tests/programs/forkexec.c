// SPDX-License-Identifier: MIT
/*
 * A target that forks and execs: the child execs the program named in
 * argv[1] (tests pass fig2), the parent waits for it. With --follow-forks
 * the child's locking is observed too; without, only the parent's.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: forkexec PROG [ARGS]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
