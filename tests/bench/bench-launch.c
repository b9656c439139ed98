/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-launch: one-shot launches as fresh processes, interleaved per round:
 *   fork+exec   fork, execve /bin/true, waitpid (the baseline)
 *   bwrap       bubblewrap as isolated as it gets: --unshare-all,
 *               --new-session, --die-with-parent, read-only binds of /usr
 *               and ld.so.cache, merged-usr symlinks, a read-write bind of
 *               the work directory, --proc, --dev, --tmpfs /tmp,
 *               --cap-drop ALL and a seccomp filter (cordon's own default
 *               policy, compiled once here and passed with --seccomp);
 *               bubblewrap applies no cgroup, Landlock or eBPF policy
 *   cordon      `cordon-launch --profile P -- /bin/true` with the full
 *               default profile of bench-spawn (cgroup limits, six
 *               namespaces, an id-mapped read-write root, Landlock,
 *               seccomp, dropped capabilities, eBPF egress policy)
 * Each is a process started and reaped by this program, stdout and stderr
 * to /dev/null. Prints p50/p99/min/max wall time per launch and the median
 * CPU time of the process and the children it reaped (less sensitive to a
 * busy machine than wall time; kernel work in worker threads is not in it),
 * what each adds over fork+exec, the ratio (cordon added)/(bwrap added) at p50 and p99,
 * then cordon's own phase timings (median, from --report in separate
 * rounds) and, on a hybrid/v1 host, the floor a v1 cgroup move puts under
 * every launch: the time of the cgroup.procs writes alone, measured on
 * cgroups this program makes for itself.
 *
 * Usage: bench-launch [rounds] [CORDON_LAUNCH...] (default 100 rounds, the
 * build directory's cordon-launch; several binaries are interleaved as
 * cordon, cordon#2, ...: an old and a new build side by side). Needs root.
 * Figures only, never an assertion. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "probe.h"
#include "profile.h"
#include "seccomp.h"
#include "test-support.h"

#define MAX_COLS 6

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

/* Runs argv as a fresh process; keep_fd stays open in it (bwrap's
 * --seccomp fd). Returns its exit code or -errno. */
static int run_argv(char *const argv[], int keep_fd, bool show_errors, double *ret_cpu_us)
{
	struct rusage ru;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			if (!show_errors)
				dup2(fd, 2);
		}
		/* bwrap reads the filter from the fd's offset, which every
		 * run shares. */
		if (keep_fd >= 0 && (fcntl(keep_fd, F_SETFD, 0) < 0 || lseek(keep_fd, 0, SEEK_SET) != 0))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return -errno;
	if (ret_cpu_us)
		*ret_cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
			      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct col {
	const char *name;
	char **argv;
	int keep_fd;
	double *v, *cpu;
	double p50, p99, cpu50;
};

static void summarize(struct col *c, int n)
{
	qsort(c->v, (size_t)n, sizeof(double), cmp_double);
	c->p50 = c->v[n / 2];
	c->p99 = c->v[n - 1 - n / 100];
	qsort(c->cpu, (size_t)n, sizeof(double), cmp_double);
	c->cpu50 = c->cpu[n / 2];
	printf("  %-10s p50 %8.0f us   p99 %8.0f us   min %8.0f us   max %8.0f us   CPU p50 %7.0f us\n", c->name,
	       c->p50, c->p99, c->v[0], c->v[n - 1], c->cpu50);
}

/* cordon-launch's spawn phases (spawn_usec of --report) over a few extra
 * launches, medians. */
static void report_phases(char *launcher, const char *profile, const char *dir, int n)
{
	/* "go_wait": the finished child waiting for the parent (for MSG_GO,
	 * after the v1 moves): the part of v1_cgroup the child's work did not
	 * hide. */
	static const char *const names[] = { "prepare", "cgroup", "clone_to_ebpf", "v1_cgroup",
					     "ebpf",	"total",  "go_wait" };
	enum { N = sizeof(names) / sizeof(names[0]) };
	double *v[N];
	char path[PATH_MAX];
	char *argv[] = { launcher, (char *)"--profile", (char *)profile,     (char *)"--report",
			 path,	   (char *)"--",	(char *)"/bin/true", NULL };
	int got = 0;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	for (int i = 0; i < N; i++)
		v[i] = calloc((size_t)n, sizeof(double));
	for (int k = 0; k < n; k++) {
		json_t *j, *ph;

		if (run_argv(argv, -1, false, NULL) != 0)
			break;
		j = json_load_file(path, 0, NULL);
		ph = json_object_get(j, "spawn_usec");
		for (int i = 0; i < N; i++)
			v[i][got] = (double)json_integer_value(json_object_get(
				strcmp(names[i], "go_wait") == 0 ? json_object_get(ph, "child") : ph, names[i]));
		json_decref(j);
		got++;
	}
	if (got > 0) {
		printf("  %s phases inside cordon_spawn() (medians of %d, us):", launcher, got);
		for (int i = 0; i < N; i++) {
			qsort(v[i], (size_t)got, sizeof(double), cmp_double);
			printf(" %s %.0f", names[i], v[i][got / 2]);
		}
		printf("\n");
	}
	for (int i = 0; i < N; i++)
		free(v[i]);
}

/* The v1 floor: moving a process into a v1 cgroup (memory, pids, cpu as
 * cordon does) waits for RCU grace periods. Times those writes alone on
 * directories this program makes beside its own v1 cgroups, for a child
 * that only waits; everything made is removed. No v1 hierarchy: returns. */
static void v1_floor(int n)
{
	static const char *const ctrls[] = { "memory", "pids", "cpu" };
	enum { N = sizeof(ctrls) / sizeof(ctrls[0]) };
	char dirs[N][PATH_MAX], own[N][PATH_MAX];
	double *t = calloc((size_t)n, sizeof(double));
	int made = 0, p[2];
	pid_t pid;
	FILE *f;
	char line[1024];

	if (!t)
		return;
	for (int i = 0; i < N; i++)
		own[i][0] = '\0';
	f = fopen("/proc/self/cgroup", "re");
	if (!f) {
		free(t);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		ctl++;
		for (int i = 0; i < N; i++) {
			char *save = NULL, *tok, buf[256];

			snprintf(buf, sizeof(buf), "%s", ctl);
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, ctrls[i]) == 0)
					snprintf(own[i], sizeof(own[i]), "%s", path);
		}
	}
	fclose(f);
	for (int i = 0; i < N; i++) {
		char m[PATH_MAX];
		struct stat st;

		snprintf(m, sizeof(m), "/sys/fs/cgroup/%s", ctrls[i]);
		if (!own[i][0] || stat(m, &st) < 0 || access(strcat(m, "/cgroup.procs"), F_OK) < 0) {
			printf("  v1 floor: no v1 %s hierarchy here (pure cgroup2 host): no RCU wait to show\n",
			       ctrls[i]);
			free(t);
			return;
		}
	}
	if (pipe(p) < 0) {
		free(t);
		return;
	}
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		(void)!read(p[0], &c, 1);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		free(t);
		return;
	}
	for (int k = 0; k < n; k++) {
		char s[32], procs[PATH_MAX + 16];
		double t0;
		int fd;

		snprintf(s, sizeof(s), "%d", (int)pid);
		for (made = 0; made < N; made++) {
			snprintf(dirs[made], sizeof(dirs[made]), "/sys/fs/cgroup/%s%s/cordon-bench-launch-%d",
				 ctrls[made], strcmp(own[made], "/") == 0 ? "" : own[made], (int)getpid());
			if (mkdir(dirs[made], 0755) < 0)
				break;
		}
		/* Idle first, as between two one-shot launches: back-to-back
		 * moves share one grace period and would hide the wait. */
		(void)usleep(50000);
		t0 = now_us();
		for (int i = 0; i < made; i++) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", dirs[i]);
			fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				(void)!write(fd, s, strlen(s));
				close(fd);
			}
		}
		t[k] = now_us() - t0;
		/* Back where it came from, then remove ours. */
		for (int i = 0; i < made; i++) {
			snprintf(procs, sizeof(procs), "/sys/fs/cgroup/%s%s/cgroup.procs", ctrls[i],
				 strcmp(own[i], "/") == 0 ? "" : own[i]);
			fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				(void)!write(fd, s, strlen(s));
				close(fd);
			}
			(void)rmdir(dirs[i]);
		}
		if (made < N)
			break;
	}
	close(p[1]);
	(void)waitpid(pid, NULL, 0);
	if (made == N) {
		qsort(t, (size_t)n, sizeof(double), cmp_double);
		printf("  v1 floor: moving one process into its memory, pids and cpu v1 cgroups (3 cgroup.procs "
		       "writes): p50 %.0f us, p99 %.0f us, min %.0f us\n",
		       t[n / 2], t[n - 1 - n / 100], t[0]);
	} else
		printf("  v1 floor: cannot make v1 cgroups here: %s\n", strerror(errno));
	free(t);
}

