/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cost of the cgroup module's lifecycle on this kernel (root):
 *   create        cordon_cgroup_create() with memory, pids and cpu limits
 *   destroy-empty cordon_cgroup_destroy() of an instance with no process
 *   destroy-1proc destroy with one live process (cgroup.kill, and the
 *                 freeze + SIGKILL fallback)
 *   enter         cordon_cgroup_enter() in a forked child, back to back and
 *                 after the cgroup core has been idle (v1 migrations wait
 *                 for an RCU grace period when the threadgroup rwsem's
 *                 fast path has been re-armed)
 *   spawn         fork+_exit+wait baseline vs clone3(CLONE_INTO_CGROUP)
 *                 [+ enter() of the v1 hierarchies] + _exit + wait
 * Prints median and p90 in microseconds and ratios against the baseline
 * measured in the same run. Never a timed assertion.
 *
 * usage: bench-cgroup [iterations]   (default 50) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "probe.h"
#include "syscall-compat.h"
#include "bench-util.h"

#define ALL_CTRLS ((1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU))

static struct cordon_caps caps;
static const struct cordon_cgroup_limits lim = { .mem_bytes = 256ull << 20, .pids_max = 64, .cpu_micro = 1000000 };

struct result {
	const char *name;
	double median_us, p90_us;
};

static struct result summarize(const char *name, uint64_t *v, int n)
{
	struct result r = { .name = name };

	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	r.median_us = (double)v[n / 2] / 1000.0;
	r.p90_us = (double)v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1] / 1000.0;
	printf("%-34s median %9.1f us   p90 %9.1f us\n", name, r.median_us, r.p90_us);
	return r;
}

static struct cordon_cgroup *make(const struct cordon_caps *c)
{
	struct cordon_cgroup *cg = NULL;
	struct cordon_diag d = { 0 };

	if (cordon_cgroup_create(
		    c, &(struct cordon_cgroup_options){ .name = "bench-cg", .limits = &lim, .required = ALL_CTRLS },
		    &cg, NULL, &d) < 0) {
		fprintf(stderr, "create: %s: %s\n", d.step, d.message);
		exit(1);
	}
	return cg;
}

static void wait_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			exit(1);
		}
}

