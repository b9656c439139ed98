/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe's report: per-control verdicts, the JSON document (schema in
 * docs/kernel-matrix.md; keys are stable, only ever added) and the aligned
 * human table. Everything here is a pure function of struct cordon_caps, so
 * unit tests drive it with synthetic structs. */
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

static const struct {
	unsigned long flag;
	const char *name;
	const char *consequence; /* when the namespace type is missing */
} ns_table[] = {
	{ CLONE_NEWUSER,   "user",   "connectors run as a host uid with no uid mapping" },
	{ CLONE_NEWNS,     "mount",  "the filesystem view rests on Landlock alone" },
	{ CLONE_NEWPID,    "pid",    "connectors see and may signal host processes of their uid" },
	{ CLONE_NEWNET,    "net",    "network isolation rests on Landlock TCP rules and the eBPF policy" },
	{ CLONE_NEWIPC,    "ipc",    "host SysV IPC and POSIX message queues are visible" },
	{ CLONE_NEWUTS,    "uts",    "the host name is shared" },
	{ CLONE_NEWCGROUP, "cgroup", "host cgroup paths are visible" },
	{ CLONE_NEWTIME,   "time",   "none (cordon does not virtualise clocks)" },
};

static const char *const ctrl_missing[_CORDON_CTRL_MAX] = {
	[CORDON_CTRL_MEMORY] = "no memory limit: a connector can exhaust host memory",
	[CORDON_CTRL_PIDS]   = "no pids limit: a connector can fork without bound (RLIMIT_NPROC per uid still applies)",
	[CORDON_CTRL_CPU]    = "no CPU limit: a connector can saturate every CPU",
	[CORDON_CTRL_CPUSET] = "no CPU pinning: connectors may run on every CPU",
	[CORDON_CTRL_IO]     = "no I/O control: a connector can saturate block devices",
};

/* Capabilities cordon-launch needs to build a sandbox, and what for. */
static const struct {
	unsigned cap;
	const char *why;
} needed_caps[] = {
	{ CAP_SYS_ADMIN, "namespaces, mounts" },
	{ CAP_SETUID,    "switching to the connector uid" },
	{ CAP_SETGID,    "switching to the connector gid" },
	{ CAP_SETPCAP,   "dropping the bounding set" },
	{ CAP_NET_ADMIN, "attaching cgroup BPF programs" },
	{ CAP_KILL,      "signalling connectors that run as other uids" },
	{ CAP_BPF,       "loading BPF programs" },
};
/* clang-format on */

const char *cordon_probe_status_to_string(enum cordon_probe_status s)
{
	switch (s) {
	case CORDON_PROBE_AVAILABLE:
		return "available";
	case CORDON_PROBE_DEGRADED:
		return "degraded";
	case CORDON_PROBE_MISSING:
		return "missing";
	}
	return NULL;
}

static const char *layout_name(enum cordon_cgroup_layout l)
{
	switch (l) {
	case CORDON_CGROUP_NONE:
		return "none";
	case CORDON_CGROUP_V1:
		return "v1";
	case CORDON_CGROUP_HYBRID:
		return "hybrid";
	case CORDON_CGROUP_V2:
		return "v2";
	}
	return "unknown";
}

static const char *arch_name(uint32_t a)
{
	switch (a) {
	case AUDIT_ARCH_X86_64:
		return "x86_64";
	case AUDIT_ARCH_I386:
		return "x86";
	case AUDIT_ARCH_AARCH64:
		return "aarch64";
	case AUDIT_ARCH_ARM:
		return "arm";
	case AUDIT_ARCH_RISCV64:
		return "riscv64";
	case AUDIT_ARCH_PPC64LE:
		return "ppc64le";
	case AUDIT_ARCH_S390X:
		return "s390x";
	}
	return "unknown";
}

static _printf_(3, 4) void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* Appends "sep item" (no separator before the first item). */
static void append_item(char *buf, size_t size, const char *sep, const char *item)
{
	appendf(buf, size, "%s%s", buf[0] ? sep : "", item);
}

static struct cordon_probe_row *row_add(struct cordon_probe_row *rows, size_t *n, size_t max, const char *control,
					enum cordon_probe_status st)
{
	static _Thread_local struct cordon_probe_row sink;
	struct cordon_probe_row *r;

