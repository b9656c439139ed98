/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control-verdict table: one entry per control the probe reports, in
 * report order. An entry names the control, says what it means for a launch
 * when it is not available (its kind: a profile control, refused when the
 * profile lists it in sandbox.require and otherwise run degraded; a control
 * every launch needs; or one that never refuses on its own) and has one row
 * function that gives its state (available, degraded, missing), the detail
 * (what the kernel offers, or what it lacks) and the consequence (what that
 * means for a connector), from the capability struct and the profile.
 *
 * Everything that decides "control missing -> refuse or degrade" reads this
 * table, so none of them can disagree:
 *  - the probe's report: cordon_probe_rows() evaluates every entry for no
 *    profile (a profile control's state is then the worst any profile can
 *    meet on this kernel); the JSON `controls` array, the per-section
 *    "status" keys, the human table and the overall `verdict` that cordond's
 *    /health reads (cordon_probe_verdict()) are made from those rows;
 *  - cordon_control_refuse(), the one place that refuses a launch: the
 *    always-required entries, then the profile controls the profile
 *    requires. cordon_probe_check_profile() (the probe's verdict for a
 *    profile) and spawn_decide_plan() (spawn-report.c) call it.
 * docs/kernel-matrix.md ("Controls") has one row per entry, in this order;
 * the unit test test-kernel-matrix-doc checks the names and kinds.
 *
 * Profile controls are named as in sandbox.require (root_guard keeps its
 * underscore); the others as the probe's JSON always named them.
 *
 * A new control is one entry in `table` (name, kind, profile control bit,
 * refusal errno) and its row function; the report, the verdict, /health and
 * the refusal pick it up from there. */
#include <cap-ng.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "diag.h"
#include "probe-util.h"
#include "probe.h"
#include "profile.h"

