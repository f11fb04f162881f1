// SPDX-License-Identifier: MIT
/*
 * Decision log encoding (declog.h). Varints keep a log small enough to
 * store with every run: thread ids go once into a table, entries refer to
 * them by index, and event indices are deltas within the thread.
 */
#include "lib/declog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

static const char declog_magic[4] = { 'C', 'S', 'D', 'L' };

static const char *const action_names[DECLOG_ACTION_END] = {
	[DECLOG_PARK] = "park",	  [DECLOG_RELEASE] = "release",	  [DECLOG_DELAY_US] = "delay",
	[DECLOG_YIELD] = "yield", [DECLOG_PRIORITY] = "priority", [DECLOG_PASS] = "pass",
};

const char *declog_action_name(enum declog_action a)
{
	return a > 0 && a < DECLOG_ACTION_END ? action_names[a] : "unknown";
}

void declog_init(struct declog *dl, uint64_t seed, const char *config_json)
{
	memset(dl, 0, sizeof(*dl));
	dl->seed = seed;
	dl->config_json = config_json ? xstrdup(config_json) : NULL;
}

void declog_free(struct declog *dl)
{
	size_t i;

	for (i = 0; i < dl->nnames; i++)
		free(dl->names[i].path);
	free(dl->names);
	free(dl->config_json);
	free(dl->entries);
	free(dl->sorted);
	memset(dl, 0, sizeof(*dl));
}

static int push_entry(struct declog *dl, const struct declog_entry *e)
{
	if (dl->n == dl->cap) {
		dl->cap = dl->cap ? dl->cap * 2 : 64;
		dl->entries = xrealloc(dl->entries, dl->cap * sizeof(*dl->entries));
	}
	dl->entries[dl->n++] = *e;
	free(dl->sorted);
	dl->sorted = NULL;
	return 0;
}

int declog_add(struct declog *dl, uint64_t thread, uint32_t instance, uint64_t event,
	       enum declog_action action, int64_t arg)
{
	struct declog_entry e = { thread, instance, event, action, arg };
	size_t i;

	if (action <= 0 || action >= DECLOG_ACTION_END)
		return -EINVAL;
	/* The latest entry of this thread bounds the new event index: its
	 * latest pass for a pass, its latest decision for a decision. */
	for (i = dl->n; i-- > 0;) {
		if (dl->entries[i].thread != thread || dl->entries[i].instance != instance ||
		    (dl->entries[i].action == DECLOG_PASS) != (action == DECLOG_PASS))
			continue;
		if (dl->entries[i].event > event)
			return -EINVAL;
		break;
	}
	return push_entry(dl, &e);
}

/* Growable output buffer. */
struct outbuf {
	uint8_t *p;
	size_t len, cap;
};

static void out_bytes(struct outbuf *o, const void *src, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2 + 64;
		o->p = xrealloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, src, n);
	o->len += n;
}

static void out_varint(struct outbuf *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	out_bytes(o, b, n);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void out_u64le(struct outbuf *o, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	out_bytes(o, b, 8);
}

struct thread_slot {
	uint64_t id;
	uint32_t instance;
	uint64_t last_event; /* its previous decision (before version 3: entry) */
	uint64_t last_pass;  /* its previous DECLOG_PASS (version 3) */
};

/* The delta chain an entry's event index continues. */
static uint64_t *chain(struct thread_slot *t, uint8_t version, uint8_t action)
{
	return version >= 3 && action == DECLOG_PASS ? &t->last_pass : &t->last_event;
}

/* Index of (id, instance) in the table, appending it when new. The last
 * hit is tried first: consecutive decisions often concern one thread. */
static size_t thread_index(struct thread_slot **tab, size_t *n, size_t *cap, size_t *hint,
			   uint64_t id, uint32_t instance)
{
	size_t i;

	if (*hint < *n && (*tab)[*hint].id == id && (*tab)[*hint].instance == instance)
		return *hint;
	for (i = 0; i < *n; i++)
		if ((*tab)[i].id == id && (*tab)[i].instance == instance)
			return *hint = i;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*tab = xrealloc(*tab, *cap * sizeof(**tab));
	}
	(*tab)[*n] = (struct thread_slot){ id, instance, 0, 0 };
	return *hint = (*n)++;
}

