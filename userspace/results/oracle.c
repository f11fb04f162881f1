// SPDX-License-Identifier: MIT
/*
 * Run oracles (oracle.h): classify a finished run, and the deadlock
 * analysis of a timed-out one. The text matchers look for the exact
 * headers the runtimes print: compiler-rt sanitizers ("ERROR:
 * AddressSanitizer: ...", "WARNING: ThreadSanitizer: ...", UBSan's
 * "file:line:col: runtime error: ...", and their "SUMMARY:" line), glibc's
 * __assert_fail ("prog: file:line: func: Assertion `expr' failed.") and
 * glibc's fatal messages from malloc_printerr and __fortify_fail.
 */
#include "results/oracle.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/array_size.h"
#include "lib/xalloc.h"

static const char *const outcome_names[OUTCOME_COUNT] = {
	[OUTCOME_PASS] = "pass",	   [OUTCOME_EXIT_CODE] = "exit-code",
	[OUTCOME_SIGNAL] = "signal",	   [OUTCOME_TIMEOUT] = "timeout",
	[OUTCOME_DEADLOCK] = "deadlock",   [OUTCOME_SANITIZER] = "sanitizer",
	[OUTCOME_ASSERTION] = "assertion", [OUTCOME_CHECK_FAILED] = "check-failed",
};

const char *oracle_outcome_name(enum run_outcome o)
{
	return o < OUTCOME_COUNT ? outcome_names[o] : "unknown";
}

int oracle_outcome_parse(const char *name)
{
	int i;

	for (i = 0; i < OUTCOME_COUNT; i++)
		if (name && !strcmp(name, outcome_names[i]))
			return i;
	return -EINVAL;
}

/* memmem bounded to len; NULL when absent. */
static const char *find(const char *text, size_t len, const char *needle)
{
	if (!text)
		return NULL;
	return memmem(text, len, needle, strlen(needle));
}

static const char *line_start(const char *text, const char *p)
{
	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', end - p);

	return nl ? nl : end;
}

/* Copy [p, q) into buf trimmed of surrounding blanks and '\r'. */
static void copy_span(char *buf, size_t buflen, const char *p, const char *q)
{
	size_t n;

	while (p < q && (*p == ' ' || *p == '\t'))
		p++;
	while (q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'))
		q--;
	n = (size_t)(q - p);
	if (n >= buflen)
		n = buflen - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

static const char *const sanitizer_names[] = {
	"AddressSanitizer",	      "ThreadSanitizer",    "LeakSanitizer", "MemorySanitizer",
	"UndefinedBehaviorSanitizer", "HWAddressSanitizer",
};

/* The report kind after "NAME: " up to " on ", " (pid", " at pc" or EOL. */
static void sanitizer_kind(const char *p, const char *eol, char *kind, size_t len)
{
	const char *stops[] = { " on address", " on unknown address", " (pid=", " at pc",
				" in thread" };
	const char *q = eol, *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stops); i++) {
		s = memmem(p, eol - p, stops[i], strlen(stops[i]));
		if (s && s < q)
			q = s;
	}
	copy_span(kind, len, p, q);
}

/* "SUMMARY: NAME: kind LOCATION" -> LOCATION (what follows the kind). */
static bool sanitizer_summary_location(const char *text, size_t len, const char *name,
				       const char *kind, char *loc, size_t loclen)
{
	char head[128];
	const char *p, *eol, *end = text + len;

	snprintf(head, sizeof(head), "SUMMARY: %s: ", name);
	p = find(text, len, head);
	if (!p)
		return false;
	p += strlen(head);
	eol = line_end(p, end);
	if ((size_t)(eol - p) > strlen(kind) && !strncmp(p, kind, strlen(kind)))
		p += strlen(kind);
	copy_span(loc, loclen, p, eol);
	return loc[0] != '\0';
}

