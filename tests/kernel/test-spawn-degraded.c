/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Missing kernel features, presented through an injected capability struct
 * (the only way to switch a control off, and only in tests):
 *  - a control in `require` that is missing refuses the launch, naming it,
 *    and leaves nothing behind;
 *  - a missing preferred control gives a degraded report, and every other
 *    control is verified to be still on, from inside the sandbox. */
#include <ftw.h>
#include <sched.h>

#include "spawn-test.h"

static struct sbx *S;

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("spawn-degraded");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

static void expect_refused(const struct sbx_opts *o, const struct cordon_caps *caps, const char *step,
			   const char *needle)
{
	struct cordon_profile *p = sbx_profile(S, o);
	char *argv[] = { p->command[0], (char *)"exit", (char *)"0", NULL };
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	int r;

	r = sbx_spawn(p, caps, argv, &res, &d);
	printf("refused: step '%s': %s\n", d.step, d.message);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_string_equal(d.step, step);
	assert_non_null(strstr(d.message, needle));
	cordon_profile_free(p);
}

/* --- require: fail closed ------------------------------------------------- */

/* no_new_privs is never a profile choice: refused even with nothing required
 * (it was listed as missing and the launch went on). */
static void test_no_new_privs_missing_refuses_always(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[]" };

	(void)state;
	caps.no_new_privs = false;
	expect_refused(&o, &caps, "require", "no_new_privs is not supported by this kernel; every launch is refused");
}

static void test_require_landlock_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;

	(void)state;
	caps.landlock_abi = 0;
	caps.landlock_errno = EOPNOTSUPP;
	expect_refused(NULL, &caps, "require", "'landlock'");
}

static void test_require_seccomp_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;

	(void)state;
	caps.seccomp_filter = false;
	expect_refused(NULL, &caps, "require", "'seccomp'");
}

static void test_require_cgroup_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;

	(void)state;
	caps.cgroup_layout = CORDON_CGROUP_NONE;
	expect_refused(NULL, &caps, "require", "'cgroup'");
}

static void test_require_namespaces_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;

	(void)state;
	caps.namespaces &= ~(unsigned long)CLONE_NEWPID;
	expect_refused(NULL, &caps, "require", "'namespaces'");
}

static void test_require_network_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, network]" };

	(void)state;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	caps.bpf_cgroup_sock_addr = false;
	expect_refused(&o, &caps, "require", "'network'");
}

static void test_require_network_allowlist_without_ebpf_refuses(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[network]",
			      .network = "mode: allowlist\n    allow: [{cidr: 127.0.0.1/32, ports: [9]}]" };

	(void)state;
	caps.bpf_cgroup_sock_addr = false;
	expect_refused(&o, &caps, "require", "'network'");
}

/* The root guard is opt-in (never in the default list): required and
 * missing, the launch is refused before anything exists, naming why. */
static void test_require_root_guard_missing_refuses(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, namespaces, root_guard]" };

	(void)state;
	caps.bpf_lsm_cgroup = false;
	caps.bpf_lsm_cgroup_errno = EPERM;
	caps.pidfd_getfd = false; /* and no seccomp supervisor either */
	expect_refused(&o, &caps, "require",
		       "required control 'root_guard' is missing: BPF LSM programs cannot be attached to a cgroup "
		       "here (the kernel refuses to load BPF LSM programs (EPERM))");
	/* A delegated read-write root needs the guard as much as the
	 * profile's own (the verdict table sees only the profile's). */
	caps.namespaces &= ~(unsigned long)CLONE_NEWNS;
	o.require = "[landlock, seccomp, cgroup, root_guard]";
	expect_refused(&o, &caps, "require",
		       "required control 'root_guard' is missing: without a mount namespace a read-write root is not a "
		       "mount of its own");
}

/* The probe says yes, but this launcher cannot load the programs (a
 * runtime fact the caps cannot know; here: a kernel that refuses BPF LSM
 * programs while the struct claims otherwise). Required: refused at the
 * plan, with the loader's reason. Only where the kernel really refuses. */
