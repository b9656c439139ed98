/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe's report and parsers, driven by synthetic structs and texts: JSON
 * keys and types (the schema of docs/kernel-matrix.md), verdicts per control,
 * the human table's alignment, Landlock rights per ABI and the mountinfo
 * parser. No kernel access. */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "landlock-uapi.h"
#include "probe-util.h"
#include "probe.h"
#include "syscall-compat.h"

/* Every key of the schema with its JSON type; NULL-able keys list both. */
struct key_type {
	const char *path; /* dotted */
	int type;
	int alt_type; /* -1 when none */
};

/* clang-format off */
static const struct key_type schema[] = {
	{ "version", JSON_INTEGER, -1 },
	{ "kernel.release", JSON_STRING, -1 },
	{ "landlock.status", JSON_STRING, -1 },
	{ "landlock.abi", JSON_INTEGER, -1 },
	{ "landlock.errno", JSON_STRING, JSON_NULL },
	{ "landlock.fs_handled", JSON_INTEGER, -1 },
	{ "landlock.fs_rights", JSON_ARRAY, -1 },
	{ "landlock.net_handled", JSON_INTEGER, -1 },
	{ "landlock.net_rights", JSON_ARRAY, -1 },
	{ "landlock.scoped", JSON_INTEGER, -1 },
	{ "landlock.scopes", JSON_ARRAY, -1 },
	{ "landlock.log_flags", JSON_TRUE, JSON_FALSE },
	{ "seccomp.status", JSON_STRING, -1 },
	{ "seccomp.filter", JSON_TRUE, JSON_FALSE },
	{ "seccomp.user_notif", JSON_TRUE, JSON_FALSE },
	{ "seccomp.kill_process", JSON_TRUE, JSON_FALSE },
	{ "seccomp.log", JSON_TRUE, JSON_FALSE },
	{ "seccomp.tsync", JSON_TRUE, JSON_FALSE },
	{ "seccomp.native_arch", JSON_STRING, -1 },
	{ "seccomp.native_audit_arch", JSON_INTEGER, -1 },
	{ "openat2.status", JSON_STRING, -1 },
	{ "openat2.syscall", JSON_TRUE, JSON_FALSE },
	{ "openat2.beneath_refuses_escape", JSON_TRUE, JSON_FALSE },
	{ "namespaces.status", JSON_STRING, -1 },
	{ "namespaces.user", JSON_TRUE, JSON_FALSE },
	{ "namespaces.mount", JSON_TRUE, JSON_FALSE },
	{ "namespaces.pid", JSON_TRUE, JSON_FALSE },
	{ "namespaces.net", JSON_TRUE, JSON_FALSE },
	{ "namespaces.ipc", JSON_TRUE, JSON_FALSE },
	{ "namespaces.uts", JSON_TRUE, JSON_FALSE },
	{ "namespaces.cgroup", JSON_TRUE, JSON_FALSE },
	{ "namespaces.time", JSON_TRUE, JSON_FALSE },
	{ "namespaces.userns_unprivileged", JSON_TRUE, JSON_FALSE },
	{ "cgroup.status", JSON_STRING, -1 },
	{ "cgroup.layout", JSON_STRING, -1 },
	{ "cgroup.cgroup2_mount", JSON_STRING, JSON_NULL },
	{ "cgroup.controllers", JSON_OBJECT, -1 },
	{ "cgroup.kill", JSON_TRUE, JSON_FALSE },
	{ "cgroup.clone_into_cgroup", JSON_TRUE, JSON_FALSE },
	{ "bpf.status", JSON_STRING, -1 },
	{ "bpf.syscall", JSON_TRUE, JSON_FALSE },
	{ "bpf.btf_vmlinux", JSON_TRUE, JSON_FALSE },
	{ "bpf.cgroup_sock_addr", JSON_TRUE, JSON_FALSE },
	{ "bpf.lsm", JSON_TRUE, JSON_FALSE },
	{ "bpf.lsms", JSON_ARRAY, -1 },
	{ "process.pidfd_open", JSON_TRUE, JSON_FALSE },
	{ "process.close_range", JSON_TRUE, JSON_FALSE },
	{ "process.no_new_privs", JSON_TRUE, JSON_FALSE },
	{ "process.no_new_privs_set", JSON_TRUE, JSON_FALSE },
	{ "process.caps_effective", JSON_STRING, -1 },
	{ "process.caps_bounding", JSON_STRING, -1 },
	{ "process.caps_missing", JSON_ARRAY, -1 },
	{ "controls", JSON_ARRAY, -1 },
	{ "probe.duration_us", JSON_INTEGER, -1 },
	{ "verdict.status", JSON_STRING, -1 },
	{ "verdict.controls", JSON_ARRAY, -1 },
};

