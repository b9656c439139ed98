/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launcher helper (`cordon-launch --serve`) driven through the broker's
 * client (broker/daemon/launcher-client.c) and, for malformed traffic, over a
 * raw socket: real sandboxes on the real kernel, root only.
 *
 * Profiles live in a root-owned 0700 temp directory: `cat` (/bin/cat, the
 * echo connector), `show` (/bin/sh printing a file of an extra root, then
 * echoing), `ww` (world-writable, must be refused). The ceiling is
 * <base>/work; <base>/work-evil is the sibling that shares its prefix and
 * <base>/work/out is a symlink that leads outside. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cgroup.h"
#include "cleanup.h"
#include "launcher-client.h"
#include "probe.h"
#include "profile.h"
#include "serve-proto.h"
#include "test-support.h"

static void closedirp_(DIR **d)
{
	if (*d)
		closedir(*d);
}

static char *base;
static char profiles[4096], work[4096], evil[4096], launch[4096];

/* Events the handlers saw. */
static struct {
	unsigned n_exited;
	uint32_t instance;
	int wait_status;
	json_t *report;
	unsigned n_lost;
	struct cordon_diag lost;
} ev;

static void on_exited(void *u, uint32_t instance, int wait_status, const json_t *report)
{
	(void)u;
	ev.n_exited++;
	ev.instance = instance;
	ev.wait_status = wait_status;
	json_decref(ev.report);
	ev.report = json_deep_copy(report);
}

static void on_lost(void *u, const struct cordon_diag *why)
{
	(void)u;
	ev.n_lost++;
	ev.lost = *why;
}

static const struct cordon_launcher_handlers handlers = {
	.exited = on_exited,
	.helper_lost = on_lost,
};

