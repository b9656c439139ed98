/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-resolve: resolve+open of a 6-component path through openat2, through
 * the fallback walk, and plain open(2) of the canonical path, in one run.
 * Prints medians and ratios; asserts nothing about time. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "resolve.h"
#include "test-support.h"

#define ROUNDS	  21
#define PER_ROUND 20000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum mode { PLAIN, OPENAT2, WALK };

static double round_ns(enum mode m, int root_fd, const char *abs_path, const char *rel)
{
	static const struct cordon_caps c2 = { .openat2 = true, .openat2_beneath = true };
	static const struct cordon_caps cw = { 0 };
	const struct cordon_resolve_how how = { .open_flags = O_RDONLY };
	double t0 = now_ns();

	for (int i = 0; i < PER_ROUND; i++) {
		int fd = -1;

		if (m == PLAIN)
			fd = open(abs_path, O_RDONLY | O_CLOEXEC);
		else if (cordon_resolve(root_fd, rel, &how, m == OPENAT2 ? &c2 : &cw, &fd) < 0)
			fd = -1;
		if (fd < 0) {
			perror("open");
			exit(1);
		}
		close(fd);
	}
	return (now_ns() - t0) / PER_ROUND;
}

int main(void)
{
	const char *rel = "c1/c2/c3/c4/c5/file";
	char *base = cordon_test_mkdtemp("bench-resolve"), p[4096], abs_path[4200];
	double t[3][ROUNDS], med[3];
	int root_fd;

	snprintf(p, sizeof(p), "%s", base);
	for (int i = 1; i <= 5; i++) {
		size_t l = strlen(p);
		snprintf(p + l, sizeof(p) - l, "/c%d", i);
		if (mkdir(p, 0755) < 0) {
			perror("mkdir");
			return 1;
		}
	}
	snprintf(abs_path, sizeof(abs_path), "%s/file", p);
	close(open(abs_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	root_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (int r = 0; r < ROUNDS; r++)
		for (int m = 0; m < 3; m++) /* interleaved, so drift hits all alike */
			t[m][r] = round_ns((enum mode)m, root_fd, abs_path, rel);
	for (int m = 0; m < 3; m++) {
		qsort(t[m], ROUNDS, sizeof(double), cmp);
		med[m] = t[m][ROUNDS / 2];
	}
	printf("bench-resolve: open of a 6-component path, median of %d rounds x %d opens\n", ROUNDS, PER_ROUND);
	printf("  %-28s %8.0f ns/op   1.00x\n", "plain open(canonical path)", med[PLAIN]);
	printf("  %-28s %8.0f ns/op   %.2fx\n", "cordon_resolve via openat2", med[OPENAT2], med[OPENAT2] / med[PLAIN]);
	printf("  %-28s %8.0f ns/op   %.2fx\n", "cordon_resolve fallback walk", med[WALK], med[WALK] / med[PLAIN]);
	close(root_fd);
	cordon_test_rm_rf(base);
	free(base);
	return 0;
}