static const char *const top_keys[] = {
	"version", "kernel", "landlock", "seccomp", "openat2", "namespaces",
	"cgroup", "bpf", "process", "controls", "probe", "verdict",
};

static const char *const ctrl_keys[] = { "status", "available", "hierarchy", "path", "can_create" };

static const char *const control_names[] = {
	"landlock", "landlock-net", "landlock-scope", "landlock-log", "seccomp", "openat2",
	"namespaces", "userns-unprivileged", "cgroup", "cgroup-memory", "cgroup-pids",
	"cgroup-cpu", "cgroup-cpuset", "cgroup-io", "cgroup-kill", "clone-into-cgroup",
	"network", "bpf", "bpf-cgroup-sock-addr", "btf", "bpf-lsm", "bpf-lsm-cgroup", "root_guard",
	"pidfd", "close-range",
	"no-new-privs", "capabilities",
};
/* clang-format on */

static json_t *lookup(json_t *root, const char *dotted)
{
	char buf[128], *save = NULL;
	json_t *o = root;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save))
		o = json_object_get(o, t);
	return o;
}

static const char *str_at(json_t *root, const char *dotted)
{
	json_t *v = lookup(root, dotted);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static json_t *parse_report(const struct cordon_caps *c)
{
	char *s = cordon_probe_to_json(c);
	json_error_t err;
	json_t *root;

	assert_non_null(s);
	root = json_loads(s, JSON_REJECT_DUPLICATES, &err);
	if (!root)
		fail_msg("report is not JSON: %s at %d:%d", err.text, err.line, err.column);
	free(s);
	return root;
}

static void check_schema(json_t *root)
{
	const char *key;
	json_t *v;

	assert_true(json_is_object(root));
	/* Exactly the documented top-level keys: adding one means documenting it. */
	assert_int_equal(json_object_size(root), sizeof(top_keys) / sizeof(top_keys[0]));
	for (size_t i = 0; i < sizeof(top_keys) / sizeof(top_keys[0]); i++)
		assert_non_null(json_object_get(root, top_keys[i]));

	for (size_t i = 0; i < sizeof(schema) / sizeof(schema[0]); i++) {
		json_t *k = lookup(root, schema[i].path);
		int t;

		if (!k)
			fail_msg("missing key %s", schema[i].path);
		t = (int)json_typeof(k);
		if (t != schema[i].type && t != schema[i].alt_type)
			fail_msg("key %s has JSON type %d", schema[i].path, t);
	}

	json_object_foreach(json_object_get(lookup(root, "cgroup"), "controllers"), key, v)
	{
		assert_int_equal(json_object_size(v), sizeof(ctrl_keys) / sizeof(ctrl_keys[0]));
		for (size_t i = 0; i < sizeof(ctrl_keys) / sizeof(ctrl_keys[0]); i++)
			assert_non_null(json_object_get(v, ctrl_keys[i]));
		assert_true(json_is_string(json_object_get(v, "status")));
		assert_true(json_is_boolean(json_object_get(v, "available")));
		assert_true(json_is_boolean(json_object_get(v, "can_create")));
		assert_true(json_is_string(json_object_get(v, "hierarchy")) ||
			    json_is_null(json_object_get(v, "hierarchy")));
		assert_true(json_is_string(json_object_get(v, "path")) || json_is_null(json_object_get(v, "path")));
	}
	assert_int_equal(json_object_size(lookup(root, "cgroup.controllers")), _CORDON_CTRL_MAX);
	for (int i = 0; i < _CORDON_CTRL_MAX; i++)
		assert_non_null(json_object_get(lookup(root, "cgroup.controllers"), cordon_cgroup_ctrl_name(i)));

	/* controls: every documented control once, in order, with the four keys. */
	v = lookup(root, "controls");
	assert_int_equal(json_array_size(v), sizeof(control_names) / sizeof(control_names[0]));
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *row = json_array_get(v, i);
		const char *st = json_string_value(json_object_get(row, "status"));

		assert_int_equal(json_object_size(row), 4);
		assert_string_equal(json_string_value(json_object_get(row, "control")), control_names[i]);
		assert_non_null(st);
		assert_true(strcmp(st, "available") == 0 || strcmp(st, "degraded") == 0 || strcmp(st, "missing") == 0);
		assert_true(json_is_string(json_object_get(row, "detail")));
		/* A consequence exactly when the control is not available. */
		if (strcmp(st, "available") == 0)
			assert_true(json_is_null(json_object_get(row, "consequence")));
		else
			assert_true(json_is_string(json_object_get(row, "consequence")) &&
				    json_string_length(json_object_get(row, "consequence")) > 0);
	}
}

