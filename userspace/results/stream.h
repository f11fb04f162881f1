/* SPDX-License-Identifier: MIT */
/*
 * A campaign streamed out of the VM as it runs (run --vm, docs/vm.md
 * "Streaming"). The guest's campaign writes records on the virtio-serial
 * port cs.stream; the host applies them to its own copy of the store, so
 * an interruption at any moment loses at most the run in flight.
 *
 * A record: "CS", its kind (one byte), the payload length (4 bytes,
 * little-endian), the payload.
 */
#ifndef CONCSCHED_STREAM_H
#define CONCSCHED_STREAM_H

#include <stdbool.h>
#include <stddef.h>

enum stream_kind {
	STREAM_SNAPSHOT = 'S',	/* the whole database right after store_create */
	STREAM_CHANGESET = 'C', /* what committed since the previous record */
	STREAM_PROGRESS = 'P',	/* the campaign's progress line (text) */
	STREAM_END = 'E',	/* the store was closed: nothing else follows */
	STREAM_REPLAYED = 'R',	/* replay's result: "RUN TIMES REPRODUCED ORDER" */
};

#define STREAM_MAX_RECORD (256u << 20)

/* Write one record to fd; -errno on failure (EPIPE: the host is gone). */
int stream_write(int fd, char kind, const void *payload, size_t len);

typedef int (*stream_record_fn)(char kind, const void *payload, size_t len, void *arg);

struct stream_reader {
	unsigned char *buf;
	size_t len, cap;
	bool bad; /* a malformed record or a callback error: the rest is ignored */
};

/* Feed bytes as they arrive; fn gets each complete record. A callback
 * error or a malformed record makes the reader bad (returns -EPROTO or the
 * callback's error) and every later byte is dropped. */
int stream_feed(struct stream_reader *r, const void *data, size_t n, stream_record_fn fn,
		void *arg);
/* Bytes of an incomplete record left at the end of the stream. */
size_t stream_pending(const struct stream_reader *r);
void stream_reader_free(struct stream_reader *r);

#endif