static void reset_events(void)
{
	json_decref(ev.report);
	memset(&ev, 0, sizeof(ev));
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

#define PROFILE_COMMON                                                                                                 \
	"sandbox:\n"                                                                                                   \
	"  user: dynamic\n"                                                                                            \
	"  filesystem:\n"                                                                                              \
	"    system:\n"                                                                                                \
	"      - {path: /usr, access: read-exec}\n"                                                                    \
	"      - {path: /lib, access: read-exec}\n"                                                                    \
	"      - {path: /lib64, access: read-exec}\n"                                                                  \
	"      - {path: /bin, access: read-exec}\n"                                                                    \
	"      - {path: /etc/ld.so.cache, access: read}\n"                                                             \
	"    ceiling: [%s]\n"                                                                                          \
	"    tmp: 1M\n"                                                                                                \
	"  network:\n"                                                                                                 \
	"    mode: none\n"                                                                                             \
	"  limits: {memory: 64M, pids: 16}\n"                                                                          \
	"  require: [landlock, seccomp, cgroup, namespaces]\n"                                                         \
	"tools:\n"                                                                                                     \
	"  default_risk: read\n"

static void write_profile(const char *id, const char *command, mode_t mode)
{
	char path[4096 + 64], body[8192], sandbox[2048];

	snprintf(sandbox, sizeof(sandbox), PROFILE_COMMON, work);
	snprintf(body, sizeof(body), "version: 1\nconnector:\n  description: test connector\n  command: %s\n%s",
		 command, sandbox);
	snprintf(path, sizeof(path), "%s/%s.yaml", profiles, id);
	write_file(path, body, mode);
}

static int setup(void **state)
{
	char p[4096 + 64];

	(void)state;
	cordon_test_require_root();
	snprintf(launch, sizeof(launch), "%s", cordon_test_env("CORDON_LAUNCH", ""));
	if (!launch[0] || access(launch, X_OK) < 0)
		cordon_test_skip("CORDON_LAUNCH (cordon-launch) is not built");
	base = cordon_test_mkdtemp("serve");
	/* The sandbox user must be able to reach nothing here but what is
	 * mounted for it; the profiles directory is root's alone. */
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	snprintf(work, sizeof(work), "%s/work", base);
	snprintf(evil, sizeof(evil), "%s/work-evil", base);
	assert_int_equal(mkdir(profiles, 0755), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(mkdir(evil, 0755), 0);
	snprintf(p, sizeof(p), "%s/proj", work);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/proj/hello.txt", work);
	write_file(p, "inside-the-root\n", 0644);
	snprintf(p, sizeof(p), "%s/secret.txt", evil);
	write_file(p, "evil-sibling\n", 0644);
	snprintf(p, sizeof(p), "%s/out", work);
	assert_int_equal(symlink(evil, p), 0);
	write_profile("cat", "[/bin/cat]", 0644);
	write_profile("show", "[/bin/sh, -c, 'cat /data/hello.txt && exec cat']", 0644);
	write_profile("ww", "[/bin/cat]", 0666);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	reset_events();
	if (base) {
		(void)cordon_test_rm_rf(base);
		free(base);
	}
	return 0;
}

/* Puts the profiles ids[] (NULL-terminated) in force at the helper, as
 * cordond does: each loaded here and named by the hash of its bytes.
 * Returns what the client returns; the refused id in failed. */
static int put_in_force(struct cordon_launcher_client *lc, const char *const *ids, char failed[64],
			struct cordon_diag *d)
{
	struct cordon_profile *ps[16] = { NULL };
	size_t n = 0;
	int r;

	for (; ids[n]; n++) {
		char path[4200];

		assert_true(n < 16);
		snprintf(path, sizeof(path), "%s/%s.yaml", profiles, ids[n]);
		r = cordon_profile_load(path, &ps[n], d);
		if (r < 0)
			fail_msg("%s: %s", path, d->message);
	}
	r = cordon_launcher_client_profiles(lc, ps, n, failed, 64, d);
	for (size_t i = 0; i < n; i++)
		cordon_profile_free(ps[i]);
	return r;
}

static void in_force(struct cordon_launcher_client *lc, const char *const *ids)
{
	struct cordon_diag d = { 0 };
	char failed[64];

	if (put_in_force(lc, ids, failed, &d) < 0)
		fail_msg("profiles (refused %s): %s: %s", failed, d.step, d.message);
}

/* A helper with `cat` and `show` in force (and `cred` once it exists). */
static struct cordon_launcher_client *start_client(void)
{
	struct cordon_launcher_client *lc = NULL;
	struct cordon_diag d = { 0 };
	char cred[4200];
	int r;

	reset_events();
	r = cordon_launcher_client_start(launch, profiles, &handlers, &lc, &d);
	if (r < 0)
		fprintf(stderr, "start: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_true(cordon_launcher_client_alive(lc));
	assert_true(cordon_launcher_client_pid(lc) > 0);
	snprintf(cred, sizeof(cred), "%s/cred.yaml", profiles);
	in_force(lc, access(cred, F_OK) == 0 ? (const char *const[]){ "cat", "show", "cred", NULL }
					     : (const char *const[]){ "cat", "show", NULL });
	return lc;
}

/* Waits (bounded) until the client's fd is readable and dispatches, until
 * cond holds. */
static void dispatch_until(struct cordon_launcher_client *lc, bool (*cond)(void), int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!cond()) {
		struct pollfd p = { .fd = cordon_launcher_client_fd(lc), .events = POLLIN };

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			fail_msg("timed out waiting for a launcher event");
		if (poll(&p, 1, 100) > 0)
			(void)cordon_launcher_client_dispatch(lc);
	}
}

static bool got_exit(void)
{
	return ev.n_exited > 0;
}

static bool got_lost(void)
{
	return ev.n_lost > 0;
}

static void read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;

		assert_int_equal(poll(&p, 1, 10000), 1);
		k = read(fd, buf + n, 1);
		assert_int_equal(k, 1);
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
}

static void close_launched(struct cordon_launched *l)
{
	closep(&l->stdin_fd);
	closep(&l->stdout_fd);
	closep(&l->stderr_fd);
	json_decref(l->report);
	l->report = NULL;
}

/* Processes whose cgroup path names the instance tag (the sandbox's init
 * and the connector), by host pid. */
static size_t pids_in_instance(const char *tag, pid_t *out, size_t max)
{
	_cleanup_(closedirp_) DIR *d = NULL;
	struct dirent *de;
	size_t n = 0;

	d = opendir("/proc");
	assert_non_null(d);
	while ((de = readdir(d)) && n < max) {
		char path[300], buf[4096];
		ssize_t k;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cgroup", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		if (strstr(buf, tag))
			out[n++] = (pid_t)atoi(de->d_name);
	}
	return n;
}

/* True when pid no longer runs (gone, or a zombie waiting to be reaped). */
static bool pid_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return true;
	buf[k] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

static void assert_pids_gone(const pid_t *pids, size_t n)
{
	for (int i = 0; i < 100; i++) {
		bool all = true;

		for (size_t j = 0; j < n; j++)
			if (!pid_gone(pids[j]))
				all = false;
		if (all)
			return;
		usleep(50 * 1000);
	}
	for (size_t j = 0; j < n; j++)
		if (!pid_gone(pids[j]))
			fail_msg("process %d of the sandbox survived", (int)pids[j]);
}

/* Children of a process (its threads' children lists). */
static size_t n_children(pid_t pid)
{
	char path[128], buf[4096];
	ssize_t k;
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(k >= 0);
	buf[k] = '\0';
	for (char *s = buf; *s; s++)
		if (*s == ' ')
			n++;
	return n;
}

static size_t n_fds(pid_t pid)
{
	_cleanup_(closedirp_) DIR *d = NULL;
	char path[64];
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	return n;
}

/* True when an instance cgroup whose name contains tag exists in the
 * cgroup2 hierarchy's cordon directory. */
static bool cgroup_dir_exists(const char *tag)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified/cordon", "/sys/fs/cgroup/cordon" };

	for (size_t i = 0; i < 2; i++) {
		_cleanup_(closedirp_) DIR *d = opendir(roots[i]);
		struct dirent *de;

		if (!d)
			continue;
		while ((de = readdir(d)))
			if (strstr(de->d_name, tag))
				return true;
	}
	return false;
}

static const char *report_cgroup_path(const json_t *report)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(report, "controls"), "cgroup"), "path"));
}

/* Same keys, recursively for objects (values differ between probes only
 * where the kernel state moved, which the keys do not). */
static void assert_same_keys(const json_t *a, const json_t *b, const char *where)
{
	const char *k;
	json_t *v;

	if (!json_is_object(a) || !json_is_object(b))
		return;
	json_object_foreach((json_t *)a, k, v)
	{
		if (!json_object_get(b, k))
			fail_msg("key '%s.%s' missing from the helper's report", where, k);
		assert_same_keys(v, json_object_get(b, k), k);
	}
	if (json_object_size(a) != json_object_size(b))
		fail_msg("object '%s' has %zu keys in --probe but %zu from the helper", where, json_object_size(a),
			 json_object_size(b));
}