/* clang-format off */
static const struct {
	unsigned long flag;
	const char *name;
	const char *consequence; /* when the sandbox runs without it */
} ns_table[] = {
	{ CLONE_NEWUSER,   "user",   "id-mapped read-write roots cannot be set up (such a launch fails at step idmap)" },
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

/* Capabilities cordon-launch needs to build a sandbox, and what for; the
 * first three build every sandbox. */
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
#define SANDBOX_CAPS 3
/* clang-format on */

const char *cordon_cgroup_layout_name(enum cordon_cgroup_layout l)
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

const char *cordon_audit_arch_name(uint32_t a)
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

/* A needed capability the caller lacks. One the kernel does not know
 * (CAP_BPF before 5.8) is covered by CAP_SYS_ADMIN. */
static bool cap_lacking(const struct cordon_caps *c, unsigned cap)
{
	if (!(c->caller_caps_bounding & (1ULL << cap)) && cap == CAP_BPF)
		return false;
	return !(c->caller_caps_effective & (1ULL << cap));
}

size_t cordon_probe_caps_missing(const struct cordon_caps *c, unsigned *ret_caps, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(needed_caps); i++)
		if (cap_lacking(c, needed_caps[i].cap) && n < max)
			ret_caps[n++] = needed_caps[i].cap;
	return n;
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

#define DETAIL(r, ...)	    appendf((r)->detail, sizeof((r)->detail), __VA_ARGS__)
#define CONSEQUENCE(r, ...) appendf((r)->consequence, sizeof((r)->consequence), __VA_ARGS__)

/* ---- row functions --------------------------------------------------------
 * Each fills r->detail (always) and r->consequence (exactly when the state
 * is not available) and returns the state. p is the profile, or NULL for
 * the kernel on its own: then every profile choice counts at once (both
 * seccomp actions that need a kernel feature, both network modes, a limit
 * for every controller), so the state is the worst any profile meets. For
 * a profile control that is missing, the detail is the reason a required
 * launch is refused with ("required control '<name>' is missing: <detail>");
 * for an always-required one, it is the whole refusal. */

typedef enum cordon_probe_status (*row_fn)(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					   struct cordon_probe_row *r);

static enum cordon_probe_status row_landlock(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					     struct cordon_probe_row *r)
{
	int abi = c->landlock_abi;
	char miss[96] = "";

	(void)p;
	(void)arg;
	if (abi <= 0) {
		DETAIL(r, "Landlock is unavailable (%s)",
		       c->landlock_errno == ENOSYS	  ? "not built into this kernel"
		       : c->landlock_errno == EOPNOTSUPP ? "disabled at boot"
							 : strerrorname_np(c->landlock_errno) ?: "not usable");
		CONSEQUENCE(r, "no Landlock: filesystem confinement rests on the mount namespace alone");
		return CORDON_PROBE_MISSING;
	}
	DETAIL(r, "ABI %d, %d filesystem rights", abi, __builtin_popcountll(c->landlock_fs_handled));
	if (abi >= 6)
		return CORDON_PROBE_AVAILABLE;
	/* What the launcher asks of ABI 6 (spawn-report.c: every right and
	 * scope a current kernel knows) and this ABI cannot express. */
	if (abi < 2)
		append_item(miss, sizeof(miss), ", ", "refer");
	if (abi < 3)
		append_item(miss, sizeof(miss), ", ", "truncate");
	if (abi < 4)
		append_item(miss, sizeof(miss), ", ", "TCP ports");
	if (abi < 5)
		append_item(miss, sizeof(miss), ", ", "ioctl_dev");
	append_item(miss, sizeof(miss), ", ", "abstract sockets and signals");
	DETAIL(r, "; lacks %s (ABI 6)", miss);
	CONSEQUENCE(r, "Landlock cannot control %s; the mount namespace still limits what is visible", miss);
	return CORDON_PROBE_DEGRADED;
}

static enum cordon_probe_status row_landlock_net(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						 struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->landlock_net_handled) {
		DETAIL(r, "TCP bind and connect rules");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "needs ABI 4");
	CONSEQUENCE(r, "no Landlock TCP rules: egress rests on the network namespace and the eBPF policy");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_landlock_scope(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						   struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->landlock_scoped) {
		DETAIL(r, "abstract unix sockets and signals");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "needs ABI 6");
	CONSEQUENCE(r, "no scoping: abstract-socket and signal isolation rests on the net and pid namespaces");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_landlock_log(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						 struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->landlock_log_flags) {
		DETAIL(r, "restrict_self logging flags");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "needs ABI 7");
	CONSEQUENCE(r, "Landlock denials are audited with kernel defaults only; confinement is unchanged");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_seccomp(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					    struct cordon_probe_row *r)
{
	bool kill = !p || p->seccomp_action == CORDON_SECCOMP_KILL;
	bool log = !p || p->seccomp_action == CORDON_SECCOMP_LOG;
	char used[64] = "", unused[64] = "";

	(void)arg;
	if (!c->seccomp_filter) {
		DETAIL(r, "seccomp filter mode is unavailable");
		CONSEQUENCE(r, "no seccomp: the kernel's whole syscall surface stays reachable from a connector");
		return CORDON_PROBE_MISSING;
	}
	/* KILL_PROCESS and LOG serve the profile actions kill and log;
	 * USER_NOTIF and TSYNC are not used (cordon installs its filter
	 * single-threaded, before exec). */
	if (!c->seccomp_kill_process)
		append_item(kill ? used : unused, sizeof(used), ", ", "KILL_PROCESS");
	if (!c->seccomp_log)
		append_item(log ? used : unused, sizeof(used), ", ", "LOG");
	if (!c->seccomp_user_notif)
		append_item(unused, sizeof(unused), ", ", "USER_NOTIF");
	if (!c->seccomp_tsync)
		append_item(unused, sizeof(unused), ", ", "TSYNC");
	DETAIL(r, "filter, native arch %s", cordon_audit_arch_name(c->seccomp_native_arch));
	if (used[0])
		DETAIL(r, "; no %s", used);
	if (unused[0])
		DETAIL(r, "; no %s (unused)", unused);
	if (!used[0])
		return CORDON_PROBE_AVAILABLE;
	if (kill && !c->seccomp_kill_process)
		append_item(r->consequence, sizeof(r->consequence), "; ", "action kill ends only the offending thread");
	if (log && !c->seccomp_log)
		append_item(r->consequence, sizeof(r->consequence), "; ", "action log is enforced as errno");
	return CORDON_PROBE_DEGRADED;
}

static enum cordon_probe_status row_openat2(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					    struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->openat2_beneath) {
		DETAIL(r, "RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS refused an escape");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "%s", c->openat2 ? "syscall present, escape not refused as expected" : "syscall unavailable");
	CONSEQUENCE(r, "paths are resolved component by component with O_NOFOLLOW (slower, same policy)");
	return c->openat2 ? CORDON_PROBE_DEGRADED : CORDON_PROBE_MISSING;
}