static void fill_full(struct cordon_caps *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->kernel_release, sizeof(c->kernel_release), "6.18.0-test");
	c->landlock_abi = 7;
	c->landlock_fs_handled = cordon_landlock_fs_rights_for_abi(7);
	c->landlock_net_handled = cordon_landlock_net_rights_for_abi(7);
	c->landlock_scoped = cordon_landlock_scopes_for_abi(7);
	c->landlock_log_flags = true;
	c->seccomp_filter = c->seccomp_user_notif = c->seccomp_kill_process = c->seccomp_log = c->seccomp_tsync = true;
	c->seccomp_native_arch = 0xC000003E; /* AUDIT_ARCH_X86_64 */
	c->openat2 = c->openat2_beneath = true;
	c->namespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
			CLONE_NEWCGROUP | CLONE_NEWTIME;
	c->userns_unprivileged = true;
	c->cgroup_layout = CORDON_CGROUP_V2;
	snprintf(c->cgroup2_mount, sizeof(c->cgroup2_mount), "/sys/fs/cgroup");
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		c->ctrl[i].available = c->ctrl[i].v2 = c->ctrl[i].can_create = true;
		snprintf(c->ctrl[i].path, sizeof(c->ctrl[i].path), "/sys/fs/cgroup");
	}
	c->cgroup_kill = c->clone_into_cgroup = true;
	c->bpf_syscall = c->btf_vmlinux = c->bpf_cgroup_sock_addr = c->bpf_lsm = c->bpf_lsm_cgroup = true;
	c->pidfd_open = c->pidfd_getfd = c->close_range = c->no_new_privs = true;
	c->caller_caps_effective = c->caller_caps_bounding = 0x000001ffffffffffULL;
	snprintf(c->lsm, sizeof(c->lsm), "lockdown,capability,landlock,bpf");
	c->probe_usec = 4321;
}

static void test_landlock_rights_per_abi(void **state)
{
	(void)state;
	assert_int_equal(cordon_landlock_fs_rights_for_abi(0), 0);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(-1), 0);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(1), 0x1fff);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(2), 0x1fff | LANDLOCK_ACCESS_FS_REFER);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(3), 0x7fff);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(4), 0x7fff);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(5), 0xffff);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(7), 0xffff);
	assert_int_equal(cordon_landlock_fs_rights_for_abi(99), 0xffff);
	assert_int_equal(cordon_landlock_net_rights_for_abi(3), 0);
	assert_int_equal(cordon_landlock_net_rights_for_abi(4),
			 LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP);
	assert_int_equal(cordon_landlock_scopes_for_abi(5), 0);
	assert_int_equal(cordon_landlock_scopes_for_abi(6),
			 LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
}

