/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-proxy: what cordond adds to a tools/call.
 *
 *  1. latency of a granted read tool (fake__echo) through the daemon core
 *     vs the same connector driven directly over its stdio, p50/p99, same run;
 *  2. calls per second with 1, 8 and 64 concurrent sessions;
 *  3. the daemon's RSS idle, with 50 connector instances (per-session), and
 *     across N calls (default 100000; BENCH_CALLS overrides).
 * The daemon core runs in its own process (privilege drop, Landlock) with a
 * direct fork+exec spawner, so the figures are the proxy's, not the
 * sandbox's (bench-spawn and bench-serve measure those). Run as root. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "checkpoint.h"
#include "daemon-core.h"
#include "fd-util.h"
#include "inventory.h"
#include "profile.h"
#include "daemon-harness.h"
#include "test-support.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(size_t)((double)(n - 1) * p)];
}

static void echo_call(struct mcp_peer *p, const char *tool)
{
	json_t *r = mcp_peer_call(p, tool, json_pack("{s:s}", "text", "bench"), 10000);

	if (!r || strcmp(result_text(r), "echo: bench") != 0) {
		fprintf(stderr, "bench-proxy: call failed\n");
		exit(1);
	}
	json_decref(r);
}

static void latency(struct mcp_peer *p, const char *tool, size_t n, double *p50, double *p99)
{
	double *v = calloc(n, sizeof(double));

	for (size_t i = 0; i < 200; i++) /* warm-up */
		echo_call(p, tool);
	for (size_t i = 0; i < n; i++) {
		double t0 = now_us();

		echo_call(p, tool);
		v[i] = now_us() - t0;
	}
	*p50 = pct(v, n, 0.50);
	*p99 = pct(v, n, 0.99);
	free(v);
}