/* "the pid, net namespaces cannot be created" for the types in bits. */
static void ns_missing(unsigned long bits, char *why, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(ns_table); i++)
		if (bits & ns_table[i].flag)
			appendf(why, size, "%s%s", n++ ? ", " : "the ", ns_table[i].name);
	appendf(why, size, " namespace%s cannot be created", n > 1 ? "s" : "");
}

/* Namespaces every sandbox is cloned into: mount, pid, ipc, uts and cgroup,
 * and net unless the profile allows egress (spawn.c's clone3 flags). The
 * user namespace is used when present (id-mapped read-write roots); time is
 * unused. */
static enum cordon_probe_status row_namespaces(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					       struct cordon_probe_row *r)
{
	unsigned long need = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	unsigned long want = CLONE_NEWUSER;
	char have[96] = "", miss[96] = "";

	(void)arg;
	if (!p || p->net_mode == CORDON_NET_NONE)
		need |= CLONE_NEWNET;
	/* What each type the sandbox goes without means. */
	for (size_t i = 0; i < ELEMENTSOF(ns_table); i++)
		if ((need | want) & ~c->namespaces & ns_table[i].flag)
			appendf(r->consequence, sizeof(r->consequence), "%s%s: %s", r->consequence[0] ? "; " : "",
				ns_table[i].name, ns_table[i].consequence);
	if (need & ~c->namespaces) {
		ns_missing(need & ~c->namespaces, r->detail, sizeof(r->detail));
		return CORDON_PROBE_MISSING;
	}
	for (size_t i = 0; i < ELEMENTSOF(ns_table); i++)
		append_item(c->namespaces & ns_table[i].flag ? have : miss, sizeof(have), ",", ns_table[i].name);
	DETAIL(r, "%s", have);
	if (miss[0])
		DETAIL(r, "; missing %s%s", miss, want & ~c->namespaces ? "" : " (unused)");
	return want & ~c->namespaces ? CORDON_PROBE_DEGRADED : CORDON_PROBE_AVAILABLE;
}

static enum cordon_probe_status row_userns_unprivileged(const struct cordon_caps *c, const struct cordon_profile *p,
							int arg, struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->userns_untested) {
		DETAIL(r, "not tried (a launch's probe)");
		CONSEQUENCE(r, "unknown whether a rootless mode would work");
		return CORDON_PROBE_DEGRADED;
	}
	if (c->userns_unprivileged) {
		DETAIL(r, "an unprivileged uid created a user namespace");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "an unprivileged uid could not create a user namespace");
	CONSEQUENCE(r, "no rootless mode: cordon-launch needs CAP_SYS_ADMIN to build sandboxes");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_cgroup(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					   struct cordon_probe_row *r)
{
	/* A limit the profile chose needs its controller; a default limit
	 * (CORDON_LIMIT_DEFAULT_*) the profile did not choose is applied where
	 * its controller works and only degrades the verdict where not. For
	 * no profile, every limit counts as chosen. */
	const struct {
		bool limited, defaulted;
		enum cordon_cgroup_ctrl ctrl;
	} limits[] = {
		{ !p || p->mem_bytes > 0, p && (p->limits_defaulted & CORDON_LIMIT_MEMORY), CORDON_CTRL_MEMORY },
		{ !p || p->pids_max > 0, p && (p->limits_defaulted & CORDON_LIMIT_PIDS), CORDON_CTRL_PIDS },
		{ !p || p->cpu_micro > 0, p && (p->limits_defaulted & CORDON_LIMIT_CPU), CORDON_CTRL_CPU },
	};

	(void)arg;
	if (c->cgroup_layout == CORDON_CGROUP_NONE) {
		DETAIL(r, "no cgroup hierarchy is mounted");
		CONSEQUENCE(r, "no cgroups: no resource limits, and teardown must signal each process");
		return CORDON_PROBE_MISSING;
	}
	for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
		const struct cordon_cgroup_ctrl_info *ci = &c->ctrl[limits[i].ctrl];

		if (limits[i].limited && !limits[i].defaulted && !ci->can_create) {
			DETAIL(r, "the %s controller is %s", cordon_cgroup_ctrl_name(limits[i].ctrl),
			       ci->available ? "present but cordon cannot create a cgroup there" : "not available");
			CONSEQUENCE(r, "%s", ctrl_missing[limits[i].ctrl]);
			return CORDON_PROBE_MISSING;
		}
	}
	for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
		const struct cordon_cgroup_ctrl_info *ci = &c->ctrl[limits[i].ctrl];

		if (limits[i].limited && limits[i].defaulted && !ci->can_create) {
			DETAIL(r, "the default %s limit cannot be applied: the %s controller is %s",
			       cordon_cgroup_ctrl_name(limits[i].ctrl), cordon_cgroup_ctrl_name(limits[i].ctrl),
			       ci->available ? "not usable by cordon" : "not available");
			CONSEQUENCE(r, "%s", ctrl_missing[limits[i].ctrl]);
			return CORDON_PROBE_DEGRADED;
		}
	}
	if (c->cgroup_layout == CORDON_CGROUP_V1) {
		DETAIL(r, "v1 only, no cgroup2 hierarchy");
		CONSEQUENCE(r, "no cgroup2: no cgroup.kill, no CLONE_INTO_CGROUP, no eBPF egress policy; v1 limits "
			       "still apply");
		return CORDON_PROBE_DEGRADED;
	}
	DETAIL(r, "%s, cgroup2 at %s", cordon_cgroup_layout_name(c->cgroup_layout), c->cgroup2_mount);
	return CORDON_PROBE_AVAILABLE;
}