static void test_json_full(void **state)
{
	struct cordon_caps c;
	json_t *root, *a;

	(void)state;
	fill_full(&c);
	root = parse_report(&c);
	check_schema(root);

	assert_int_equal(json_integer_value(lookup(root, "version")), 1);
	assert_string_equal(str_at(root, "kernel.release"), "6.18.0-test");
	assert_int_equal(json_integer_value(lookup(root, "landlock.abi")), 7);
	assert_true(json_is_null(lookup(root, "landlock.errno")));
	assert_int_equal(json_integer_value(lookup(root, "landlock.fs_handled")), 0xffff);
	a = lookup(root, "landlock.fs_rights");
	assert_int_equal(json_array_size(a), 16);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "execute");
	assert_string_equal(json_string_value(json_array_get(a, 15)), "ioctl_dev");
	assert_string_equal(json_string_value(json_array_get(lookup(root, "landlock.net_rights"), 1)), "connect_tcp");
	assert_string_equal(json_string_value(json_array_get(lookup(root, "landlock.scopes"), 0)),
			    "abstract_unix_socket");
	assert_string_equal(str_at(root, "seccomp.native_arch"), "x86_64");
	assert_int_equal(json_integer_value(lookup(root, "seccomp.native_audit_arch")), 0xC000003E);
	assert_string_equal(str_at(root, "cgroup.layout"), "v2");
	assert_string_equal(str_at(root, "cgroup.cgroup2_mount"), "/sys/fs/cgroup");
	assert_string_equal(str_at(root, "cgroup.controllers.memory.hierarchy"), "v2");
	assert_string_equal(str_at(root, "cgroup.controllers.io.path"), "/sys/fs/cgroup");
	assert_int_equal(json_array_size(lookup(root, "bpf.lsms")), 4);
	assert_string_equal(json_string_value(json_array_get(lookup(root, "bpf.lsms"), 3)), "bpf");
	assert_string_equal(str_at(root, "process.caps_effective"), "000001ffffffffff");
	assert_int_equal(json_array_size(lookup(root, "process.caps_missing")), 0);
	assert_int_equal(json_integer_value(lookup(root, "probe.duration_us")), 4321);

	/* Everything available: every section and control says so. */
	for (size_t i = 0; i < json_array_size(lookup(root, "controls")); i++)
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(lookup(root, "controls"), i), "status")),
			"available");
	for (size_t i = 2; i < 8; i++) {
		char key[64];

		snprintf(key, sizeof(key), "%s.status", top_keys[i]);
		assert_string_equal(str_at(root, key), "available");
	}
	assert_string_equal(str_at(root, "verdict.status"), "ok");
	assert_int_equal(json_array_size(lookup(root, "verdict.controls")), 0);
	json_decref(root);
}

