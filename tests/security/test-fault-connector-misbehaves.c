/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection: connectors that flood stdout (1 GiB), never answer, exit
 * mid-response, or fork a process that tries to outlive them.
 *
 * Each runs as a real connector (tests/helpers/evil-connector) under
 * cordon_spawn() with the full sandbox, driven over its stdio by a reader
 * that applies the broker's rules: a line cap (MCP_MAX_LINE, 4 MiB), a
 * response deadline, EOF handling. Asserted for each:
 *  - flood: the 1 GiB line is cut at the cap (the reader's memory stays
 *    bounded: RSS growth < 32 MiB), the instance is killed (SIGKILL), and
 *    the connector never got to write more than the pipe allows past the cap;
 *  - never answers: no response within the deadline, the instance is killed;
 *  - exits mid-response: the reader sees EOF with a partial line (an error,
 *    not a result), the exit status (3) is reported;
 *  - fork-outlive: a grandchild that setsid()s, double-forks and ignores
 *    SIGTERM/SIGHUP is gone when the instance is torn down;
 * and, every time: no process of the instance's uid is left, the instance's
 * cgroup directories are removed, the test process's fd count is unchanged.
 * (cordon-exec's own output cap: tests/security/test-bug-cordon-exec-job-
 * stdout-nonblocking.c.) Layer: libcordon (spawn, cgroups), real kernel;
 * the line cap and deadline are what the daemon's worker code enforces (the
 * daemon itself is not in this build). */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "sec-sbx.h"
#include "mcp-client.h"

#define LINE_CAP (4u * 1024 * 1024)

static struct sbx *S;
static char evil_inside[PATH_MAX]; /* evil-connector as the sandbox sees it */

/* This process's RSS; it must be readable. */
static long rss_kib(void)
{
	long v = cordon_test_rss_kib(getpid());

	assert_true(v >= 0);
	return v;
}

/* Counts the runner's fds, after dropping the few kernel objects
 * cordon_spawn() keeps between spawns on purpose (a spare network namespace,
 * cached id-mapping user namespaces): what is left is what a test leaked. */
static int count_fds(void)
{
	DIR *d;
	struct dirent *de;
	int n = 0;

	cordon_spawn_drop_caches();
	d = opendir("/proc/self/fd");
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* Processes on the host running as uid. */
static int procs_of_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d))) {
		char p[300];
		struct stat st;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s", de->d_name);
		if (stat(p, &st) == 0 && st.st_uid == uid)
			n++;
	}
	closedir(d);
	return n;
}

enum read_outcome { R_LINE, R_TOO_LONG, R_TIMEOUT, R_EOF_PARTIAL, R_EOF };

/* Reads one line with a cap and a deadline; the buffer never exceeds cap. */
static enum read_outcome read_line(int fd, char *buf, size_t cap, size_t *len, int timeout_ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*len = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct timespec now;
		long left;
		ssize_t n;
		char *nl;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return R_TIMEOUT;
		n = read(fd, buf + *len, cap - *len);
		if (n <= 0)
			return *len > 0 ? R_EOF_PARTIAL : R_EOF;
		nl = memchr(buf + *len, '\n', (size_t)n);
		*len += (size_t)n;
		if (nl)
			return R_LINE;
		if (*len == cap)
			return R_TOO_LONG;
	}
}

struct run {
	struct cordon_instance *inst;
	int to, from;
	uid_t uid;
	char cgpath[PATH_MAX];
	char name[64];
};

static void start(struct run *r, const char *mode, const char *arg)
{
	static unsigned n;
	char bin[PATH_MAX];
	char *argv[] = { bin, (char *)mode, (char *)arg, NULL };
	struct cordon_profile *p = sbx_profile(S, NULL);
	struct cordon_launch_policy pol = { .profile = p, .argv = argv, .stdio = CORDON_STDIO_PIPES };
	struct cordon_diag d = {};
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n";
	static char buf[65536];
	size_t len;
	const char *cg;

	snprintf(bin, sizeof(bin), "%s", evil_inside);
	snprintf(r->name, sizeof(r->name), "cordon-sec-fault-%d-%u", (int)getpid(), n++);
	pol.instance_name = r->name;
	if (cordon_spawn(&pol, &S->caps, &r->inst, &d) < 0)
		fail_msg("spawn: %s: %s", d.step, d.message);
	cordon_profile_free(p);
	r->to = cordon_instance_take_stdio(r->inst, 0);
	r->from = cordon_instance_take_stdio(r->inst, 1);
	close(cordon_instance_take_stdio(r->inst, 2));
	r->uid = cordon_instance_uid(r->inst);
	cg = json_string_value(json_object_get(
		json_object_get(json_object_get(cordon_instance_report(r->inst), "controls"), "cgroup"), "path"));
	snprintf(r->cgpath, sizeof(r->cgpath), "%s", cg ? cg : "");
	assert_int_equal(write(r->to, init, strlen(init)), (ssize_t)strlen(init));
	assert_int_equal(read_line(r->from, buf, sizeof(buf), &len, 5000), R_LINE);
}