/* S sessions, one outstanding call each; returns calls/s over `calls`. */
static double throughput(struct harness *h, unsigned S, size_t calls)
{
	struct mcp_peer *ps = calloc(S, sizeof(*ps));
	long *ids = calloc(S, sizeof(long));
	size_t done = 0;
	double t0;

	for (unsigned i = 0; i < S; i++) {
		json_t *r;

		if (mcp_peer_connect(&ps[i], h->gateway) < 0 || !(r = mcp_peer_initialize(&ps[i], "2025-11-25"))) {
			fprintf(stderr, "bench-proxy: session %u failed\n", i);
			exit(1);
		}
		json_decref(r);
		echo_call(&ps[i], "fake__echo");
	}
	t0 = now_us();
	for (unsigned i = 0; i < S; i++)
		ids[i] = mcp_peer_send_request(
			&ps[i], "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "fake__echo", "arguments", "text", "bench"));
	while (done < calls) {
		struct pollfd *pf = calloc(S, sizeof(*pf));

		for (unsigned i = 0; i < S; i++)
			pf[i] = (struct pollfd){ .fd = ps[i].from, .events = POLLIN };
		if (poll(pf, S, 10000) <= 0) {
			fprintf(stderr, "bench-proxy: stalled\n");
			exit(1);
		}
		for (unsigned i = 0; i < S; i++) {
			json_t *r;

			if (!(pf[i].revents & POLLIN))
				continue;
			r = mcp_peer_wait(&ps[i], ids[i], 10000);
			if (!r) {
				fprintf(stderr, "bench-proxy: lost a response\n");
				exit(1);
			}
			json_decref(r);
			done++;
			ids[i] = mcp_peer_send_request(
				&ps[i], "tools/call",
				json_pack("{s:s, s:{s:s}}", "name", "fake__echo", "arguments", "text", "bench"));
		}
		free(pf);
	}
	for (unsigned i = 0; i < S; i++) {
		json_decref(mcp_peer_wait(&ps[i], ids[i], 10000));
		mcp_peer_disconnect(&ps[i]);
	}
	free(ps);
	free(ids);
	return (double)done / ((now_us() - t0) / 1e6);
}

int main(void)
{
	struct harness h;
	struct mcp_peer direct, p;
	double d50, d99, b50, b99;
	const char *env = getenv("BENCH_CALLS");
	size_t n_rss = env ? strtoul(env, NULL, 10) : 100000, n_lat = 2000;
	long rss_idle, rss_50, rss_a, rss_b;
	struct rlimit rl;
	char *argv[3];

	if (geteuid() != 0) {
		fprintf(stderr, "bench-proxy: run as root (the daemon drops privileges)\n");
		return 77;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!getenv("CORDON_BUILD_DIR")) {
		/* <build>/tests/bench/bench-proxy -> <build> */
		char exe[600];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = 0;
			for (int i = 0; i < 3; i++)
				*strrchr(exe, '/') = 0;
			setenv("CORDON_BUILD_DIR", exe, 0);
		}
	}
	harness_setup(&h, "bench-proxy");
	h.max_sessions = 4096;
	harness_start(&h);
	harness_review_all(&h, "fake");
	harness_review_all(&h, "fakeps");

	/* Baseline: the same connector over its stdio, same run. */
	argv[0] = (char *)harness_helpers_dir();
	{
		static char bin[700];

		snprintf(bin, sizeof(bin), "%s/fake-connector", harness_helpers_dir());
		argv[0] = bin;
	}
	argv[1] = h.out_file;
	argv[2] = NULL;
	if (mcp_peer_start(&direct, argv) < 0 || !mcp_peer_initialize(&direct, "2025-06-18")) {
		fprintf(stderr, "bench-proxy: cannot start the fake connector\n");
		return 1;
	}
	latency(&direct, "echo", n_lat, &d50, &d99);
	mcp_peer_stop(&direct, 2000);

	if (mcp_peer_connect(&p, h.gateway) < 0)
		return 1;
	json_decref(mcp_peer_initialize(&p, "2025-11-25"));
	echo_call(&p, "fake__echo");
	rss_idle = cordon_test_rss_kib(h.daemon_pid);
	latency(&p, "fake__echo", n_lat, &b50, &b99);
	printf("bench-proxy: tools/call of a granted read tool, %zu calls each\n", n_lat);
	printf("  direct (stdio):   p50 %8.1f us   p99 %8.1f us\n", d50, d99);
	printf("  through cordond:  p50 %8.1f us   p99 %8.1f us\n", b50, b99);
	printf("  added:            p50 %8.1f us   p99 %8.1f us   (ratio p50 %.1fx)\n", b50 - d50, b99 - d99,
	       b50 / d50);

	for (unsigned S = 1; S <= 64; S *= 8)
		printf("  throughput %2u session(s): %8.0f calls/s\n", S, throughput(&h, S, S == 1 ? 2000 : 4000));

	/* 50 connector instances: 50 sessions each with its own fakeps. */
	{
		struct mcp_peer ps[50];

		for (int i = 0; i < 50; i++) {
			if (mcp_peer_connect(&ps[i], h.gateway) < 0)
				return 1;
			json_decref(mcp_peer_initialize(&ps[i], "2025-11-25"));
			echo_call(&ps[i], "fakeps__echo");
		}
		rss_50 = cordon_test_rss_kib(h.daemon_pid);
		for (int i = 0; i < 50; i++)
			mcp_peer_disconnect(&ps[i]);
	}
	printf("  RSS idle %ld KiB, with 50 per-session instances %ld KiB (+%ld KiB, %.1f KiB/instance)\n", rss_idle,
	       rss_50, rss_50 - rss_idle, (double)(rss_50 - rss_idle) / 50);

	/* RSS across many calls. */
	for (size_t i = 0; i < n_rss / 10; i++)
		echo_call(&p, "fake__echo");
	rss_a = cordon_test_rss_kib(h.daemon_pid);
	{
		double t0 = now_us();

		for (size_t i = 0; i < n_rss - n_rss / 10; i++)
			echo_call(&p, "fake__echo");
		rss_b = cordon_test_rss_kib(h.daemon_pid);
		printf("  RSS after %zu calls %ld KiB, after %zu calls %ld KiB (growth %+ld KiB; %.0f calls/s)\n",
		       n_rss / 10, rss_a, n_rss, rss_b, rss_b - rss_a,
		       (double)(n_rss - n_rss / 10) / ((now_us() - t0) / 1e6));
	}
	mcp_peer_disconnect(&p);
	harness_stop(&h, SIGTERM);
	harness_teardown(&h);
	return 0;
}