	/* Past max the row goes to a scratch slot, so callers need no checks. */
	r = *n < max ? &rows[(*n)++] : &sink;
	*r = (struct cordon_probe_row){ .control = control, .status = st };
	return r;
}

static void rows_landlock(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	struct cordon_probe_row *r;
	int abi = c->landlock_abi;

	if (abi <= 0) {
		r = row_add(rows, n, max, "landlock", CORDON_PROBE_MISSING);
		if (c->landlock_errno == ENOSYS)
			appendf(r->detail, sizeof(r->detail), "not built into this kernel (ENOSYS)");
		else if (c->landlock_errno == EOPNOTSUPP)
			appendf(r->detail, sizeof(r->detail), "built but disabled at boot (EOPNOTSUPP; see lsm=)");
		else
			appendf(r->detail, sizeof(r->detail), "unavailable (%s)",
				strerrorname_np(c->landlock_errno) ?: "unknown error");
		appendf(r->consequence, sizeof(r->consequence),
			"no Landlock: filesystem confinement rests on the mount namespace alone");
	} else if (abi < 5) {
		char miss[96] = "";

		if (abi < 2)
			append_item(miss, sizeof(miss), ", ", "refer");
		if (abi < 3)
			append_item(miss, sizeof(miss), ", ", "truncate");
		append_item(miss, sizeof(miss), ", ", "ioctl_dev");
		r = row_add(rows, n, max, "landlock", CORDON_PROBE_DEGRADED);
		appendf(r->detail, sizeof(r->detail), "ABI %d, %d filesystem rights", abi,
			__builtin_popcountll(c->landlock_fs_handled));
		appendf(r->consequence, sizeof(r->consequence),
			"Landlock cannot control %s; the mount namespace still limits what is visible", miss);
	} else {
		r = row_add(rows, n, max, "landlock", CORDON_PROBE_AVAILABLE);
		appendf(r->detail, sizeof(r->detail), "ABI %d, %d filesystem rights", abi,
			__builtin_popcountll(c->landlock_fs_handled));
	}

	r = row_add(rows, n, max, "landlock-net",
		    c->landlock_net_handled ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->landlock_net_handled)
		appendf(r->detail, sizeof(r->detail), "TCP bind and connect rules");
	else {
		appendf(r->detail, sizeof(r->detail), "needs ABI 4");
		appendf(r->consequence, sizeof(r->consequence),
			"no Landlock TCP rules: egress rests on the network namespace and the eBPF policy");
	}

	r = row_add(rows, n, max, "landlock-scope", c->landlock_scoped ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->landlock_scoped)
		appendf(r->detail, sizeof(r->detail), "abstract unix sockets and signals");
	else {
		appendf(r->detail, sizeof(r->detail), "needs ABI 6");
		appendf(r->consequence, sizeof(r->consequence),
			"no scoping: abstract-socket and signal isolation rests on the net and pid namespaces");
	}

	r = row_add(rows, n, max, "landlock-log",
		    c->landlock_log_flags ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->landlock_log_flags)
		appendf(r->detail, sizeof(r->detail), "restrict_self logging flags");
	else {
		appendf(r->detail, sizeof(r->detail), "needs ABI 7");
		appendf(r->consequence, sizeof(r->consequence),
			"Landlock denials are audited with kernel defaults only; confinement is unchanged");
	}
}

