/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared fixture for the tests/kernel/test-spawn*.c files: a temporary
 * ceiling directory with a root (seen as /data inside), a directory outside
 * the root with a secret, a profile text built around the sandbox-probe
 * helper (a copy, seen at /opt/cordon-test), and a runner that spawns the helper
 * through cordon_spawn() with pipes and returns its wait status, output and
 * report. Header-only: each test file is its own executable. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cleanup.h"
#include "fd-util.h"
#include "probe-util.h"
#include "probe.h"
#include "profile.h"
#include "spawn.h"
#include "test-support.h"

extern char **environ;

struct sbx {
	char *dir;     /* ceiling */
	char *root;    /* dir/root, at /data, read-write */
	char *outside; /* dir/outside, holds "secret" */
	char *helpers; /* where the build put sandbox-probe */
	char *bin;     /* dir/bin: a copy of sandbox-probe, seen as /opt/cordon-test */
	struct cordon_caps caps;
};

static inline char *sbx_path(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

static inline void sbx_write_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static inline struct sbx *sbx_new(const char *tag)
{
	struct sbx *s = calloc(1, sizeof(*s));
	char buf[PATH_MAX];

	cordon_test_require_root();
	assert_non_null(s);
	s->dir = cordon_test_mkdtemp(tag);
	/* The dynamic uid must be able to traverse to its root. */
	assert_int_equal(chmod(s->dir, 0755), 0);
	s->root = sbx_path(s->dir, "root");
	s->outside = sbx_path(s->dir, "outside");
	assert_int_equal(mkdir(s->root, 0755), 0);
	assert_int_equal(mkdir(s->outside, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/secret", s->outside);
	sbx_write_file(buf, "outside-secret\n");
	s->helpers = strdup(cordon_test_env("CORDON_HELPERS_DIR", "build/tests/helpers"));
	snprintf(buf, sizeof(buf), "%s/sandbox-probe", s->helpers);
	if (access(buf, X_OK) < 0) {
		/* tests/CMakeLists.txt builds helpers into <build>/tests, while
		 * CORDON_HELPERS_DIR says <build>/tests/helpers: accept both. */
		free(s->helpers);
		s->helpers = sbx_path(cordon_test_env("CORDON_BUILD_DIR", "build"), "tests");
		snprintf(buf, sizeof(buf), "%s/sandbox-probe", s->helpers);
	}
	if (access(buf, X_OK) < 0)
		cordon_test_skip("sandbox-probe helper not built at %s", buf);
	/* A copy inside the test's own directory, mounted at a fixed path: the
	 * tests do not depend on where the build tree is (a checkout under
	 * /tmp would collide with the sandbox's private /tmp). */
	s->bin = sbx_path(s->dir, "bin");
	assert_int_equal(mkdir(s->bin, 0755), 0);
	{
		char dst[PATH_MAX], *data = NULL;
		size_t len = 0;
		int fd;

		assert_int_equal(read_file_bounded(AT_FDCWD, buf, 64 << 20, &data, &len), 0);
		snprintf(dst, sizeof(dst), "%s/sandbox-probe", s->bin);
		fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, data, len), (ssize_t)len);
		close(fd);
		free(data);
	}
	assert_int_equal(cordon_probe(&s->caps), 0);
	return s;
}

static inline void sbx_free(struct sbx *s)
{
	if (!s)
		return;
	(void)cordon_test_rm_rf(s->dir);
	free(s->dir);
	free(s->root);
	free(s->outside);
	free(s->helpers);
	free(s->bin);
	free(s);
}

/* Options of the generated profile. NULL/0 fields take the defaults. */
struct sbx_opts {
	const char *require;	 /* "[landlock, seccomp, cgroup, namespaces]" */
	const char *network;	 /* "mode: none" */
	const char *limits;	 /* "{memory: 64M, pids: 32, cpu: 1, nofile: 256}" */
	const char *env_pass;	 /* "[LANG]" */
	const char *env_set;	 /* "{CORDON_VISIBLE: yes}" */
	const char *user;	 /* "dynamic" */
	const char *seccomp;	 /* "{base: default, action: errno}" */
	const char *credentials; /* "[]" */
};

static inline struct cordon_profile *sbx_profile(struct sbx *s, const struct sbx_opts *o)
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = { 0 };
	char *text;
	int r;

	r = asprintf(&text,
		     "version: 1\n"
		     "connector:\n"
		     "  command: [/opt/cordon-test/sandbox-probe]\n"
		     "  workdir: /data\n"
		     "  env:\n"
		     "    pass: %s\n"
		     "    set: %s\n"
		     "  credentials: %s\n"
		     "sandbox:\n"
		     "  user: %s\n"
		     "  filesystem:\n"
		     "    system:\n"
		     "      - {path: /usr, access: read-exec}\n"
		     "      - {path: /bin, access: read-exec}\n"
		     "      - {path: /lib, access: read-exec}\n"
		     "      - {path: /lib64, access: read-exec}\n"
		     "      - {path: /etc/ld.so.cache, access: read}\n"
		     "    roots:\n"
		     "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		     "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		     "    ceiling: [%s]\n"
		     "    tmp: 16M\n"
		     "  network:\n"
		     "    %s\n"
		     "  limits: %s\n"
		     "  seccomp: %s\n"
		     "  require: %s\n"
		     "tools:\n"
		     "  default_risk: high\n"
		     "  risk: {}\n"
		     "  grant: []\n",
		     o && o->env_pass ? o->env_pass : "[LANG]",
		     o && o->env_set ? o->env_set : "{CORDON_VISIBLE: 'yes'}",
		     o && o->credentials ? o->credentials : "[]", o && o->user ? o->user : "dynamic", s->bin, s->root,
		     s->dir, o && o->network ? o->network : "mode: none",
		     o && o->limits ? o->limits : "{memory: 64M, pids: 32, cpu: 1, nofile: 256}",
		     o && o->seccomp ? o->seccomp : "{base: default, action: errno}",
		     o && o->require ? o->require : "[landlock, seccomp, cgroup, namespaces]");
	assert_true(r > 0);
	r = cordon_profile_parse("sbxtest", "spawn-test.yaml", text, strlen(text), &p, &d);
	if (r < 0)
		fprintf(stderr, "profile: %u:%u %s\n%s\n", d.line, d.column, d.message, text);
	free(text);
	assert_int_equal(r, 0);
	return p;
}

