/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control-verdict table (launcher/lib/probe-policy.c), walked for every
 * profile control x {present, missing} x {required, preferred}, with the
 * exact outcome: present -> 0 and not degraded; missing and required ->
 * -EOPNOTSUPP naming the control; missing and preferred -> 0 with the
 * control's bit in the degraded set (never silently available). The same
 * table refuses for cordon_probe_check_profile() and for cordon_spawn(). */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "caps-test.h"
#include "probe-util.h"
#include "probe.h"
#include "profile.h"

static struct cordon_caps caps;
static struct cordon_profile prof;
static struct cordon_fs_entry rw_root = { .path = (char *)"/srv/data", .access = CORDON_ACCESS_READ_WRITE };

static void full_kernel(void)
{
	caps_test_full(&caps, false);

	memset(&prof, 0, sizeof(prof));
	/* Allowlist mode: the network control then has its own layers (eBPF,
	 * Landlock TCP), so taking one away does not touch the namespaces. */
	prof.net_mode = CORDON_NET_ALLOWLIST;
	prof.mem_bytes = 256 << 20;
	prof.pids_max = 64;
	prof.cpu_micro = 500000;
	prof.seccomp_action = CORDON_SECCOMP_ERRNO;
	/* A read-write root: the root guard has something to guard. */
	prof.fs_roots = &rw_root;
	prof.n_fs_roots = 1;
}

/* clang-format off */
static void no_landlock(void)   { caps.landlock_abi = 0; caps.landlock_errno = EOPNOTSUPP;
				  caps.landlock_fs_handled = caps.landlock_net_handled = 0;
				  caps.landlock_scoped = 0; caps.landlock_log_flags = false; }
static void no_seccomp(void)    { caps.seccomp_filter = false; }
static void no_pid_ns(void)     { caps.namespaces &= ~(unsigned long)CLONE_NEWPID; }
static void no_cgroups(void)    { caps.cgroup_layout = CORDON_CGROUP_NONE; caps.cgroup2_mount[0] = '\0';
				  for (int i = 0; i < _CORDON_CTRL_MAX; i++)
					  caps.ctrl[i].available = caps.ctrl[i].can_create = false; }
static void no_sock_addr(void)  { caps.bpf_cgroup_sock_addr = false; }
/* Neither guard: no BPF LSM programs per cgroup, and no pidfd_getfd for the
 * seccomp supervisor. */
static void no_lsm_cgroup(void) { caps.bpf_lsm_cgroup = false; caps.bpf_lsm_cgroup_errno = EPERM;
				  caps.pidfd_getfd = false; }

static const struct {
	enum cordon_control control;
	void (*take_away)(void);
	const char *refusal; /* exact message when required */
} rows[] = {
	{ CORDON_CONTROL_LANDLOCK,   no_landlock,
	  "required control 'landlock' is missing: Landlock is unavailable (disabled at boot)" },
	{ CORDON_CONTROL_SECCOMP,    no_seccomp,
	  "required control 'seccomp' is missing: seccomp filter mode is unavailable" },
	{ CORDON_CONTROL_NAMESPACES, no_pid_ns,
	  "required control 'namespaces' is missing: the pid namespace cannot be created" },
	{ CORDON_CONTROL_CGROUP,     no_cgroups,
	  "required control 'cgroup' is missing: no cgroup hierarchy is mounted" },
	{ CORDON_CONTROL_NETWORK,    no_sock_addr,
	  "required control 'network' is missing: the allowlist needs cgroup sock_addr BPF programs on a cgroup2 hierarchy" },
	{ CORDON_CONTROL_ROOT_GUARD, no_lsm_cgroup,
	  "required control 'root_guard' is missing: BPF LSM programs cannot be attached to a cgroup here (the kernel refuses to load BPF LSM programs (EPERM))" },
};
/* clang-format on */