static void rows_seccomp(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	struct cordon_probe_row *r;
	char miss[96] = "";

	if (!c->seccomp_filter) {
		r = row_add(rows, n, max, "seccomp", CORDON_PROBE_MISSING);
		appendf(r->detail, sizeof(r->detail), "no filter mode");
		appendf(r->consequence, sizeof(r->consequence),
			"no seccomp: the kernel's whole syscall surface stays reachable from a connector");
		return;
	}
	if (!c->seccomp_kill_process)
		append_item(miss, sizeof(miss), ", ", "KILL_PROCESS");
	if (!c->seccomp_log)
		append_item(miss, sizeof(miss), ", ", "LOG");
	if (!c->seccomp_user_notif)
		append_item(miss, sizeof(miss), ", ", "USER_NOTIF");
	if (!c->seccomp_tsync)
		append_item(miss, sizeof(miss), ", ", "TSYNC");
	r = row_add(rows, n, max, "seccomp", miss[0] ? CORDON_PROBE_DEGRADED : CORDON_PROBE_AVAILABLE);
	appendf(r->detail, sizeof(r->detail), "filter, native arch %s", arch_name(c->seccomp_native_arch));
	if (miss[0]) {
		appendf(r->detail, sizeof(r->detail), "; no %s", miss);
		if (!c->seccomp_kill_process)
			append_item(r->consequence, sizeof(r->consequence), "; ",
				    "action kill ends only the offending thread");
		if (!c->seccomp_log)
			append_item(r->consequence, sizeof(r->consequence), "; ", "action log is enforced as errno");
		if (!c->seccomp_user_notif || !c->seccomp_tsync)
			append_item(r->consequence, sizeof(r->consequence), "; ",
				    "filters still apply (cordon installs them single-threaded, before exec)");
	}
}

static void rows_namespaces(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	struct cordon_probe_row *r;
	char have[96] = "", miss[96] = "", cons[240] = "";

	for (size_t i = 0; i < ELEMENTSOF(ns_table); i++)
		if (c->namespaces & ns_table[i].flag)
			append_item(have, sizeof(have), ",", ns_table[i].name);
		else {
			append_item(miss, sizeof(miss), ",", ns_table[i].name);
			appendf(cons, sizeof(cons), "%s%s: %s", cons[0] ? "; " : "", ns_table[i].name,
				ns_table[i].consequence);
		}

	if (!have[0]) {
		r = row_add(rows, n, max, "namespaces", CORDON_PROBE_MISSING);
		appendf(r->detail, sizeof(r->detail), "none can be created");
		appendf(r->consequence, sizeof(r->consequence),
			"no namespaces: connectors see the host's mounts, processes and network");
	} else {
		r = row_add(rows, n, max, "namespaces", miss[0] ? CORDON_PROBE_DEGRADED : CORDON_PROBE_AVAILABLE);
		appendf(r->detail, sizeof(r->detail), "%s", have);
		if (miss[0]) {
			appendf(r->detail, sizeof(r->detail), "; missing %s", miss);
			appendf(r->consequence, sizeof(r->consequence), "%s", cons);
		}
	}

	r = row_add(rows, n, max, "userns-unprivileged",
		    c->userns_unprivileged ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->userns_unprivileged)
		appendf(r->detail, sizeof(r->detail), "an unprivileged uid created a user namespace");
	else {
		appendf(r->detail, sizeof(r->detail), "an unprivileged uid could not create a user namespace");
		appendf(r->consequence, sizeof(r->consequence),
			"no rootless mode: cordon-launch needs CAP_SYS_ADMIN to build sandboxes");
	}
}