static void test_require_root_guard_load_failure_refuses(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, namespaces, root_guard]" };

	(void)state;
	if (S->caps.bpf_lsm_cgroup) {
		printf("this kernel loads BPF LSM programs: nothing to refuse\n");
		return;
	}
	caps.bpf_lsm_cgroup = true;
	caps.bpf_lsm_cgroup_errno = 0;
	caps.pidfd_getfd = false; /* no seccomp supervisor to fall back to */
	expect_refused(&o, &caps, "require",
		       "required control 'root_guard' is missing: the root guard could not be "
		       "loaded: loading the BPF LSM programs:");
}

static json_t *run_report(const struct cordon_profile *p, const struct cordon_caps *caps);

/* The same load failure where the seccomp supervisor can run: the guard
 * falls back to it, enforced, and a required root_guard launches. */
static void test_require_root_guard_load_failure_falls_back_to_supervisor(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, namespaces, root_guard]" };
	struct cordon_profile *p;
	const json_t *rg;
	json_t *rep;

	(void)state;
	if (S->caps.bpf_lsm_cgroup || !cordon_probe_root_guard_notify(&S->caps)) {
		printf("this kernel loads BPF LSM programs or cannot run the supervisor: nothing to fall back\n");
		return;
	}
	caps.bpf_lsm_cgroup = true;
	caps.bpf_lsm_cgroup_errno = 0;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	rg = json_object_get(json_object_get(rep, "controls"), "root_guard");
	assert_string_equal(sbx_state(rep, "root_guard"), "enforced");
	assert_string_equal(json_string_value(json_object_get(rg, "attached")), "seccomp-notify");
	/* Its supervisor ended by itself once the instance was reaped. */
	assert_string_equal(json_string_value(json_object_get(rg, "supervisor")), "exited");
	assert_int_equal(sbx_missing_count(rep, "root_guard"), 0);
	json_decref(rep);
	cordon_profile_free(p);
}

static void test_open_network_never_allowed(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[]" };

	(void)state;
	/* Neither a network namespace nor Landlock TCP rules: even without
	 * `require: [network]` this is refused. */
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	caps.landlock_abi = 3;
	caps.bpf_cgroup_sock_addr = false;
	expect_refused(&o, &caps, "network", "neither");
}

/* Directories named for instance "leftover-check" in any cgroup hierarchy
 * (cgroup directories are "i-<owner>-<start>-<instance name>"). */
static unsigned leftover_dirs;

static int count_leftover(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	static const char suffix[] = "-leftover-check";
	size_t len = strlen(path);

	(void)st;
	(void)ftw;
	if (type == FTW_D && len > sizeof(suffix) - 1 && !strcmp(path + len - (sizeof(suffix) - 1), suffix))
		leftover_dirs++;
	return 0;
}

static unsigned count_leftover_dirs(void)
{
	leftover_dirs = 0;
	/* Physical walk over every hierarchy mounted below /sys/fs/cgroup; the
	 * walk itself must succeed, or a count of 0 would mean nothing. */
	assert_int_equal(nftw("/sys/fs/cgroup", count_leftover, 32, FTW_PHYS), 0);
	return leftover_dirs;
}