int declog_encode(const struct declog *dl, uint8_t **buf, size_t *len)
{
	struct outbuf hdr = { 0 }, body = { 0 };
	struct thread_slot *tab = NULL;
	size_t ntab = 0, cap = 0, hint = 0, i, t, clen;
	uint8_t version = DECLOG_VERSION, action;

	*buf = NULL;
	*len = 0;
	for (i = 0; i < dl->n; i++) {
		const struct declog_entry *e = &dl->entries[i];

		uint64_t *last;

		t = thread_index(&tab, &ntab, &cap, &hint, e->thread, e->instance);
		if (e->action <= 0 || e->action >= DECLOG_ACTION_END ||
		    e->event < *(last = chain(&tab[t], version, (uint8_t)e->action))) {
			free(tab);
			free(body.p);
			return -EINVAL;
		}
		out_varint(&body, t);
		out_varint(&body, e->event - *last);
		action = (uint8_t)e->action;
		out_bytes(&body, &action, 1);
		out_varint(&body, zigzag(e->arg));
		*last = e->event;
	}
	clen = dl->config_json ? strlen(dl->config_json) : 0;
	out_bytes(&hdr, declog_magic, sizeof(declog_magic));
	out_bytes(&hdr, &version, 1);
	out_varint(&hdr, dl->seed);
	out_varint(&hdr, clen);
	out_bytes(&hdr, dl->config_json ? dl->config_json : "", clen);
	out_varint(&hdr, ntab);
	for (t = 0; t < ntab; t++) {
		out_u64le(&hdr, tab[t].id);
		out_varint(&hdr, tab[t].instance);
	}
	out_varint(&hdr, dl->n);
	out_bytes(&hdr, body.p ? body.p : (uint8_t *)"", body.len);
	out_varint(&hdr, dl->nnames);
	for (i = 0; i < dl->nnames; i++) {
		size_t pl = strlen(dl->names[i].path);

		out_u64le(&hdr, dl->names[i].id);
		out_varint(&hdr, pl);
		out_bytes(&hdr, dl->names[i].path, pl);
	}
	free(tab);
	free(body.p);
	*buf = hdr.p;
	*len = hdr.len;
	return 0;
}

struct inbuf {
	const uint8_t *p, *end;
};

static int in_varint(struct inbuf *in, uint64_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (in->p >= in->end || shift > 63)
			return -EBADMSG;
		b = *in->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return 0;
}

static int in_bytes(struct inbuf *in, void *dst, size_t n)
{
	if ((size_t)(in->end - in->p) < n)
		return -EBADMSG;
	memcpy(dst, in->p, n);
	in->p += n;
	return 0;
}

static int decode_threads(struct inbuf *in, struct thread_slot **tab, size_t *ntab)
{
	uint64_t n, inst;
	uint8_t b[8];
	size_t i;
	int k;

	if (in_varint(in, &n) || n > (uint64_t)(in->end - in->p) / 9)
		return -EBADMSG;
	*tab = xcalloc(n ? n : 1, sizeof(**tab));
	*ntab = n;
	for (i = 0; i < n; i++) {
		if (in_bytes(in, b, 8) || in_varint(in, &inst) || inst > UINT32_MAX)
			return -EBADMSG;
		for (k = 7; k >= 0; k--)
			(*tab)[i].id = (*tab)[i].id << 8 | b[k];
		(*tab)[i].instance = (uint32_t)inst;
	}
	return 0;
}

static int decode_entries(struct inbuf *in, struct thread_slot *tab, size_t ntab, uint8_t version,
			  struct declog *dl)
{
	struct declog_entry e;
	uint64_t n, t, delta, arg, i, *last;
	uint8_t action;

	/* Each entry takes at least 4 bytes: bound the count before looping. */
	if (in_varint(in, &n) || n > (uint64_t)(in->end - in->p) / 4)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (in_varint(in, &t) || t >= ntab || in_varint(in, &delta) ||
		    in_bytes(in, &action, 1) || in_varint(in, &arg))
			return -EBADMSG;
		if (action == 0 || action >= DECLOG_ACTION_END)
			return -EBADMSG;
		last = chain(&tab[t], version, action);
		if (*last + delta < *last)
			return -EBADMSG;
		*last += delta;
		e = (struct declog_entry){ tab[t].id, tab[t].instance, *last,
					   (enum declog_action)action, unzigzag(arg) };
		push_entry(dl, &e);
	}
	return 0;
}

static int decode_names(struct inbuf *in, struct declog *dl)
{
	uint64_t n, len, id;
	uint8_t b[8];
	size_t i;
	int k;

	if (in_varint(in, &n) || n > (uint64_t)(in->end - in->p) / 9)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		char *path;

		if (in_bytes(in, b, 8) || in_varint(in, &len) || len > (uint64_t)(in->end - in->p))
			return -EBADMSG;
		for (id = 0, k = 7; k >= 0; k--)
			id = id << 8 | b[k];
		path = xcalloc(1, len + 1);
		in_bytes(in, path, len);
		declog_name_thread(dl, id, path);
		free(path);
	}
	return 0;
}