static void test_json_nothing(void **state)
{
	struct cordon_caps c = { 0 };
	json_t *root;

	(void)state;
	c.landlock_errno = ENOSYS;
	root = parse_report(&c);
	check_schema(root);

	assert_string_equal(str_at(root, "landlock.status"), "missing");
	assert_string_equal(str_at(root, "landlock.errno"), "ENOSYS");
	assert_int_equal(json_array_size(lookup(root, "landlock.fs_rights")), 0);
	assert_string_equal(str_at(root, "seccomp.status"), "missing");
	assert_string_equal(str_at(root, "seccomp.native_arch"), "unknown");
	assert_string_equal(str_at(root, "openat2.status"), "missing");
	assert_string_equal(str_at(root, "namespaces.status"), "missing");
	assert_string_equal(str_at(root, "cgroup.status"), "missing");
	assert_string_equal(str_at(root, "cgroup.layout"), "none");
	assert_true(json_is_null(lookup(root, "cgroup.cgroup2_mount")));
	assert_true(json_is_null(lookup(root, "cgroup.controllers.pids.hierarchy")));
	assert_true(json_is_null(lookup(root, "cgroup.controllers.pids.path")));
	assert_string_equal(str_at(root, "bpf.status"), "missing");
	assert_int_equal(json_array_size(lookup(root, "bpf.lsms")), 0);
	/* Every needed capability is reported missing (CAP_BPF is skipped
	 * when the bounding set does not know it). */
	assert_int_equal(json_array_size(lookup(root, "process.caps_missing")), 6);
	assert_string_equal(json_string_value(json_array_get(lookup(root, "process.caps_missing"), 0)),
			    "cap_sys_admin");
	for (size_t i = 0; i < json_array_size(lookup(root, "controls")); i++)
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(lookup(root, "controls"), i), "status")),
			"missing");
	/* Without no_new_privs or the capabilities that build a sandbox every
	 * launch is refused; the verdict names every profile and
	 * always-required control, in table order. */
	assert_string_equal(str_at(root, "verdict.status"), "unusable");
	{
		static const char *const want[] = { "landlock", "seccomp",    "namespaces",   "cgroup",
						    "network",	"root_guard", "no-new-privs", "capabilities" };
		json_t *a = lookup(root, "verdict.controls");

		assert_int_equal(json_array_size(a), sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < json_array_size(a); i++)
			assert_string_equal(json_string_value(json_array_get(a, i)), want[i]);
	}
	json_decref(root);
}

static void test_json_partial(void **state)
{
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	struct cordon_caps c;
	json_t *root;
	size_t n;

	(void)state;
	fill_full(&c);
	c.landlock_abi = 3;
	c.landlock_fs_handled = cordon_landlock_fs_rights_for_abi(3);
	c.landlock_net_handled = c.landlock_scoped = 0;
	c.landlock_log_flags = false;
	c.seccomp_kill_process = false;
	c.namespaces &= ~(unsigned long)CLONE_NEWTIME;
	c.cgroup_layout = CORDON_CGROUP_V1;
	c.cgroup2_mount[0] = '\0';
	c.ctrl[CORDON_CTRL_MEMORY].v2 = false;
	c.ctrl[CORDON_CTRL_MEMORY].can_create = false;
	c.ctrl[CORDON_CTRL_IO].available = false;
	c.caller_caps_effective &= ~(1ULL << 21); /* CAP_SYS_ADMIN */
	c.landlock_errno = EOPNOTSUPP;		  /* ignored while abi > 0 */

	root = parse_report(&c);
	check_schema(root);
	assert_string_equal(str_at(root, "landlock.status"), "degraded");
	assert_true(json_is_null(lookup(root, "landlock.errno")));
	assert_int_equal(json_array_size(lookup(root, "landlock.fs_rights")), 15);
	assert_string_equal(str_at(root, "seccomp.status"), "degraded");
	/* The time namespace is unused: its absence changes nothing. */
	assert_string_equal(str_at(root, "namespaces.status"), "available");
	assert_true(json_is_false(lookup(root, "namespaces.time")));
	/* A profile that sets a memory limit and requires cgroup is refused
	 * here: the worst a profile meets, which the report shows. */
	assert_string_equal(str_at(root, "cgroup.status"), "missing");
	assert_string_equal(str_at(root, "cgroup.layout"), "v1");
	assert_string_equal(str_at(root, "cgroup.controllers.memory.status"), "degraded");
	assert_string_equal(str_at(root, "cgroup.controllers.memory.hierarchy"), "v1");
	assert_string_equal(str_at(root, "cgroup.controllers.io.status"), "missing");
	assert_string_equal(json_string_value(json_array_get(lookup(root, "process.caps_missing"), 0)),
			    "cap_sys_admin");
	assert_string_equal(str_at(root, "verdict.status"), "unusable");
	json_decref(root);

	n = cordon_probe_rows(&c, rows, CORDON_PROBE_MAX_ROWS);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].control, "landlock") == 0)
			assert_non_null(strstr(rows[i].consequence, "ioctl_dev"));
		if (strcmp(rows[i].control, "seccomp") == 0)
			assert_non_null(strstr(rows[i].detail, "KILL_PROCESS"));
		if (strcmp(rows[i].control, "namespaces") == 0)
			assert_non_null(strstr(rows[i].detail, "missing time"));
		if (strcmp(rows[i].control, "capabilities") == 0)
			assert_non_null(strstr(rows[i].detail, "cap_sys_admin"));
	}
}