struct sbx_result {
	int status;	/* wait status of the connector */
	char out[8192]; /* its stdout + stderr */
	json_t *report;
	pid_t guard_pid; /* the root guard's seccomp supervisor, 0 without one */
};

static inline void sbx_result_done(struct sbx_result *res)
{
	json_decref(res->report);
	res->report = NULL;
}

/* Spawns argv (NULL-terminated, argv[0] inside the sandbox) and waits. On
 * spawn failure returns -errno with *d filled; else 0. */
static inline int sbx_spawn_full(const struct cordon_profile *p, const struct cordon_caps *caps, char *const *argv,
				 const struct cordon_fs_entry *extra, size_t n_extra, struct sbx_result *res,
				 struct cordon_diag *d)
{
	struct cordon_launch_policy pol = {
		.profile = p,
		.argv = argv,
		.env_source = environ,
		.stdio = CORDON_STDIO_PIPES,
		.extra_roots = extra,
		.n_extra_roots = n_extra,
	};
	struct cordon_instance *inst = NULL;
	size_t len = 0;
	int r, fds[2];

	memset(res, 0, sizeof(*res));
	r = cordon_spawn(&pol, caps, &inst, d);
	if (r < 0)
		return r;
	res->guard_pid = cordon_instance_guard_pid(inst);
	close(cordon_instance_take_stdio(inst, 0));
	fds[0] = cordon_instance_take_stdio(inst, 1);
	fds[1] = cordon_instance_take_stdio(inst, 2);
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd pf[2] = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };

		if (poll(pf, 2, 60000) <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (fds[i] < 0 || !pf[i].revents)
				continue;
			n = read(fds[i], res->out + len, sizeof(res->out) - 1 - len);
			if (n <= 0) {
				close(fds[i]);
				fds[i] = -1;
				open_fds--;
			} else
				len += (size_t)n;
		}
	}
	res->out[len] = '\0';
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	r = cordon_instance_wait(inst, &res->status);
	assert_int_equal(r, 0);
	res->report = json_deep_copy(cordon_instance_report(inst));
	cordon_instance_free(inst);
	if (res->out[0])
		printf("  [sandbox] %s", res->out);
	return 0;
}

static inline int sbx_spawn(const struct cordon_profile *p, const struct cordon_caps *caps, char *const *argv,
			    struct sbx_result *res, struct cordon_diag *d)
{
	return sbx_spawn_full(p, caps, argv, NULL, 0, res, d);
}

/* Runs `sandbox-probe ATTEMPT [X [Y]]` with the given profile and caps;
 * returns the wait status. */