static void rows_cgroup(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	static const char *const row_names[_CORDON_CTRL_MAX] = {
		[CORDON_CTRL_MEMORY] = "cgroup-memory", [CORDON_CTRL_PIDS] = "cgroup-pids",
		[CORDON_CTRL_CPU] = "cgroup-cpu",	[CORDON_CTRL_CPUSET] = "cgroup-cpuset",
		[CORDON_CTRL_IO] = "cgroup-io",
	};
	struct cordon_probe_row *r;

	switch (c->cgroup_layout) {
	case CORDON_CGROUP_V2:
	case CORDON_CGROUP_HYBRID:
		r = row_add(rows, n, max, "cgroup", CORDON_PROBE_AVAILABLE);
		appendf(r->detail, sizeof(r->detail), "%s, cgroup2 at %s", layout_name(c->cgroup_layout),
			c->cgroup2_mount);
		break;
	case CORDON_CGROUP_V1:
		r = row_add(rows, n, max, "cgroup", CORDON_PROBE_DEGRADED);
		appendf(r->detail, sizeof(r->detail), "v1 only, no cgroup2 hierarchy");
		appendf(r->consequence, sizeof(r->consequence),
			"no cgroup2: no cgroup.kill, no CLONE_INTO_CGROUP, no eBPF egress policy; v1 limits still "
			"apply");
		break;
	default:
		r = row_add(rows, n, max, "cgroup", CORDON_PROBE_MISSING);
		appendf(r->detail, sizeof(r->detail), "no cgroup hierarchy mounted");
		appendf(r->consequence, sizeof(r->consequence),
			"no cgroups: no resource limits, and teardown must signal each process");
		break;
	}

	for (size_t i = 0; i < _CORDON_CTRL_MAX; i++) {
		const struct cordon_cgroup_ctrl_info *ci = &c->ctrl[i];

		if (!ci->available) {
			r = row_add(rows, n, max, row_names[i], CORDON_PROBE_MISSING);
			appendf(r->detail, sizeof(r->detail), "not mounted or not in the kernel");
			appendf(r->consequence, sizeof(r->consequence), "%s", ctrl_missing[i]);
			continue;
		}
		r = row_add(rows, n, max, row_names[i],
			    ci->can_create ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_DEGRADED);
		appendf(r->detail, sizeof(r->detail), "%s at %s", ci->v2 ? "v2" : "v1", ci->path);
		if (!ci->can_create) {
			appendf(r->detail, sizeof(r->detail), ", %s",
				ci->v2 ? "not enabled for children" : "cannot create a child");
			appendf(r->consequence, sizeof(r->consequence), "%s", ctrl_missing[i]);
		}
	}

	r = row_add(rows, n, max, "cgroup-kill", c->cgroup_kill ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->cgroup_kill)
		appendf(r->detail, sizeof(r->detail), "cgroup.kill");
	else {
		appendf(r->detail, sizeof(r->detail), "no cgroup.kill (needs cgroup2, Linux 5.14)");
		appendf(r->consequence, sizeof(r->consequence),
			"teardown freezes the cgroup and signals each process instead of one atomic kill");
	}

	r = row_add(rows, n, max, "clone-into-cgroup",
		    c->clone_into_cgroup ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->clone_into_cgroup)
		appendf(r->detail, sizeof(r->detail), "clone3 placed a child in a cgroup2 directory");
	else {
		appendf(r->detail, sizeof(r->detail), "clone3(CLONE_INTO_CGROUP) unavailable");
		appendf(r->consequence, sizeof(r->consequence),
			"the child joins its cgroup itself after clone, before it runs connector code");
	}
}

