// SPDX-License-Identifier: GPL-2.0
/*
 * replay - run a fuzz target's inputs once each, without libFuzzer or a
 * sanitizer, so that valgrind's memcheck can watch them: it sees reads
 * inside libelf and libdw, which are not built with AddressSanitizer, and
 * branches on memory never written.  Linked with one fuzz_*.c.
 *
 *   replay FILE|DIR...   each input's path to stderr before it runs; exit 0
 *                        when every input ran, 1 when one could not be read
 *                        (make check counts the inputs itself: a crash
 *                        would leave a count of ours unprinted)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* One input, read into memory of its own size: a read past it is a read past the heap block. */
static int replay_file(const char *path)
{
	struct stat st;
	unsigned char *buf;
	size_t got = 0;
	FILE *f;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "replay: %s: %s\n", path,
			f ? "not a regular file" : strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	buf = xmalloc(st.st_size ? (size_t)st.st_size : 1);
	if (st.st_size)
		got = fread(buf, 1, st.st_size, f);
	fclose(f);
	if (got != (size_t)st.st_size) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(buf);
		return -1;
	}
	/* named first: a memcheck report or a crash that follows is this input's */
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

/* Every file of @dir, in no particular order; libFuzzer's corpus holds no subdirectories. */
static int replay_dir(const char *dir)
{
	struct dirent *e;
	char path[4096];
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (replay_file(path))
			ret = -1;
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, ret = 0;

	for (i = 1; i < argc; i++) {
		bool dir = !stat(argv[i], &st) && S_ISDIR(st.st_mode);

		if (dir ? replay_dir(argv[i]) : replay_file(argv[i]))
			ret = 1;
	}
	return ret;
}
