/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-seccomp: what compiling once per policy saves. Prints, for the
 * default and the strict base:
 *   - compile: cordon_seccomp_compile(), median and p90 over N runs;
 *   - cached: cordon_seccomp_compile_cached() on a hit (normalize + hash +
 *     lookup), what a spawn pays when the policy was seen before;
 *   - load: cordon_seccomp_load() timed inside a forked child (after
 *     no_new_privs), median over N children;
 *   - size: instructions in the program (and with the plan rules);
 *   - syscall: the per-syscall cost of the filter (getppid in a loop),
 *     against an unfiltered child measured in the same run.
 * Figures only; nothing here is an assertion.
 *
 * Usage: bench-seccomp [N]   (default 50) */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seccomp.h"
#include <libseccomp-include.h>
#include "bench-util.h"

#define SYSCALL_LOOPS 200000

/* Runs fn in a forked child that reports one uint64_t over a pipe. */
static int in_child(const struct cordon_seccomp_program *prog, int what, uint64_t *ret)
{
	int fds[2], status;
	uint64_t v = 0;
	pid_t pid;

	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		uint64_t t0, t1;

		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		t0 = now_ns();
		if (prog && cordon_seccomp_load(prog) < 0)
			_exit(2);
		t1 = now_ns();
		v = t1 - t0;
		if (what == 1) { /* syscall cost */
			t0 = now_ns();
			for (int i = 0; i < SYSCALL_LOOPS; i++)
				(void)syscall(SYS_getppid);
			v = (now_ns() - t0) * 1000 / SYSCALL_LOOPS; /* picoseconds per call */
		}
		if (write(fds[1], &v, sizeof(v)) != sizeof(v))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &v, sizeof(v)) != sizeof(v))
		v = 0;
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	*ret = v;
	return 0;
}

static int bench_base(enum cordon_seccomp_base base, const char *name, size_t n, uint64_t syscall_baseline_ps)
{
	struct cordon_profile p = { .seccomp_base = base, .seccomp_action = CORDON_SECCOMP_ERRNO };
	uint64_t *compile = calloc(n, sizeof(uint64_t)), *cached = calloc(n, sizeof(uint64_t));
	uint64_t *load = calloc(n, sizeof(uint64_t)), *sys = calloc(n, sizeof(uint64_t));
	struct cordon_seccomp_program *prog = NULL;
	const struct cordon_seccomp_program *cp = NULL;
	struct cordon_diag d = { 0 };
	size_t n_insns = 0;
	int r = 0;

	if (!compile || !cached || !load || !sys) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		r = cordon_seccomp_compile(&p, NULL, &prog, &d);
		compile[i] = now_ns() - t0;
		if (r < 0) {
			fprintf(stderr, "compile: %s\n", d.message);
			goto out;
		}
		n_insns = prog->n_insns;
		cordon_seccomp_program_free(prog);
	}
	cordon_seccomp_cache_clear();
	r = cordon_seccomp_compile_cached(&p, NULL, &cp, &d); /* the miss */
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		r = cordon_seccomp_compile_cached(&p, NULL, &cp, &d);
		cached[i] = now_ns() - t0;
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r = in_child(cp, 0, &load[i]);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < (n < 9 ? n : 9); i++) {
		r = in_child(cp, 1, &sys[i]);
		if (r < 0)
			goto out;
	}
	{
		uint64_t c50 = pct(compile, n, 50), c90 = pct(compile, n, 90);
		uint64_t h50 = pct(cached, n, 50), l50 = pct(load, n, 50), l90 = pct(load, n, 90);
		uint64_t s50 = pct(sys, n < 9 ? n : 9, 50);

		printf("%-8s compile   median %8.3f ms  p90 %8.3f ms\n", name, c50 / 1e6, c90 / 1e6);
		printf("%-8s cached    median %8.3f us  (%.0fx cheaper than compiling)\n", name, h50 / 1e3,
		       h50 ? (double)c50 / (double)h50 : 0.0);
		printf("%-8s load      median %8.3f ms  p90 %8.3f ms  (compile/load %.1fx)\n", name, l50 / 1e6,
		       l90 / 1e6, l50 ? (double)c50 / (double)l50 : 0.0);
		printf("%-8s size      %zu instructions (%zu bytes)\n", name, n_insns, n_insns * 8);
		/* The spawn plan's rules (read-write root; Landlock the only
		 * TCP layer), as a sandbox with both compiles them. */
		if (cordon_seccomp_compile_opts(&p, NULL, CORDON_SECCOMP_OPTS_ALL, &prog, &d) >= 0) {
			printf("%-8s size      %zu instructions with both plan rules\n", name, prog->n_insns);
			cordon_seccomp_program_free(prog);
		}
		printf("%-8s syscall   getppid %.1f ns filtered vs %.1f ns unfiltered (+%.1f ns)\n", name, s50 / 1e3,
		       syscall_baseline_ps / 1e3, ((double)s50 - (double)syscall_baseline_ps) / 1e3);
	}
out:
	free(compile);
	free(cached);
	free(load);
	free(sys);
	return r;
}

int main(int argc, char **argv)
{
	size_t n = 50;
	uint64_t base_ps[9];
	int r;

	if (argc > 1) {
		char *end;
		unsigned long v = strtoul(argv[1], &end, 10);

		if (*end || v < 1 || v > 100000) {
			fprintf(stderr, "usage: %s [N 1..100000]\n", argv[0]);
			return 2;
		}
		n = v;
	}
	for (size_t i = 0; i < 9; i++) {
		r = in_child(NULL, 1, &base_ps[i]);
		if (r < 0) {
			fprintf(stderr, "baseline child: %s\n", strerror(-r));
			return 1;
		}
	}
	printf("bench-seccomp: N=%zu, libseccomp %u.%u.%u, optimize level 2 (binary tree)\n", n,
	       seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro);
	r = bench_base(CORDON_SECCOMP_DEFAULT, "default", n, pct(base_ps, 9, 50));
	if (r >= 0)
		r = bench_base(CORDON_SECCOMP_STRICT, "strict", n, pct(base_ps, 9, 50));
	if (r < 0) {
		fprintf(stderr, "bench-seccomp: %s\n", strerror(-r));
		return 1;
	}
	cordon_seccomp_cache_clear();
	return 0;
}