/* The overall verdict cordond's /health reads: one kernel feature taken
 * away at a time from a full kernel, with the exact status and the exact
 * controls named. Informational controls never change it. */
static void verdict_of(void (*take_away)(struct cordon_caps *c), const char *status, const char *controls)
{
	struct cordon_caps c;
	char names[200] = "";
	json_t *root, *a;

	fill_full(&c);
	take_away(&c);
	root = parse_report(&c);
	a = lookup(root, "verdict.controls");
	for (size_t i = 0; i < json_array_size(a); i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "," : "",
			 json_string_value(json_array_get(a, i)));
	printf("verdict %s [%s]\n", str_at(root, "verdict.status"), names);
	assert_string_equal(str_at(root, "verdict.status"), status);
	assert_string_equal(names, controls);
	json_decref(root);
}

/* clang-format off */
static void nothing(struct cordon_caps *c)        { (void)c; }
static void informational(struct cordon_caps *c)  { c->pidfd_open = c->close_range = false;
						    c->userns_unprivileged = c->btf_vmlinux = false;
						    c->landlock_log_flags = c->cgroup_kill = false;
						    c->clone_into_cgroup = c->openat2_beneath = false;
						    c->namespaces &= ~(unsigned long)CLONE_NEWTIME;
						    c->seccomp_user_notif = c->seccomp_tsync = false;
						    c->ctrl[CORDON_CTRL_IO].available = false;
						    c->ctrl[CORDON_CTRL_CPUSET].can_create = false; }
static void no_seccomp(struct cordon_caps *c)     { c->seccomp_filter = false; }
static void no_kill_process(struct cordon_caps *c) { c->seccomp_kill_process = false; }
static void no_landlock(struct cordon_caps *c)    { c->landlock_abi = 0; c->landlock_errno = EOPNOTSUPP;
						    c->landlock_fs_handled = c->landlock_net_handled = 0;
						    c->landlock_scoped = 0; c->landlock_log_flags = false; }
static void no_pid_ns(struct cordon_caps *c)      { c->namespaces &= ~(unsigned long)CLONE_NEWPID; }
static void no_pids_ctrl(struct cordon_caps *c)   { c->ctrl[CORDON_CTRL_PIDS].can_create = false; }
static void no_sock_addr(struct cordon_caps *c)   { c->bpf_cgroup_sock_addr = false; }
static void no_net_admin(struct cordon_caps *c)   { c->caller_caps_effective &= ~(1ULL << 12); }
static void no_setgid(struct cordon_caps *c)      { c->caller_caps_effective &= ~(1ULL << 6); }
static void no_nnp(struct cordon_caps *c)         { c->no_new_privs = false; }
static void no_bpf_lsm(struct cordon_caps *c)     { c->bpf_lsm = c->bpf_lsm_cgroup = false;
						    c->bpf_lsm_cgroup_errno = EOPNOTSUPP; }
static void lsm_refused(struct cordon_caps *c)    { c->bpf_lsm_cgroup = false; c->bpf_lsm_cgroup_errno = EPERM; }
/* Neither guard: no BPF LSM and no pidfd_getfd for the seccomp supervisor. */
static void no_guard(struct cordon_caps *c)       { lsm_refused(c); c->pidfd_getfd = false; }
/* clang-format on */