static bool find_ubsan(const char *text, size_t len, char *buf, size_t buflen)
{
	const char *p = find(text, len, ": runtime error: "), *ls, *eol;
	char where[160], what[200];

	if (!p)
		return false;
	ls = line_start(text, p);
	eol = line_end(p, text + len);
	copy_span(where, sizeof(where), ls, p);
	copy_span(what, sizeof(what), p + strlen(": runtime error: "), eol);
	snprintf(buf, buflen, "UndefinedBehaviorSanitizer: %s at %s", what, where);
	return true;
}

bool oracle_find_sanitizer(const char *text, size_t len, char *buf, size_t buflen)
{
	const char *best = NULL, *p, *eol;
	const char *name = NULL;
	char head[96], kind[128], loc[200];
	size_t i;

	if (!text || !len)
		return false;
	/* The earliest report wins: later ones are often consequences. */
	for (i = 0; i < ARRAY_SIZE(sanitizer_names); i++) {
		const char *prefixes[] = { "ERROR: ", "WARNING: " };
		size_t k;

		for (k = 0; k < ARRAY_SIZE(prefixes); k++) {
			snprintf(head, sizeof(head), "%s%s: ", prefixes[k], sanitizer_names[i]);
			p = find(text, len, head);
			if (p && (!best || p < best)) {
				best = p + strlen(head);
				name = sanitizer_names[i];
			}
		}
	}
	if (!best)
		return find_ubsan(text, len, buf, buflen);
	eol = line_end(best, text + len);
	sanitizer_kind(best, eol, kind, sizeof(kind));
	/* LeakSanitizer's summary is filed under AddressSanitizer. */
	if (sanitizer_summary_location(text, len, name, kind, loc, sizeof(loc)) ||
	    (!strcmp(name, "LeakSanitizer") &&
	     sanitizer_summary_location(text, len, "AddressSanitizer", kind, loc, sizeof(loc))))
		snprintf(buf, buflen, "%s: %s (%s)", name, kind, loc);
	else
		snprintf(buf, buflen, "%s: %s", name, kind);
	return true;
}

/* glibc: "prog: file.c:42: func: Assertion `expr' failed." */
static bool parse_glibc_assert(const char *ls, const char *at, const char *eol, char *buf,
			       size_t buflen)
{
	const char *expr = at + strlen("Assertion `"), *q;
	const char *fn_end, *fn, *loc_end, *loc;
	char e[160], f[96], l[160];

	q = memmem(expr, eol - expr, "' failed", 8);
	if (!q)
		return false;
	copy_span(e, sizeof(e), expr, q);
	/* Walk back over ": func: " and ": file:line". */
	fn_end = at;
	if (fn_end - ls < 2 || fn_end[-2] != ':')
		goto bare;
	fn_end -= 2;
	fn = fn_end;
	while (fn > ls && !(fn[-1] == ' ' && fn - ls >= 2 && fn[-2] == ':'))
		fn--;
	if (fn == ls)
		goto bare;
	loc_end = fn - 2;
	loc = loc_end;
	while (loc > ls && !(loc[-1] == ' ' && loc - ls >= 2 && loc[-2] == ':'))
		loc--;
	copy_span(f, sizeof(f), fn, fn_end);
	copy_span(l, sizeof(l), loc, loc_end);
	snprintf(buf, buflen, "assertion `%s' failed in %s at %s", e, f, l);
	return true;
bare:
	snprintf(buf, buflen, "assertion `%s' failed", e);
	return true;
}

bool oracle_find_assertion(const char *text, size_t len, char *buf, size_t buflen)
{
	const char *p, *ls, *eol;

	p = find(text, len, "Assertion `");
	if (p) {
		ls = line_start(text, p);
		eol = line_end(p, text + len);
		if (parse_glibc_assert(ls, p, eol, buf, buflen))
			return true;
	}
	/* musl and BSD libcs: "Assertion failed: expr (file: func: line)". */
	p = find(text, len, "Assertion failed: ");
	if (p) {
		eol = line_end(p, text + len);
		copy_span(buf, buflen, p, eol);
		buf[0] = 'a';
		return true;
	}
	return false;
}