int declog_decode(const uint8_t *buf, size_t len, struct declog *dl)
{
	struct inbuf in = { buf, buf + len };
	struct thread_slot *tab = NULL;
	size_t ntab = 0;
	uint64_t seed, clen;
	char magic[4];
	uint8_t version;
	int err = -EBADMSG;

	declog_init(dl, 0, NULL);
	if (!buf || in_bytes(&in, magic, 4) || memcmp(magic, declog_magic, 4) ||
	    in_bytes(&in, &version, 1))
		goto cleanup;
	if (version > DECLOG_VERSION) {
		err = -EPROTONOSUPPORT;
		goto cleanup;
	}
	if (in_varint(&in, &seed) || in_varint(&in, &clen) || clen > (uint64_t)(in.end - in.p))
		goto cleanup;
	dl->seed = seed;
	if (clen) {
		dl->config_json = xcalloc(1, clen + 1);
		in_bytes(&in, dl->config_json, clen);
	}
	if (decode_threads(&in, &tab, &ntab))
		goto cleanup;
	err = decode_entries(&in, tab, ntab, version, dl);
	if (!err && version >= 2)
		err = decode_names(&in, dl);
	if (!err && in.p != in.end)
		err = -EBADMSG;
cleanup:
	free(tab);
	if (err)
		declog_free(dl);
	return err;
}

static int entry_key_cmp(const struct declog_entry *a, const struct declog_entry *b)
{
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->instance != b->instance)
		return a->instance < b->instance ? -1 : 1;
	if (a->event != b->event)
		return a->event < b->event ? -1 : 1;
	return 0;
}

static int entry_cmp(const void *pa, const void *pb)
{
	return entry_key_cmp(pa, pb);
}

/* Bottom-up merge sort: stable (qsort is not), so several decisions at the
 * same (thread, event) keep the order they were made in. */
static void sort_stable(struct declog_entry *v, size_t n)
{
	struct declog_entry *tmp;
	size_t width, i, l, r, lend, rend, k;

	if (n < 2)
		return;
	tmp = xcalloc(n, sizeof(*tmp));
	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			l = i;
			lend = i + width < n ? i + width : n;
			r = lend;
			rend = i + 2 * width < n ? i + 2 * width : n;
			k = i;
			while (l < lend && r < rend)
				tmp[k++] = entry_cmp(&v[r], &v[l]) < 0 ? v[r++] : v[l++];
			while (l < lend)
				tmp[k++] = v[l++];
			while (r < rend)
				tmp[k++] = v[r++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
}

size_t declog_lookup(struct declog *dl, uint64_t thread, uint32_t instance, uint64_t event,
		     const struct declog_entry **first)
{
	struct declog_entry key = { thread, instance, event, 0, 0 };
	size_t lo = 0, hi = dl->n, mid, count = 0;

	*first = NULL;
	if (!dl->n)
		return 0;
	if (!dl->sorted) {
		size_t k;

		dl->sorted = xcalloc(dl->n, sizeof(*dl->sorted));
		dl->nsorted = 0;
		for (k = 0; k < dl->n; k++)
			if (dl->entries[k].action != DECLOG_PASS)
				dl->sorted[dl->nsorted++] = dl->entries[k];
		sort_stable(dl->sorted, dl->nsorted);
	}
	hi = dl->nsorted;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (entry_key_cmp(&dl->sorted[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + count < dl->nsorted && !entry_key_cmp(&dl->sorted[lo + count], &key))
		count++;
	if (count)
		*first = &dl->sorted[lo];
	return count;
}

size_t declog_decisions(const struct declog *dl)
{
	size_t k, n = 0;

	for (k = 0; k < dl->n; k++)
		n += dl->entries[k].action != DECLOG_PASS;
	return n;
}

void declog_name_thread(struct declog *dl, uint64_t id, const char *path)
{
	if (!path || declog_thread_path(dl, id))
		return;
	dl->names = xrealloc(dl->names, (dl->nnames + 1) * sizeof(*dl->names));
	dl->names[dl->nnames].id = id;
	dl->names[dl->nnames].path = xstrdup(path);
	dl->nnames++;
}

const char *declog_thread_path(const struct declog *dl, uint64_t id)
{
	size_t i;

	for (i = 0; i < dl->nnames; i++)
		if (dl->names[i].id == id)
			return dl->names[i].path;
	return NULL;
}
