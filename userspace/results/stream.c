// SPDX-License-Identifier: MIT
/* Records of a campaign streamed out of the VM (stream.h). */
#include "results/stream.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/xalloc.h"

#define HDR_LEN 7

int stream_write(int fd, char kind, const void *payload, size_t len)
{
	unsigned char hdr[HDR_LEN] = { 'C',
				       'S',
				       (unsigned char)kind,
				       (unsigned char)len,
				       (unsigned char)(len >> 8),
				       (unsigned char)(len >> 16),
				       (unsigned char)(len >> 24) };
	struct iovec iov[2] = { { hdr, HDR_LEN }, { (void *)payload, len } };
	size_t left = HDR_LEN + len;

	if (len > STREAM_MAX_RECORD)
		return -EMSGSIZE;
	while (left) {
		ssize_t w = writev(fd, iov, 2);
		size_t k;

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		left -= (size_t)w;
		for (k = 0; k < 2 && w > 0; k++) {
			size_t take = (size_t)w < iov[k].iov_len ? (size_t)w : iov[k].iov_len;

			iov[k].iov_base = (char *)iov[k].iov_base + take;
			iov[k].iov_len -= take;
			w -= (ssize_t)take;
		}
	}
	return 0;
}

int stream_feed(struct stream_reader *r, const void *data, size_t n, stream_record_fn fn, void *arg)
{
	size_t off = 0;
	int err;

	if (r->bad)
		return -EPROTO;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 65536;

		while (cap < r->len + n)
			cap *= 2;
		r->buf = xrealloc(r->buf, cap);
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	while (r->len - off >= HDR_LEN) {
		const unsigned char *h = r->buf + off;
		uint32_t len =
			h[3] | (uint32_t)h[4] << 8 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 24;

		if (h[0] != 'C' || h[1] != 'S' || len > STREAM_MAX_RECORD) {
			r->bad = true;
			return -EPROTO;
		}
		if (r->len - off < HDR_LEN + (size_t)len)
			break;
		err = fn((char)h[2], h + HDR_LEN, len, arg);
		if (err) {
			r->bad = true;
			return err;
		}
		off += HDR_LEN + len;
	}
	memmove(r->buf, r->buf + off, r->len - off);
	r->len -= off;
	return 0;
}

size_t stream_pending(const struct stream_reader *r)
{
	return r->len;
}

void stream_reader_free(struct stream_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
