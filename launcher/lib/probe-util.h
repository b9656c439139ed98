/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers around the probe: rights per Landlock ABI, the mountinfo parser
 * (exposed for unit tests) and the per-control verdicts that the JSON and
 * human reports print and that the launcher can use to name a missing
 * control. */

#include <stddef.h>
#include <stdint.h>

#include "probe.h"
#include "profile.h"

/* Name of the probe's BPF program (BPF_OBJ_NAME_LEN includes the NUL). */
#define CORDON_PROBE_BPF_NAME "cordon_probe"

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

/* Status of one control in the report, as in docs/kernel-matrix.md. */
enum cordon_probe_status {
	CORDON_PROBE_AVAILABLE,
	CORDON_PROBE_DEGRADED,
	CORDON_PROBE_MISSING,
};

const char *cordon_probe_status_to_string(enum cordon_probe_status s);

/* One line of the report: a control, its verdict, what the kernel offers and,
 * unless available, what that means for a connector. */
struct cordon_probe_row {
	const char *control; /* stable name, e.g. "landlock", "cgroup-memory" */
	enum cordon_probe_status status;
	char detail[160];
	char consequence[240]; /* "" when available */
};

#define CORDON_PROBE_MAX_ROWS 32

/* Fills rows[0..n) with the verdict on every control, in report order, and
 * returns n (at most max). */
size_t cordon_probe_rows(const struct cordon_caps *c, struct cordon_probe_row *rows, size_t max);

struct cordon_profile;
struct cordon_diag;

/* What this kernel means for one profile, as docs/kernel-matrix.md
 * ("Controls") specifies. Returns 0 when the launch may go ahead and writes
 * *ret_degraded (if non-NULL) with the enum cordon_control bits whose control
 * is missing or degraded here (for /health: these ran without it, every other
 * control stayed on). Returns -EOPNOTSUPP and fills reterr_diag (step
 * "kernel", message naming the control and why) when a control the profile
 * requires is missing or the kernel lacks no_new_privs; -EPERM when the
 * caller lacks a capability every sandbox needs (CAP_SYS_ADMIN, CAP_SETUID,
 * CAP_SETGID). */
int cordon_probe_check_profile(const struct cordon_caps *c, const struct cordon_profile *p, unsigned *ret_degraded,
			       struct cordon_diag *reterr_diag);

/* The control-verdict table (probe-policy.c), one row per profile control.
 * cordon_control_verdict() writes the state of `control` for this kernel and
 * profile and, unless available, why (NUL-terminated, truncated to size);
 * returns 0, or -EINVAL for an unknown control or NULL arguments.
 * cordon_control_refuse() walks the table in order: the first control that
 * is missing and in p->require refuses, -EOPNOTSUPP with reterr_diag set
 * (step `step`, "required control '<name>' is missing: <why>"); otherwise
 * returns 0 and writes *ret_degraded (if non-NULL) with the bits of the
 * controls that are missing or degraded. The profile's choices only: the
 * always-required parts (no_new_privs, the caller's capabilities) are the
 * caller's. */
int cordon_control_verdict(const struct cordon_caps *c, const struct cordon_profile *p, enum cordon_control control,
			   enum cordon_probe_status *ret_status, char *why, size_t size);
int cordon_control_refuse(const struct cordon_caps *c, const struct cordon_profile *p, const char *step,
			  unsigned *ret_degraded, struct cordon_diag *reterr_diag);
