// SPDX-License-Identifier: MIT
/*
 * tcp_load PORT THREADS COUNT PERIOD_MS — a bounded client load for
 * tcp_table: THREADS threads each make COUNT connections to
 * 127.0.0.1:PORT, one at a time, each sending one line and reading the
 * reply. Thread i makes its k-th connection at k * PERIOD_MS + i *
 * PERIOD_MS / THREADS from the start (absolute times, so no drift): the
 * threads' connections are a fixed phase apart, and two handlers in the
 * server overlap only when one of them is held up for that long (a
 * preempted vCPU rarely is; a parked thread is). PERIOD_MS 0: back to
 * back.
 * Prints "ok N failed M"; exits 0 when every reply was "OK ...". Each
 * failed request (the first 20) is told on stderr: which step failed, the
 * error and how long the request took (the reply waits 5 s at most).
 * `tcp_load PORT 1 1 0` is a health check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int port, count, period_ms, nthreads;
static struct timespec start;
static long ok, failed; /* atomic */

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void close_keep_errno(int fd)
{
	int e = errno;

	close(fd);
	errno = e;
}

/* One request: NULL when the reply was "OK ...", else the step that
 * failed (errno tells more where the step set it). */
static const char *one_request(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 5 };
	char buf[64];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return "socket";
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return close_keep_errno(fd), "connect";
	if (write(fd, "GET\n", 4) != 4)
		return close_keep_errno(fd), "write";
	n = read(fd, buf, sizeof(buf) - 1);
	close_keep_errno(fd);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? "read: no reply within 5 s"
							       : "read";
	if (n == 0) {
		errno = 0;
		return "read: closed without a reply";
	}
	buf[n] = 0;
	errno = 0;
	if (n < 3 || strncmp(buf, "OK", 2))
		return "reply not OK";
	return NULL;
}

static void *client(void *arg)
{
	long idx = (long)arg;
	struct timespec t0;
	const char *why;
	int i;

	for (i = 0; i < count; i++) {
		if (period_ms) {
			long long ns = ((long long)i * period_ms * 1000000LL) +
				       idx * period_ms * 1000000LL / nthreads;
			struct timespec at = start;

			at.tv_sec += ns / 1000000000LL;
			at.tv_nsec += ns % 1000000000LL;
			if (at.tv_nsec >= 1000000000L) {
				at.tv_sec++;
				at.tv_nsec -= 1000000000L;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
				;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		why = one_request();
		if (!why) {
			__atomic_add_fetch(&ok, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED) <= 20)
			fprintf(stderr,
				"tcp_load: thread %ld request %d failed at %.3f s: %s%s%s after "
				"%.3f s\n",
				idx, i, since(&start), why, errno ? ": " : "",
				errno ? strerror(errno) : "", since(&t0));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int i, n;

	if (argc < 5) {
		fprintf(stderr, "usage: tcp_load PORT THREADS COUNT PERIOD_MS\n");
		return 2;
	}
	port = atoi(argv[1]);
	n = atoi(argv[2]);
	count = atoi(argv[3]);
	period_ms = atoi(argv[4]);
	if (n < 1 || n > 64)
		n = 1;
	nthreads = n;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, client, (void *)(long)i);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("ok %ld failed %ld\n", ok, failed);
	return failed ? 1 : 0;
}
