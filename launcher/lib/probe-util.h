/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers around the probe: rights per Landlock ABI, the mountinfo parser
 * (exposed for unit tests) and the per-control verdicts that the JSON and
 * human reports print, the launcher's refusals and cordond's /health all
 * read (the control-verdict table, probe-policy.c). */

#include <stddef.h>
#include <stdint.h>

#include "probe.h"
#include "profile.h"

/* Name of the probe's BPF program (BPF_OBJ_NAME_LEN includes the NUL). */
#define CORDON_PROBE_BPF_NAME "cordon_probe"

union bpf_attr;

/* bpf(2) with the size of the whole attr (probe-bpf.c). */
int cordon_probe_sys_bpf(int cmd, union bpf_attr *attr);
/* Loads "r0 = 1; exit" (allow everything) as a program of prog_type,
 * expected_attach_type attach_type and attach_btf_id (0 when the hook needs
 * none), named CORDON_PROBE_BPF_NAME. Returns the fd or -1 with errno. */
int cordon_probe_bpf_load_allow(uint32_t prog_type, uint32_t attach_type, uint32_t attach_btf_id);

/* Prefix of every directory the probe creates (temp dir and cgroups). */
#define CORDON_PROBE_DIR_PREFIX "cordon-probe-"

/* Landlock rights and scopes a given ABI version handles (0 for abi < 1). */
uint64_t cordon_landlock_fs_rights_for_abi(int abi);
uint64_t cordon_landlock_net_rights_for_abi(int abi);
uint64_t cordon_landlock_scopes_for_abi(int abi);

/* Fills the cgroup layout, cgroup2_mount and the v1 controller entries of *c
 * (available, v2 = false, path) from the text of /proc/self/mountinfo.
 * Modifies text (it is tokenised in place). Touches no other field. Returns 0. */
int cordon_probe_parse_mountinfo(char *text, struct cordon_caps *c);

/* The BTF type id of the function `name` (BTF_KIND_FUNC) in the raw BTF
 * blob data[0..len) (e.g. /sys/kernel/btf/vmlinux), found by walking the
 * type section. Returns 0 and writes *ret_id, -ENOENT when there is no
 * such function, -EBADMSG for a blob it cannot walk (bad header, offsets
 * out of range, a kind newer than this code), -EINVAL for NULL arguments. */
int cordon_probe_btf_find_func(const void *data, size_t len, const char *name, uint32_t *ret_id);

/* Fills bpf_lsm_cgroup and bpf_lsm_cgroup_errno of *c by loading an
 * allow-everything BPF_LSM_CGROUP program on path_chmod and attaching it
 * to the (empty) cgroup2 directory cg_fd with a link; both are closed
 * before it returns. cg_fd < 0: ENODEV. Reads c->lsm and c->bpf_lsm. */
void cordon_probe_lsm_cgroup(struct cordon_caps *c, int cg_fd);

/* Why bpf_lsm_cgroup is false (or what was done when it is true), as a
 * short static phrase for reports. */
const char *cordon_probe_lsm_cgroup_reason(const struct cordon_caps *c);

/* Whether the root guard can run as a seccomp user-notification supervisor
 * (rootguard-notify.h) where BPF LSM cannot: seccomp filters with
 * USER_NOTIF, pidfd_open and pidfd_getfd, mount and pid namespaces. */
bool cordon_probe_root_guard_notify(const struct cordon_caps *c);

/* Status of one control in the report, as in docs/kernel-matrix.md. */
enum cordon_probe_status {
	CORDON_PROBE_AVAILABLE,
	CORDON_PROBE_DEGRADED,
	CORDON_PROBE_MISSING,
};

const char *cordon_probe_status_to_string(enum cordon_probe_status s);

/* What a control that is not available means for a launch (the
 * control-verdict table's "refuses" column). */
enum cordon_control_kind {
	CORDON_CONTROL_PROFILE, /* a profile control: refused when sandbox.require lists it, else run degraded */
	CORDON_CONTROL_ALWAYS,	/* every launch needs it: refused when missing, whatever the profile */
	CORDON_CONTROL_NEVER,	/* never refuses on its own (part of a profile control, or informational) */
};

/* "when-required", "always", "never". */
const char *cordon_control_kind_to_string(enum cordon_control_kind k);