static void test_failed_setup_leaves_nothing(void **state)
{
	struct cordon_profile *p = sbx_profile(S, NULL);
	char *argv[] = { (char *)"/nonexistent/connector", NULL };
	char *ok_argv[] = { p->command[0], (char *)"exit", (char *)"0", NULL };
	struct cordon_launch_policy pol = { .profile = p, .argv = argv, .instance_name = "leftover-check" };
	struct cordon_instance *inst = NULL;
	struct cordon_diag d = { 0 };
	int r, st = -1;

	(void)state;
	/* The check can see an instance's cgroup: a successful launch under the
	 * same name has at least its cgroup2 directory until it is freed. */
	pol.argv = ok_argv;
	r = cordon_spawn(&pol, &S->caps, &inst, &d);
	if (r < 0)
		fprintf(stderr, "spawn: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_true(count_leftover_dirs() >= 1);
	assert_int_equal(cordon_instance_wait(inst, &st), 0);
	assert_exited(st, 0);
	cordon_instance_free(inst);
	inst = NULL;
	assert_int_equal(count_leftover_dirs(), 0);

	pol.argv = argv;
	r = cordon_spawn(&pol, &S->caps, &inst, &d);
	assert_int_equal(r, -ENOENT);
	assert_string_equal(d.step, "exec");
	assert_null(inst);
	/* No instance cgroup left in any hierarchy. */
	assert_int_equal(count_leftover_dirs(), 0);
	cordon_profile_free(p);
}

/* --- preferred: degraded, everything else still on ------------------------ */

static json_t *run_report(const struct cordon_profile *p, const struct cordon_caps *caps)
{
	char *argv[] = { p->command[0], (char *)"exit", (char *)"0", NULL };
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	int r;

	r = sbx_spawn(p, caps, argv, &res, &d);
	if (r < 0)
		fprintf(stderr, "spawn: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_exited(res.status, 0);
	return res.report;
}

static bool missing_names(const json_t *report, const char *control)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(report, "missing"), i,
			   m) if (strcmp(json_string_value(json_object_get(m, "control")), control) == 0) return true;
	return false;
}

static void test_landlock_missing_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[seccomp, cgroup, namespaces]" };
	struct cordon_profile *p;
	json_t *rep;

	(void)state;
	caps.landlock_abi = 0;
	caps.landlock_errno = EOPNOTSUPP;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	assert_true(json_is_true(json_object_get(rep, "degraded")));
	assert_true(missing_names(rep, "landlock"));
	assert_string_equal(sbx_state(rep, "landlock"), "unavailable");
	assert_string_equal(sbx_state(rep, "seccomp"), "enforced");
	assert_string_equal(sbx_state(rep, "cgroup"), "enforced");
	assert_string_equal(sbx_state(rep, "namespaces"), "enforced");
	assert_string_equal(sbx_state(rep, "network"), "enforced");
	json_decref(rep);

	/* Inside: Landlock really off ("/" lists), the rest really on. */
	assert_exited(sbx_probe_with(p, &caps, "listdir", "/", NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, "read", "/etc/shadow", NULL), ENOENT);
	assert_exited(sbx_probe_with(p, &caps, "bpf", NULL, NULL), EPERM);
	assert_exited(sbx_probe_with(p, &caps, "caps", NULL, NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, "nnp", NULL, NULL), 0);
	/* Without Landlock's TCP rule, the eBPF deny-all answers (EPERM)
	 * inside the empty network namespace. */
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", "9"), EPERM);
	cordon_profile_free(p);
}

static void test_landlock_old_abi_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct cordon_profile *p;
	json_t *rep, *eff;

	(void)state;
	caps.landlock_abi = 3;
	p = sbx_profile(S, NULL);
	rep = run_report(p, &caps);
	assert_true(json_is_true(json_object_get(rep, "degraded")));
	assert_string_equal(sbx_state(rep, "landlock"), "degraded");
	eff = json_object_get(json_object_get(json_object_get(rep, "controls"), "landlock"), "effective");
	assert_string_equal(json_string_value(json_object_get(eff, "fs")), "0x7fff");
	assert_string_equal(json_string_value(json_object_get(eff, "net")), "0x0");
	assert_string_equal(json_string_value(json_object_get(eff, "scoped")), "0x0");
	assert_string_equal(sbx_state(rep, "network"), "enforced");
	json_decref(rep);
	/* Filesystem rules still on; TCP left to the eBPF policy (EPERM) and
	 * the network namespace. */
	assert_exited(sbx_probe_with(p, &caps, "listdir", "/", NULL), EACCES);
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", "9"), EPERM);
	cordon_profile_free(p);
}