/* One per controller: arg is the enum cordon_cgroup_ctrl. */
static enum cordon_probe_status row_cgroup_ctrl(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						struct cordon_probe_row *r)
{
	const struct cordon_cgroup_ctrl_info *ci = &c->ctrl[arg];

	(void)p;
	if (!ci->available) {
		DETAIL(r, "not mounted or not in the kernel");
		CONSEQUENCE(r, "%s", ctrl_missing[arg]);
		return CORDON_PROBE_MISSING;
	}
	DETAIL(r, "%s at %s", ci->v2 ? "v2" : "v1", ci->path);
	if (ci->can_create)
		return CORDON_PROBE_AVAILABLE;
	if (c->ctrl_untested & (1u << arg)) {
		DETAIL(r, ", creating a child not tried (a launch's probe)");
		CONSEQUENCE(r, "%s", ctrl_missing[arg]);
		return CORDON_PROBE_DEGRADED;
	}
	DETAIL(r, ", %s", ci->v2 ? "not enabled for children" : "cannot create a child");
	CONSEQUENCE(r, "%s", ctrl_missing[arg]);
	return CORDON_PROBE_DEGRADED;
}

static enum cordon_probe_status row_cgroup_kill(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->cgroup_kill) {
		DETAIL(r, "cgroup.kill");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "no cgroup.kill (needs cgroup2, Linux 5.14)");
	CONSEQUENCE(r, "teardown freezes the cgroup and signals each process instead of one atomic kill");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_clone_into_cgroup(const struct cordon_caps *c, const struct cordon_profile *p,
						      int arg, struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->clone_into_cgroup) {
		DETAIL(r, "clone3 placed a child in a cgroup2 directory");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "clone3(CLONE_INTO_CGROUP) unavailable");
	CONSEQUENCE(r, "the child joins its cgroup itself after clone, before it runs connector code");
	return CORDON_PROBE_MISSING;
}

/* The network control's layers: the empty network namespace (mode none),
 * the eBPF egress policy on the instance's cgroup2 directory (every mode),
 * Landlock TCP rules (ABI >= 4). */
static enum cordon_probe_status row_network(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					    struct cordon_probe_row *r)
{
	bool none = !p || p->net_mode == CORDON_NET_NONE;
	bool allowlist = !p || p->net_mode == CORDON_NET_ALLOWLIST;
	bool netns = c->namespaces & CLONE_NEWNET;
	bool ebpf = c->bpf_cgroup_sock_addr && c->cgroup2_mount[0] &&
		    (c->cgroup_layout == CORDON_CGROUP_V2 || c->cgroup_layout == CORDON_CGROUP_HYBRID);
	char layers[96] = "";