static void test_every_control_present_missing_required_preferred(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (int missing = 0; missing <= 1; missing++)
			for (int required = 0; required <= 1; required++) {
				struct cordon_diag d = { 0 };
				enum cordon_probe_status st = 99;
				unsigned degraded = 0xdead;
				char why[160] = "x";
				int r;

				full_kernel();
				if (missing)
					rows[i].take_away();
				prof.require = required ? (unsigned)rows[i].control : 0;
				printf("%s missing=%d required=%d\n", cordon_control_to_string(rows[i].control),
				       missing, required);

				assert_int_equal(
					cordon_control_verdict(&caps, &prof, rows[i].control, &st, why, sizeof(why)),
					0);
				assert_int_equal(st, missing ? CORDON_PROBE_MISSING : CORDON_PROBE_AVAILABLE);
				if (!missing)
					assert_string_equal(why, "");

				r = cordon_control_refuse(&caps, &prof, "require", &degraded, &d);
				if (missing && required) {
					assert_int_equal(r, -EOPNOTSUPP);
					assert_int_equal(d.error, EOPNOTSUPP);
					assert_string_equal(d.step, "require");
					assert_string_equal(d.message, rows[i].refusal);
					assert_int_equal(degraded, 0xdead); /* written only on success */
				} else {
					assert_int_equal(r, 0);
					assert_true(missing ? (degraded & rows[i].control) != 0 : degraded == 0);
				}

				/* The probe's verdict for the profile is the same
				 * table, with step "kernel". */
				memset(&d, 0, sizeof(d));
				r = cordon_probe_check_profile(&caps, &prof, NULL, &d);
				assert_int_equal(r, missing && required ? -EOPNOTSUPP : 0);
				if (r < 0)
					assert_string_equal(d.step, "kernel");
			}
}

/* The cgroup namespace is one of those every sandbox is cloned into: a
 * kernel without it is missing `namespaces` (refused when required), as
 * cordon_spawn() always did; the user namespace only degrades. */
static void test_cgroup_namespace_is_needed_user_namespace_is_not(void **state)
{
	struct cordon_diag d = { 0 };
	unsigned degraded = 0;

	(void)state;
	full_kernel();
	prof.require = CORDON_CONTROL_NAMESPACES;
	caps.namespaces &= ~(unsigned long)CLONE_NEWCGROUP;
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", &degraded, &d), -EOPNOTSUPP);
	assert_string_equal(d.message,
			    "required control 'namespaces' is missing: the cgroup namespace cannot be created");

	full_kernel();
	prof.require = CORDON_CONTROL_NAMESPACES;
	caps.namespaces &= ~(unsigned long)CLONE_NEWUSER;
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", &degraded, &d), 0);
	assert_int_equal(degraded, CORDON_CONTROL_NAMESPACES);
}

/* Network mode none without a network namespace: the eBPF deny-all on the
 * instance's cgroup enforces it (as cordon_spawn()'s plan says); without
 * the eBPF hooks too it is missing. */
static void test_mode_none_without_netns(void **state)
{
	struct cordon_diag d = { 0 };
	enum cordon_probe_status st;
	char why[160];

	(void)state;
	full_kernel();
	prof.net_mode = CORDON_NET_NONE;
	prof.require = CORDON_CONTROL_NETWORK;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_NETWORK, &st, why, sizeof(why)), 0);
	assert_int_equal(st, CORDON_PROBE_AVAILABLE);
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", NULL, &d), 0);
	caps.bpf_cgroup_sock_addr = false;
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", NULL, &d), -EOPNOTSUPP);
	assert_string_equal(d.message, "required control 'network' is missing: network mode none needs a network "
				       "namespace, which cannot be created");
}

/* The root guard protects read-write roots: a profile without one needs
 * nothing from it (available, never refused, even when required); with one
 * it needs the BPF LSM per cgroup and a mount namespace (a root is a mount
 * of its own only there), and names why it is missing. */
static void test_root_guard_needs_a_read_write_root_and_a_mount_namespace(void **state)
{
	struct cordon_diag d = { 0 };
	enum cordon_probe_status st;
	unsigned degraded = 0xdead;
	char why[160];

	(void)state;
	full_kernel();
	prof.require = CORDON_CONTROL_ROOT_GUARD;
	no_lsm_cgroup();
	rw_root.access = CORDON_ACCESS_READ;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)), 0);
	assert_int_equal(st, CORDON_PROBE_AVAILABLE);
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", &degraded, &d), 0);
	assert_int_equal(degraded, 0);
	rw_root.access = CORDON_ACCESS_READ_WRITE;

	full_kernel();
	prof.require = CORDON_CONTROL_ROOT_GUARD;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNS;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)), 0);
	assert_int_equal(st, CORDON_PROBE_MISSING);
	assert_string_equal(why, "without a mount namespace a read-write root is not a mount of its own");
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", NULL, &d), -EOPNOTSUPP);

	/* Without BPF LSM the seccomp supervisor guards the root; it needs
	 * user notification, pidfd_getfd and a pid namespace. */
	full_kernel();
	caps.bpf_lsm_cgroup = false;
	caps.bpf_lsm_cgroup_errno = EPERM;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)), 0);
	assert_int_equal(st, CORDON_PROBE_AVAILABLE);
	assert_int_equal(cordon_control_refuse(&caps, &prof, "require", NULL, &d), 0);
	for (int i = 0; i < 3; i++) {
		full_kernel();
		caps.bpf_lsm_cgroup = false;
		caps.bpf_lsm_cgroup_errno = EPERM;
		if (i == 0)
			caps.seccomp_user_notif = false;
		else if (i == 1)
			caps.pidfd_getfd = false;
		else
			caps.namespaces &= ~(unsigned long)CLONE_NEWPID;
		assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)),
				 0);
		assert_int_equal(st, CORDON_PROBE_MISSING);
	}

	/* Each reason the probe can record is named. */
	full_kernel();
	caps.pidfd_getfd = false;
	caps.bpf_lsm_cgroup = false;
	caps.bpf_lsm_cgroup_errno = EOPNOTSUPP;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)), 0);
	assert_string_equal(why, "BPF LSM programs cannot be attached to a cgroup here (\"bpf\" is not an active LSM "
				 "(see lsm=))");
	caps.bpf_lsm_cgroup_errno = EINVAL;
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_ROOT_GUARD, &st, why, sizeof(why)), 0);
	assert_string_equal(why, "BPF LSM programs cannot be attached to a cgroup here (the kernel does not know "
				 "BPF_LSM_CGROUP (Linux 6.0))");
}