static void test_seccomp_missing_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, cgroup, namespaces]" };
	struct cordon_profile *p;
	json_t *rep;

	(void)state;
	caps.seccomp_filter = false;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	assert_true(json_is_true(json_object_get(rep, "degraded")));
	assert_true(missing_names(rep, "seccomp"));
	assert_string_equal(sbx_state(rep, "seccomp"), "unavailable");
	assert_true(json_is_null(json_object_get(rep, "seccomp_program_hash")) ||
		    !json_object_get(rep, "seccomp_program_hash"));
	assert_string_equal(sbx_state(rep, "landlock"), "enforced");
	json_decref(rep);
	/* keyctl answers (seccomp really off); Landlock, caps, nnp still on. */
	assert_exited(sbx_probe_with(p, &caps, "keyctl", NULL, NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, "listdir", "/", NULL), EACCES);
	assert_exited(sbx_probe_with(p, &caps, "caps", NULL, NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, "nnp", NULL, NULL), 0);
	cordon_profile_free(p);
}

static void test_cgroup_missing_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, namespaces]" };
	struct cordon_profile *p;
	json_t *rep;

	(void)state;
	caps.cgroup_layout = CORDON_CGROUP_NONE;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	assert_true(json_is_true(json_object_get(rep, "degraded")));
	assert_string_equal(sbx_state(rep, "cgroup"), "unavailable");
	assert_null(json_object_get(rep, "cgroup_stats"));
	assert_string_equal(sbx_state(rep, "landlock"), "enforced");
	assert_string_equal(sbx_state(rep, "seccomp"), "enforced");
	json_decref(rep);
	assert_exited(sbx_probe_with(p, &caps, "bpf", NULL, NULL), EPERM);
	assert_exited(sbx_probe_with(p, &caps, "listdir", "/", NULL), EACCES);
	cordon_profile_free(p);
}

static void test_netns_missing_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup]" };
	struct cordon_profile *p;
	json_t *rep;

	(void)state;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	caps.bpf_cgroup_sock_addr = false;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	assert_true(json_is_true(json_object_get(rep, "degraded")));
	assert_string_equal(sbx_state(rep, "namespaces"), "degraded");
	assert_string_equal(sbx_state(rep, "network"), "degraded");
	assert_true(missing_names(rep, "network"));
	json_decref(rep);
	/* Host network namespace, but Landlock still refuses TCP. */
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", "9"), EACCES);
	assert_exited(sbx_probe_with(p, &caps, "read", "/etc/shadow", NULL), ENOENT);
	cordon_profile_free(p);
}

static void test_netns_missing_ebpf_keeps_network_enforced(void **state)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, network]" };
	struct cordon_profile *p;
	json_t *rep, *net;

	(void)state;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	p = sbx_profile(S, &o);
	rep = run_report(p, &caps);
	net = json_object_get(json_object_get(rep, "controls"), "network");
	assert_string_equal(json_string_value(json_object_get(net, "state")), "enforced");
	assert_true(json_is_true(json_object_get(net, "ebpf")));
	assert_true(json_is_false(json_object_get(net, "netns")));
	json_decref(rep);
	/* Landlock answers first for TCP; with Landlock gone too, the eBPF
	 * deny-all still refuses (EPERM from the cgroup connect4 hook). */
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", "9"), EACCES);
	cordon_profile_free(p);
	caps.landlock_abi = 0;
	o.require = "[seccomp, cgroup, network]";
	p = sbx_profile(S, &o);
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", "9"), EPERM);
	cordon_profile_free(p);
}

/* The root guard missing and not required: the launch goes ahead, the
 * report is degraded and names the consequence, every other control is
 * on. Without a read-write root there is nothing to guard: neither
 * degraded nor refused, even when required. */
