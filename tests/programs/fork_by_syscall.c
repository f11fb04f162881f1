// SPDX-License-Identifier: MIT
/*
 * Forks through syscall(SYS_fork), so no fork function is named in its
 * symbol tables (as when a library forks): concsched attaches its sync
 * probes for its process only and learns at the fork that its child was
 * missed (tests/host/54-probe-scope.t). The child takes a lock and exits
 * 0; so does the parent once the child has.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	long pid = syscall(SYS_fork);
	int status;

	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid((pid_t)pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