	(void)arg;
	/* Mode none: either the empty network namespace or the eBPF deny-all
	 * enforces it (Landlock TCP rules alone leave UDP open: missing). */
	if (none && !netns && !ebpf) {
		DETAIL(r, "network mode none needs a network namespace, which cannot be created");
		CONSEQUENCE(r, "no layer isolates a connector's network: required or not, such a launch is refused "
			       "(never an open network)");
		return CORDON_PROBE_MISSING;
	}
	if (allowlist && (!c->cgroup2_mount[0] || !c->bpf_cgroup_sock_addr)) {
		DETAIL(r, "the allowlist needs cgroup sock_addr BPF programs on a cgroup2 hierarchy%s",
		       c->cgroup2_mount[0] ? "" : " (there is none)");
		CONSEQUENCE(r, "allowlists cannot be enforced per address: egress rests on Landlock TCP port rules "
			       "(any address), and without those too the launch is refused");
		return CORDON_PROBE_MISSING;
	}
	if (allowlist && !c->landlock_net_handled) {
		DETAIL(r, "no Landlock TCP rules as a second layer (needs ABI 4)");
		CONSEQUENCE(r, "the eBPF egress policy alone enforces the allowlist");
		return CORDON_PROBE_DEGRADED;
	}
	if (netns)
		append_item(layers, sizeof(layers), ", ", "network namespace");
	if (ebpf)
		append_item(layers, sizeof(layers), ", ", "eBPF egress policy");
	if (c->landlock_net_handled)
		append_item(layers, sizeof(layers), ", ", "Landlock TCP rules");
	DETAIL(r, "layers: %s", layers);
	return CORDON_PROBE_AVAILABLE;
}

static enum cordon_probe_status row_bpf(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->bpf_syscall) {
		DETAIL(r, "bpf() usable");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "bpf() absent or refused");
	CONSEQUENCE(r, "no eBPF: address allowlists cannot be enforced (profiles requiring network are refused)");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_bpf_sock_addr(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						  struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->bpf_cgroup_sock_addr) {
		DETAIL(r, "connect4 program attached to and detached from a cgroup");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "cannot attach sock_addr programs to a cgroup2 directory");
	CONSEQUENCE(r, "no eBPF egress policy: allowlists rest on Landlock TCP port rules and the network namespace");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_btf(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->btf_vmlinux) {
		DETAIL(r, "/sys/kernel/btf/vmlinux");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "no /sys/kernel/btf/vmlinux");
	CONSEQUENCE(r, "BPF programs that need kernel type information (CO-RE) cannot load");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_bpf_lsm(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					    struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->lsm[0])
		DETAIL(r, "LSMs: %s", c->lsm);
	else
		DETAIL(r, "LSM list unreadable (no securityfs)");
	if (c->bpf_lsm)
		return CORDON_PROBE_AVAILABLE;
	CONSEQUENCE(r, "no BPF LSM hooks: the root guard needs its seccomp supervisor (see root_guard); Landlock and "
		       "seccomp still enforce");
	return CORDON_PROBE_MISSING;
}

/* Informational: what the probe measured (probe-lsm.c). Its effect is
 * carried by the root_guard row. */
static enum cordon_probe_status row_bpf_lsm_cgroup(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						   struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	DETAIL(r, "%s", cordon_probe_lsm_cgroup_reason(c));
	if (c->bpf_lsm_cgroup)
		return CORDON_PROBE_AVAILABLE;
	CONSEQUENCE(r, "no BPF LSM program per cgroup: the root guard needs its seccomp supervisor (see root_guard)");
	return CORDON_PROBE_MISSING;
}

/* Whether the profile has a read-write root; for no profile, one that has
 * (the worst any profile meets). A delegated read-write root is added at
 * spawn time and judged there the same way (spawn-rootguard.c). */
static bool has_read_write_root(const struct cordon_profile *p)
{
	if (!p)
		return true;
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
			return true;
	return false;
}

