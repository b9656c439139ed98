/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: missing kernel features never cause a silent insecure
 * fallback (every control, via the injected capability struct).
 *
 * For every control cordon_spawn() applies, the test presents a kernel
 * without it (a modified struct cordon_caps from the real probe; nothing
 * else can switch a control off) and asserts, against real sandboxes:
 *  - the profile REQUIRES it: cordon_spawn() returns -EOPNOTSUPP, the diag's
 *    step is "require" and its message names the control; no process runs;
 *  - the profile does not require it: the launch proceeds, the report says
 *    degraded: true, lists the control under `missing` with its meaning,
 *    the control's state is not "enforced" — and every OTHER control is
 *    still "enforced" in the report and really on inside (a probe in the
 *    degraded sandbox: no_new_privs, zero capabilities, the control-specific
 *    neighbour wall);
 *  - the network: mode none without a netns and without the eBPF policy
 *    (Landlock TCP only) and allowlist without the eBPF address policy are
 *    degraded (refused when required); with no layer left (no netns, no
 *    eBPF, no Landlock TCP; allowlist without eBPF and Landlock TCP) the
 *    launch is refused even when not required: never an open network;
 *  - the resolver without openat2 uses the held-fd walk, which refuses the
 *    same escapes (tests/security/test-path-traversal-denied and
 *    test-symlink-escape-denied run every case through both).
 * Layer: libcordon (probe caps -> cordon_spawn), real kernel. */
#include <sched.h>

#include "../kernel/spawn-test.h"

static struct sbx *S;

enum { W_LANDLOCK, W_SECCOMP, W_NAMESPACES, W_CGROUP, W_NETWORK };

struct feature_case {
	const char *name;    /* the control's name in require: and in the report */
	const char *network; /* profile network line */
	void (*strip)(struct cordon_caps *c);
	bool refused_anyway;  /* refused even when not required */
	const char *probe[3]; /* an attempt that another wall must still refuse */
	int probe_errno;
	const char *also; /* a second control the same kernel feature belongs to */
};

static void no_landlock(struct cordon_caps *c)
{
	c->landlock_abi = 0;
	c->landlock_errno = EOPNOTSUPP;
	c->landlock_fs_handled = c->landlock_net_handled = c->landlock_scoped = 0;
}
static void no_seccomp(struct cordon_caps *c)
{
	c->seccomp_filter = false;
}
static void no_cgroup(struct cordon_caps *c)
{
	c->cgroup_layout = CORDON_CGROUP_NONE;
}
static void no_pidns(struct cordon_caps *c)
{
	c->namespaces &= ~(unsigned long)CLONE_NEWPID;
}
/* Mode none without a network namespace and without the eBPF policy:
 * only Landlock's TCP deny is left. (With eBPF the deny-all policy keeps
 * the network enforced.) */
static void no_netns_no_ebpf(struct cordon_caps *c)
{
	c->namespaces &= ~(unsigned long)CLONE_NEWNET;
	c->bpf_cgroup_sock_addr = false;
}
static void no_net_layers(struct cordon_caps *c)
{
	c->namespaces &= ~(unsigned long)CLONE_NEWNET;
	c->bpf_cgroup_sock_addr = false;
	c->landlock_abi = 3; /* no TCP rules */
}
static void no_ebpf(struct cordon_caps *c)
{
	c->bpf_cgroup_sock_addr = false;
}
static void no_ebpf_no_ll_tcp(struct cordon_caps *c)
{
	c->bpf_cgroup_sock_addr = false;
	c->landlock_abi = 3;
}

