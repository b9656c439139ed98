/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe's report: the JSON document (schema in docs/kernel-matrix.md;
 * keys are stable, only ever added) and the aligned human table, both made
 * from the rows of the control-verdict table (probe-policy.c), so every
 * status and the overall verdict here are the table's. Everything here is a
 * pure function of struct cordon_caps, so unit tests drive it with synthetic
 * structs. */
#include <cap-ng.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>

#include "cleanup.h"
#include "probe-util.h"
#include "probe.h"
#include "syscall-compat.h"

/* clang-format off */
static const char *const fs_right_names[] = {
	"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
	"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block",
	"make_sym", "refer", "truncate", "ioctl_dev",
};
static const char *const net_right_names[] = { "bind_tcp", "connect_tcp" };
static const char *const scope_names[] = { "abstract_unix_socket", "signal" };
/* clang-format on */

/* ---- JSON ---------------------------------------------------------------- */

static const struct cordon_probe_row *row_find(const struct cordon_probe_row *rows, size_t n, const char *control)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].control, control) == 0)
			return &rows[i];
	return NULL;
}

static const char *row_status(const struct cordon_probe_row *rows, size_t n, const char *control)
{
	const struct cordon_probe_row *r = row_find(rows, n, control);

	return r ? cordon_probe_status_to_string(r->status) : "missing";
}

