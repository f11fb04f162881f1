// SPDX-License-Identifier: MIT
/*
 * Race-warning suppressions in Helgrind's or TSan's format (suppress.h).
 */
#include "lib/suppress.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array_size.h"
#include "lib/log.h"
#include "lib/xalloc.h"

enum frame_kind {
	FRAME_FUN, /* fun:GLOB  (Valgrind) */
	FRAME_OBJ, /* obj:GLOB */
	FRAME_SRC, /* src:GLOB */
	FRAME_ANY, /* ... */
};

struct supp_frame {
	enum frame_kind kind;
	char *glob;
};

struct supp {
	char *name;
	bool tsan;  /* race:PATTERN, else a Valgrind entry */
	char *glob; /* tsan: the pattern as a glob */
	struct supp_frame *frames;
	size_t nframes;
};

struct suppressions {
	struct supp *v;
	size_t n;
};

/* The C runtime: its own synchronization is not what the probes see. */
static const char *const default_tsan[] = {
	"/libc.so.", "/ld-linux-x86-64.so.", "/libstdc++.so.", "/libgcc_s.so.", "/libpthread.so.",
};

static struct supp *supp_add(struct suppressions *s, const char *name)
{
	struct supp *e;

	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	return e;
}

/* TSan's PATTERN (a substring, `*` wildcards, `^`/`$` anchors) as a glob. */
static void tsan_add(struct suppressions *s, const char *pattern, const char *name)
{
	size_t n = strlen(pattern);
	bool head = pattern[0] == '^', tail = n && pattern[n - 1] == '$' && n > (size_t)head;
	struct supp *e = supp_add(s, name);

	e->tsan = true;
	e->glob = xasprintf("%s%.*s%s", head ? "" : "*", (int)(n - head - tail), pattern + head,
			    tail ? "" : "*");
}

struct suppressions *suppress_new(void)
{
	struct suppressions *s = xcalloc(1, sizeof(*s));
	char name[64];

	for (size_t i = 0; i < ARRAY_SIZE(default_tsan); i++) {
		snprintf(name, sizeof(name), "default:%s", default_tsan[i]);
		tsan_add(s, default_tsan[i], name);
	}
	return s;
}

void suppress_free(struct suppressions *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].glob);
		for (size_t k = 0; k < s->v[i].nframes; k++)
			free(s->v[i].frames[k].glob);
		free(s->v[i].frames);
	}
	free(s->v);
	free(s);
}

size_t suppress_count(const struct suppressions *s)
{
	return s->n;
}

static char *trim(char *l)
{
	size_t n;

	while (*l == ' ' || *l == '\t')
		l++;
	n = strlen(l);
	while (n && (l[n - 1] == '\n' || l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		l[--n] = '\0';
	return l;
}

static int frame_add(struct supp *e, const char *l)
{
	struct supp_frame f;

	if (!strcmp(l, "..."))
		f = (struct supp_frame){ FRAME_ANY, NULL };
	else if (!strncmp(l, "fun:", 4))
		f = (struct supp_frame){ FRAME_FUN, xstrdup(l + 4) };
	else if (!strncmp(l, "obj:", 4))
		f = (struct supp_frame){ FRAME_OBJ, xstrdup(l + 4) };
	else if (!strncmp(l, "src:", 4))
		f = (struct supp_frame){ FRAME_SRC, xstrdup(l + 4) };
	else
		return -EINVAL;
	e->frames = xrealloc(e->frames, (e->nframes + 1) * sizeof(*e->frames));
	e->frames[e->nframes++] = f;
	return 0;
}

/* A Valgrind entry's lines after "{": name, kind, frames, "}". */
enum vg_state { VG_OUT, VG_NAME, VG_KIND, VG_FRAMES, VG_SKIP };

int suppress_load(struct suppressions *s, const char *path)
{
	FILE *f = fopen(path, "r");
	enum vg_state st = VG_OUT;
	char line[4096], name[256] = "";
	struct supp *cur = NULL;
	unsigned lineno = 0;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		char *l = trim(line);

		lineno++;
		if (!*l || *l == '#')
			continue;
		switch (st) {
		case VG_OUT:
			if (!strcmp(l, "{")) {
				st = VG_NAME;
			} else if (!strncmp(l, "race:", 5) && l[5]) {
				snprintf(name, sizeof(name), "%s:%u", path, lineno);
				tsan_add(s, l + 5, name);
			} else if (!strchr(l, ':')) {
				err = -EINVAL;
			} /* other TSan types: read, not used */
			break;
		case VG_NAME:
			snprintf(name, sizeof(name), "%s", l);
			st = VG_KIND;
			break;
		case VG_KIND:
			if (!strcmp(l, "Helgrind:Race")) {
				cur = supp_add(s, name);
				st = VG_FRAMES;
			} else {
				st = VG_SKIP; /* another tool's or kind's entry */
			}
			break;
		case VG_FRAMES:
		case VG_SKIP:
			if (!strcmp(l, "}")) {
				if (st == VG_FRAMES && !cur->nframes)
					err = -EINVAL;
				st = VG_OUT;
				cur = NULL;
			} else if (st == VG_FRAMES && frame_add(cur, l)) {
				err = -EINVAL;
			}
			break;
		}
	}
	if (!err && st != VG_OUT)
		err = -EINVAL;
	if (err)
		log_err("%s:%u: not a Helgrind suppression ({ name, Helgrind:Race, "
			"fun:/obj:/src:/... "
			"lines, }) nor a TSan one (race:PATTERN)",
			path, lineno);
	fclose(f);
	return err;
}

static bool glob_match(const char *glob, const char *s)
{
	return s && !fnmatch(glob, s, 0);
}

static bool frame_match(const struct supp_frame *f, const struct suppress_frame *a)
{
	switch (f->kind) {
	case FRAME_FUN:
		return glob_match(f->glob, a->function);
	case FRAME_OBJ:
		return glob_match(f->glob, a->object);
	case FRAME_SRC:
		return glob_match(f->glob, a->file);
	default:
		return false;
	}
}

static bool supp_match(const struct supp *e, const struct suppress_frame *a)
{
	if (e->tsan)
		return glob_match(e->glob, a->function) || glob_match(e->glob, a->file) ||
		       glob_match(e->glob, a->object);
	/* One frame known: the entry's first frame, or any after a "...". */
	if (e->frames[0].kind != FRAME_ANY)
		return frame_match(&e->frames[0], a);
	for (size_t k = 1; k < e->nframes; k++)
		if (frame_match(&e->frames[k], a))
			return true;
	return false;
}

const char *suppress_race(const struct suppressions *s, const struct suppress_frame *a,
			  const struct suppress_frame *b)
{
	for (size_t i = 0; i < s->n; i++)
		if (supp_match(&s->v[i], a) || supp_match(&s->v[i], b))
			return s->v[i].name;
	return NULL;
}