static void rows_bpf(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	struct cordon_probe_row *r;

	r = row_add(rows, n, max, "bpf", c->bpf_syscall ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->bpf_syscall)
		appendf(r->detail, sizeof(r->detail), "bpf() usable");
	else {
		appendf(r->detail, sizeof(r->detail), "bpf() absent or refused");
		appendf(r->consequence, sizeof(r->consequence),
			"no eBPF: address allowlists cannot be enforced (profiles requiring network are refused)");
	}

	r = row_add(rows, n, max, "bpf-cgroup-sock-addr",
		    c->bpf_cgroup_sock_addr ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->bpf_cgroup_sock_addr)
		appendf(r->detail, sizeof(r->detail), "connect4 program attached to and detached from a cgroup");
	else {
		appendf(r->detail, sizeof(r->detail), "cannot attach sock_addr programs to a cgroup2 directory");
		appendf(r->consequence, sizeof(r->consequence),
			"no eBPF egress policy: allowlists rest on Landlock TCP port rules and the network namespace");
	}

	r = row_add(rows, n, max, "btf", c->btf_vmlinux ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->btf_vmlinux)
		appendf(r->detail, sizeof(r->detail), "/sys/kernel/btf/vmlinux");
	else {
		appendf(r->detail, sizeof(r->detail), "no /sys/kernel/btf/vmlinux");
		appendf(r->consequence, sizeof(r->consequence),
			"BPF programs that need kernel type information (CO-RE) cannot load");
	}

	r = row_add(rows, n, max, "bpf-lsm", c->bpf_lsm ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	if (c->lsm[0])
		appendf(r->detail, sizeof(r->detail), "LSMs: %s", c->lsm);
	else
		appendf(r->detail, sizeof(r->detail), "LSM list unreadable (no securityfs)");
	if (!c->bpf_lsm)
		appendf(r->consequence, sizeof(r->consequence),
			"no BPF LSM hooks: no root guard (bpf-lsm-cgroup); Landlock and seccomp still enforce");

	r = row_add(rows, n, max, "bpf-lsm-cgroup", c->bpf_lsm_cgroup ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	appendf(r->detail, sizeof(r->detail), "%s", cordon_probe_lsm_cgroup_reason(c));
	if (!c->bpf_lsm_cgroup)
		appendf(r->consequence, sizeof(r->consequence),
			"no root guard: a connector can change the permission bits of its read-write root directory "
			"(profiles requiring root_guard are refused)");
}

static void rows_process(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t *n, size_t max)
{
	struct cordon_probe_row *r;
	char miss[160] = "", why[200] = "";

	r = row_add(rows, n, max, "pidfd", c->pidfd_open ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	appendf(r->detail, sizeof(r->detail), "pidfd_open %s", c->pidfd_open ? "works" : "unavailable");
	if (!c->pidfd_open)
		appendf(r->consequence, sizeof(r->consequence),
			"connectors are tracked by pid, so signals could race with pid reuse");

	r = row_add(rows, n, max, "close-range", c->close_range ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	appendf(r->detail, sizeof(r->detail), "close_range %s", c->close_range ? "works" : "unavailable");
	if (!c->close_range)
		appendf(r->consequence, sizeof(r->consequence),
			"inherited descriptors are closed one at a time before exec (same result, slower)");

	r = row_add(rows, n, max, "no-new-privs", c->no_new_privs ? CORDON_PROBE_AVAILABLE : CORDON_PROBE_MISSING);
	appendf(r->detail, sizeof(r->detail), "%s%s", c->no_new_privs ? "PR_SET_NO_NEW_PRIVS" : "unsupported",
		c->no_new_privs_set ? " (already set on the caller)" : "");
	if (!c->no_new_privs)
		appendf(r->consequence, sizeof(r->consequence),
			"setuid files could regain privileges inside the sandbox: launch is refused");

	for (size_t i = 0; i < ELEMENTSOF(needed_caps); i++) {
		unsigned cap = needed_caps[i].cap;

		/* A capability the kernel does not know (CAP_BPF before 5.8)
		 * is covered by CAP_SYS_ADMIN. */
		if (!(c->caller_caps_bounding & (1ULL << cap)) && cap == CAP_BPF)
			continue;
		if (!(c->caller_caps_effective & (1ULL << cap))) {
			char name[32];

			(void)snprintf(name, sizeof(name), "cap_%s", capng_capability_to_name(cap) ?: "unknown");
			append_item(miss, sizeof(miss), ",", name);
			append_item(why, sizeof(why), ", ", needed_caps[i].why);
		}
	}
	r = row_add(rows, n, max, "capabilities", miss[0] ? CORDON_PROBE_DEGRADED : CORDON_PROBE_AVAILABLE);
	appendf(r->detail, sizeof(r->detail), "effective %016" PRIx64, c->caller_caps_effective);
	if (miss[0]) {
		appendf(r->detail, sizeof(r->detail), "; missing %s", miss);
		appendf(r->consequence, sizeof(r->consequence), "cordon-launch cannot do: %s", why);
	}
}

size_t cordon_probe_rows(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t max)
{
	size_t n = 0;

	rows_landlock(c, rows, &n, max);
	rows_seccomp(c, rows, &n, max);

	{
		struct cordon_probe_row *r;

		if (c->openat2 && c->openat2_beneath)
			r = row_add(rows, &n, max, "openat2", CORDON_PROBE_AVAILABLE);
		else if (c->openat2)
			r = row_add(rows, &n, max, "openat2", CORDON_PROBE_DEGRADED);
		else
			r = row_add(rows, &n, max, "openat2", CORDON_PROBE_MISSING);
		appendf(r->detail, sizeof(r->detail), "%s",
			c->openat2_beneath ? "RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS refused an escape"
			: c->openat2	   ? "syscall present, escape not refused as expected"
					   : "syscall unavailable");
		if (!c->openat2_beneath)
			appendf(r->consequence, sizeof(r->consequence),
				"paths are resolved component by component with O_NOFOLLOW (slower, same policy)");
	}

	rows_namespaces(c, rows, &n, max);
	rows_cgroup(c, rows, &n, max);
	rows_bpf(c, rows, &n, max);
	rows_process(c, rows, &n, max);
	return n;
}

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
		if (json_object_set_new(o, cordon_cgroup_ctrl_name(i),
					json_pack("{s:s, s:b, s:s?, s:s?, s:b}", "status", row_status(rows, n, row),
						  "available", ci->available, "hierarchy",
						  ci->available ? (ci->v2 ? "v2" : "v1") : NULL, "path",
						  ci->available ? ci->path : NULL, "can_create", ci->can_create)) < 0) {
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
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(needed_caps); i++) {
		unsigned cap = needed_caps[i].cap;
		char name[40];

		if (!(c->caller_caps_bounding & (1ULL << cap)) && cap == CAP_BPF)
			continue;
		if (c->caller_caps_effective & (1ULL << cap))
			continue;
		(void)snprintf(name, sizeof(name), "cap_%s", capng_capability_to_name(cap) ?: "unknown");
		if (json_array_append_new(a, json_string(name)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
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

	(void)snprintf(eff, sizeof(eff), "%016" PRIx64, c->caller_caps_effective);
	(void)snprintf(bnd, sizeof(bnd), "%016" PRIx64, c->caller_caps_bounding);

	return json_pack("{s:i, s:{s:s}, s:o, s:{s:s, s:b, s:b, s:b, s:b, s:b, s:s, s:I}, s:{s:s, s:b, s:b},"
			 " s:{s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b},"
			 " s:{s:s, s:s, s:s?, s:o, s:b, s:b},"
			 " s:{s:s, s:b, s:b, s:b, s:b, s:o},"
			 " s:{s:b, s:b, s:b, s:b, s:s, s:s, s:o},"
			 " s:o, s:{s:I}}",
			 "version", 1, "kernel", "release", c->kernel_release, "landlock",
			 json_landlock(c, row_status(rows, n, "landlock")), "seccomp", "status",
			 row_status(rows, n, "seccomp"), "filter", c->seccomp_filter, "user_notif",
			 c->seccomp_user_notif, "kill_process", c->seccomp_kill_process, "log", c->seccomp_log, "tsync",
			 c->seccomp_tsync, "native_arch", arch_name(c->seccomp_native_arch), "native_audit_arch",
			 (json_int_t)c->seccomp_native_arch, "openat2", "status", row_status(rows, n, "openat2"),
			 "syscall", c->openat2, "beneath_refuses_escape", c->openat2_beneath, "namespaces", "status",
			 row_status(rows, n, "namespaces"), "user", !!(c->namespaces & CLONE_NEWUSER), "mount",
			 !!(c->namespaces & CLONE_NEWNS), "pid", !!(c->namespaces & CLONE_NEWPID), "net",
			 !!(c->namespaces & CLONE_NEWNET), "ipc", !!(c->namespaces & CLONE_NEWIPC), "uts",
			 !!(c->namespaces & CLONE_NEWUTS), "cgroup", !!(c->namespaces & CLONE_NEWCGROUP), "time",
			 !!(c->namespaces & CLONE_NEWTIME), "userns_unprivileged", c->userns_unprivileged, "cgroup",
			 "status", row_status(rows, n, "cgroup"), "layout", layout_name(c->cgroup_layout),
			 "cgroup2_mount", c->cgroup2_mount[0] ? c->cgroup2_mount : NULL, "controllers",
			 json_controllers(c, rows, n), "kill", c->cgroup_kill, "clone_into_cgroup",
			 c->clone_into_cgroup, "bpf", "status", row_status(rows, n, "bpf-cgroup-sock-addr"), "syscall",
			 c->bpf_syscall, "btf_vmlinux", c->btf_vmlinux, "cgroup_sock_addr", c->bpf_cgroup_sock_addr,
			 "lsm", c->bpf_lsm, "lsms", json_lsms(c), "process", "pidfd_open", c->pidfd_open, "close_range",
			 c->close_range, "no_new_privs", c->no_new_privs, "no_new_privs_set", c->no_new_privs_set,
			 "caps_effective", eff, "caps_bounding", bnd, "caps_missing", json_caps_missing(c), "controls",
			 json_controls(rows, n), "probe", "duration_us", (json_int_t)c->probe_usec);
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