/* One table, every consumer: over kernels with one feature taken away and
 * profiles with each choice that needs a kernel feature, the report (no
 * profile), the per-profile rows, cordon_control_verdict(),
 * cordon_control_refuse() and cordon_probe_check_profile() agree: the
 * report's state of a profile control is the worst any profile meets; a
 * launch is refused exactly when a row the profile requires (or every
 * launch needs) is missing, with the first such row's name and detail; the
 * degraded set is exactly the profile rows that are not available. */
/* clang-format off */
static void k_full(void)        { }
static void k_abi3(void)        { caps.landlock_abi = 3; caps.landlock_net_handled = caps.landlock_scoped = 0;
				  caps.landlock_fs_handled = cordon_landlock_fs_rights_for_abi(3);
				  caps.landlock_log_flags = false; }
static void k_no_kill(void)     { caps.seccomp_kill_process = false; }
static void k_no_log(void)      { caps.seccomp_log = false; }
static void k_no_userns(void)   { caps.namespaces &= ~(unsigned long)CLONE_NEWUSER; }
static void k_no_netns(void)    { caps.namespaces &= ~(unsigned long)CLONE_NEWNET; }
static void k_v1(void)          { caps.cgroup_layout = CORDON_CGROUP_V1; caps.cgroup2_mount[0] = '\0'; }
static void k_no_memctl(void)   { caps.ctrl[CORDON_CTRL_MEMORY].can_create = false; }
static void k_no_nnp(void)      { caps.no_new_privs = false; }
static void k_no_setuid(void)   { caps.caller_caps_effective &= ~(1ULL << 7); }
static void k_no_netadmin(void) { caps.caller_caps_effective &= ~(1ULL << 12); }
static void k_no_mntns(void)    { caps.namespaces &= ~(unsigned long)CLONE_NEWNS; }
static void (*const kernels[])(void) = {
	k_full, no_landlock, k_abi3, no_seccomp, k_no_kill, k_no_log, no_pid_ns, k_no_userns, k_no_netns,
	no_cgroups, k_v1, k_no_memctl, no_sock_addr, k_no_nnp, k_no_setuid, k_no_netadmin, no_lsm_cgroup,
	k_no_mntns,
};
/* clang-format on */