static void test_verdict(void **state)
{
	(void)state;
	verdict_of(nothing, "ok", "");
	verdict_of(informational, "ok", "");
	verdict_of(no_seccomp, "degraded", "seccomp");
	verdict_of(no_kill_process, "degraded", "seccomp");
	/* Landlock TCP rules are the allowlist's second layer. */
	verdict_of(no_landlock, "degraded", "landlock,network");
	verdict_of(no_pid_ns, "degraded", "namespaces");
	verdict_of(no_pids_ctrl, "degraded", "cgroup");
	verdict_of(no_sock_addr, "degraded", "network");
	verdict_of(no_net_admin, "degraded", "capabilities");
	verdict_of(no_setgid, "unusable", "capabilities");
	verdict_of(no_nnp, "unusable", "no-new-privs");
	/* The root guard is a profile control (only profiles with a
	 * read-write root need it): without it the kernel is degraded, never
	 * unusable. Without BPF LSM the seccomp supervisor guards it:
	 * lsm_refused is this development machine's kernel (bpf is an active
	 * LSM, every BPF LSM program load gets EPERM), and it is ok. */
	verdict_of(no_bpf_lsm, "ok", "");
	verdict_of(lsm_refused, "ok", "");
	verdict_of(no_guard, "degraded", "root_guard");
}

static void test_landlock_disabled_errno(void **state)
{
	struct cordon_caps c = { 0 };
	json_t *root;

	(void)state;
	c.landlock_errno = EOPNOTSUPP;
	root = parse_report(&c);
	assert_string_equal(str_at(root, "landlock.errno"), "EOPNOTSUPP");
	assert_non_null(
		strstr(json_string_value(json_object_get(json_array_get(lookup(root, "controls"), 0), "detail")),
		       "disabled at boot"));
	json_decref(root);
}

static void test_rows_truncate(void **state)
{
	struct cordon_probe_row rows[3];
	struct cordon_caps c;

	(void)state;
	fill_full(&c);
	/* A short array gets the first rows and no overflow. */
	assert_int_equal(cordon_probe_rows(&c, rows, 3), 3);
	assert_string_equal(rows[0].control, "landlock");
	assert_string_equal(rows[2].control, "landlock-scope");
}

