/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How long cordon_probe() takes (it runs at every launcher start). Prints the
 * median, minimum, 90th percentile and maximum over N runs, and the ratio to
 * a baseline measured in the same run: one fork() + _exit + waitpid, the
 * unit of work the probe repeats a few times. Figures only, no assertion.
 * Usage: bench-probe [N] (default 50). Run as root for the full probe. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "bench-util.h"

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	printf("%-28s median %8.3f ms  min %8.3f ms  p90 %8.3f ms  max %8.3f ms  (n=%d)\n", what, v[n / 2] / 1e6,
	       v[0] / 1e6, v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1] / 1e6, v[n - 1] / 1e6, n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	uint64_t *probe, *fork_ns, *inner;
	struct cordon_caps caps;
	double ratio;

	if (n < 1 || n > 100000) {
		fprintf(stderr, "usage: %s [N]\n", argv[0]);
		return 2;
	}
	probe = calloc((size_t)n, sizeof(*probe));
	fork_ns = calloc((size_t)n, sizeof(*fork_ns));
	inner = calloc((size_t)n, sizeof(*inner));
	if (!probe || !fork_ns || !inner)
		return 1;

	/* One warm-up of each so page faults of the first call do not count. */
	if (cordon_probe(&caps) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		uint64_t t = now_ns();
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
		fork_ns[i] = now_ns() - t;

		t = now_ns();
		if (cordon_probe(&caps) < 0)
			return 1;
		probe[i] = now_ns() - t;
		inner[i] = caps.probe_usec * 1000;
	}
	printf("kernel %s, euid %u\n", caps.kernel_release, (unsigned)geteuid());
	report("baseline fork+exit+wait", fork_ns, n);
	report("cordon_probe()", probe, n);
	report("probe_usec (self-reported)", inner, n);
	ratio = (double)probe[n / 2] / (double)fork_ns[n / 2];
	printf("probe median / fork median: %.1fx\n", ratio);
	free(probe);
	free(fork_ns);
	free(inner);
	return 0;
}
