// SPDX-License-Identifier: MIT
/* Test suites as experiment programs (suite.h). */
#include "experiment/suite.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"

bool suite_entry(const json_t *entry)
{
	return json_object_get(entry, "gtest") || json_object_get(entry, "ctest");
}

/* argv's standard output, or NULL with one line printed (not run, or not
 * exit status 0). Its standard error goes to ours. */
static char *capture(char *const argv[], const char *file, const char *where)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return NULL;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		if (len + 4096 + 1 > cap)
			out = xrealloc(out, cap = 2 * cap + 4096 + 1);
		n = read(fds[0], out + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	out[len] = 0;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		log_err("%s: %s: listing the test cases with %s failed (%s)", file, where, argv[0],
			pid < 0						  ? strerror(errno)
			: WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "cannot run it"
									  : "exit status not 0");
		free(out);
		return NULL;
	}
	return out;
}

/* A copy of entry without its suite key, for one case. */
static json_t *case_entry(const json_t *entry, const char *name, const char *path,
			  json_t *case_args)
{
	json_t *e = json_deep_copy(entry), *args = json_object_get(entry, "args"), *v;
	const char *prefix = json_string_value(json_object_get(entry, "name"));
	char *full = prefix ? xasprintf("%s.%s", prefix, name) : xstrdup(name);
	size_t i;

	json_object_del(e, "gtest");
	json_object_del(e, "ctest");
	json_array_foreach(args, i, v) json_array_append(case_args, v);
	json_object_set_new(e, "name", json_string(full));
	json_object_set_new(e, "path", json_string(path));
	json_object_set_new(e, "args", case_args);
	free(full);
	return e;
}

/* `BINARY --gtest_list_tests`: "Suite." lines, then "  Case" lines (either
 * may end in "  # TypeParam = ..." or "# GetParam() = ..."); other lines
 * (gtest_main's "Running main() from ...") and DISABLED_ cases skipped. */
static json_t *expand_gtest(const json_t *entry, const char *bin, const char *file,
			    const char *where)
{
	char *argv[] = { (char *)bin, "--gtest_list_tests", NULL };
	char *out = capture(argv, file, where), *line, *save = NULL, *suite = NULL;
	json_t *cases;

	if (!out)
		return NULL;
	cases = json_array();
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool is_case = !strncmp(line, "  ", 2);
		char *name = line + strspn(line, " "), *hash = strstr(name, "  #");
		size_t len;

		if (hash)
			*hash = 0;
		len = strcspn(name, " ");
		name[len] = 0;
		if (!is_case) {
			free(suite);
			suite = len && name[len - 1] == '.' && line[0] != ' ' ? xstrdup(name)
									      : NULL;
		} else if (suite && len && strncmp(suite, "DISABLED_", 9) &&
			   strncmp(name, "DISABLED_", 9)) {
			char *full = xasprintf("%s%s", suite, name);
			char *filter = xasprintf("--gtest_filter=%s", full);

			json_array_append_new(
				cases, case_entry(entry, full, bin, json_pack("[s]", filter)));
			free(filter);
			free(full);
		}
	}
	free(suite);
	free(out);
	return cases;
}

/* `ctest --test-dir DIR --show-only=json-v1`: tests[] with name and
 * command (the program, then its arguments). */
static json_t *expand_ctest(const json_t *entry, const char *dir, const char *file,
			    const char *where)
{
	char *argv[] = { "ctest", "--test-dir", (char *)dir, "--show-only=json-v1", NULL };
	char *out = capture(argv, file, where);
	json_t *doc, *cases, *t;
	json_error_t e;
	size_t i;

	if (!out)
		return NULL;
	doc = json_loads(out, 0, &e);
	free(out);
	if (!doc) {
		log_err("%s: %s: ctest's test list is not JSON: %s", file, where, e.text);
		return NULL;
	}
	cases = json_array();
	json_array_foreach(json_object_get(doc, "tests"), i, t)
	{
		json_t *cmd = json_object_get(t, "command"), *args = json_array(), *v;
		const char *name = json_string_value(json_object_get(t, "name"));
		size_t k;

		if (!name || !json_is_array(cmd) || !json_is_string(json_array_get(cmd, 0))) {
			json_decref(args);
			continue; /* a test with no command (NOT_AVAILABLE) */
		}
		json_array_foreach(cmd, k, v) if (k) json_array_append(args, v);
		json_array_append_new(
			cases,
			case_entry(entry, name, json_string_value(json_array_get(cmd, 0)), args));
	}
	json_decref(doc);
	return cases;
}

json_t *suite_expand(const json_t *entry, const char *dir, const char *file, const char *where)
{
	json_t *g = json_object_get(entry, "gtest"), *c = json_object_get(entry, "ctest");
	const char *v = json_string_value(g ? g : c);
	json_t *cases;
	char *path;

	if (g && c) {
		log_err("%s: %s: \"gtest\" or \"ctest\", not both", file, where);
		return NULL;
	}
	if (!v || json_object_get(entry, "path")) {
		log_err("%s: %s: \"%s\" must be a string, and replaces \"path\"", file, where,
			g ? "gtest" : "ctest");
		return NULL;
	}
	path = v[0] == '/' ? xstrdup(v) : xasprintf("%s/%s", dir, v);
	cases = g ? expand_gtest(entry, path, file, where) : expand_ctest(entry, path, file, where);
	if (cases && !json_array_size(cases)) {
		log_err("%s: %s: %s lists no test case", file, where, path);
		json_decref(cases);
		cases = NULL;
	}
	free(path);
	return cases;
}