static const char *const fatal_messages[] = {
	"*** stack smashing detected ***",
	"*** buffer overflow detected ***",
	"double free or corruption",
	"free(): double free detected",
	"free(): invalid pointer",
	"free(): invalid size",
	"free(): invalid next size",
	"munmap_chunk(): invalid pointer",
	"realloc(): invalid",
	"malloc(): corrupted",
	"malloc(): memory corruption",
	"malloc(): unaligned tcache chunk detected",
	"malloc_consolidate(): invalid chunk size",
	"corrupted size vs. prev_size",
	"corrupted double-linked list",
	"terminate called after throwing an instance of",
	"terminate called without an active exception",
	"pure virtual method called",
};

bool oracle_find_fatal_message(const char *text, size_t len, char *buf, size_t buflen)
{
	const char *best = NULL, *p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fatal_messages); i++) {
		p = find(text, len, fatal_messages[i]);
		if (p && (!best || p < best))
			best = p;
	}
	if (!best)
		return false;
	copy_span(buf, buflen, line_start(text, best), line_end(best, text + len));
	return true;
}

/* First matching evidence in stderr, then stdout. */
typedef bool (*oracle_matcher)(const char *, size_t, char *, size_t);

static bool match_output(const struct oracle_input *in, oracle_matcher m, char *buf, size_t len)
{
	return m(in->err, in->err ? in->err_len : 0, buf, len) ||
	       m(in->out, in->out ? in->out_len : 0, buf, len);
}

/* The sanitizer report itself as detail: from its header, at most 30 lines. */
static void sanitizer_detail(const struct oracle_input *in, char *buf, size_t buflen)
{
	const char *srcs[2] = { in->err, in->out };
	size_t lens[2] = { in->err_len, in->out_len };
	const char *heads[] = { "==ERROR: ", "WARNING: ", "ERROR: ", ": runtime error: " };
	const char *p, *q, *end;
	size_t i, h;
	int lines;

	for (i = 0; i < 2; i++) {
		if (!srcs[i])
			continue;
		for (h = 0; h < ARRAY_SIZE(heads); h++) {
			p = find(srcs[i], lens[i], heads[h]);
			if (!p)
				continue;
			p = line_start(srcs[i], p);
			end = srcs[i] + lens[i];
			for (q = p, lines = 0; q < end && lines < 30; lines++)
				q = line_end(q, end) + (q < end ? 1 : 0);
			if (q > end)
				q = end;
			copy_span(buf, buflen, p, q);
			return;
		}
	}
}

static void signal_summary(int sig, bool core, const char *why, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	snprintf(buf, len, "killed by SIG%s (%s)%s%s%s", abbrev ? abbrev : "?", strsignal(sig),
		 core ? ", core dumped" : "", why ? ": " : "", why ? why : "");
}

static void status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