static void call(struct run *r)
{
	static const char c[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
				"call\",\"params\":{\"name\":\"append\",\"arguments\":{}}}\n";

	assert_int_equal(write(r->to, c, strlen(c)), (ssize_t)strlen(c));
}

/* Tears down and checks nothing is left. */
static int finish(struct run *r, bool kill_first)
{
	int status;
	struct stat st;

	if (kill_first)
		assert_int_equal(cordon_instance_signal(r->inst, SIGKILL), 0);
	close(r->to);
	close(r->from);
	assert_int_equal(cordon_instance_wait(r->inst, &status), 0);
	cordon_instance_free(r->inst);
	assert_int_equal(procs_of_uid(r->uid), 0);
	if (r->cgpath[0])
		assert_int_equal(stat(r->cgpath, &st), -1);
	{
		/* No v1 directory of that name either. */
		static const char *const ctrls[] = { "memory", "pids", "cpu", "cpu,cpuacct", "unified" };

		for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
			char cmd[PATH_MAX + 128], out[256] = "";
			FILE *f;

			snprintf(cmd, sizeof(cmd), "find /sys/fs/cgroup/%s -maxdepth 5 -name '%s' 2>/dev/null",
				 ctrls[i], r->name);
			f = popen(cmd, "re");
			assert_non_null(f);
			assert_true(fread(out, 1, sizeof(out) - 1, f) == 0);
			pclose(f);
		}
	}
	return status;
}

static void test_flood_1gib_is_capped(void **state)
{
	struct run r;
	char *buf = malloc(LINE_CAP);
	size_t len;
	long rss0, rss1;
	int fds0 = count_fds(), st;

	(void)state;
	rss0 = rss_kib();
	start(&r, "flood", "1073741824");
	call(&r);
	assert_int_equal(read_line(r.from, buf, LINE_CAP, &len, 20000), R_TOO_LONG);
	assert_int_equal(len, LINE_CAP);
	rss1 = rss_kib();
	printf("  flood: cut at %zu bytes; RSS %ld -> %ld KiB\n", len, rss0, rss1);
	assert_true(rss1 - rss0 < 32 * 1024);
	st = finish(&r, true);
	assert_signaled(st, SIGKILL);
	free(buf);
	assert_int_equal(count_fds(), fds0);
}

static void test_never_answers_is_killed(void **state)
{
	struct run r;
	static char buf[65536];
	size_t len;
	int fds0 = count_fds(), st;

	(void)state;
	start(&r, "hang", NULL);
	call(&r);
	assert_int_equal(read_line(r.from, buf, sizeof(buf), &len, 500), R_TIMEOUT);
	st = finish(&r, true);
	assert_signaled(st, SIGKILL);
	assert_int_equal(count_fds(), fds0);
}

static void test_exit_mid_response_is_an_error(void **state)
{
	struct run r;
	static char buf[65536];
	size_t len;
	int fds0 = count_fds(), st;

	(void)state;
	start(&r, "exit-mid", NULL);
	call(&r);
	assert_int_equal(read_line(r.from, buf, sizeof(buf), &len, 5000), R_EOF_PARTIAL);
	assert_true(len > 0);
	assert_null(memchr(buf, '\n', len));
	st = finish(&r, false);
	assert_exited(st, 3);
	assert_int_equal(count_fds(), fds0);
}

static void test_fork_outlive_is_reaped(void **state)
{
	struct run r;
	static char buf[65536];
	size_t len;
	int fds0 = count_fds(), st;

	(void)state;
	start(&r, "fork-outlive", NULL);
	call(&r);
	assert_int_equal(read_line(r.from, buf, sizeof(buf), &len, 5000), R_LINE);
	buf[len] = '\0';
	printf("  fork-outlive answered: %s", buf);
	assert_non_null(strstr(buf, "grandchild"));
	/* The grandchild exists while the instance does. */
	assert_true(procs_of_uid(r.uid) >= 1);
	st = finish(&r, false);
	assert_exited(st, 0);
	assert_int_equal(count_fds(), fds0);
}

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("sec-fault");
	sec_sbx_install(S, "evil-connector", evil_inside, sizeof(evil_inside));
	/* The first spawn loads the process-wide eBPF egress policy (its map
	 * and program fds stay open for the life of the process, by design):
	 * do it before any test takes its fd baseline. */
	{
		struct cordon_profile *p = sbx_profile(S, NULL);

		assert_exited(sbx_probe_with(p, &S->caps, "exit", "0", NULL), 0);
		cordon_profile_free(p);
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_1gib_is_capped),
		cmocka_unit_test(test_never_answers_is_killed),
		cmocka_unit_test(test_exit_mid_response_is_an_error),
		cmocka_unit_test(test_fork_outlive_is_reaped),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
