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
static void no_lsm_cgroup(void) { caps.bpf_lsm_cgroup = false; caps.bpf_lsm_cgroup_errno = EPERM; }

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

	/* Each reason the probe can record is named. */
	full_kernel();
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
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
