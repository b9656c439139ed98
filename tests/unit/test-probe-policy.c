/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon_probe_check_profile(): the verdict of a (synthetic) kernel for a
 * (synthetic) profile, as docs/kernel-matrix.md specifies — a required
 * control that is missing refuses the launch with a message naming it; a
 * preferred one is reported degraded and the launch goes ahead. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "caps-test.h"
#include "probe-util.h"
#include "probe.h"
#include "profile.h"

#define ALL_CONTROLS                                                                                                   \
	(CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_SECCOMP | CORDON_CONTROL_CGROUP | CORDON_CONTROL_NAMESPACES |        \
	 CORDON_CONTROL_NETWORK)

static struct cordon_caps caps;
static struct cordon_profile prof;

static int setup(void **state)
{
	(void)state;
	caps_test_full(&caps, true);

	memset(&prof, 0, sizeof(prof));
	prof.require = ALL_CONTROLS;
	prof.net_mode = CORDON_NET_NONE;
	prof.mem_bytes = 256 << 20;
	prof.pids_max = 64;
	prof.cpu_micro = 500000;
	prof.seccomp_action = CORDON_SECCOMP_ERRNO;
	return 0;
}

static unsigned check_ok(void)
{
	struct cordon_diag d = { 0 };
	unsigned degraded = 0xdead;
	int r = cordon_probe_check_profile(&caps, &prof, &degraded, &d);

	if (r != 0)
		fail_msg("refused: %d %s", r, d.message);
	assert_int_not_equal(degraded, 0xdead);
	return degraded;
}

static void check_refused(int err, const char *message)
{
	struct cordon_diag d = { 0 };
	unsigned degraded = 0xdead;

	assert_int_equal(cordon_probe_check_profile(&caps, &prof, &degraded, &d), -err);
	assert_int_equal(d.error, err);
	assert_string_equal(d.step, "kernel");
	assert_string_equal(d.message, message);
	/* ret_ out-parameters are written only on success. */
	assert_int_equal(degraded, 0xdead);
}

static void test_everything_available(void **state)
{
	(void)state;
	assert_int_equal(check_ok(), 0);
	prof.net_mode = CORDON_NET_ALLOWLIST;
	assert_int_equal(check_ok(), 0);
	/* A NULL diag and NULL ret_degraded are fine. */
	assert_int_equal(cordon_probe_check_profile(&caps, &prof, NULL, NULL), 0);
	assert_int_equal(cordon_probe_check_profile(NULL, &prof, NULL, NULL), -EINVAL);
	assert_int_equal(cordon_probe_check_profile(&caps, NULL, NULL, NULL), -EINVAL);
}

static void test_landlock(void **state)
{
	(void)state;
	caps.landlock_abi = 0;
	caps.landlock_errno = ENOSYS;
	check_refused(EOPNOTSUPP,
		      "required control 'landlock' is missing: Landlock is unavailable (not built into this kernel)");
	caps.landlock_errno = EOPNOTSUPP;
	check_refused(EOPNOTSUPP, "required control 'landlock' is missing: Landlock is unavailable (disabled at boot)");

	/* Preferred: the launch goes ahead, degraded names it. */
	prof.require &= ~(unsigned)CORDON_CONTROL_LANDLOCK;
	assert_int_equal(check_ok(), CORDON_CONTROL_LANDLOCK);

	/* An old ABI is degraded even when required, never refused. */
	prof.require = ALL_CONTROLS;
	caps.landlock_abi = 3;
	caps.landlock_net_handled = 0;
	/* (the network allowlist then lacks its Landlock second layer too) */
	assert_int_equal(check_ok(), CORDON_CONTROL_LANDLOCK);
	prof.net_mode = CORDON_NET_ALLOWLIST;
	assert_int_equal(check_ok(), CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_NETWORK);
}

static void test_seccomp(void **state)
{
	(void)state;
	prof.seccomp_action = CORDON_SECCOMP_KILL;
	caps.seccomp_kill_process = false;
	assert_int_equal(check_ok(), CORDON_CONTROL_SECCOMP);
	prof.seccomp_action = CORDON_SECCOMP_ERRNO;
	assert_int_equal(check_ok(), 0);
	prof.seccomp_action = CORDON_SECCOMP_LOG;
	caps.seccomp_log = false;
	assert_int_equal(check_ok(), CORDON_CONTROL_SECCOMP);

	caps.seccomp_filter = false;
	check_refused(EOPNOTSUPP, "required control 'seccomp' is missing: seccomp filter mode is unavailable");
	prof.require = CORDON_CONTROL_LANDLOCK;
	assert_int_equal(check_ok(), CORDON_CONTROL_SECCOMP);
}