static void test_probe_matches_cli(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	json_t *caps = NULL, *cli;
	json_error_t jerr;
	struct cordon_diag d = { 0 };
	char cmd[4200];
	FILE *f;

	(void)state;
	assert_int_equal(cordon_launcher_client_probe(lc, &caps, &d), 0);
	snprintf(cmd, sizeof(cmd), "'%s' --probe", launch);
	f = popen(cmd, "r");
	assert_non_null(f);
	cli = json_loadf(f, 0, &jerr);
	assert_int_equal(pclose(f), 0);
	assert_non_null(cli);
	assert_same_keys(cli, caps, "");
	assert_non_null(json_object_get(caps, "landlock"));
	json_decref(caps);
	caps = NULL;
	/* A second request probes again; same shape. */
	assert_int_equal(cordon_launcher_client_probe(lc, &caps, &d), 0);
	assert_same_keys(cli, caps, "");
	json_decref(caps);
	json_decref(cli);
	cordon_launcher_client_free(lc);
}

static void assert_enforced(const json_t *report, const char *control)
{
	const json_t *c = json_object_get(json_object_get(report, "controls"), control);

	if (!c)
		fail_msg("report has no control '%s'", control);
	assert_string_equal(json_string_value(json_object_get(c, "state")), "enforced");
}