static json_t *mask_names(uint64_t mask, const char *const names[], size_t count)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < count && i < 64; i++)
		if ((mask & (1ULL << i)) && json_array_append_new(a, json_string(names[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* json_pack() with "o" steals the reference even on failure and returns NULL
 * if any part is NULL, so each section is built in one expression and an
 * out-of-memory anywhere yields NULL at the top. */
static json_t *json_landlock(const struct cordon_caps *c, const char *status)
{
	const char *err = c->landlock_abi > 0 ? NULL : strerrorname_np(c->landlock_errno);

	return json_pack("{s:s, s:i, s:s?, s:I, s:o, s:I, s:o, s:I, s:o, s:b}", "status", status, "abi",
			 c->landlock_abi, "errno", err, "fs_handled", (json_int_t)c->landlock_fs_handled, "fs_rights",
			 mask_names(c->landlock_fs_handled, fs_right_names, ELEMENTSOF(fs_right_names)), "net_handled",
			 (json_int_t)c->landlock_net_handled, "net_rights",
			 mask_names(c->landlock_net_handled, net_right_names, ELEMENTSOF(net_right_names)), "scoped",
			 (json_int_t)c->landlock_scoped, "scopes",
			 mask_names(c->landlock_scoped, scope_names, ELEMENTSOF(scope_names)), "log_flags",
			 c->landlock_log_flags);
}

static json_t *json_controllers(const struct cordon_caps *c, const struct cordon_probe_row *rows, size_t n)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	for (size_t i = 0; i < _CORDON_CTRL_MAX; i++) {
		const struct cordon_cgroup_ctrl_info *ci = &c->ctrl[i];
		char row[32];

		(void)snprintf(row, sizeof(row), "cgroup-%s", cordon_cgroup_ctrl_name(i));
		if (json_object_set_new(
			    o, cordon_cgroup_ctrl_name(i),
			    json_pack("{s:s, s:b, s:s?, s:s?, s:o}", "status", row_status(rows, n, row), "available",
				      ci->available, "hierarchy", ci->available ? (ci->v2 ? "v2" : "v1") : NULL, "path",
				      ci->available ? ci->path : NULL, "can_create",
				      (c->ctrl_untested & (1u << i)) ? json_null() : json_boolean(ci->can_create))) <
		    0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *json_controls(const struct cordon_probe_row *rows, size_t n)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s?}", "control", rows[i].control, "status",
						       cordon_probe_status_to_string(rows[i].status), "detail",
						       rows[i].detail, "consequence",
						       rows[i].consequence[0] ? rows[i].consequence : NULL)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *json_caps_missing(const struct cordon_caps *c)
{
	unsigned caps[64];
	size_t n = cordon_probe_caps_missing(c, caps, ELEMENTSOF(caps));
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char name[40];

		(void)snprintf(name, sizeof(name), "cap_%s", capng_capability_to_name(caps[i]) ?: "unknown");
		if (json_array_append_new(a, json_string(name)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The overall verdict and the controls behind it: every profile or
 * always-required control that is not available. */
static json_t *json_verdict(const struct cordon_probe_row *rows, size_t n)
{
	json_t *names = json_array();

	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind != CORDON_CONTROL_NEVER && rows[i].status != CORDON_PROBE_AVAILABLE &&
		    json_array_append_new(names, json_string(rows[i].control)) < 0) {
			json_decref(names);
			return NULL;
		}
	return json_pack("{s:s, s:o}", "status", cordon_kernel_verdict_to_string(cordon_probe_verdict(rows, n)),
			 "controls", names);
}

static json_t *json_lsms(const struct cordon_caps *c)
{
	json_t *a = json_array();
	char buf[sizeof(c->lsm)], *save = NULL;

	if (!a)
		return NULL;
	(void)snprintf(buf, sizeof(buf), "%s", c->lsm);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (json_array_append_new(a, json_string(t)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *probe_to_json_object(const struct cordon_caps *c)
{
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	size_t n = cordon_probe_rows(c, rows, ELEMENTSOF(rows));
	char eff[17], bnd[17];
	json_t *o;

	(void)snprintf(eff, sizeof(eff), "%016" PRIx64, c->caller_caps_effective);
	(void)snprintf(bnd, sizeof(bnd), "%016" PRIx64, c->caller_caps_bounding);

	o = json_pack("{s:i, s:{s:s}, s:o, s:{s:s, s:b, s:b, s:b, s:b, s:b, s:s, s:I}, s:{s:s, s:b, s:b},"
		      " s:{s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:o},"
		      " s:{s:s, s:s, s:s?, s:o, s:b, s:b},"
		      " s:{s:s, s:b, s:b, s:b, s:b, s:o},"
		      " s:{s:b, s:b, s:b, s:b, s:s, s:s, s:o},"
		      " s:o, s:{s:I}}",
		      "version", 1, "kernel", "release", c->kernel_release, "landlock",
		      json_landlock(c, row_status(rows, n, "landlock")), "seccomp", "status",
		      row_status(rows, n, "seccomp"), "filter", c->seccomp_filter, "user_notif", c->seccomp_user_notif,
		      "kill_process", c->seccomp_kill_process, "log", c->seccomp_log, "tsync", c->seccomp_tsync,
		      "native_arch", cordon_audit_arch_name(c->seccomp_native_arch), "native_audit_arch",
		      (json_int_t)c->seccomp_native_arch, "openat2", "status", row_status(rows, n, "openat2"),
		      "syscall", c->openat2, "beneath_refuses_escape", c->openat2_beneath, "namespaces", "status",
		      row_status(rows, n, "namespaces"), "user", !!(c->namespaces & CLONE_NEWUSER), "mount",
		      !!(c->namespaces & CLONE_NEWNS), "pid", !!(c->namespaces & CLONE_NEWPID), "net",
		      !!(c->namespaces & CLONE_NEWNET), "ipc", !!(c->namespaces & CLONE_NEWIPC), "uts",
		      !!(c->namespaces & CLONE_NEWUTS), "cgroup", !!(c->namespaces & CLONE_NEWCGROUP), "time",
		      !!(c->namespaces & CLONE_NEWTIME), "userns_unprivileged",
		      c->userns_untested ? json_null() : json_boolean(c->userns_unprivileged), "cgroup", "status",
		      row_status(rows, n, "cgroup"), "layout", cordon_cgroup_layout_name(c->cgroup_layout),
		      "cgroup2_mount", c->cgroup2_mount[0] ? c->cgroup2_mount : NULL, "controllers",
		      json_controllers(c, rows, n), "kill", c->cgroup_kill, "clone_into_cgroup", c->clone_into_cgroup,
		      "bpf", "status", row_status(rows, n, "bpf-cgroup-sock-addr"), "syscall", c->bpf_syscall,
		      "btf_vmlinux", c->btf_vmlinux, "cgroup_sock_addr", c->bpf_cgroup_sock_addr, "lsm", c->bpf_lsm,
		      "lsms", json_lsms(c), "process", "pidfd_open", c->pidfd_open, "close_range", c->close_range,
		      "no_new_privs", c->no_new_privs, "no_new_privs_set", c->no_new_privs_set, "caps_effective", eff,
		      "caps_bounding", bnd, "caps_missing", json_caps_missing(c), "controls", json_controls(rows, n),
		      "probe", "duration_us", (json_int_t)c->probe_usec);
	/* Last, so the keys before it keep their order. */
	if (o && json_object_set_new(o, "verdict", json_verdict(rows, n)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *cordon_probe_to_json(const struct cordon_caps *c)
{
	json_t *o = probe_to_json_object(c);
	char *s;

	if (!o)
		return NULL;
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

int cordon_probe_write_json(const struct cordon_caps *c, FILE *out)
{
	_cleanup_free_ char *s = cordon_probe_to_json(c);

	if (!s)
		return -ENOMEM;
	if (fputs(s, out) < 0 || fputc('\n', out) < 0 || fflush(out) != 0)
		return negative_errno();
	return 0;
}

/* ---- human table --------------------------------------------------------- */

int cordon_probe_write_human(const struct cordon_caps *c, FILE *out)
{
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	size_t n = cordon_probe_rows(c, rows, ELEMENTSOF(rows));
	int wc = (int)strlen("CONTROL"), wd = (int)strlen("DETAIL"), ws = (int)strlen("available");
	unsigned counts[3] = { 0 };

	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(rows[i].control), d = (int)strlen(rows[i].detail);

		wc = l > wc ? l : wc;
		wd = d > wd ? d : wd;
		counts[rows[i].status]++;
	}

	fprintf(out, "Linux %s: %u available, %u degraded, %u missing (probe took %.1f ms)\n\n",
		c->kernel_release[0] ? c->kernel_release : "(unknown)", counts[CORDON_PROBE_AVAILABLE],
		counts[CORDON_PROBE_DEGRADED], counts[CORDON_PROBE_MISSING], (double)c->probe_usec / 1000.0);
	fprintf(out, "%-*s  %-*s  %-*s  %s\n", wc, "CONTROL", ws, "STATUS", wd, "DETAIL", "CONSEQUENCE");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%-*s  %-*s  %-*s  %s\n", wc, rows[i].control, ws,
			cordon_probe_status_to_string(rows[i].status), wd, rows[i].detail,
			rows[i].consequence[0] ? rows[i].consequence : "-");
	if (fflush(out) != 0 || ferror(out))
		return negative_errno();
	return 0;
}