/* enter() timed inside the child; the figure comes back over a pipe. */
static uint64_t time_enter(struct cordon_cgroup *cg)
{
	int p[2];
	uint64_t t = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		exit(1);
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (pid == 0) {
		uint64_t t0 = now_ns(), d;
		int r = cordon_cgroup_enter(cg);

		d = now_ns() - t0;
		if (r < 0)
			_exit(1);
		if (write(p[1], &d, sizeof(d)) != sizeof(d))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &t, sizeof(t)) != sizeof(t)) {
		fprintf(stderr, "enter failed in child\n");
		exit(1);
	}
	close(p[0]);
	wait_ok(pid);
	return t;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	uint64_t *v;
	struct result base, clone_v2, clone_enter, r;

	if (n < 5 || n > 100000) {
		fprintf(stderr, "usage: %s [iterations >= 5]\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-cgroup needs root\n");
		return 77;
	}
	if (cordon_probe(&caps) < 0 || caps.cgroup_layout == CORDON_CGROUP_NONE) {
		fprintf(stderr, "no cgroups\n");
		return 77;
	}
	v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return 1;
	printf("bench-cgroup: %d iterations, layout %s, cgroup2 at %s\n", n,
	       caps.cgroup_layout == CORDON_CGROUP_HYBRID ? "hybrid"
	       : caps.cgroup_layout == CORDON_CGROUP_V2	  ? "v2"
							  : "v1",
	       caps.cgroup2_mount[0] ? caps.cgroup2_mount : "(none)");

	/* create and destroy of empty instances. */
	{
		uint64_t *d = calloc((size_t)n, sizeof(*d));

		for (int i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			struct cordon_cgroup *cg = make(&caps);
			uint64_t t1 = now_ns();

			cordon_cgroup_destroy(cg);
			v[i] = t1 - t0;
			d[i] = now_ns() - t1;
		}
		summarize("create (mem+pids+cpu limits)", v, n);
		summarize("destroy, empty", d, n);
		free(d);
	}

	/* enter(): back to back, then after idle periods. */
	{
		struct cordon_cgroup *cg = make(&caps);

		for (int i = 0; i < n; i++)
			v[i] = time_enter(cg);
		summarize("enter (fork'd child), back to back", v, n);
		for (int i = 0; i < n; i++) {
			sleep_ms(50);
			v[i] = time_enter(cg);
		}
		summarize("enter after 50 ms idle", v, n);
		cordon_cgroup_destroy(cg);
	}

	/* Spawn round trips: plain fork vs clone3 into the cgroup. */
	{
		struct cordon_cgroup *cg = make(&caps);
		struct clone_args args = { .exit_signal = SIGCHLD };

		for (int i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			pid_t pid = fork();

			if (pid == 0)
				_exit(0);
			wait_ok(pid);
			v[i] = now_ns() - t0;
		}
		base = summarize("fork+exit+wait (baseline)", v, n);

		args.flags = CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cordon_cgroup_v2_fd(cg);
		cordon_cgroup_set_clone_placed(cg, true);
		for (int i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			long pid = sys_clone3(&args, sizeof(args));

			if (pid == 0)
				_exit(0);
			if (pid < 0) {
				perror("clone3");
				return 1;
			}
			wait_ok((pid_t)pid);
			v[i] = now_ns() - t0;
		}
		clone_v2 = summarize("clone3 INTO_CGROUP+exit+wait", v, n);
		for (int i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			long pid = sys_clone3(&args, sizeof(args));

			if (pid == 0)
				_exit(cordon_cgroup_enter(cg) == 0 ? 0 : 1);
			if (pid < 0) {
				perror("clone3");
				return 1;
			}
			wait_ok((pid_t)pid);
			v[i] = now_ns() - t0;
		}
		clone_enter = summarize("clone3 INTO_CGROUP+enter(v1)+exit+wait", v, n);
		printf("  ratio clone3 / fork:          %.2f\n", clone_v2.median_us / base.median_us);
		printf("  ratio clone3+enter / fork:    %.2f  (+%.1f us)\n", clone_enter.median_us / base.median_us,
		       clone_enter.median_us - base.median_us);
		cordon_cgroup_destroy(cg);
	}

	/* destroy with one live process: cgroup.kill vs the fallback. */
	for (int mode = 0; mode < 2; mode++) {
		struct cordon_caps c = caps;

		c.cgroup_kill = mode == 0;
		for (int i = 0; i < n; i++) {
			struct cordon_cgroup *cg = make(&c);
			struct clone_args args = { .exit_signal = SIGCHLD, .flags = CLONE_INTO_CGROUP };
			long pid;
			uint64_t t0;

			int p[2];
			char b;

			if (pipe2(p, O_CLOEXEC) < 0)
				return 1;
			args.cgroup = (uint64_t)cordon_cgroup_v2_fd(cg);
			pid = sys_clone3(&args, sizeof(args));
			if (pid == 0) {
				if (cordon_cgroup_enter(cg) < 0 || write(p[1], "r", 1) != 1)
					_exit(1);
				for (;;)
					pause();
			}
			/* Wait until enter() is done: a child still blocked in a
			 * v1 migration (RCU grace period) would be charged to
			 * destroy otherwise. */
			close(p[1]);
			if (read(p[0], &b, 1) != 1)
				return 1;
			close(p[0]);
			t0 = now_ns();
			cordon_cgroup_destroy(cg);
			v[i] = now_ns() - t0;
			wait_ok((pid_t)pid);
		}
		r = summarize(mode == 0 ? "destroy, 1 process (cgroup.kill)" : "destroy, 1 process (freeze+kill)", v,
			      n);
		(void)r;
	}
	free(v);
	return 0;
}