static void test_root_guard_missing_degraded(void **state)
{
	struct cordon_caps caps = S->caps;
	struct cordon_profile *p;
	const json_t *rg;
	json_t *rep;

	(void)state;
	caps.bpf_lsm_cgroup = false;
	caps.bpf_lsm_cgroup_errno = EOPNOTSUPP;
	caps.pidfd_getfd = false; /* and no seccomp supervisor */
	p = sbx_profile(S, NULL);
	rep = run_report(p, &caps);
	sbx_assert_degraded_only_by_root_guard(rep, &caps);
	rg = json_object_get(json_object_get(rep, "controls"), "root_guard");
	assert_string_equal(
		json_string_value(json_object_get(rg, "reason")),
		"BPF LSM programs cannot be attached to a cgroup here (\"bpf\" is not an active LSM (see lsm=))");
	assert_null(json_object_get(rg, "attached"));
	for (const char *const *c = (const char *const[]){ "landlock", "seccomp", "cgroup", "namespaces", "network",
							   "capabilities", "no_new_privs", NULL };
	     *c; c++)
		assert_string_equal(sbx_state(rep, *c), "enforced");
	json_decref(rep);
	cordon_profile_free(p);

	/* No read-write root (the /data root made read-only). */
	{
		struct sbx_opts o = { .require = "[landlock, seccomp, cgroup, namespaces, root_guard]" };

		p = sbx_profile(S, &o);
		for (size_t i = 0; i < p->n_fs_roots; i++)
			if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
				p->fs_roots[i].access = CORDON_ACCESS_READ;
		rep = run_report(p, &caps);
		assert_true(json_is_false(json_object_get(rep, "degraded")));
		assert_false(missing_names(rep, "root_guard"));
		assert_string_equal(sbx_state(rep, "root_guard"), "disabled_by_policy");
		rg = json_object_get(json_object_get(rep, "controls"), "root_guard");
		assert_string_equal(json_string_value(json_object_get(rg, "reason")), "no read-write root");
		json_decref(rep);
		cordon_profile_free(p);
	}
}

static void test_full_kernel_not_degraded(void **state)
{
	struct cordon_profile *p;
	json_t *rep;

	(void)state;
	p = sbx_profile(S, NULL);
	rep = run_report(p, &S->caps);
	sbx_assert_degraded_only_by_root_guard(rep, &S->caps);
	assert_int_equal(strlen(json_string_value(json_object_get(rep, "policy_hash"))), 64);
	assert_int_equal(strlen(json_string_value(json_object_get(rep, "seccomp_program_hash"))), 64);
	for (const char *const *c = (const char *const[]){ "landlock", "seccomp", "cgroup", "namespaces", "network",
							   "capabilities", "no_new_privs", NULL };
	     *c; c++)
		assert_string_equal(sbx_state(rep, *c), "enforced");
	json_decref(rep);
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_new_privs_missing_refuses_always),
		cmocka_unit_test(test_require_landlock_missing_refuses),
		cmocka_unit_test(test_require_root_guard_missing_refuses),
		cmocka_unit_test(test_require_root_guard_load_failure_refuses),
		cmocka_unit_test(test_require_root_guard_load_failure_falls_back_to_supervisor),
		cmocka_unit_test(test_require_seccomp_missing_refuses),
		cmocka_unit_test(test_require_cgroup_missing_refuses),
		cmocka_unit_test(test_require_namespaces_missing_refuses),
		cmocka_unit_test(test_require_network_missing_refuses),
		cmocka_unit_test(test_require_network_allowlist_without_ebpf_refuses),
		cmocka_unit_test(test_open_network_never_allowed),
		cmocka_unit_test(test_failed_setup_leaves_nothing),
		cmocka_unit_test(test_landlock_missing_degraded),
		cmocka_unit_test(test_landlock_old_abi_degraded),
		cmocka_unit_test(test_seccomp_missing_degraded),
		cmocka_unit_test(test_cgroup_missing_degraded),
		cmocka_unit_test(test_netns_missing_degraded),
		cmocka_unit_test(test_netns_missing_ebpf_keeps_network_enforced),
		cmocka_unit_test(test_root_guard_missing_degraded),
		cmocka_unit_test(test_full_kernel_not_degraded),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