static void test_spawn_echo_and_exit(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	char line[128], cg[4096];
	int r;

	(void)state;
	r = cordon_launcher_client_spawn(lc, "cat", "svt-echo", NULL, 0, &l, &d);
	if (r < 0)
		fail_msg("spawn: %s: %s", d.step, d.message);
	assert_true(l.instance != 0);
	assert_true(l.stdin_fd >= 0 && l.stdout_fd >= 0 && l.stderr_fd >= 0);
	assert_true(json_is_object(l.report));
	assert_int_equal(json_integer_value(json_object_get(l.report, "instance")), l.instance);
	assert_string_equal(json_string_value(json_object_get(l.report, "connector")), "cat");
	assert_false(json_is_true(json_object_get(l.report, "degraded")));
	assert_enforced(l.report, "landlock");
	assert_enforced(l.report, "seccomp");
	assert_enforced(l.report, "cgroup");
	assert_enforced(l.report, "namespaces");
	assert_non_null(report_cgroup_path(l.report));
	snprintf(cg, sizeof(cg), "%s", report_cgroup_path(l.report));

	assert_int_equal(write(l.stdin_fd, "hello through the sandbox\n", 26), 26);
	read_line(l.stdout_fd, line, sizeof(line));
	assert_string_equal(line, "hello through the sandbox\n");

	/* EOF on stdin ends cat: EXITED with status 0 and the final report. */
	closep(&l.stdin_fd);
	dispatch_until(lc, got_exit, 10000);
	assert_int_equal(ev.instance, l.instance);
	assert_true(WIFEXITED(ev.wait_status));
	assert_int_equal(WEXITSTATUS(ev.wait_status), 0);
	assert_non_null(json_object_get(ev.report, "cgroup_stats"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(ev.report, "exit"), "how")), "exited");
	/* The helper tore the sandbox down before it reported the exit. */
	assert_int_equal(access(cg, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	close_launched(&l);
	cordon_launcher_client_free(lc);
}

static void test_spawn_extra_root(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	struct cordon_serve_root root = { .access = CORDON_ACCESS_READ };
	char line[128];
	int r;

	(void)state;
	snprintf(root.host, sizeof(root.host), "%s/proj", work);
	snprintf(root.sandbox, sizeof(root.sandbox), "/data");
	r = cordon_launcher_client_spawn(lc, "show", "svt-root", &root, 1, &l, &d);
	if (r < 0)
		fail_msg("spawn: %s: %s", d.step, d.message);
	read_line(l.stdout_fd, line, sizeof(line));
	assert_string_equal(line, "inside-the-root\n");
	assert_int_equal(cordon_launcher_client_kill(lc, l.instance, &d), 0);
	dispatch_until(lc, got_exit, 10000);
	close_launched(&l);
	cordon_launcher_client_free(lc);
}

/* Issue 11 finding 10a: cordond cannot read credential files once it has
 * dropped its privileges, so the helper hands it the values each instance
 * is started with ("scrub_values" in the spawn reply; cordond removes the
 * key from the report at once) and a rotated file's new value reaches the
 * broker's stderr scrubbing with the next instance. */
static void write_token(const char *path, const char *value)
{
	char tmp[4096 + 80];

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	write_file(tmp, value, 0600);
	assert_int_equal(rename(tmp, path), 0);
}

static void spawn_with_token(struct cordon_launcher_client *lc, const char *tag, const char *want)
{
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	const json_t *vals;
	char line[128], expect[128];
	int r;

	r = cordon_launcher_client_spawn(lc, "cred", tag, NULL, 0, &l, &d);
	if (r < 0)
		fail_msg("spawn: %s: %s", d.step, d.message);
	/* The instance got the current value... */
	read_line(l.stdout_fd, line, sizeof(line));
	snprintf(expect, sizeof(expect), "%s\n", want);
	assert_string_equal(line, expect);
	/* ...and the broker is told exactly that value. */
	vals = json_object_get(l.report, "scrub_values");
	assert_true(json_is_array(vals));
	assert_int_equal(json_array_size(vals), 1);
	assert_string_equal(json_string_value(json_array_get(vals, 0)), want);
	reset_events();
	assert_int_equal(cordon_launcher_client_kill(lc, l.instance, &d), 0);
	dispatch_until(lc, got_exit, 10000);
	close_launched(&l);
}

static void test_spawn_reply_carries_current_credential_values(void **state)
{
	struct cordon_launcher_client *lc;
	char path[4096 + 64], body[8192], sandbox[2048], token[4096 + 64];

	(void)state;
	snprintf(token, sizeof(token), "%s/cred.token", base);
	write_token(token, "first-T0KEN-value-1111\n");
	snprintf(sandbox, sizeof(sandbox), PROFILE_COMMON, work);
	snprintf(body, sizeof(body),
		 "version: 1\nconnector:\n  description: test connector\n"
		 "  command: [/bin/sh, -c, 'echo \"$TOK\"; exec cat']\n"
		 "  credentials:\n    - {env: TOK, file: %s}\n%s",
		 token, sandbox);
	snprintf(path, sizeof(path), "%s/cred.yaml", profiles);
	write_file(path, body, 0644);
	lc = start_client();
	spawn_with_token(lc, "svt-cred-1", "first-T0KEN-value-1111");
	write_token(token, "second-T0KEN-value-2222\n");
	spawn_with_token(lc, "svt-cred-2", "second-T0KEN-value-2222");
	cordon_launcher_client_free(lc);
}

static void test_kill(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	pid_t pids[16];
	size_t n;

	(void)state;
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-kill", NULL, 0, &l, &d), 0);
	n = pids_in_instance("svt-kill", pids, 16);
	assert_true(n >= 2); /* init and cat */
	assert_int_equal(cordon_launcher_client_kill(lc, l.instance, &d), 0);
	dispatch_until(lc, got_exit, 10000);
	assert_int_equal(ev.instance, l.instance);
	assert_true(WIFSIGNALED(ev.wait_status));
	assert_int_equal(WTERMSIG(ev.wait_status), SIGKILL);
	assert_pids_gone(pids, n);
	/* The instance is gone: a second kill is refused. */
	assert_int_equal(cordon_launcher_client_kill(lc, l.instance, &d), -ENOENT);
	assert_int_equal(d.error, ENOENT);
	assert_int_equal(cordon_launcher_client_kill(lc, 999999, &d), -ENOENT);
	close_launched(&l);
	cordon_launcher_client_free(lc);
}

/* A refused spawn: exact errno, a diag containing `want`, and nothing
 * started (the helper has no child). */
static void assert_refused(struct cordon_launcher_client *lc, const char *connector, const char *host, int err,
			   const char *want)
{
	struct cordon_launched l = { .stdin_fd = -EBADF };
	struct cordon_diag d = { 0 };
	struct cordon_serve_root root = { .access = CORDON_ACCESS_READ };
	int r;

	if (host)
		snprintf(root.host, sizeof(root.host), "%s", host);
	r = cordon_launcher_client_spawn(lc, connector, "svt-refused", &root, host ? 1 : 0, &l, &d);
	if (r != -err)
		fail_msg("spawn %s (root %s): got %d (%s: %s), want %d", connector, host ? host : "-", r, d.step,
			 d.message, -err);
	assert_int_equal(d.error, err);
	if (!strstr(d.message, want))
		fail_msg("diag '%s' does not say '%s'", d.message, want);
	assert_int_equal(l.stdin_fd, -EBADF);
	assert_int_equal(n_children(cordon_launcher_client_pid(lc)), 0);
}

static void test_roots_outside_ceiling(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	char p[4200];

	(void)state;
	assert_refused(lc, "cat", "/etc", EPERM, "not beneath the ceiling");
	assert_refused(lc, "cat", evil, EPERM, "not beneath the ceiling");
	snprintf(p, sizeof(p), "%s/out", work);
	assert_refused(lc, "cat", p, EPERM, "not beneath the ceiling");
	snprintf(p, sizeof(p), "%s/proj/../../work-evil", work);
	assert_refused(lc, "cat", p, EINVAL, "not absolute and canonical");
	assert_refused(lc, "cat", "relative/path", EINVAL, "not absolute and canonical");
	/* Beneath the ceiling but mounted over the system view. */
	{
		struct cordon_launched l = { .stdin_fd = -EBADF };
		struct cordon_diag d = { 0 };
		struct cordon_serve_root root = { .access = CORDON_ACCESS_READ_EXEC };

		snprintf(root.host, sizeof(root.host), "%s/proj", work);
		snprintf(root.sandbox, sizeof(root.sandbox), "/usr");
		assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-shadow", &root, 1, &l, &d), -EPERM);
		assert_non_null(strstr(d.message, "overlaps the system path '/usr'"));
		snprintf(root.sandbox, sizeof(root.sandbox), "/");
		assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-shadow", &root, 1, &l, &d), -EPERM);
		assert_int_equal(n_children(cordon_launcher_client_pid(lc)), 0);
	}
	/* The ceiling itself and below it are fine (control case). */
	{
		struct cordon_launched l = { 0 };
		struct cordon_diag d = { 0 };
		struct cordon_serve_root root = { .access = CORDON_ACCESS_READ };

		snprintf(root.host, sizeof(root.host), "%s/proj", work);
		snprintf(root.sandbox, sizeof(root.sandbox), "/data");
		if (cordon_launcher_client_spawn(lc, "cat", "svt-ceil-ok", &root, 1, &l, &d) < 0)
			fail_msg("spawn: %s: %s", d.step, d.message);
		assert_int_equal(cordon_launcher_client_kill(lc, l.instance, &d), 0);
		dispatch_until(lc, got_exit, 10000);
		close_launched(&l);
	}
	cordon_launcher_client_free(lc);
}

static void test_bad_connector_ids(void **state)
{
	struct cordon_launcher_client *lc = start_client();

	(void)state;
	assert_refused(lc, "nope", NULL, ENOENT, "no profile for connector 'nope' is in force");
	assert_refused(lc, "../etc", NULL, EINVAL, "not a valid connector id");
	assert_refused(lc, "Cat", NULL, EINVAL, "not a valid connector id");
	assert_refused(lc, "", NULL, EINVAL, "not a valid connector id");
	assert_refused(lc, "cat/..", NULL, EINVAL, "not a valid connector id");
	cordon_launcher_client_free(lc);
}

/* A profile set the helper refuses: the exact errno, the diag, the profile
 * named, and the set in force unchanged (its connectors still start, the
 * refused one does not). */
static void assert_set_refused(struct cordon_launcher_client *lc, const char *const *ids, int err, const char *who,
			       const char *want)
{
	struct cordon_diag d = { 0 };
	char failed[64];
	int r = put_in_force(lc, ids, failed, &d);

	if (r != -err)
		fail_msg("profiles: got %d (%s: %s), want %d", r, d.step, d.message, -err);
	assert_int_equal(d.error, err);
	assert_string_equal(failed, who);
	if (!strstr(d.message, want))
		fail_msg("diag '%s' does not say '%s'", d.message, want);
	assert_refused(lc, who, NULL, ENOENT, "is in force");
}

static void spawn_and_end(struct cordon_launcher_client *lc, const char *id, const char *want_sha)
{
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };

	if (cordon_launcher_client_spawn(lc, id, "svt-in-force", NULL, 0, &l, &d) < 0)
		fail_msg("spawn %s: %s: %s", id, d.step, d.message);
	if (want_sha)
		assert_string_equal(json_string_value(json_object_get(l.report, "profile_sha256")), want_sha);
	reset_events();
	closep(&l.stdin_fd);
	dispatch_until(lc, got_exit, 10000);
	close_launched(&l);
}

