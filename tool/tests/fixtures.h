/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fixtures.h - build and run test fixtures at test time: a private
 * temporary directory (removed at exit unless CYCREAD_TEST_KEEP is set),
 * shell commands, and command output capture.
 */
#ifndef CYCREAD_FIXTURES_H
#define CYCREAD_FIXTURES_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

static char fx_dir[256];

static void fx_cleanup(void)
{
	char cmd[300];

	if (!fx_dir[0] || getenv("CYCREAD_TEST_KEEP"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", fx_dir);
}

static const char *fx_tmpdir(void)
{
	if (fx_dir[0])
		return fx_dir;
	snprintf(fx_dir, sizeof(fx_dir), "/tmp/cycread-test.XXXXXX");
	if (!mkdtemp(fx_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(fx_cleanup);
	return fx_dir;
}

/* Run a shell command in the fixture directory; its exit status. */
static inline int __attribute__((format(printf, 1, 2))) fx_sh(const char *fmt, ...)
{
	struct sbuf sb = { 0 };
	va_list ap;
	int ret;

	sbuf_printf(&sb, "cd '%s' && ", fx_tmpdir());
	va_start(ap, fmt);
	sbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	ret = system(sb.buf);
	if (ret)
		printf("# command failed (%d): %s\n", ret, sb.buf);
	sbuf_free(&sb);
	return ret;
}

/* Run a command in the fixture directory and return its stdout (malloced). */
static inline __attribute__((format(printf, 1, 2))) char *fx_out(const char *fmt, ...)
{
	struct sbuf cmd = { 0 }, out = { 0 };
	char buf[4096];
	va_list ap;
	size_t n;
	FILE *f;

	sbuf_printf(&cmd, "cd '%s' && ", fx_tmpdir());
	va_start(ap, fmt);
	sbuf_vprintf(&cmd, fmt, ap);
	va_end(ap);
	f = popen(cmd.buf, "r");
	if (!f) {
		sbuf_free(&cmd);
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_add(&out, buf, n);
	if (pclose(f))
		printf("# command failed: %s\n", cmd.buf);
	sbuf_free(&cmd);
	if (!out.buf)
		sbuf_addstr(&out, "");
	return out.buf;
}

static inline char *fx_path(const char *name)
{
	return xasprintf("%s/%s", fx_tmpdir(), name);
}

/* "name 0xaddr" line from a fixture's output. */
static inline unsigned long long fx_addr(const char *out, const char *name)
{
	const char *p = out;
	size_t len = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == out || p[-1] == '\n') && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 16);
		p += len;
	}
	return 0;
}

static inline bool have_tool(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return !system(cmd);
}

/* stderr into a file until fx_stderr_back(), which returns what was written. */
static int fx_saved_stderr = -1;

static inline void fx_stderr_begin(void)
{
	char *log = fx_path("stderr.log");
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	fx_saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
	free(log);
}

static inline char *fx_stderr_back(void)
{
	char *log = fx_path("stderr.log"), *text = NULL;
	size_t len;

	fflush(stderr);
	dup2(fx_saved_stderr, 2);
	close(fx_saved_stderr);
	if (read_file(log, &text, &len, 1 << 24))
		text = xstrdup("");
	free(log);
	return text;
}

#endif /* CYCREAD_FIXTURES_H */