static void test_namespaces(void **state)
{
	(void)state;
	caps.namespaces &= ~(unsigned long)(CLONE_NEWNET | CLONE_NEWPID);
	check_refused(EOPNOTSUPP,
		      "required control 'namespaces' is missing: the pid, net namespaces cannot be created");

	/* With egress allowed the net namespace is not needed. */
	caps.namespaces |= CLONE_NEWPID;
	prof.net_mode = CORDON_NET_ALLOWLIST;
	assert_int_equal(check_ok(), 0);

	/* The user namespace is used when present; without it: degraded. */
	caps.namespaces &= ~(unsigned long)CLONE_NEWUSER;
	assert_int_equal(check_ok(), CORDON_CONTROL_NAMESPACES);

	/* time is never needed. */
	caps.namespaces |= CLONE_NEWUSER;
	caps.namespaces &= ~(unsigned long)CLONE_NEWTIME;
	assert_int_equal(check_ok(), 0);
}

static void test_cgroup(void **state)
{
	(void)state;
	caps.ctrl[CORDON_CTRL_MEMORY].can_create = false;
	check_refused(EOPNOTSUPP, "required control 'cgroup' is missing: the memory controller is present but cordon "
				  "cannot create a cgroup there");
	caps.ctrl[CORDON_CTRL_MEMORY].available = false;
	check_refused(EOPNOTSUPP, "required control 'cgroup' is missing: the memory controller is not available");
	/* No memory limit in the profile: the memory controller is not needed. */
	prof.mem_bytes = 0;
	assert_int_equal(check_ok(), 0);

	caps.ctrl[CORDON_CTRL_PIDS].can_create = false;
	prof.require &= ~(unsigned)CORDON_CONTROL_CGROUP;
	assert_int_equal(check_ok(), CORDON_CONTROL_CGROUP);

	prof.require = ALL_CONTROLS;
	caps.ctrl[CORDON_CTRL_PIDS].can_create = true;
	caps.cgroup_layout = CORDON_CGROUP_V1;
	caps.cgroup2_mount[0] = '\0';
	assert_int_equal(check_ok(), CORDON_CONTROL_CGROUP);
	caps.cgroup_layout = CORDON_CGROUP_NONE;
	check_refused(EOPNOTSUPP, "required control 'cgroup' is missing: no cgroup hierarchy is mounted");
}

/* A default limit (the profile set none) whose controller is missing:
 * degraded, never refused, never silently "available" (finding 10). */
static void test_cgroup_default_limit_degrades(void **state)
{
	(void)state;
	prof.limits_defaulted = CORDON_LIMIT_MEMORY;
	caps.ctrl[CORDON_CTRL_MEMORY].can_create = false;
	caps.ctrl[CORDON_CTRL_MEMORY].available = false;
	assert_int_equal(check_ok(), CORDON_CONTROL_CGROUP);
	/* The same limit set by the profile itself is required. */
	prof.limits_defaulted = 0;
	check_refused(EOPNOTSUPP, "required control 'cgroup' is missing: the memory controller is not available");
}

static void test_network(void **state)
{
	(void)state;
	prof.net_mode = CORDON_NET_ALLOWLIST;
	caps.bpf_cgroup_sock_addr = false;
	check_refused(EOPNOTSUPP, "required control 'network' is missing: the allowlist needs cgroup sock_addr BPF "
				  "programs on a cgroup2 hierarchy");
	caps.cgroup2_mount[0] = '\0';
	check_refused(EOPNOTSUPP, "required control 'network' is missing: the allowlist needs cgroup sock_addr BPF "
				  "programs on a cgroup2 hierarchy (there is none)");
	prof.require &= ~(unsigned)CORDON_CONTROL_NETWORK;
	assert_int_equal(check_ok(), CORDON_CONTROL_NETWORK);

	/* Mode none needs only the net namespace. */
	prof.net_mode = CORDON_NET_NONE;
	assert_int_equal(check_ok(), 0);
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	prof.require = CORDON_CONTROL_NETWORK;
	check_refused(EOPNOTSUPP, "required control 'network' is missing: network mode none needs a network namespace, "
				  "which cannot be created");
}

static void test_always_required(void **state)
{
	(void)state;
	prof.require = 0;
	caps.caller_caps_effective &= ~(1ULL << 7); /* CAP_SETUID */
	check_refused(EPERM,
		      "cordon-launch lacks cap_setuid (cap_sys_admin, cap_setuid and cap_setgid build the sandbox)");
	caps.no_new_privs = false;
	check_refused(EOPNOTSUPP, "no_new_privs is not supported by this kernel; every launch is refused");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_everything_available, setup),
		cmocka_unit_test_setup(test_landlock, setup),
		cmocka_unit_test_setup(test_seccomp, setup),
		cmocka_unit_test_setup(test_namespaces, setup),
		cmocka_unit_test_setup(test_cgroup, setup),
		cmocka_unit_test_setup(test_cgroup_default_limit_degrades, setup),
		cmocka_unit_test_setup(test_network, setup),
		cmocka_unit_test_setup(test_always_required, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