/* clang-format off */
static const struct feature_case cases[] = {
	{ "landlock",   "mode: none", no_landlock,   false, { "read", "/etc/shadow", NULL }, ENOENT, NULL },
	{ "seccomp",    "mode: none", no_seccomp,    false, { "listdir", "/", NULL },        EACCES, NULL },
	{ "cgroup",     "mode: none", no_cgroup,     false, { "bpf", NULL, NULL },           EPERM, NULL },
	{ "namespaces", "mode: none", no_pidns,      false, { "bpf", NULL, NULL },           EPERM, NULL },
	/* The network namespace is a namespace too: both say degraded. */
	{ "network",    "mode: none", no_netns_no_ebpf, false, { "tcp-connect", "127.0.0.1", "9" }, EACCES, "namespaces" },
	{ "network",    "mode: none", no_net_layers, true,  { NULL, NULL, NULL },            0, NULL },
	/* Allowlist without the eBPF address policy: Landlock TCP ports only. */
	{ "network",    "mode: allowlist\n    allow: [{cidr: 127.0.0.2/32, ports: [9]}]", no_ebpf, false, { "tcp-connect", "127.0.0.1", "10" }, EACCES, NULL },
	{ "network",    "mode: allowlist\n    allow: [{cidr: 127.0.0.2/32, ports: [9]}]", no_ebpf_no_ll_tcp, true, { NULL, NULL, NULL }, 0, NULL },
};
/* clang-format on */

static const char *const all_controls[] = { "landlock", "seccomp", "cgroup", "namespaces", "network" };

static bool missing_names(const json_t *rep, const char *control)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(rep, "missing"), i, m)
	{
		const char *c = json_string_value(json_object_get(m, "control"));

		if (c && strcmp(c, control) == 0)
			return true;
	}
	return false;
}

static void run_case(const struct feature_case *fc)
{
	struct cordon_caps caps = S->caps;
	struct sbx_opts o = { .network = fc->network };
	char req[128];
	struct cordon_profile *p;
	struct cordon_diag d = {};
	struct sbx_result res;
	char *argv[] = { NULL, (char *)"exit", (char *)"0", NULL };
	int r;

	fc->strip(&caps);
	printf("case: %s missing (%s)\n", fc->name, fc->network);

	/* Required: refused, naming it. */
	snprintf(req, sizeof(req), "[%s]", fc->name);
	o.require = req;
	p = sbx_profile(S, &o);
	argv[0] = p->command[0];
	r = sbx_spawn(p, &caps, argv, &res, &d);
	printf("  required: %d step '%s': %s\n", r, d.step, d.message);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_string_equal(d.step, "require");
	assert_non_null(strstr(d.message, fc->name));
	cordon_profile_free(p);

	/* Not required. */
	o.require = "[]";
	p = sbx_profile(S, &o);
	argv[0] = p->command[0];
	memset(&d, 0, sizeof(d));
	r = sbx_spawn(p, &caps, argv, &res, &d);
	if (fc->refused_anyway) {
		printf("  preferred: %d step '%s': %s\n", r, d.step, d.message);
		assert_int_equal(r, -EOPNOTSUPP);
		assert_true(strcmp(d.step, "network") == 0 || strcmp(d.step, "require") == 0);
		cordon_profile_free(p);
		return;
	}
	assert_int_equal(r, 0);
	assert_exited(res.status, 0);
	assert_true(json_is_true(json_object_get(res.report, "degraded")));
	assert_true(missing_names(res.report, fc->name));
	assert_string_not_equal(sbx_state(res.report, fc->name), "enforced");
	for (size_t i = 0; i < ELEMENTSOF(all_controls); i++)
		if (strcmp(all_controls[i], fc->name) != 0 && (!fc->also || strcmp(all_controls[i], fc->also) != 0))
			assert_string_equal(sbx_state(res.report, all_controls[i]), "enforced");
	sbx_result_done(&res);

	/* Inside the degraded sandbox the other walls really hold. */
	assert_exited(sbx_probe_with(p, &caps, "nnp", NULL, NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, "caps", NULL, NULL), 0);
	assert_exited(sbx_probe_with(p, &caps, fc->probe[0], fc->probe[1], fc->probe[2]), fc->probe_errno);
	cordon_profile_free(p);
}

static void test_missing_kernel_feature_no_silent_fallback(void **state)
{
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		run_case(&cases[i]);
}

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("sec-degraded");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_kernel_feature_no_silent_fallback),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