void oracle_classify(const struct oracle_input *in, struct oracle_verdict *v)
{
	char what[256], st[64];
	int expect = in->expect_exit_set ? in->expect_exit : 0;
	const char *stop =
		in->grace_stop ? in->grace_stop : "every thread was let go and steering stopped";

	memset(v, 0, sizeof(*v));
	if (match_output(in, oracle_find_sanitizer, what, sizeof(what))) {
		v->outcome = OUTCOME_SANITIZER;
		snprintf(v->summary, sizeof(v->summary), "%s", what);
		sanitizer_detail(in, v->detail, sizeof(v->detail));
		return;
	}
	if (in->timed_out && in->deadlock_report) {
		v->outcome = OUTCOME_DEADLOCK;
		snprintf(v->summary, sizeof(v->summary), "deadlock: %s", in->deadlock_report);
		if (in->found_s > 0)
			snprintf(
				v->detail, sizeof(v->detail),
				"%s\nconfirmed: the cycle's threads stayed blocked in lock "
				"requests "
				"%.3g s %s%s (the cycle was found %.3g s into the run; run timeout "
				"%.3g s)",
				in->deadlock_report, in->confirm_s, in->grace_s > 0 ? "after " : "",
				in->grace_s > 0 ? stop : "(the run was not steered)", in->found_s,
				in->timeout_s);
		else if (in->grace_s > 0)
			snprintf(v->detail, sizeof(v->detail),
				 "%s\nconfirmed: the cycle's threads were blocked in lock requests "
				 "%.3g s after %s at the %.3g s run timeout",
				 in->deadlock_report, in->grace_s, stop, in->timeout_s);
		else
			snprintf(v->detail, sizeof(v->detail), "%s", in->deadlock_report);
		return;
	}
	if (match_output(in, oracle_find_assertion, what, sizeof(what))) {
		v->outcome = OUTCOME_ASSERTION;
		snprintf(v->summary, sizeof(v->summary), "%s", what);
		snprintf(v->detail, sizeof(v->detail), "%s", what);
		return;
	}
	if (in->timed_out) {
		v->outcome = OUTCOME_TIMEOUT;
		snprintf(v->summary, sizeof(v->summary),
			 "timed out (hang): still running at the run timeout%s",
			 in->deadlock_report ? "" : ", no lock cycle found");
		if (in->grace_s > 0)
			snprintf(v->detail, sizeof(v->detail),
				 "confirmed: still running %.3g s after %s at the %.3g s run "
				 "timeout",
				 in->grace_s, stop, in->timeout_s);
		return;
	}
	if (WIFSIGNALED(in->wait_status)) {
		bool why = match_output(in, oracle_find_fatal_message, what, sizeof(what));

		v->outcome = OUTCOME_SIGNAL;
		signal_summary(WTERMSIG(in->wait_status), WCOREDUMP(in->wait_status),
			       why ? what : NULL, v->summary, sizeof(v->summary));
		if (why)
			snprintf(v->detail, sizeof(v->detail), "%s", what);
		return;
	}
	if (WIFEXITED(in->wait_status) && WEXITSTATUS(in->wait_status) != expect) {
		v->outcome = OUTCOME_EXIT_CODE;
		snprintf(v->summary, sizeof(v->summary), "exited with status %d (expected %d)",
			 WEXITSTATUS(in->wait_status), expect);
		return;
	}
	if (in->check_ran && in->check_status != 0) {
		v->outcome = OUTCOME_CHECK_FAILED;
		status_text(in->check_status, st, sizeof(st));
		snprintf(v->summary, sizeof(v->summary), "--check command failed (%s)", st);
		return;
	}
	v->outcome = OUTCOME_PASS;
	snprintf(v->summary, sizeof(v->summary), "exited with status %d",
		 WEXITSTATUS(in->wait_status));
}

/* Deadlock analysis: DFS over the wait-for graph. */

struct dl_search {
	const struct dl_thread *t;
	size_t n;
	unsigned char *color; /* 0 white, 1 on stack, 2 done */
	size_t *stack;
	size_t depth;
	size_t *cycle;
	size_t len;
};

static const struct dl_held *dl_holds(const struct dl_thread *t, uint64_t lock)
{
	size_t i;

	for (i = 0; i < t->nheld; i++)
		if (t->held[i].lock == lock)
			return &t->held[i];
	return NULL;
}

static bool dl_visit(struct dl_search *s, size_t u)
{
	size_t v, k;

	s->color[u] = 1;
	s->stack[s->depth++] = u;
	for (v = 0; s->t[u].blocked && !s->t[u].ran && v < s->n; v++) {
		if (!dl_holds(&s->t[v], s->t[u].waits_for))
			continue;
		if (s->color[v] == 1) {
			for (k = 0; s->stack[k] != v; k++)
				;
			s->len = s->depth - k;
			memcpy(s->cycle, s->stack + k, s->len * sizeof(*s->cycle));
			return true;
		}
		if (s->color[v] == 0 && dl_visit(s, v))
			return true;
	}
	s->color[u] = 2;
	s->depth--;
	return false;
}