static char *human(const struct cordon_caps *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(cordon_probe_write_human(c, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_human_aligned(void **state)
{
	struct cordon_caps c = { 0 };
	char *out, *save = NULL;
	long status_col = -1, detail_col = -1;
	size_t lines = 0;

	(void)state;
	c.landlock_errno = ENOSYS;
	out = human(&c);
	assert_non_null(strstr(out, "no Landlock: filesystem confinement rests on the mount namespace alone"));
	assert_non_null(strstr(out, "0 available, 0 degraded, 27 missing"));

	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *st;

		if (strncmp(l, "Linux ", 6) == 0)
			continue;
		lines++;
		if (strncmp(l, "CONTROL", 7) == 0) {
			status_col = strstr(l, "STATUS") - l;
			detail_col = strstr(l, "DETAIL") - l;
			continue;
		}
		assert_true(status_col > 0);
		st = l + status_col;
		assert_true(strncmp(st, "missing ", 8) == 0 || strncmp(st, "degraded ", 9) == 0);
		assert_true(l[status_col - 1] == ' ' && l[status_col - 2] == ' ');
		assert_true(l[detail_col - 1] == ' ' && l[detail_col] != ' ');
	}
	assert_int_equal(lines, 1 + sizeof(control_names) / sizeof(control_names[0]));
	free(out);
}

static void test_write_errors(void **state)
{
	struct cordon_caps c;
	FILE *ro = fopen("/dev/null", "r");

	(void)state;
	fill_full(&c);
	assert_non_null(ro);
	/* A stream that cannot be written: the error comes back, not 0. */
	assert_int_equal(cordon_probe_write_json(&c, ro), -EBADF);
	assert_int_equal(cordon_probe_write_human(&c, ro), -EBADF);
	fclose(ro);
}

/* clang-format off */
static const char mi_hybrid[] =
	"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=123k\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:7 master:3 - cgroup2 cgroup2 rw,nsdelegate\n";

static const char mi_v2[] =
	"30 23 0:26 /sub /mnt/bind rw - cgroup2 cgroup2 rw\n"
	"29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n";
/* clang-format on */

static void parse(const char *text, struct cordon_caps *c)
{
	char *copy = strdup(text);

	assert_non_null(copy);
	memset(c, 0, sizeof(*c));
	assert_int_equal(cordon_probe_parse_mountinfo(copy, c), 0);
	free(copy);
}

static void test_mountinfo_hybrid(void **state)
{
	struct cordon_caps c;

	(void)state;
	parse(mi_hybrid, &c);
	assert_int_equal(c.cgroup_layout, CORDON_CGROUP_HYBRID);
	assert_string_equal(c.cgroup2_mount, "/sys/fs/cgroup/unified");
	assert_true(c.ctrl[CORDON_CTRL_CPU].available);
	assert_false(c.ctrl[CORDON_CTRL_CPU].v2);
	assert_string_equal(c.ctrl[CORDON_CTRL_CPU].path, "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(c.ctrl[CORDON_CTRL_CPUSET].path, "/sys/fs/cgroup/cpuset");
	assert_string_equal(c.ctrl[CORDON_CTRL_MEMORY].path, "/sys/fs/cgroup/memory");
	assert_string_equal(c.ctrl[CORDON_CTRL_PIDS].path, "/sys/fs/cgroup/pids");
	/* io is "blkio" in v1. */
	assert_string_equal(c.ctrl[CORDON_CTRL_IO].path, "/sys/fs/cgroup/blkio");
	/* The parser only reads mountinfo: nothing is probed. */
	assert_false(c.ctrl[CORDON_CTRL_MEMORY].can_create);
}

static void test_mountinfo_v2(void **state)
{
	struct cordon_caps c;

	(void)state;
	parse(mi_v2, &c);
	/* A name=systemd-only v1 mount is not a controller hierarchy. */
	assert_int_equal(c.cgroup_layout, CORDON_CGROUP_V2);
	/* The root mount wins over an earlier bind mount of a subdirectory. */
	assert_string_equal(c.cgroup2_mount, "/sys/fs/cgroup");
	/* v2 controllers come from cgroup.controllers, not from mountinfo. */
	for (int i = 0; i < _CORDON_CTRL_MAX; i++)
		assert_false(c.ctrl[i].available);
}

static void test_mountinfo_v1_none_escaped(void **state)
{
	struct cordon_caps c;

	(void)state;
	parse("35 31 0:32 / /cg/mem\\040ory rw - cgroup cgroup rw,memory\n"
	      "36 31 0:33 / /cg/pids rw - cgroup none rw,pids,memory\n",
	      &c);
	assert_int_equal(c.cgroup_layout, CORDON_CGROUP_V1);
	assert_string_equal(c.cgroup2_mount, "");
	/* \040 is a space; the first mount of a controller wins. */
	assert_string_equal(c.ctrl[CORDON_CTRL_MEMORY].path, "/cg/mem ory");
	assert_string_equal(c.ctrl[CORDON_CTRL_PIDS].path, "/cg/pids");

	parse("", &c);
	assert_int_equal(c.cgroup_layout, CORDON_CGROUP_NONE);
	/* Garbage lines (no separator, too few fields, relative mount point)
	 * are skipped, not trusted. */
	parse("garbage\n1 2 3 - cgroup2 cgroup2 rw\n1 2 0:1 / relative rw - cgroup2 x rw\n"
	      "1 2 0:1 / /ok rw - cgroup2\n",
	      &c);
	assert_int_equal(c.cgroup_layout, CORDON_CGROUP_NONE);
	assert_string_equal(c.cgroup2_mount, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_landlock_rights_per_abi),
		cmocka_unit_test(test_json_full),
		cmocka_unit_test(test_json_nothing),
		cmocka_unit_test(test_json_partial),
		cmocka_unit_test(test_landlock_disabled_errno),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_rows_truncate),
		cmocka_unit_test(test_human_aligned),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_mountinfo_hybrid),
		cmocka_unit_test(test_mountinfo_v2),
		cmocka_unit_test(test_mountinfo_v1_none_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