/* The helper checks a profile (owner, mode, no symlink, its directory)
 * when it reads it to put it in force; a refused set changes nothing. */
static void test_unsafe_profiles_refused(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	char p[4200], link[4200];

	(void)state;
	assert_set_refused(lc, (const char *const[]){ "cat", "ww", NULL }, EPERM, "ww", "world-writable");
	/* Not owned by root. */
	write_profile("own", "[/bin/cat]", 0644);
	snprintf(p, sizeof(p), "%s/own.yaml", profiles);
	assert_int_equal(chown(p, 1000, 1000), 0);
	assert_set_refused(lc, (const char *const[]){ "cat", "own", NULL }, EPERM, "own",
			   "owned by uid 1000, not root");
	assert_int_equal(chown(p, 0, 0), 0);
	/* A symlinked profile. */
	snprintf(link, sizeof(link), "%s/lnk.yaml", profiles);
	assert_int_equal(symlink(p, link), 0);
	assert_set_refused(lc, (const char *const[]){ "lnk", NULL }, ELOOP, "lnk", "symlink");
	assert_int_equal(unlink(link), 0);
	/* A group-writable profiles directory. */
	assert_int_equal(chmod(profiles, 0775), 0);
	assert_set_refused(lc, (const char *const[]){ "own", NULL }, EPERM, "own", "profiles directory");
	assert_int_equal(chmod(profiles, 0755), 0);
	/* Through all that, the set in force stayed (control), and the
	 * fixed profile is accepted. */
	spawn_and_end(lc, "cat", NULL);
	in_force(lc, (const char *const[]){ "cat", "own", NULL });
	spawn_and_end(lc, "own", NULL);
	/* A set is exact: show is no longer in force. */
	assert_refused(lc, "show", NULL, ENOENT, "is in force");
	assert_int_equal(unlink(p), 0);
	cordon_launcher_client_free(lc);
}

/* New instances are built from the copy in force, not from the file: a
 * file broken on disk (as after a reload cordond refused) still starts
 * the old profile; the helper puts a new version in force only when its
 * bytes hash to what cordond names (else ESTALE, and the old one stays). */
static void test_instances_start_from_the_copy_in_force(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_profile *old = NULL, *fixed = NULL;
	struct cordon_diag d = { 0 };
	char path[4200], failed[64];

	(void)state;
	snprintf(path, sizeof(path), "%s/cat.yaml", profiles);
	assert_int_equal(cordon_profile_load(path, &old, &d), 0);
	write_file(path, "version: 1\nbogus_key: [\n", 0644);
	spawn_and_end(lc, "cat", old->sha256);
	/* The same version again (a reload that changed other files): kept
	 * as parsed, the broken file is not read. */
	assert_int_equal(cordon_launcher_client_profiles(lc, &old, 1, failed, sizeof(failed), &d), 0);
	spawn_and_end(lc, "cat", old->sha256);
	/* Named by a hash the file does not have: refused, old in force. */
	write_profile("cat", "[/bin/sh, -c, 'exec cat']", 0644);
	assert_int_equal(cordon_profile_load(path, &fixed, &d), 0);
	assert_string_not_equal(fixed->sha256, old->sha256);
	{
		struct cordon_profile fake = *old;

		memset(fake.sha256, 'a', 64);
		assert_int_equal(cordon_launcher_client_profiles(lc, (struct cordon_profile *[]){ &fake }, 1, failed,
								 sizeof(failed), &d),
				 -ESTALE);
		assert_string_equal(failed, "cat");
		assert_non_null(strstr(d.message, "changed on disk since cordond read it"));
	}
	spawn_and_end(lc, "cat", old->sha256);
	/* The new version, named by its hash: new instances use it. */
	assert_int_equal(cordon_launcher_client_profiles(lc, &fixed, 1, failed, sizeof(failed), &d), 0);
	spawn_and_end(lc, "cat", fixed->sha256);
	write_profile("cat", "[/bin/cat]", 0644);
	cordon_profile_free(old);
	cordon_profile_free(fixed);
	cordon_launcher_client_free(lc);
}

/* SIGHUP is logged and ignored by the helper: its instances go on and it
 * serves (a SIGHUP to cordond's process group reaches it too). */