static inline int sbx_probe_with(const struct cordon_profile *p, const struct cordon_caps *caps, const char *attempt,
				 const char *x, const char *y)
{
	char *argv[] = { (char *)p->command[0], (char *)attempt, (char *)x, (char *)y, NULL };
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	int r;

	printf("attempt: %s %s %s\n", attempt, x ? x : "", y ? y : "");
	r = sbx_spawn(p, caps, argv, &res, &d);
	if (r < 0)
		fprintf(stderr, "cordon_spawn: step %s: %s (errno %d)\n", d.step, d.message, d.error);
	assert_int_equal(r, 0);
	sbx_result_done(&res);
	return res.status;
}

#define assert_exited(st, code)                                                                                        \
	do {                                                                                                           \
		int _st = (st);                                                                                        \
		if (!WIFEXITED(_st))                                                                                   \
			fprintf(stderr, "killed by signal %d, want exit %d\n", WTERMSIG(_st), (code));                 \
		assert_true(WIFEXITED(_st));                                                                           \
		assert_int_equal(WEXITSTATUS(_st), (code));                                                            \
	} while (0)

#define assert_signaled(st, sig)                                                                                       \
	do {                                                                                                           \
		int _st = (st);                                                                                        \
		assert_true(WIFSIGNALED(_st));                                                                         \
		assert_int_equal(WTERMSIG(_st), (sig));                                                                \
	} while (0)

/* The report's state string of one control. */
static inline const char *sbx_state(const json_t *report, const char *control)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(report, "controls"), control), "state"));
}

/* The consequence the report names when the root guard is missing. */
#define SBX_ROOT_GUARD_IMPACT "the connector can change the permission bits of its read-write root directory"

/* The number of entries of the report's "missing" list for `control`. */
static inline size_t sbx_missing_count(const json_t *report, const char *control)
{
	const json_t *m;
	size_t i, n = 0;

	json_array_foreach(json_object_get(report, "missing"), i, m) n +=
		strcmp(json_string_value(json_object_get(m, "control")), control) == 0;
	return n;
}

/* Whether the root guard runs for a sandbox with a read-write root: BPF
 * LSM programs per cgroup, or else the seccomp supervisor. */
static inline bool sbx_root_guard_runs(const struct cordon_caps *caps)
{
	return caps->bpf_lsm_cgroup || cordon_probe_root_guard_notify(caps);
}

/* The root guard of a sandbox with a read-write root, as the report must
 * state it: enforced where BPF LSM programs can be attached per cgroup
 * (caps->bpf_lsm_cgroup) or, without them, by the seccomp supervisor
 * (attached "seccomp-notify"); else unavailable, the report degraded and
 * the consequence named once, never silently. */
static inline void sbx_assert_root_guard_reported(const json_t *report, const struct cordon_caps *caps)
{
	const json_t *missing = json_object_get(report, "missing"), *m;
	size_t i;

	if (sbx_root_guard_runs(caps)) {
		const json_t *rg = json_object_get(json_object_get(report, "controls"), "root_guard");

		assert_string_equal(sbx_state(report, "root_guard"), "enforced");
		assert_int_equal(sbx_missing_count(report, "root_guard"), 0);
		if (!caps->bpf_lsm_cgroup)
			assert_string_equal(json_string_value(json_object_get(rg, "attached")), "seccomp-notify");
		return;
	}
	assert_string_equal(sbx_state(report, "root_guard"), "unavailable");
	assert_true(json_is_true(json_object_get(report, "degraded")));
	assert_int_equal(sbx_missing_count(report, "root_guard"), 1);
	json_array_foreach(missing, i,
			   m) if (strcmp(json_string_value(json_object_get(m, "control")), "root_guard") == 0)
		assert_string_equal(json_string_value(json_object_get(m, "impact")), SBX_ROOT_GUARD_IMPACT);
}

/* A sandbox with a read-write root on a kernel offering everything else:
 * not degraded, or degraded by exactly the root guard where the kernel
 * cannot run it (sbx_assert_root_guard_reported). */
static inline void sbx_assert_degraded_only_by_root_guard(const json_t *report, const struct cordon_caps *caps)
{
	sbx_assert_root_guard_reported(report, caps);
	assert_int_equal(json_array_size(json_object_get(report, "missing")), sbx_root_guard_runs(caps) ? 0 : 1);
	if (sbx_root_guard_runs(caps))
		assert_true(json_is_false(json_object_get(report, "degraded")));
}
