/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-fs: read_file throughput through cordon-fs (a real MCP session over
 * stdio: JSON-RPC request, resolver, read, JSON encoding, response parse) for
 * 4 KiB and 16 MiB files, against plain open+read of the same file in the
 * same run. Prints medians and ratios; asserts nothing about time. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "mcp-client.h"
#include "test-support.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void make_file(const char *path, size_t size)
{
	char *buf = malloc(size);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	for (size_t i = 0; i < size; i++)
		buf[i] = (char)('a' + i % 26); /* text: returned as UTF-8, not base64 */
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size) {
		perror("write");
		exit(1);
	}
	close(fd);
	free(buf);
}

static double plain_read(const char *path, size_t size, int n)
{
	char *buf = malloc(size);
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read_full(fd, buf, size) != (ssize_t)size) {
			perror("read");
			exit(1);
		}
		close(fd);
	}
	free(buf);
	return (now_s() - t0) / n;
}

static double mcp_read(struct mcp_peer *p, const char *name, size_t size, int n)
{
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		json_t *res = mcp_peer_call(p, "read_file", json_pack("{s:s}", "path", name), 60000);
		json_t *sc = json_object_get(res, "structuredContent");

		if (!sc || (size_t)json_integer_value(json_object_get(sc, "length")) != size) {
			fprintf(stderr, "bench-fs: read_file failed\n");
			exit(1);
		}
		json_decref(res);
	}
	return (now_s() - t0) / n;
}

int main(void)
{
	static const struct {
		const char *name;
		size_t size;
		int per_round;
	} cases[] = { { "small", 4096, 500 }, { "large", 16u * 1024 * 1024, 3 } };
	char *base = cordon_test_mkdtemp("bench-fs"), bin[1024], path[2048];
	char *argv[5];
	struct mcp_peer p;
	enum { ROUNDS = 9 };

	snprintf(bin, sizeof(bin), "%s/cordon-fs", cordon_test_env("CORDON_TOOLS_DIR", "build/tools"));
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "bench-fs: %s not found (set CORDON_TOOLS_DIR)\n", bin);
		return 1;
	}
	argv[0] = bin;
	argv[1] = (char *)"--max-read";
	argv[2] = (char *)"16M";
	argv[3] = base;
	argv[4] = NULL;
	if (mcp_peer_start(&p, argv) < 0 || !mcp_peer_initialize(&p, "2025-06-18")) {
		fprintf(stderr, "bench-fs: cannot start cordon-fs\n");
		return 1;
	}
	printf("bench-fs: read_file through cordon-fs (MCP over stdio) vs open+read, median of %d rounds\n", ROUNDS);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		double tp[ROUNDS], tm[ROUNDS], mp, mm, mib = (double)cases[c].size / (1024.0 * 1024.0);

		snprintf(path, sizeof(path), "%s/%s", base, cases[c].name);
		make_file(path, cases[c].size);
		for (int r = 0; r < ROUNDS; r++) {
			tp[r] = plain_read(path, cases[c].size, cases[c].per_round);
			tm[r] = mcp_read(&p, cases[c].name, cases[c].size, cases[c].per_round);
		}
		qsort(tp, ROUNDS, sizeof(double), cmp);
		qsort(tm, ROUNDS, sizeof(double), cmp);
		mp = tp[ROUNDS / 2];
		mm = tm[ROUNDS / 2];
		printf("  %-8s %9zu B  open+read %9.1f us (%8.1f MiB/s)   cordon-fs %9.1f us (%7.1f MiB/s)   %.1fx\n",
		       cases[c].name, cases[c].size, mp * 1e6, mib / mp, mm * 1e6, mib / mm, mm / mp);
	}
	mcp_peer_stop(&p, 5000);
	cordon_test_rm_rf(base);
	free(base);
	return 0;
}