static void check_agreement(void)
{
	struct cordon_probe_row kernel[CORDON_PROBE_MAX_ROWS], mine[CORDON_PROBE_MAX_ROWS];
	size_t nk = cordon_probe_rows(&caps, kernel, CORDON_PROBE_MAX_ROWS);
	size_t n = cordon_control_rows(&caps, &prof, mine, CORDON_PROBE_MAX_ROWS);
	const struct cordon_probe_row *first_always = NULL, *first_required = NULL;
	unsigned want_degraded = 0, degraded = 0xdead;
	struct cordon_diag d = { 0 }, d2 = { 0 };
	char want[200];
	int r;

	assert_int_equal(n, nk);
	for (size_t i = 0; i < n; i++) {
		enum cordon_control ctl = 0;

		assert_string_equal(mine[i].control, kernel[i].control);
		assert_int_equal(mine[i].kind, kernel[i].kind);
		/* A consequence exactly when not available. */
		assert_int_equal(mine[i].consequence[0] != '\0', mine[i].status != CORDON_PROBE_AVAILABLE);
		if (mine[i].kind == CORDON_CONTROL_NEVER)
			continue;
		assert_true(mine[i].status <= kernel[i].status);
		if (mine[i].kind == CORDON_CONTROL_ALWAYS) {
			if (mine[i].status == CORDON_PROBE_MISSING && !first_always)
				first_always = &mine[i];
			continue;
		}
		for (unsigned b = 1; b <= CORDON_CONTROL_ROOT_GUARD; b <<= 1)
			if (strcmp(cordon_control_to_string((enum cordon_control)b), mine[i].control) == 0)
				ctl = (enum cordon_control)b;
		assert_int_not_equal(ctl, 0);
		{
			enum cordon_probe_status st;
			char why[160];

			assert_int_equal(cordon_control_verdict(&caps, &prof, ctl, &st, why, sizeof(why)), 0);
			assert_int_equal(st, mine[i].status);
			assert_string_equal(why, st == CORDON_PROBE_AVAILABLE ? "" : mine[i].detail);
		}
		if (mine[i].status != CORDON_PROBE_AVAILABLE)
			want_degraded |= ctl;
		if (mine[i].status == CORDON_PROBE_MISSING && (prof.require & ctl) && !first_required)
			first_required = &mine[i];
	}

	r = cordon_control_refuse(&caps, &prof, "require", &degraded, &d);
	assert_int_equal(cordon_probe_check_profile(&caps, &prof, NULL, &d2), r);
	if (first_always || first_required) {
		if (first_always)
			snprintf(want, sizeof(want), "%s", first_always->detail);
		else
			snprintf(want, sizeof(want), "required control '%s' is missing: %s", first_required->control,
				 first_required->detail);
		assert_int_equal(r, first_always && strcmp(first_always->control, "capabilities") == 0 ? -EPERM
												       : -EOPNOTSUPP);
		assert_string_equal(d.message, want);
		assert_string_equal(d2.message, want);
		assert_string_equal(d.step, "require");
		assert_string_equal(d2.step, "kernel");
		assert_int_equal(degraded, 0xdead);
	} else {
		assert_int_equal(r, 0);
		assert_int_equal(degraded, want_degraded);
	}
}

#define CORDON_LIMIT_ALL (CORDON_LIMIT_MEMORY | CORDON_LIMIT_PIDS | CORDON_LIMIT_CPU)
#define CORDON_CONTROL_ALL                                                                                             \
	(CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_SECCOMP | CORDON_CONTROL_NAMESPACES | CORDON_CONTROL_CGROUP |        \
	 CORDON_CONTROL_NETWORK | CORDON_CONTROL_ROOT_GUARD)

static void test_report_profile_rows_and_refusal_agree(void **state)
{
	static const enum cordon_seccomp_action actions[] = { CORDON_SECCOMP_ERRNO, CORDON_SECCOMP_KILL,
							      CORDON_SECCOMP_LOG };
	unsigned cases = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		for (int net = 0; net <= 1; net++)
			for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++)
				for (int defaulted = 0; defaulted <= 1; defaulted++)
					for (int rw = 0; rw <= 1; rw++)
						for (int required = 0; required <= 1; required++) {
							full_kernel();
							kernels[k]();
							prof.net_mode = net ? CORDON_NET_ALLOWLIST : CORDON_NET_NONE;
							prof.seccomp_action = actions[a];
							prof.limits_defaulted = defaulted ? CORDON_LIMIT_ALL : 0;
							rw_root.access =
								rw ? CORDON_ACCESS_READ_WRITE : CORDON_ACCESS_READ;
							prof.require = required ? CORDON_CONTROL_ALL : 0;
							check_agreement();
							cases++;
						}
	rw_root.access = CORDON_ACCESS_READ_WRITE;
	assert_int_equal(cases, 18 * 2 * 3 * 2 * 2 * 2);
	printf("%u kernel x profile cases agree\n", cases);
}

static void test_bad_arguments(void **state)
{
	enum cordon_probe_status st;
	char why[8];

	(void)state;
	full_kernel();
	assert_int_equal(cordon_control_verdict(NULL, &prof, CORDON_CONTROL_LANDLOCK, &st, why, sizeof(why)), -EINVAL);
	assert_int_equal(cordon_control_verdict(&caps, &prof, (enum cordon_control)0, &st, why, sizeof(why)), -EINVAL);
	assert_int_equal(cordon_control_verdict(&caps, &prof, CORDON_CONTROL_LANDLOCK, &st, why, 0), -EINVAL);
	assert_int_equal(cordon_control_refuse(&caps, NULL, "require", NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_control_present_missing_required_preferred),
		cmocka_unit_test(test_cgroup_namespace_is_needed_user_namespace_is_not),
		cmocka_unit_test(test_mode_none_without_netns),
		cmocka_unit_test(test_root_guard_needs_a_read_write_root_and_a_mount_namespace),
		cmocka_unit_test(test_report_profile_rows_and_refusal_agree),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