/* The root guard (bpf/rootguard.bpf.c): BPF LSM programs on the instance's
 * cgroup refuse chmod and chown of every mount root of the sandbox, or,
 * where the kernel refuses BPF LSM programs, a seccomp user-notification
 * supervisor does (rootguard-notify.h); without
 * it the connector can change the mode of its read-write root directory on
 * the host. It recognises a root as the root of a mount in the sandbox, so
 * it needs the mount namespace too. Without a read-write root there is
 * nothing to guard: available (the spawn report says disabled_by_policy). */
static enum cordon_probe_status row_root_guard(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					       struct cordon_probe_row *r)
{
	(void)arg;
	if (!has_read_write_root(p)) {
		DETAIL(r, "no read-write root: nothing to guard");
		return CORDON_PROBE_AVAILABLE;
	}
	if (!(c->namespaces & CLONE_NEWNS))
		DETAIL(r, "without a mount namespace a read-write root is not a mount of its own");
	else if (c->bpf_lsm_cgroup) {
		DETAIL(r, "BPF LSM refuses chmod and chown of every mount root");
		return CORDON_PROBE_AVAILABLE;
	} else if (cordon_probe_root_guard_notify(c)) {
		/* The same guard without BPF LSM: a seccomp supervisor
		 * (rootguard-notify.h). */
		DETAIL(r, "a seccomp supervisor refuses chmod and chown of every mount root (BPF LSM: %s)",
		       cordon_probe_lsm_cgroup_reason(c));
		return CORDON_PROBE_AVAILABLE;
	} else
		DETAIL(r, "BPF LSM programs cannot be attached to a cgroup here (%s)",
		       cordon_probe_lsm_cgroup_reason(c));
	CONSEQUENCE(r, "the connector can change the permission bits of its read-write root directory");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_pidfd(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
					  struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	DETAIL(r, "pidfd_open %s", c->pidfd_open ? "works" : "unavailable");
	if (c->pidfd_open)
		return CORDON_PROBE_AVAILABLE;
	CONSEQUENCE(r, "connectors are tracked by pid, so signals could race with pid reuse");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_close_range(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	DETAIL(r, "close_range %s", c->close_range ? "works" : "unavailable");
	if (c->close_range)
		return CORDON_PROBE_AVAILABLE;
	CONSEQUENCE(r, "inherited descriptors are closed one at a time before exec (same result, slower)");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_no_new_privs(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						 struct cordon_probe_row *r)
{
	(void)p;
	(void)arg;
	if (c->no_new_privs) {
		DETAIL(r, "PR_SET_NO_NEW_PRIVS%s", c->no_new_privs_set ? " (already set on the caller)" : "");
		return CORDON_PROBE_AVAILABLE;
	}
	DETAIL(r, "no_new_privs is not supported by this kernel; every launch is refused");
	CONSEQUENCE(r, "setuid files could regain privileges inside the sandbox: launch is refused");
	return CORDON_PROBE_MISSING;
}

static enum cordon_probe_status row_capabilities(const struct cordon_caps *c, const struct cordon_profile *p, int arg,
						 struct cordon_probe_row *r)
{
	char miss[160] = "", cannot[200] = "";
	int first_sandbox_cap = -1;

	(void)p;
	(void)arg;
	for (size_t i = 0; i < ELEMENTSOF(needed_caps); i++) {
		char name[40];

		if (!cap_lacking(c, needed_caps[i].cap))
			continue;
		if (i < SANDBOX_CAPS && first_sandbox_cap < 0)
			first_sandbox_cap = (int)needed_caps[i].cap;
		(void)snprintf(name, sizeof(name), "cap_%s", capng_capability_to_name(needed_caps[i].cap) ?: "unknown");
		append_item(miss, sizeof(miss), ",", name);
		append_item(cannot, sizeof(cannot), ", ", needed_caps[i].why);
	}
	if (!miss[0]) {
		DETAIL(r, "effective %016" PRIx64, c->caller_caps_effective);
		return CORDON_PROBE_AVAILABLE;
	}
	CONSEQUENCE(r, "cordon-launch cannot do: %s", cannot);
	if (first_sandbox_cap < 0) {
		DETAIL(r, "effective %016" PRIx64 "; missing %s", c->caller_caps_effective, miss);
		return CORDON_PROBE_DEGRADED;
	}
	DETAIL(r, "cordon-launch lacks cap_%s (cap_sys_admin, cap_setuid and cap_setgid build the sandbox)",
	       capng_capability_to_name((unsigned)first_sandbox_cap) ?: "unknown");
	return CORDON_PROBE_MISSING;
}

/* ---- the table ------------------------------------------------------------ */

/* clang-format off */
static const struct control_entry {
	const char *name;		/* the report's stable name */
	enum cordon_control_kind kind;
	enum cordon_control control;	/* CORDON_CONTROL_PROFILE: the bit in sandbox.require */
	int refuse_errno;		/* CORDON_CONTROL_ALWAYS: the launch's error when missing */
	row_fn state;
	int arg;
} table[] = {
	{ "landlock",             CORDON_CONTROL_PROFILE, CORDON_CONTROL_LANDLOCK,   0,          row_landlock,            0 },
	{ "landlock-net",         CORDON_CONTROL_NEVER,   0,                         0,          row_landlock_net,        0 },
	{ "landlock-scope",       CORDON_CONTROL_NEVER,   0,                         0,          row_landlock_scope,      0 },
	{ "landlock-log",         CORDON_CONTROL_NEVER,   0,                         0,          row_landlock_log,        0 },
	{ "seccomp",              CORDON_CONTROL_PROFILE, CORDON_CONTROL_SECCOMP,    0,          row_seccomp,             0 },
	{ "openat2",              CORDON_CONTROL_NEVER,   0,                         0,          row_openat2,             0 },
	{ "namespaces",           CORDON_CONTROL_PROFILE, CORDON_CONTROL_NAMESPACES, 0,          row_namespaces,          0 },
	{ "userns-unprivileged",  CORDON_CONTROL_NEVER,   0,                         0,          row_userns_unprivileged, 0 },
	{ "cgroup",               CORDON_CONTROL_PROFILE, CORDON_CONTROL_CGROUP,     0,          row_cgroup,              0 },
	{ "cgroup-memory",        CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_ctrl,         CORDON_CTRL_MEMORY },
	{ "cgroup-pids",          CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_ctrl,         CORDON_CTRL_PIDS },
	{ "cgroup-cpu",           CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_ctrl,         CORDON_CTRL_CPU },
	{ "cgroup-cpuset",        CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_ctrl,         CORDON_CTRL_CPUSET },
	{ "cgroup-io",            CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_ctrl,         CORDON_CTRL_IO },
	{ "cgroup-kill",          CORDON_CONTROL_NEVER,   0,                         0,          row_cgroup_kill,         0 },
	{ "clone-into-cgroup",    CORDON_CONTROL_NEVER,   0,                         0,          row_clone_into_cgroup,   0 },
	{ "network",              CORDON_CONTROL_PROFILE, CORDON_CONTROL_NETWORK,    0,          row_network,             0 },
	{ "bpf",                  CORDON_CONTROL_NEVER,   0,                         0,          row_bpf,                 0 },
	{ "bpf-cgroup-sock-addr", CORDON_CONTROL_NEVER,   0,                         0,          row_bpf_sock_addr,       0 },
	{ "btf",                  CORDON_CONTROL_NEVER,   0,                         0,          row_btf,                 0 },
	{ "bpf-lsm",              CORDON_CONTROL_NEVER,   0,                         0,          row_bpf_lsm,             0 },
	{ "bpf-lsm-cgroup",       CORDON_CONTROL_NEVER,   0,                         0,          row_bpf_lsm_cgroup,      0 },
	{ "root_guard",           CORDON_CONTROL_PROFILE, CORDON_CONTROL_ROOT_GUARD, 0,          row_root_guard,          0 },
	{ "pidfd",                CORDON_CONTROL_NEVER,   0,                         0,          row_pidfd,               0 },
	{ "close-range",          CORDON_CONTROL_NEVER,   0,                         0,          row_close_range,         0 },
	{ "no-new-privs",         CORDON_CONTROL_ALWAYS,  0,                         EOPNOTSUPP, row_no_new_privs,        0 },
	{ "capabilities",         CORDON_CONTROL_ALWAYS,  0,                         EPERM,      row_capabilities,        0 },
};
/* clang-format on */

_Static_assert(ELEMENTSOF(table) <= CORDON_PROBE_MAX_ROWS, "CORDON_PROBE_MAX_ROWS is too small for the table");

static void entry_eval(const struct control_entry *e, const struct cordon_caps *c, const struct cordon_profile *p,
		       struct cordon_probe_row *r)
{
	*r = (struct cordon_probe_row){ .control = e->name, .kind = e->kind };
	r->status = e->state(c, p, e->arg, r);
}

size_t cordon_control_rows(const struct cordon_caps *c, const struct cordon_profile *p, struct cordon_probe_row *rows,
			   size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(table) && n < max; i++)
		entry_eval(&table[i], c, p, &rows[n++]);
	return n;
}

size_t cordon_probe_rows(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t max)
{
	return cordon_control_rows(c, NULL, rows, max);
}

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

const char *cordon_control_kind_to_string(enum cordon_control_kind k)
{
	switch (k) {
	case CORDON_CONTROL_PROFILE:
		return "when-required";
	case CORDON_CONTROL_ALWAYS:
		return "always";
	case CORDON_CONTROL_NEVER:
		return "never";
	}
	return NULL;
}

const char *cordon_kernel_verdict_to_string(enum cordon_kernel_verdict v)
{
	switch (v) {
	case CORDON_KERNEL_OK:
		return "ok";
	case CORDON_KERNEL_DEGRADED:
		return "degraded";
	case CORDON_KERNEL_UNUSABLE:
		return "unusable";
	}
	return NULL;
}

enum cordon_kernel_verdict cordon_probe_verdict(const struct cordon_probe_row *rows, size_t n)
{
	enum cordon_kernel_verdict v = CORDON_KERNEL_OK;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind == CORDON_CONTROL_NEVER || rows[i].status == CORDON_PROBE_AVAILABLE)
			continue;
		if (rows[i].kind == CORDON_CONTROL_ALWAYS && rows[i].status == CORDON_PROBE_MISSING)
			return CORDON_KERNEL_UNUSABLE;
		v = CORDON_KERNEL_DEGRADED;
	}
	return v;
}