static char *tmp_dir;

/* Every exit, failures included, removes the temporary directory. */
static void remove_tmp_dir(void)
{
	if (tmp_dir) {
		cordon_test_rm_rf(tmp_dir);
		free(tmp_dir);
		tmp_dir = NULL;
	}
}

int main(int argc, char **argv)
{
	static char *true_argv[] = { (char *)"/bin/true", NULL };
	char self[PATH_MAX], def_launcher[PATH_MAX + 32], profile_path[PATH_MAX], fdstr[16], bind_work[PATH_MAX];
	struct col cols[MAX_COLS];
	int n = argc > 1 ? atoi(argv[1]) : 100, ncols = 0, seccomp_fd = -1, first_cordon;
	struct cordon_profile *p = NULL;
	struct cordon_seccomp_program *prog = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	char *dir, *text, *slash;
	bool have_bwrap = access("/usr/bin/bwrap", X_OK) == 0;
	double la[3] = { 0 };
	ssize_t len;
	FILE *f;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-launch: needs root\n");
		return 77;
	}
	if (n < 10)
		n = 10;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(def_launcher, sizeof(def_launcher), "%s/../../launcher/cordon-launch", self);

	dir = tmp_dir = cordon_test_mkdtemp("bench-launch");
	if (!dir || atexit(remove_tmp_dir) != 0)
		return 1;
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
		     "      - {path: %s/work, access: read-write, at: /work, allow_uid0_owner: true}\n"
		     "    ceiling: [%s/work]\n"
		     "    tmp: 64M\n"
		     "  network: {mode: none}\n"
		     "  limits: {memory: 256M, pids: 64, cpu: 0.5, nofile: 256}\n"
		     "  seccomp: {base: default, action: errno}\n"
		     "  require: [landlock, seccomp, cgroup, namespaces]\n"
		     "tools: {default_risk: high, risk: {}, grant: []}\n",
		     dir, dir) < 0)
		return 1;
	snprintf(profile_path, sizeof(profile_path), "%s/bench.yaml", dir);
	snprintf(bind_work, sizeof(bind_work), "%s/work", dir);
	if (mkdir(bind_work, 0755) < 0)
		return 1;
	f = fopen(profile_path, "we");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return 1;

	/* bwrap's seccomp filter: cordon's default policy, compiled once. */
	if (have_bwrap && cordon_probe(&caps) >= 0 &&
	    cordon_profile_parse("bench", "bench.yaml", text, strlen(text), &p, &d) >= 0 &&
	    cordon_seccomp_compile(p, &caps, &prog, &d) >= 0) {
		seccomp_fd = memfd_create("bench-launch-seccomp", MFD_CLOEXEC);
		if (seccomp_fd < 0 ||
		    write(seccomp_fd, prog->insns, prog->n_insns * sizeof(struct sock_filter)) !=
			    (ssize_t)(prog->n_insns * sizeof(struct sock_filter)) ||
		    lseek(seccomp_fd, 0, SEEK_SET) != 0)
			return 1;
		snprintf(fdstr, sizeof(fdstr), "%d", seccomp_fd);
	}

	cols[ncols++] = (struct col){ .name = "fork+exec", .argv = true_argv, .keep_fd = -1 };
	if (have_bwrap) {
		char *b[] = { (char *)"/usr/bin/bwrap",
			      (char *)"--unshare-all",
			      (char *)"--new-session",
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
			      (char *)"--ro-bind",
			      (char *)"/etc/ld.so.cache",
			      (char *)"/etc/ld.so.cache",
			      (char *)"--bind",
			      bind_work,
			      (char *)"/work",
			      (char *)"--chdir",
			      (char *)"/work",
			      (char *)"--proc",
			      (char *)"/proc",
			      (char *)"--dev",
			      (char *)"/dev",
			      (char *)"--tmpfs",
			      (char *)"/tmp",
			      (char *)"--cap-drop",
			      (char *)"ALL",
			      (char *)(seccomp_fd >= 0 ? "--seccomp" : "--"),
			      (char *)(seccomp_fd >= 0 ? fdstr : "/bin/true"),
			      (char *)(seccomp_fd >= 0 ? "/bin/true" : NULL),
			      NULL };

		cols[ncols].argv = malloc(sizeof(b));
		if (!cols[ncols].argv)
			return 1;
		memcpy(cols[ncols].argv, b, sizeof(b));
		cols[ncols].name = "bwrap";
		cols[ncols++].keep_fd = seccomp_fd;
	}
	first_cordon = ncols;
	for (int i = 2; i < argc || (i == 2 && argc <= 2); i++) {
		char *l = i < argc ? argv[i] : def_launcher, **a;
		char *name;

		if (ncols == MAX_COLS)
			break;
		a = calloc(7, sizeof(char *));
		if (!a || asprintf(&name, ncols == first_cordon ? "cordon" : "cordon#%d", ncols - first_cordon + 1) < 0)
			return 1;
		a[0] = l;
		a[1] = (char *)"--profile";
		a[2] = profile_path;
		a[3] = (char *)"--";
		a[4] = (char *)"/bin/true";
		cols[ncols++] = (struct col){ .name = name, .argv = a, .keep_fd = -1 };
	}
	for (int c = 0; c < ncols; c++) {
		cols[c].v = calloc((size_t)n, sizeof(double));
		cols[c].cpu = calloc((size_t)n, sizeof(double));
		if (!cols[c].v || !cols[c].cpu)
			return 1;
	}

	/* Warm-up (page cache, dynamic linker), and a check that each runs
	 * (the first time with its stderr shown). */
	for (int k = 0; k < 3; k++)
		for (int c = 0; c < ncols; c++) {
			int r = run_argv(cols[c].argv, cols[c].keep_fd, k == 0, NULL);

			if (r != 0) {
				fprintf(stderr, "bench-launch: %s (%s) exited %d\n", cols[c].name, cols[c].argv[0], r);
				return 1;
			}
		}
	if (getloadavg(la, 3) < 0)
		la[0] = la[1] = la[2] = -1;
	/* Interleaved, and the order rotates each round, so drift on a shared
	 * machine hits every column alike. */
	for (int i = 0; i < n; i++)
		for (int k = 0; k < ncols; k++) {
			struct col *c = &cols[(i + k) % ncols];
			double t0 = now_us();

			if (run_argv(c->argv, c->keep_fd, false, &c->cpu[i]) != 0)
				return 1;
			c->v[i] = now_us() - t0;
		}

	printf("bench-launch: %d rounds, each one fresh process per column, interleaved; load average at start "
	       "%.2f %.2f %.2f\n",
	       n, la[0], la[1], la[2]);
	for (int c = 0; c < ncols; c++)
		summarize(&cols[c], n);
	for (int c = 1; c < ncols; c++)
		printf("  %-10s adds p50 %7.0f us, p99 %7.0f us over fork+exec (CPU time: %7.0f us)\n", cols[c].name,
		       cols[c].p50 - cols[0].p50, cols[c].p99 - cols[0].p99, cols[c].cpu50 - cols[0].cpu50);
	if (have_bwrap)
		for (int c = first_cordon; c < ncols; c++)
			printf("  %s added / bwrap added: p50 %.2f, p99 %.2f (goal <= 0.50)\n", cols[c].name,
			       (cols[c].p50 - cols[0].p50) / (cols[1].p50 - cols[0].p50),
			       (cols[c].p99 - cols[0].p99) / (cols[1].p99 - cols[0].p99));
	else
		printf("  bwrap: not installed, no comparison\n");
	if (seccomp_fd < 0 && have_bwrap)
		printf("  (bwrap ran without a seccomp filter: compiling cordon's failed)\n");
	for (int c = first_cordon; c < ncols; c++)
		report_phases(cols[c].argv[0], profile_path, dir, n < 20 ? n : 20);
	v1_floor(n < 40 ? n : 40);

	for (int c = 0; c < ncols; c++) {
		free(cols[c].v);
		free(cols[c].cpu);
		if (c >= first_cordon) {
			free(cols[c].argv);
			free((char *)cols[c].name);
		}
	}
	if (have_bwrap)
		free(cols[1].argv);
	if (seccomp_fd >= 0)
		close(seccomp_fd);
	cordon_seccomp_program_free(prog);
	cordon_profile_free(p);
	free(text);
	return 0; /* remove_tmp_dir() removes dir */
}
