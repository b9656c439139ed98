/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-spawn: spawn+reap cycles of /bin/true, interleaved in one run:
 *   fork+exec   plain fork, execve, waitpid (the baseline)
 *   bwrap       bubblewrap with comparable isolation (--unshare-all
 *               --die-with-parent, read-only /usr + merged-usr symlinks,
 *               --proc, --dev, --tmpfs /tmp, --cap-drop ALL); bubblewrap
 *               applies no cgroup and no seccomp filter of its own
 *   cordon      cordon_spawn() with the full default profile: cgroup with
 *               limits, mount/pid/ipc/uts/cgroup/net namespaces, an
 *               id-mapped read-write root, Landlock, seccomp, dropped
 *               capabilities, verification, the eBPF egress policy, plus
 *               teardown (cgroup kill and removal, eBPF detach), also
 *               shown separately with the phases of cordon_spawn()
 * Prints median and p99 of each and the overhead ratio. Figures only, never
 * an assertion. Usage: bench-spawn [cycles] (default 200). Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "profile.h"
#include "spawn.h"
#include "test-support.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_argv(char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define N_PHASES 5
static const char *const phase_names[N_PHASES] = { "prepare", "cgroup", "clone_to_ebpf", "ebpf", "total" };
static double *phase_v[N_PHASES];
#define N_CHILD 10
static const char *const child_names[N_CHILD] = { "start",    "net",	 "mounts",  "hygiene", "privileges",
						  "landlock", "go_wait", "seccomp", "verify",  "exec" };
static double *child_v[N_CHILD];
static double *t_teardown;
static double *nb_total, *nb_teardown, *nb_cgroup; /* the cordon-bpf variant's total phase and teardown */
static int cycle = -1, cycle_nobpf = -1;
static double *t_call, *t_wait; /* cordon_spawn() as the caller sees it; wait until reaped */

static int run_cordon(const struct cordon_profile *p, const struct cordon_caps *caps)
{
	char *argv[] = { (char *)"/bin/true", NULL };
	struct cordon_launch_policy pol = { .profile = p, .argv = argv, .stdio = CORDON_STDIO_INHERIT };
	struct cordon_instance *inst = NULL;
	struct cordon_diag d = { 0 };
	int r, st;
	double c0 = now_us(), c1;

	r = cordon_spawn(&pol, caps, &inst, &d);
	c1 = now_us();
	if (cycle >= 0)
		t_call[cycle] = c1 - c0;
	if (r < 0) {
		fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
		return r;
	}
	r = cordon_instance_wait(inst, &st);
	if (cycle >= 0)
		t_wait[cycle] = now_us() - c1;
	if (cycle_nobpf >= 0) {
		const json_t *ph = json_object_get(cordon_instance_report(inst), "spawn_usec");

		nb_total[cycle_nobpf] = (double)json_integer_value(json_object_get(ph, "total"));
		nb_cgroup[cycle_nobpf] = (double)json_integer_value(json_object_get(ph, "cgroup"));
		nb_teardown[cycle_nobpf] = now_us();
	}
	if (cycle >= 0) {
		const json_t *ph = json_object_get(cordon_instance_report(inst), "spawn_usec");

		for (int i = 0; i < N_PHASES; i++)
			phase_v[i][cycle] = (double)json_integer_value(json_object_get(ph, phase_names[i]));
		for (int i = 0; i < N_CHILD; i++)
			child_v[i][cycle] = (double)json_integer_value(
				json_object_get(json_object_get(ph, "child"), child_names[i]));
		t_teardown[cycle] = now_us();
	}
	cordon_instance_free(inst);
	if (cycle_nobpf >= 0)
		nb_teardown[cycle_nobpf] = now_us() - nb_teardown[cycle_nobpf];
	if (cycle >= 0)
		t_teardown[cycle] = now_us() - t_teardown[cycle];
	return r < 0 ? r : cordon_exit_code(st);
}

static void summary(const char *name, double *v, int n, double *ret_median)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	*ret_median = v[n / 2];
	printf("  %-10s median %8.0f us   p99 %8.0f us   min %8.0f us\n", name, v[n / 2], v[(n * 99) / 100], v[0]);
}