static void test_sighup_ignored(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	char line[64];

	(void)state;
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-hup", NULL, 0, &l, &d), 0);
	assert_int_equal(kill(cordon_launcher_client_pid(lc), SIGHUP), 0);
	/* A request after the signal is answered, and the instance echoes. */
	assert_int_equal(cordon_launcher_client_kill(lc, 999999, &d), -ENOENT);
	assert_true(cordon_launcher_client_alive(lc));
	assert_int_equal(write(l.stdin_fd, "hup\n", 4), 4);
	read_line(l.stdout_fd, line, sizeof(line));
	assert_string_equal(line, "hup\n");
	reset_events();
	closep(&l.stdin_fd);
	dispatch_until(lc, got_exit, 10000);
	close_launched(&l);
	cordon_launcher_client_free(lc);
}

static void test_kill9_helper(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched a = { 0 }, b = { 0 };
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	char cga[4096], cgb[4096];
	pid_t pids[32];
	size_t n;

	(void)state;
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-k9-a", NULL, 0, &a, &d), 0);
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-k9-b", NULL, 0, &b, &d), 0);
	snprintf(cga, sizeof(cga), "%s", report_cgroup_path(a.report));
	snprintf(cgb, sizeof(cgb), "%s", report_cgroup_path(b.report));
	n = pids_in_instance("svt-k9-", pids, 32);
	assert_true(n >= 4);

	assert_int_equal(kill(cordon_launcher_client_pid(lc), SIGKILL), 0);
	assert_pids_gone(pids, n);
	/* The connector's stdout reaches EOF: nothing holds it any more. */
	{
		char c;
		struct pollfd p = { .fd = a.stdout_fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_int_equal(read(a.stdout_fd, &c, 1), 0);
	}
	dispatch_until(lc, got_lost, 10000);
	assert_int_equal(ev.n_lost, 1);
	assert_false(cordon_launcher_client_alive(lc));
	assert_non_null(strstr(ev.lost.message, "killed by signal 9"));
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-k9-c", NULL, 0, &b, &d) < 0, 1);
	close_launched(&a);
	close_launched(&b);
	cordon_launcher_client_free(lc);

	/* Its cgroups are left behind (it could not remove them); the next
	 * helper's start-up removes them. Do that here, as the next start
	 * would. */
	assert_int_equal(cordon_probe(&caps), 0);
	assert_true(cordon_cgroup_cleanup_stale(&caps) >= 2);
	assert_int_equal(access(cga, F_OK), -1);
	assert_int_equal(access(cgb, F_OK), -1);
}

static void test_close_client_kills_instances(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched a = { 0 }, b = { 0 };
	struct cordon_diag d = { 0 };
	char cga[4096];
	pid_t pids[32], helper;
	size_t n;

	(void)state;
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-close-a", NULL, 0, &a, &d), 0);
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-close-b", NULL, 0, &b, &d), 0);
	snprintf(cga, sizeof(cga), "%s", report_cgroup_path(a.report));
	n = pids_in_instance("svt-close-", pids, 32);
	assert_true(n >= 4);
	helper = cordon_launcher_client_pid(lc);
	/* free() closes the socket: the helper sees EOF, kills every
	 * instance, removes their cgroups and exits 0 (free reaps it). */
	cordon_launcher_client_free(lc);
	assert_true(pid_gone(helper)); /* and reaped by free() */
	assert_pids_gone(pids, n);
	assert_int_equal(access(cga, F_OK), -1);
	close_launched(&a);
	close_launched(&b);
}

/* ---- Raw protocol: a helper started by hand, malformed packets. ---- */

struct raw {
	int sock;
	pid_t pid;
};

static struct raw raw_start(void)
{
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char fd[16];

		if (dup2(sv[1], 3) < 0)
			_exit(127);
		snprintf(fd, sizeof(fd), "3");
		execl(launch, launch, "--serve", fd, "--profiles", profiles, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	return (struct raw){ .sock = sv[0], .pid = pid };
}

static void raw_stop(struct raw *r)
{
	int st;

	close(r->sock);
	assert_int_equal(waitpid(r->pid, &st, 0), r->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void raw_send(struct raw *r, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *h;

		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = sizeof(c.buf);
		h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(r->sock, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

static void raw_recv(struct raw *r, struct cordon_serve_msg *m)
{
	struct pollfd p = { .fd = r->sock, .events = POLLIN };
	struct cordon_diag d = { 0 };
	int e;

	assert_int_equal(poll(&p, 1, 10000), 1);
	e = cordon_serve_recv(r->sock, m, &d);
	if (e < 0)
		fail_msg("recv from the helper: %d %s", e, d.message);
}

static size_t hdr(uint8_t *b, uint32_t magic, uint16_t type, uint32_t id, uint32_t payload)
{
	b[0] = (uint8_t)magic, b[1] = (uint8_t)(magic >> 8), b[2] = (uint8_t)(magic >> 16),
	b[3] = (uint8_t)(magic >> 24);
	b[4] = (uint8_t)type, b[5] = (uint8_t)(type >> 8), b[6] = b[7] = 0;
	b[8] = (uint8_t)id, b[9] = (uint8_t)(id >> 8), b[10] = (uint8_t)(id >> 16), b[11] = (uint8_t)(id >> 24);
	b[12] = (uint8_t)payload, b[13] = (uint8_t)(payload >> 8), b[14] = (uint8_t)(payload >> 16),
	b[15] = (uint8_t)(payload >> 24);
	return 16;
}

/* Sends a valid PROBE with id and asserts the next packet is its reply:
 * the helper still serves, and nothing was sent for dropped packets. */
static void assert_still_serving(struct raw *r, uint32_t id)
{
	struct cordon_serve_msg m;
	uint8_t b[16];

	raw_send(r, b, hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_PROBE, id, 0), -1);
	raw_recv(r, &m);
	assert_int_equal(m.type, CORDON_SERVE_PROBE_REPLY);
	assert_int_equal(m.id, id);
	assert_int_equal(m.status, 0);
	assert_non_null(m.json);
	cordon_serve_msg_clear(&m);
}

static void assert_badmsg_reply(struct raw *r, uint16_t type, uint32_t id, const char *want)
{
	struct cordon_serve_msg m;

	raw_recv(r, &m);
	assert_int_equal(m.type, type);
	assert_int_equal(m.id, id);
	assert_int_equal(m.status, -EBADMSG);
	assert_int_equal(m.diag.error, EBADMSG);
	if (!strstr(m.diag.message, want))
		fail_msg("diag '%s' does not say '%s'", m.diag.message, want);
	cordon_serve_msg_clear(&m);
}

static void test_malformed_packets(void **state)
{
	struct raw r = raw_start();
	_cleanup_free_ uint8_t *big = malloc(CORDON_SERVE_MAX_MSG + 64);
	uint8_t b[256];
	size_t n, fds_before;
	int p[2], sz = 4 * 1024 * 1024;

	(void)state;
	assert_non_null(big);
	assert_still_serving(&r, 1);
	fds_before = n_fds(r.pid);

	/* Garbage: no magic, not even a header. Dropped. */
	memset(b, 0xa5, sizeof(b));
	raw_send(&r, b, sizeof(b), -1);
	raw_send(&r, b, 3, -1);
	assert_still_serving(&r, 2);

	/* Wrong magic with a request type: dropped (it names nothing). */
	n = hdr(b, 0x31444e44u, CORDON_SERVE_PROBE, 3, 0);
	raw_send(&r, b, n, -1);
	assert_still_serving(&r, 4);

	/* Truncated: the header promises 50 payload bytes, 10 follow. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_SPAWN, 5, 50);
	memset(b + n, 0, 10);
	raw_send(&r, b, n + 10, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_SPAWN_REPLY, 5, "payload length 50");

	/* A field that claims more bytes than the packet holds. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_SPAWN, 6, 8);
	memcpy(b + n, "\xff\x00\x00\x00xyzw", 8);
	raw_send(&r, b, n + 8, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_SPAWN_REPLY, 6, "connector");

	/* Too many roots. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_SPAWN, 7, 19);
	memcpy(b + n,
	       "\x03\x00\x00\x00"
	       "cat"
	       "\x00\x00\x00\x00"
	       "\x04\x00\x00\x00"
	       "\xe8\x03\x00\x00",
	       19);
	raw_send(&r, b, n + 19, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_SPAWN_REPLY, 7, "too many roots");

	/* Unknown flags and a KILL with a 2-byte instance. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_KILL, 8, 6);
	memcpy(b + n, "\x02\x00\x00\x00\x01\x00", 6);
	raw_send(&r, b, n + 6, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_KILL_REPLY, 8, "not a 4-byte integer");
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_PROBE, 9, 0);
	b[6] = 1;
	raw_send(&r, b, n, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_PROBE_REPLY, 9, "unknown flags");

	/* Oversized: more than CORDON_SERVE_MAX_MSG bytes (the socket's send
	 * buffer is raised so the kernel lets it through). */
	assert_int_equal(setsockopt(r.sock, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)), 0);
	memset(big, 0, CORDON_SERVE_MAX_MSG + 64);
	hdr(big, CORDON_SERVE_MAGIC, CORDON_SERVE_PROBE, 10, CORDON_SERVE_MAX_MSG + 48);
	raw_send(&r, big, CORDON_SERVE_MAX_MSG + 64, -1);
	assert_badmsg_reply(&r, CORDON_SERVE_PROBE_REPLY, 10, "truncated packet");

	/* An fd on a PROBE: refused, and the helper does not keep it. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_PROBE, 11, 0);
	raw_send(&r, b, n, p[0]);
	assert_badmsg_reply(&r, CORDON_SERVE_PROBE_REPLY, 11, "1 fds on a probe message");
	close(p[0]);
	close(p[1]);

	/* A reply type sent to the helper, an unknown type, an empty packet:
	 * dropped. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_KILL_REPLY, 12, 0);
	raw_send(&r, b, n, -1);
	n = hdr(b, CORDON_SERVE_MAGIC, 77, 13, 0);
	raw_send(&r, b, n, -1);
	raw_send(&r, b, 0, -1);
	assert_still_serving(&r, 14);

	/* A decodable SPAWN for a connector with an invalid id: a request
	 * error, not a protocol error. */
	n = hdr(b, CORDON_SERVE_MAGIC, CORDON_SERVE_SPAWN, 15, 22);
	memcpy(b + n,
	       "\x06\x00\x00\x00"
	       "../etc"
	       "\x00\x00\x00\x00"
	       "\x04\x00\x00\x00"
	       "\x00\x00\x00\x00",
	       22);
	raw_send(&r, b, n + 22, -1);
	{
		struct cordon_serve_msg m;

		raw_recv(&r, &m);
		assert_int_equal(m.id, 15);
		assert_int_equal(m.status, -EINVAL);
		assert_non_null(strstr(m.diag.message, "not a valid connector id"));
		cordon_serve_msg_clear(&m);
	}

	assert_int_equal(n_fds(r.pid), fds_before);
	assert_int_equal(n_children(r.pid), 0);
	assert_still_serving(&r, 16);
	/* EOF: the helper exits 0. */
	raw_stop(&r);
}

static void test_start_failures(void **state)
{
	struct cordon_launcher_client *lc = NULL;
	struct cordon_diag d = { 0 };

	(void)state;
	/* A binary that does not exist: the exec error comes back. */
	assert_int_equal(cordon_launcher_client_start("/nonexistent/cordon-launch", profiles, &handlers, &lc, &d),
			 -ENOENT);
	assert_null(lc);
	assert_non_null(strstr(d.message, "cannot execute /nonexistent/cordon-launch"));
	/* An unsafe profiles directory: the helper refuses to serve at all
	 * and start() says it exited. */
	assert_int_equal(chmod(profiles, 0777), 0);
	assert_int_equal(cordon_launcher_client_start(launch, profiles, &handlers, &lc, &d), -ECONNRESET);
	assert_int_equal(chmod(profiles, 0755), 0);
	assert_null(lc);
	assert_non_null(strstr(d.message, "the launcher helper did not start"));
	assert_non_null(strstr(d.message, "exited with status 1"));
	/* Not a directory at all. */
	assert_int_equal(cordon_launcher_client_start(launch, "/nonexistent-profiles", &handlers, &lc, &d),
			 -ECONNRESET);
	assert_null(lc);
}

/* An EXITED that arrives while a synchronous request waits is queued, the
 * client fd turns readable for it, and only dispatch() delivers it. */
static void test_events_queued_during_request(void **state)
{
	struct cordon_launcher_client *lc = start_client();
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	struct pollfd p;
	json_t *caps = NULL;
	char c;

	(void)state;
	assert_int_equal(cordon_launcher_client_spawn(lc, "cat", "svt-queue", NULL, 0, &l, &d), 0);
	closep(&l.stdin_fd);
	p = (struct pollfd){ .fd = l.stdout_fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(l.stdout_fd, &c, 1), 0); /* cat is gone */
	usleep(300 * 1000);			       /* the helper reaps it and sends EXITED */
	assert_int_equal(cordon_launcher_client_probe(lc, &caps, &d), 0);
	json_decref(caps);
	assert_int_equal(ev.n_exited, 0); /* not from inside the request */
	p = (struct pollfd){ .fd = cordon_launcher_client_fd(lc), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(cordon_launcher_client_dispatch(lc), 0);
	assert_int_equal(ev.n_exited, 1);
	assert_int_equal(ev.instance, l.instance);
	assert_true(WIFEXITED(ev.wait_status));
	/* Nothing further pending: the fd is quiet again. */
	assert_int_equal(poll(&p, 1, 0), 0);
	close_launched(&l);
	cordon_launcher_client_free(lc);
}

/* kill -9 of the broker itself: a forked "cordond" starts the helper and
 * one connector, then is SIGKILLed. The helper reads EOF (and its
 * PR_SET_PDEATHSIG fires), and every connector dies with it. */
static void test_kill9_broker(void **state)
{
	struct cordon_caps caps;
	pid_t broker, helper = 0, pids[32];
	int pfd[2], st;
	size_t n;

	(void)state;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	broker = fork();
	assert_true(broker >= 0);
	if (broker == 0) {
		struct cordon_launcher_client *lc = NULL;
		struct cordon_launched l;
		struct cordon_diag d = { 0 };
		pid_t hp;

		CHILD_CHECK(cordon_launcher_client_start(launch, profiles, NULL, &lc, &d) == 0);
		{
			struct cordon_profile *cat = NULL;
			char path[4200], failed[64];

			snprintf(path, sizeof(path), "%s/cat.yaml", profiles);
			CHILD_CHECK(cordon_profile_load(path, &cat, &d) == 0);
			CHILD_CHECK(cordon_launcher_client_profiles(lc, &cat, 1, failed, sizeof(failed), &d) == 0);
			cordon_profile_free(cat);
		}
		CHILD_CHECK(cordon_launcher_client_spawn(lc, "cat", "svt-b9", NULL, 0, &l, &d) == 0);
		hp = cordon_launcher_client_pid(lc);
		CHILD_CHECK(write(pfd[1], &hp, sizeof(hp)) == (ssize_t)sizeof(hp));
		for (;;)
			pause();
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &helper, sizeof(helper)), (ssize_t)sizeof(helper));
	close(pfd[0]);
	n = pids_in_instance("svt-b9", pids, 32);
	assert_true(n >= 2);
	assert_int_equal(kill(broker, SIGKILL), 0);
	assert_int_equal(waitpid(broker, &st, 0), broker);
	assert_true(WIFSIGNALED(st));
	pids[n++] = helper;
	assert_pids_gone(pids, n);
	/* Whatever cgroup the killed helper could not remove goes at the next
	 * start; do it now, once the helper is reaped (a zombie still owns its
	 * cgroups as far as stale detection is concerned). */
	for (int i = 0; i < 200 && kill(helper, 0) == 0; i++)
		usleep(25 * 1000);
	assert_int_equal(kill(helper, 0), -1);
	assert_int_equal(cordon_probe(&caps), 0);
	assert_true(cordon_cgroup_cleanup_stale(&caps) >= 0);
	assert_int_equal(pids_in_instance("svt-b9", pids, 32), 0);
	assert_false(cgroup_dir_exists("svt-b9"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_matches_cli),
		cmocka_unit_test(test_spawn_echo_and_exit),
		cmocka_unit_test(test_spawn_extra_root),
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_spawn_reply_carries_current_credential_values),
		cmocka_unit_test(test_roots_outside_ceiling),
		cmocka_unit_test(test_bad_connector_ids),
		cmocka_unit_test(test_unsafe_profiles_refused),
		cmocka_unit_test(test_instances_start_from_the_copy_in_force),
		cmocka_unit_test(test_sighup_ignored),
		cmocka_unit_test(test_kill9_helper),
		cmocka_unit_test(test_close_client_kills_instances),
		cmocka_unit_test(test_kill9_broker),
		cmocka_unit_test(test_malformed_packets),
		cmocka_unit_test(test_start_failures),
		cmocka_unit_test(test_events_queued_during_request),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