static const char *lock_label(uint64_t lock, const char *name, char *tmp, size_t len)
{
	if (name)
		return name;
	snprintf(tmp, len, "lock 0x%llx", (unsigned long long)lock);
	return tmp;
}

/* Appends to buf; keeps it NUL-terminated when it fills up. */
static void append(char *buf, size_t buflen, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t buflen, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= buflen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, buflen - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < buflen ? *pos + (size_t)n : buflen - 1;
}

static void dl_describe_cycle(const struct dl_thread *t, const size_t *cyc, size_t len, char *buf,
			      size_t buflen)
{
	char a[48], b[48];
	size_t i, pos = 0;

	for (i = 0; i < len; i++) {
		const struct dl_thread *me = &t[cyc[i]];
		/* What I hold that the previous thread of the cycle waits for. */
		const struct dl_thread *prev = &t[cyc[(i + len - 1) % len]];
		const struct dl_held *h = dl_holds(me, prev->waits_for);

		append(buf, buflen, &pos,
		       "%sthread %s holds %s (taken at %s) and waits for %s at %s", i ? "; " : "",
		       me->name, lock_label(h->lock, h->lock_name, a, sizeof(a)),
		       h->site ? h->site : "unknown site",
		       lock_label(me->waits_for, me->waits_name, b, sizeof(b)),
		       me->wait_site ? me->wait_site : "unknown site");
	}
}

static void dl_describe_hang(const struct dl_thread *t, size_t n, char *buf, size_t buflen)
{
	char a[48];
	size_t i, j, pos = 0;
	const char *holder;

	buf[0] = '\0';
	append(buf, buflen, &pos, "no lock cycle");
	for (i = 0; i < n; i++) {
		if (!t[i].blocked)
			continue;
		if (t[i].ran) {
			append(buf, buflen, &pos,
			       "; thread %s ran after its request for %s at %s (not blocked)",
			       t[i].name, lock_label(t[i].waits_for, t[i].waits_name, a, sizeof(a)),
			       t[i].wait_site ? t[i].wait_site : "unknown site");
			continue;
		}
		holder = NULL;
		for (j = 0; j < n && !holder; j++)
			if (dl_holds(&t[j], t[i].waits_for))
				holder = t[j].name;
		append(buf, buflen, &pos, "; thread %s waits for %s at %s (%s%s)", t[i].name,
		       lock_label(t[i].waits_for, t[i].waits_name, a, sizeof(a)),
		       t[i].wait_site ? t[i].wait_site : "unknown site",
		       holder ? "held by thread " : "held by no blocked-set thread",
		       holder ? holder : "");
	}
}

size_t oracle_deadlock_analyze(const struct dl_thread *t, size_t n, size_t *cycle, char *buf,
			       size_t buflen)
{
	struct dl_search s = { .t = t, .n = n };
	size_t i, len = 0, lo, k;

	if (buf && buflen)
		buf[0] = '\0';
	if (!n)
		return 0;
	s.color = xcalloc(n, 1);
	s.stack = xcalloc(n, sizeof(*s.stack));
	s.cycle = xcalloc(n, sizeof(*s.cycle));
	for (i = 0; i < n && !len; i++) {
		if (s.color[i] || !dl_visit(&s, i))
			continue;
		len = s.len;
	}
	if (len) {
		/* Start the report at the lowest-numbered thread: stable text. */
		for (lo = 0, k = 1; k < len; k++)
			if (s.cycle[k] < s.cycle[lo])
				lo = k;
		for (k = 0; k < len; k++)
			s.stack[k] = s.cycle[(lo + k) % len];
		if (cycle)
			memcpy(cycle, s.stack, len * sizeof(*cycle));
		if (buf && buflen)
			dl_describe_cycle(t, s.stack, len, buf, buflen);
	} else if (buf && buflen) {
		dl_describe_hang(t, n, buf, buflen);
	}
	free(s.color);
	free(s.stack);
	free(s.cycle);
	return len;
}
