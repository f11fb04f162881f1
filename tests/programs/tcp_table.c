// SPDX-License-Identifier: MIT
/*
 * tcp_table PORT [MAXCONN [locked]] — a small multithreaded TCP server on
 * 127.0.0.1:PORT with a latent race, the target of `concsched attach`
 * (tests/vm/55-attach.t). Each connection gets a handler thread, which
 * takes a slot in a shared connection table by a check-then-act: it finds
 * the first free slot (check, without a lock), then, under the mutex of
 * an in-memory log, logs the choice and takes the slot (act: its user
 * count goes up). Two handlers that both see the slot free take it both:
 * the count check after the act prints "RACE: slot N taken by 2
 * connections" on stderr (the server goes on serving). The window between
 * check and act is the mutex lock request, a few tens of nanoseconds:
 * under a light load handlers almost never meet there; a pause at that
 * lock request opens it.
 *
 * `locked`: the correct server. Check, act, the slot's fd and its release
 * all happen under log_lock: no race, and `attach --access` must warn of
 * none (tests/host/44-attach.t).
 *
 * A request is one line; the reply is "OK slot N\n". The server exits
 * after MAXCONN connections (0: no limit) or on SIGTERM/SIGINT, printing
 * "served N races R".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLOTS 16
#define LOGN  64

struct slot {
	int users; /* atomic */
	int fd;
};

static struct slot table[SLOTS];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_ring[LOGN][48];
static int log_slot[LOGN];
static unsigned log_next;
static volatile sig_atomic_t stop;
static int locked;	   /* the correct variant */
static long races, served; /* atomic */

static void on_signal(int sig)
{
	stop = sig;
}

/* Act, under the log's lock: log the choice and take the slot. The line
 * is made before the check: the window between the check and the act is
 * the lock request. Returns the slot's users now. */
static int take(const char *line, int slot)
{
	int n;

	pthread_mutex_lock(&log_lock);
	memcpy(log_ring[log_next % LOGN], line, sizeof(log_ring[0]));
	log_slot[log_next++ % LOGN] = slot;
	n = __atomic_add_fetch(&table[slot].users, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&log_lock);
	return n;
}

/* Check: the first free slot, read without a lock. */
__attribute__((noinline)) static int find_free(void)
{
	int i;

	for (i = 0; i < SLOTS; i++)
		if (!__atomic_load_n(&table[i].users, __ATOMIC_RELAXED))
			return i;
	return -1;
}

/* One request line, one reply. */
static void serve(int fd, int slot)
{
	char buf[128];
	int n;

	if (read(fd, buf, sizeof(buf)) > 0) {
		n = snprintf(buf, sizeof(buf), "OK slot %d\n", slot);
		if (write(fd, buf, (size_t)n) < 0)
			perror("write");
	}
}

static void *handler(void *arg)
{
	int fd = (int)(long)arg, slot, n;
	char line[48];

	snprintf(line, sizeof(line), "connection on fd %d", fd);
	if (locked) {
		pthread_mutex_lock(&log_lock);
		slot = find_free();
		if (slot >= 0) {
			table[slot].users++;
			table[slot].fd = fd;
		}
		pthread_mutex_unlock(&log_lock);
		serve(fd, slot);
		if (slot >= 0) {
			pthread_mutex_lock(&log_lock);
			table[slot].users--;
			pthread_mutex_unlock(&log_lock);
		}
		close(fd);
		__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	slot = find_free();
	if (slot >= 0) {
		/* More than one user: two handlers both saw it free. */
		n = take(line, slot);
		if (n > 1) {
			__atomic_add_fetch(&races, 1, __ATOMIC_RELAXED);
			fprintf(stderr, "RACE: slot %d taken by %d connections\n", slot, n);
		}
		table[slot].fd = fd;
	}
	serve(fd, slot);
	if (slot >= 0)
		__atomic_sub_fetch(&table[slot].users, 1, __ATOMIC_SEQ_CST);
	close(fd);
	__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
	struct sockaddr_in a = { .sin_family = AF_INET };
	long maxconn = argc > 2 ? atol(argv[2]) : 0, accepted = 0;
	pthread_attr_t attr;
	int ls, one = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: tcp_table PORT [MAXCONN [locked]]\n");
		return 2;
	}
	locked = argc > 3 && !strcmp(argv[3], "locked");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 64)) {
		perror("tcp_table: listen");
		return 1;
	}
	printf("listening on 127.0.0.1:%s\n", argv[1]);
	fflush(stdout);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!stop && (!maxconn || accepted < maxconn)) {
		pthread_t t;
		int fd = accept(ls, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("tcp_table: accept");
			break;
		}
		accepted++;
		if (pthread_create(&t, &attr, handler, (void *)(long)fd)) {
			close(fd);
			continue;
		}
	}
	close(ls);
	/* Let the last handlers finish (bounded). */
	for (int i = 0; i < 100 && __atomic_load_n(&served, __ATOMIC_RELAXED) < accepted; i++)
		usleep(10000);
	printf("served %ld races %ld\n", served, races);
	return 0;
}