int main(int argc, char **argv)
{
	static char *true_argv[] = { (char *)"/bin/true", NULL };
	static char *bwrap_argv[] = { (char *)"/usr/bin/bwrap",
				      (char *)"--unshare-all",
				      (char *)"--die-with-parent",
				      (char *)"--ro-bind",
				      (char *)"/usr",
				      (char *)"/usr",
				      (char *)"--symlink",
				      (char *)"usr/bin",
				      (char *)"/bin",
				      (char *)"--symlink",
				      (char *)"usr/lib",
				      (char *)"/lib",
				      (char *)"--symlink",
				      (char *)"usr/lib64",
				      (char *)"/lib64",
				      (char *)"--proc",
				      (char *)"/proc",
				      (char *)"--dev",
				      (char *)"/dev",
				      (char *)"--tmpfs",
				      (char *)"/tmp",
				      (char *)"--cap-drop",
				      (char *)"ALL",
				      (char *)"/bin/true",
				      NULL };
	int n = argc > 1 ? atoi(argv[1]) : 200;
	struct cordon_caps caps;
	struct cordon_profile *p = NULL;
	struct cordon_diag d = { 0 };
	double *t_fork, *t_bwrap, *t_cordon, *t_nobpf, m_fork, m_bwrap, m_cordon, m_nobpf;
	struct cordon_caps caps_nobpf;
	bool have_bwrap = access(bwrap_argv[0], X_OK) == 0;
	char *dir, *text;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-spawn: needs root\n");
		return 77;
	}
	if (n < 10)
		n = 10;
	if (cordon_probe(&caps) < 0)
		return 1;
	dir = cordon_test_mkdtemp("bench-spawn");
	chmod(dir, 0755);
	if (asprintf(&text,
		     "version: 1\n"
		     "connector:\n"
		     "  command: [/bin/true]\n"
		     "  workdir: /work\n"
		     "sandbox:\n"
		     "  user: dynamic\n"
		     "  filesystem:\n"
		     "    system:\n"
		     "      - {path: /usr, access: read-exec}\n"
		     "      - {path: /bin, access: read-exec}\n"
		     "      - {path: /lib, access: read-exec}\n"
		     "      - {path: /lib64, access: read-exec}\n"
		     "      - {path: /etc/ld.so.cache, access: read}\n"
		     "    roots:\n"
		     "      - {path: %s, access: read-write, at: /work, allow_uid0_owner: true}\n"
		     "    ceiling: [%s]\n"
		     "    tmp: 64M\n"
		     "  network: {mode: none}\n"
		     "  limits: {memory: 256M, pids: 64, cpu: 0.5, nofile: 256}\n"
		     "  seccomp: {base: default, action: errno}\n"
		     "  require: [landlock, seccomp, cgroup, namespaces]\n"
		     "tools: {default_risk: high, risk: {}, grant: []}\n",
		     dir, dir) < 0)
		return 1;
	if (cordon_profile_parse("bench", "bench.yaml", text, strlen(text), &p, &d) < 0) {
		fprintf(stderr, "profile: %s\n", d.message);
		return 1;
	}
	t_fork = calloc((size_t)n, sizeof(double));
	t_bwrap = calloc((size_t)n, sizeof(double));
	t_cordon = calloc((size_t)n, sizeof(double));
	t_teardown = calloc((size_t)n, sizeof(double));
	t_nobpf = calloc((size_t)n, sizeof(double));
	nb_total = calloc((size_t)n, sizeof(double));
	nb_teardown = calloc((size_t)n, sizeof(double));
	nb_cgroup = calloc((size_t)n, sizeof(double));
	t_call = calloc((size_t)n, sizeof(double));
	t_wait = calloc((size_t)n, sizeof(double));
	/* The same sandbox without the eBPF egress policy (a kernel without
	 * cgroup socket hooks, as an injected capability struct): bubblewrap
	 * has no egress policy either. */
	caps_nobpf = caps;
	caps_nobpf.bpf_cgroup_sock_addr = false;
	for (int i = 0; i < N_PHASES; i++)
		phase_v[i] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < N_CHILD; i++)
		child_v[i] = calloc((size_t)n, sizeof(double));

	/* Warm-up (page cache, seccomp compile cache, dynamic linker). */
	caps_nobpf = caps;
	caps_nobpf.bpf_cgroup_sock_addr = false;
	for (int i = 0; i < 5; i++) {
		run_argv(true_argv);
		if (have_bwrap)
			run_argv(bwrap_argv);
		if (run_cordon(p, &caps) != 0)
			return 1;
	}
	/* Interleaved so drift on a shared machine hits all three alike. */
	for (int i = 0; i < n; i++) {
		double t0 = now_us();

		if (run_argv(true_argv) != 0)
			return 1;
		t_fork[i] = now_us() - t0;
		if (have_bwrap) {
			t0 = now_us();
			if (run_argv(bwrap_argv) != 0)
				return 1;
			t_bwrap[i] = now_us() - t0;
		}
		cycle = i;
		t0 = now_us();
		if (run_cordon(p, &caps) != 0)
			return 1;
		t_cordon[i] = now_us() - t0;
		cycle = -1;
		cycle_nobpf = i;
		t0 = now_us();
		if (run_cordon(p, &caps_nobpf) != 0)
			return 1;
		t_nobpf[i] = now_us() - t0;
		cycle_nobpf = -1;
	}

	printf("bench-spawn: %d spawn+reap cycles of /bin/true each, interleaved\n", n);
	summary("fork+exec", t_fork, n, &m_fork);
	if (have_bwrap)
		summary("bwrap", t_bwrap, n, &m_bwrap);
	summary("cordon", t_cordon, n, &m_cordon);
	summary("cordon-bpf", t_nobpf, n, &m_nobpf);
	{
		double m;

		printf("  cordon breakdown (medians, us): ");
		for (int i = 0; i < N_PHASES; i++) {
			qsort(phase_v[i], (size_t)n, sizeof(double), cmp_double);
			printf("%s %.0f%s", phase_names[i], phase_v[i][n / 2], i + 1 < N_PHASES ? ", " : "");
		}
		printf("\n  cordon child phases (medians, us): ");
		for (int i = 0; i < N_CHILD; i++) {
			qsort(child_v[i], (size_t)n, sizeof(double), cmp_double);
			printf("%s %.0f%s", child_names[i], child_v[i][n / 2], i + 1 < N_CHILD ? ", " : "");
		}
		qsort(t_teardown, (size_t)n, sizeof(double), cmp_double);
		m = t_teardown[n / 2];
		printf("\n  cordon teardown (kill-all, cgroup removal, eBPF detach; inside the cordon figure): median "
		       "%.0f us\n",
		       m);
		qsort(t_call, (size_t)n, sizeof(double), cmp_double);
		qsort(t_wait, (size_t)n, sizeof(double), cmp_double);
		printf("  cordon_spawn() as called: median %.0f us (incl. the report); then until reaped: median %.0f "
		       "us\n",
		       t_call[n / 2], t_wait[n / 2]);
		qsort(nb_total, (size_t)n, sizeof(double), cmp_double);
		qsort(nb_teardown, (size_t)n, sizeof(double), cmp_double);
		qsort(nb_cgroup, (size_t)n, sizeof(double), cmp_double);
		printf("  cordon-bpf: spawn total median %.0f us (cgroup %.0f), teardown median %.0f us\n",
		       nb_total[n / 2], nb_cgroup[n / 2], nb_teardown[n / 2]);
		if (have_bwrap)
			printf("  without teardown, cordon adds %.0f us: ratio to bwrap %.2f\n", m_cordon - m - m_fork,
			       (m_cordon - m - m_fork) / (m_bwrap - m_fork));
	}
	printf("  cordon adds %.0f us over fork+exec (full sandbox: cgroup+limits, 6 namespaces, id-mapped root,\n"
	       "  Landlock, seccomp, caps, eBPF egress policy, verify, teardown)\n",
	       m_cordon - m_fork);
	if (have_bwrap) {
		printf("  bwrap adds  %.0f us over fork+exec (note: bubblewrap applies no cgroup and no seccomp "
		       "filter)\n",
		       m_bwrap - m_fork);
		printf("  ratio of added cost cordon/bwrap: %.2f (target <= 0.50)\n",
		       (m_cordon - m_fork) / (m_bwrap - m_fork));
		printf("  without the eBPF egress policy (cordon-bpf), cordon adds %.0f us: ratio to bwrap %.2f\n",
		       m_nobpf - m_fork, (m_nobpf - m_fork) / (m_bwrap - m_fork));
		printf("  ratio of totals: cordon/fork %.1fx, bwrap/fork %.1fx\n", m_cordon / m_fork, m_bwrap / m_fork);
	} else
		printf("  bwrap: not installed, no comparison\n");
	cordon_profile_free(p);
	free(text);
	free(t_fork);
	free(t_bwrap);
	free(t_cordon);
	free(t_teardown);
	free(t_nobpf);
	free(nb_total);
	free(nb_teardown);
	free(nb_cgroup);
	free(t_call);
	free(t_wait);
	for (int i = 0; i < N_PHASES; i++)
		free(phase_v[i]);
	for (int i = 0; i < N_CHILD; i++)
		free(child_v[i]);
	cordon_test_rm_rf(dir);
	free(dir);
	return 0;
}
