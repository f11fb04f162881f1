// SPDX-License-Identifier: MIT
/*
 * compress — a block compressor with millions of memory accesses, and no
 * bug: the other cost case of issue 12 item 6 (docs/perf.md, "A program
 * with millions of accesses"). Main fills an input buffer with
 * repetitive text; NTHREADS workers take the next block under a mutex and
 * compress it with a small LZ77 (a hash table of earlier positions, matches
 * of 4 to 255 bytes, literals otherwise) into the block's own output. Every
 * worker reads the input, which main wrote before creating them, so the
 * input is shared; each output is written by one worker and read by main
 * after the joins. Main then decompresses every block and compares it with
 * the input; a difference exits 1.
 *
 *   compress [KIB [NTHREADS]]      default 256 KiB, 2 threads: about
 *                                  3 million loads and stores in the workers
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK	    16384
#define HASH_BITS   12
#define MIN_MATCH   4
#define MAX_MATCH   255
#define MAX_THREADS 16

static unsigned char *in;
static size_t in_len, nblocks;
static unsigned char **out;
static size_t *out_len;
static size_t next_block;
static pthread_mutex_t take = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash4(const unsigned char *p)
{
	uint32_t v =
		(uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

	return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* Output: a literal is 0 then the byte; a match is its length (4-255)
 * then the distance back, two bytes. */
static size_t lz_block(const unsigned char *src, size_t n, unsigned char *dst)
{
	static __thread int32_t head[1 << HASH_BITS];
	size_t i = 0, o = 0;

	memset(head, 0xff, sizeof(head));
	while (i < n) {
		size_t len = 0, dist = 0;

		if (i + MIN_MATCH <= n) {
			unsigned h = hash4(src + i);
			int32_t cand = head[h];

			head[h] = (int32_t)i;
			if (cand >= 0 && i - (size_t)cand <= 0xffff) {
				while (len < MAX_MATCH && i + len < n &&
				       src[cand + len] == src[i + len])
					len++;
				dist = i - (size_t)cand;
			}
		}
		if (len >= MIN_MATCH) {
			dst[o++] = (unsigned char)len;
			dst[o++] = (unsigned char)(dist & 0xff);
			dst[o++] = (unsigned char)(dist >> 8);
			i += len;
		} else {
			dst[o++] = 0;
			dst[o++] = src[i++];
		}
	}
	return o;
}

static size_t unlz_block(const unsigned char *src, size_t n, unsigned char *dst, size_t cap)
{
	size_t i = 0, o = 0;

	while (i < n) {
		if (src[i] == 0) {
			if (i + 1 >= n || o >= cap)
				return (size_t)-1;
			dst[o++] = src[i + 1];
			i += 2;
			continue;
		}
		if (i + 2 >= n)
			return (size_t)-1;
		size_t len = src[i], dist = src[i + 1] | (size_t)src[i + 2] << 8;

		if (!dist || dist > o || o + len > cap)
			return (size_t)-1;
		for (size_t k = 0; k < len; k++, o++)
			dst[o] = dst[o - dist];
		i += 3;
	}
	return o;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		size_t b, lo, n;

		pthread_mutex_lock(&take);
		b = next_block++;
		pthread_mutex_unlock(&take);
		if (b >= nblocks)
			return NULL;
		lo = b * BLOCK;
		n = in_len - lo < BLOCK ? in_len - lo : BLOCK;
		out_len[b] = lz_block(in + lo, n, out[b]);
	}
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	long kib = argc > 1 ? atol(argv[1]) : 256;
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	static const char *words[] = { "the ", "lock ",	 "thread ", "races ", "with ",
				       "a ",   "store ", "load ",   "and ",   "waits\n" };
	unsigned char back[BLOCK];
	size_t total = 0;
	uint32_t x = 12345;

	if (kib < 1 || kib > 65536 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: compress [KIB (1-65536) [NTHREADS (1-%d)]]\n", MAX_THREADS);
		return 2;
	}
	in_len = (size_t)kib * 1024;
	nblocks = (in_len + BLOCK - 1) / BLOCK;
	in = malloc(in_len);
	out = calloc(nblocks, sizeof(*out));
	out_len = calloc(nblocks, sizeof(*out_len));
	if (!in || !out || !out_len)
		return 2;
	for (size_t i = 0; i < in_len;) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 10];
		for (size_t k = 0; w[k] && i < in_len; k++)
			in[i++] = (unsigned char)w[k];
	}
	for (size_t b = 0; b < nblocks; b++)
		if (!(out[b] = malloc(2 * BLOCK)))
			return 2;
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, NULL);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (size_t b = 0; b < nblocks; b++) {
		size_t lo = b * BLOCK, n = in_len - lo < BLOCK ? in_len - lo : BLOCK;

		if (unlz_block(out[b], out_len[b], back, sizeof(back)) != n ||
		    memcmp(back, in + lo, n)) {
			fprintf(stderr, "compress: block %zu does not decompress to its input\n",
				b);
			return 1;
		}
		total += out_len[b];
	}
	printf("compress: %zu bytes in %zu blocks to %zu bytes, %d threads\n", in_len, nblocks,
	       total, nthreads);
	return 0;
}