/* One line of the report: a control, its verdict, what the kernel offers and,
 * unless available, what that means for a connector. */
struct cordon_probe_row {
	const char *control; /* stable name, e.g. "landlock", "cgroup-memory" */
	enum cordon_control_kind kind;
	enum cordon_probe_status status;
	char detail[160];
	char consequence[240]; /* "" when available */
};

#define CORDON_PROBE_MAX_ROWS 32

struct cordon_profile;
struct cordon_diag;

/* The control-verdict table (probe-policy.c), one entry per control, in
 * report order. cordon_control_rows() fills rows[0..n) with every entry's
 * verdict for profile p and returns n (at most max); p NULL is the kernel on
 * its own, where a profile control's state is the worst any profile meets.
 * cordon_probe_rows() is that for no profile: the probe's report. */
size_t cordon_control_rows(const struct cordon_caps *c, const struct cordon_profile *p, struct cordon_probe_row *rows,
			   size_t max);
size_t cordon_probe_rows(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t max);

/* The kernel's overall verdict, from the report's rows: unusable when a
 * control every launch needs is missing (every launch is refused), degraded
 * when a profile or always-required control is not available (launches
 * that do not require it run without it; cordond's /health says degraded and
 * names it), ok otherwise. Rows of kind never do not count. */
enum cordon_kernel_verdict {
	CORDON_KERNEL_OK,
	CORDON_KERNEL_DEGRADED,
	CORDON_KERNEL_UNUSABLE,
};

enum cordon_kernel_verdict cordon_probe_verdict(const struct cordon_probe_row *rows, size_t n);

/* "ok", "degraded", "unusable". */
const char *cordon_kernel_verdict_to_string(enum cordon_kernel_verdict v);

/* Writes the capabilities cordon-launch needs and the caller lacks to
 * ret_caps (capability numbers, in the order docs/kernel-matrix.md lists
 * them; at most max) and returns how many it wrote. */
size_t cordon_probe_caps_missing(const struct cordon_caps *c, unsigned *ret_caps, size_t max);

/* Names for the report: "v2", "hybrid", "v1", "none"; "x86_64", "aarch64",
 * ... ("unknown" for others). */
const char *cordon_cgroup_layout_name(enum cordon_cgroup_layout l);
const char *cordon_audit_arch_name(uint32_t audit_arch);

/* What this kernel means for one profile, as docs/kernel-matrix.md
 * ("Controls") specifies: cordon_control_refuse() with step "kernel".
 * Returns 0 when the launch may go ahead and writes *ret_degraded (if
 * non-NULL) with the enum cordon_control bits whose control is missing or
 * degraded here (for /health: these ran without it, every other control
 * stayed on). Returns -EOPNOTSUPP and fills reterr_diag (message naming the
 * control and why) when a control the profile requires is missing or the
 * kernel lacks no_new_privs; -EPERM when the caller lacks a capability every
 * sandbox needs (CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID). */
int cordon_probe_check_profile(const struct cordon_caps *c, const struct cordon_profile *p, unsigned *ret_degraded,
			       struct cordon_diag *reterr_diag);

/* cordon_control_verdict() writes the state of profile control `control`
 * for this kernel and profile and, unless available, why (the row's detail,
 * NUL-terminated, truncated to size); returns 0, or -EINVAL for an unknown
 * control or NULL arguments.
 * cordon_control_refuse() is the one place a launch is refused for a
 * control: it walks the table's always-required entries, then its profile
 * controls, each in table order. The first always-required control that is
 * missing refuses with its own errno (-EOPNOTSUPP for no-new-privs, -EPERM
 * for capabilities) and the row's detail as the message; then the first
 * profile control that is missing and in p->require refuses, -EOPNOTSUPP
 * with "required control '<name>' is missing: <detail>". reterr_diag gets
 * step `step`. Otherwise it returns 0 and writes *ret_degraded (if non-NULL)
 * with the bits of the profile controls that are missing or degraded. */
int cordon_control_verdict(const struct cordon_caps *c, const struct cordon_profile *p, enum cordon_control control,
			   enum cordon_probe_status *ret_status, char *why, size_t size);
int cordon_control_refuse(const struct cordon_caps *c, const struct cordon_profile *p, const char *step,
			  unsigned *ret_degraded, struct cordon_diag *reterr_diag);