int cordon_control_verdict(const struct cordon_caps *c, const struct cordon_profile *p, enum cordon_control control,
			   enum cordon_probe_status *ret_status, char *why, size_t size)
{
	if (!c || !p || !ret_status || !why || size == 0)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (table[i].kind == CORDON_CONTROL_PROFILE && table[i].control == control) {
			struct cordon_probe_row r;

			entry_eval(&table[i], c, p, &r);
			(void)snprintf(why, size, "%s", r.status == CORDON_PROBE_AVAILABLE ? "" : r.detail);
			*ret_status = r.status;
			return 0;
		}
	return -EINVAL;
}

int cordon_control_refuse(const struct cordon_caps *c, const struct cordon_profile *p, const char *step,
			  unsigned *ret_degraded, struct cordon_diag *reterr_diag)
{
	unsigned degraded = 0;

	if (!c || !p)
		return -EINVAL;
	/* What every launch needs first, then the profile's choices, each in
	 * table order: the first refusal is the one reported. */
	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		struct cordon_probe_row r;

		if (table[i].kind != CORDON_CONTROL_ALWAYS)
			continue;
		entry_eval(&table[i], c, p, &r);
		if (r.status == CORDON_PROBE_MISSING)
			return cordon_diag_set(reterr_diag, table[i].refuse_errno, step, "%s", r.detail);
	}
	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		struct cordon_probe_row r;

		if (table[i].kind != CORDON_CONTROL_PROFILE)
			continue;
		entry_eval(&table[i], c, p, &r);
		if (r.status == CORDON_PROBE_MISSING && (p->require & table[i].control))
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, step, "required control '%s' is missing: %s",
					       table[i].name, r.detail);
		if (r.status != CORDON_PROBE_AVAILABLE)
			degraded |= table[i].control;
	}
	if (ret_degraded)
		*ret_degraded = degraded;
	return 0;
}

int cordon_probe_check_profile(const struct cordon_caps *c, const struct cordon_profile *p, unsigned *ret_degraded,
			       struct cordon_diag *reterr_diag)
{
	return cordon_control_refuse(c, p, "kernel", ret_degraded, reterr_diag);
}
