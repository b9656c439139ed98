/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiling seccomp policies (no kernel needed): validation of the profile's
 * names, the policy hash and its canonical form, the program hash, the
 * per-process cache and the shape of the chained strict program.
 * tests/kernel/test-seccomp.c loads the programs into the real kernel. */

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "cleanup.h"
#include "probe.h"
#include "seccomp.h"

struct policy_in {
	enum cordon_seccomp_base base;
	enum cordon_seccomp_action action;
	const char *const *allow;
	size_t n_allow;
	const char *const *deny;
	size_t n_deny;
};

static void fill(struct cordon_profile *p, const struct policy_in *in)
{
	*p = (struct cordon_profile){
		.seccomp_base = in->base,
		.seccomp_action = in->action,
		.seccomp_allow = (char **)in->allow,
		.n_seccomp_allow = in->n_allow,
		.seccomp_deny = (char **)in->deny,
		.n_seccomp_deny = in->n_deny,
	};
}

static struct cordon_seccomp_program *compile_ok(const struct policy_in *in, const struct cordon_caps *caps)
{
	struct cordon_profile p;
	struct cordon_seccomp_program *prog = NULL;
	struct cordon_diag d = { 0 };
	int r;

	fill(&p, in);
	r = cordon_seccomp_compile(&p, caps, &prog, &d);
	if (r < 0)
		fail_msg("compile: %d %s", r, d.message);
	assert_non_null(prog);
	assert_int_equal(strlen(prog->policy_hash), 64);
	assert_int_equal(strlen(prog->program_hash), 64);
	assert_true(prog->n_insns > 0 && prog->n_insns <= BPF_MAXINSNS);
	return prog;
}

/* Compiles a policy that must fail; returns the errno and leaves the
 * message in *d. */
static int compile_err(const struct policy_in *in, const struct cordon_caps *caps, struct cordon_diag *d)
{
	struct cordon_profile p;
	struct cordon_seccomp_program *prog = (void *)0x1;
	int r;

	fill(&p, in);
	memset(d, 0, sizeof(*d));
	r = cordon_seccomp_compile(&p, caps, &prog, d);
	assert_true(r < 0);
	assert_ptr_equal(prog, (void *)0x1); /* ret_ untouched on failure */
	assert_int_equal(d->error, -r);
	assert_string_equal(d->step, "seccomp");
	return -r;
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)s, strlen(s));
	for (size_t i = 0; i < sizeof(h); i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void test_policy_hash_canonical(void **state)
{
	static const char *const allow[] = { "syncfs", "ptrace" };
	static const char *const deny[] = { "uname" };
	struct policy_in in = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_KILL, allow, 2, deny, 1 };
	struct cordon_seccomp_program *prog = compile_ok(&in, NULL);
	char want[65];

	/* The documented canonical form (docs/seccomp.md), hashed here
	 * independently: sorted names, each followed by a comma. */
	sha256_hex("cordon-seccomp-policy/2\nbase=strict\naction=kill\narch=c000003e\nkill=process\n"
		   "allow=ptrace,syncfs,\ndeny=uname,\nopts=\n",
		   want);
	assert_string_equal(prog->policy_hash, want);
	cordon_seccomp_program_free(prog);

	struct policy_in def = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	prog = compile_ok(&def, NULL);
	sha256_hex("cordon-seccomp-policy/"
		   "2\nbase=default\naction=errno\narch=c000003e\nkill=process\nallow=\ndeny=\nopts=\n",
		   want);
	assert_string_equal(prog->policy_hash, want);
	cordon_seccomp_program_free(prog);
}

static void test_hash_order_independent(void **state)
{
	static const char *const a1[] = { "syncfs", "ptrace", "kcmp" };
	static const char *const a2[] = { "kcmp", "syncfs", "ptrace", "kcmp" }; /* reordered, duplicated */
	static const char *const d1[] = { "uname", "getcwd" };
	static const char *const d2[] = { "getcwd", "uname" };
	struct policy_in in1 = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, a1, 3, d1, 2 };
	struct policy_in in2 = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, a2, 4, d2, 2 };
	struct cordon_seccomp_program *p1 = compile_ok(&in1, NULL), *p2 = compile_ok(&in2, NULL);
	struct cordon_seccomp_program *again = compile_ok(&in1, NULL);

	assert_string_equal(p1->policy_hash, p2->policy_hash);
	assert_string_equal(p1->program_hash, p2->program_hash);
	assert_int_equal(p1->n_insns, p2->n_insns);
	assert_memory_equal(p1->insns, p2->insns, p1->n_insns * sizeof(struct sock_filter));
	/* Stable across compilations. */
	assert_string_equal(p1->policy_hash, again->policy_hash);
	assert_string_equal(p1->program_hash, again->program_hash);
	cordon_seccomp_program_free(p1);
	cordon_seccomp_program_free(p2);
	cordon_seccomp_program_free(again);
}

static void test_hash_distinguishes(void **state)
{
	static const char *const allow[] = { "ptrace" };
	static const char *const deny[] = { "syncfs" };
	const struct policy_in variants[] = {
		{ CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 },
		{ CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 },
		{ CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_KILL, NULL, 0, NULL, 0 },
		{ CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_LOG, NULL, 0, NULL, 0 },
		{ CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, allow, 1, NULL, 0 },
		{ CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, deny, 1 },
	};
	struct cordon_seccomp_program *progs[ELEMENTSOF(variants)];

	for (size_t i = 0; i < ELEMENTSOF(variants); i++)
		progs[i] = compile_ok(&variants[i], NULL);
	for (size_t i = 0; i < ELEMENTSOF(variants); i++)
		for (size_t j = i + 1; j < ELEMENTSOF(variants); j++) {
			assert_string_not_equal(progs[i]->policy_hash, progs[j]->policy_hash);
			assert_string_not_equal(progs[i]->program_hash, progs[j]->program_hash);
		}
	for (size_t i = 0; i < ELEMENTSOF(variants); i++)
		cordon_seccomp_program_free(progs[i]);
}

static void test_program_hash_is_sha256_of_insns(void **state)
{
	struct policy_in in = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	struct cordon_seccomp_program *prog = compile_ok(&in, NULL);
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[65];

	crypto_hash_sha256(h, (const unsigned char *)prog->insns, prog->n_insns * sizeof(struct sock_filter));
	for (size_t i = 0; i < sizeof(h); i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	assert_string_equal(prog->program_hash, hex);
	cordon_seccomp_program_free(prog);
}

static void test_unknown_names(void **state)
{
	static const char *const unknown[] = { "read", "no_such_syscall" };
	static const char *const bad[] = { "read;write" };
	static const char *const upper[] = { "Read" };
	static const char *const empty[] = { "" };
	static const char *const clone3[] = { "clone3" };
	static const char *const both[] = { "ptrace" };
	static const char *const uring[] = { "ptrace", "io_uring_setup" };
	struct cordon_diag d;

	/* io_uring is never liftable: its operations carry modes and xattr
	 * names seccomp cannot see. */
	struct policy_in u = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, uring, 2, NULL, 0 };
	assert_int_equal(compile_err(&u, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp.allow: 'io_uring_setup' cannot be allowed: io_uring operations (open, "
				       "mkdir, setxattr) would bypass the setuid/setgid and xattr rules");

	struct policy_in a = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, unknown, 2, NULL, 0 };
	assert_int_equal(compile_err(&a, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp.allow: unknown syscall 'no_such_syscall'");

	struct policy_in b = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, NULL, 0, unknown, 2 };
	assert_int_equal(compile_err(&b, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp.deny: unknown syscall 'no_such_syscall'");

	struct policy_in c = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, bad, 1, NULL, 0 };
	assert_int_equal(compile_err(&c, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp.allow: 'read;write' is not a syscall name");

	struct policy_in e = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, upper, 1 };
	assert_int_equal(compile_err(&e, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp.deny: 'Read' is not a syscall name");

	struct policy_in f = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, empty, 1, NULL, 0 };
	assert_int_equal(compile_err(&f, NULL, &d), EINVAL);

	struct policy_in g = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, both, 1, both, 1 };
	assert_int_equal(compile_err(&g, NULL, &d), EINVAL);
	assert_string_equal(d.message, "seccomp: 'ptrace' is in both allow and deny");

	struct policy_in h = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, clone3, 1 };
	assert_int_equal(compile_err(&h, NULL, &d), EINVAL);
	assert_non_null(strstr(d.message, "'clone3' always returns ENOSYS"));

	struct policy_in i = { (enum cordon_seccomp_base)7, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	assert_int_equal(compile_err(&i, NULL, &d), EINVAL);
	struct policy_in j = { CORDON_SECCOMP_DEFAULT, (enum cordon_seccomp_action)9, NULL, 0, NULL, 0 };
	assert_int_equal(compile_err(&j, NULL, &d), EINVAL);
}

static void test_new_syscalls_by_number(void **state)
{
	/* Newer than libseccomp 2.5.4: resolved from cordon's own table. */
	static const char *const names[] = { "open_tree_attr", "mseal", "listmount", "lsm_get_self_attr" };
	struct policy_in in = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, names, ELEMENTSOF(names), NULL, 0 };
	struct cordon_seccomp_program *prog = compile_ok(&in, NULL);

	cordon_seccomp_program_free(prog);
}

static void test_caps_adapt(void **state)
{
	struct policy_in def = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_KILL, NULL, 0, NULL, 0 };
	struct policy_in log = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_LOG, NULL, 0, NULL, 0 };
	struct cordon_caps caps = {
		.seccomp_filter = true,
		.seccomp_kill_process = true,
		.seccomp_log = true,
		.seccomp_native_arch = 0xc000003e,
	};
	struct cordon_seccomp_program *full, *none, *old;
	struct cordon_diag d;

	full = compile_ok(&def, &caps);
	none = compile_ok(&def, NULL);
	assert_string_equal(full->policy_hash, none->policy_hash);
	assert_string_equal(full->program_hash, none->program_hash);

	/* A kernel before 4.14: KILL_THREAD instead of KILL_PROCESS. */
	caps.seccomp_kill_process = false;
	old = compile_ok(&def, &caps);
	assert_string_not_equal(old->policy_hash, full->policy_hash);
	assert_string_not_equal(old->program_hash, full->program_hash);
	for (size_t i = 0; i < old->n_insns; i++)
		if (BPF_CLASS(old->insns[i].code) == BPF_RET)
			assert_int_not_equal(old->insns[i].k, SECCOMP_RET_KILL_PROCESS);

	caps.seccomp_log = false;
	assert_int_equal(compile_err(&log, &caps, &d), EOPNOTSUPP);
	assert_non_null(strstr(d.message, "SECCOMP_RET_LOG"));

	caps.seccomp_native_arch = 0x40000003; /* i386 */
	assert_int_equal(compile_err(&def, &caps, &d), EINVAL);
	assert_non_null(strstr(d.message, "native arch"));

	cordon_seccomp_program_free(full);
	cordon_seccomp_program_free(none);
	cordon_seccomp_program_free(old);
}

/* The strict program is the allowlist followed by the guard program: no RET
 * ALLOW before the guard part begins, and every jump stays inside. */
static void test_strict_program_shape(void **state)
{
	struct policy_in def = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	struct policy_in strict = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	struct cordon_seccomp_program *g = compile_ok(&def, NULL), *s = compile_ok(&strict, NULL);
	size_t first = s->n_insns - g->n_insns, n_ja = 0;

	assert_true(s->n_insns > g->n_insns);
	/* The guard program is the tail, unchanged. */
	assert_memory_equal(s->insns + first, g->insns, g->n_insns * sizeof(struct sock_filter));
	for (size_t i = 0; i < first; i++) {
		const struct sock_filter *f = &s->insns[i];

		if (BPF_CLASS(f->code) == BPF_RET)
			assert_int_not_equal(f->k, SECCOMP_RET_ALLOW);
		if (f->code == (BPF_JMP | BPF_JA)) {
			assert_int_equal(i + 1 + f->k, first);
			n_ja++;
		} else if (BPF_CLASS(f->code) == BPF_JMP) {
			assert_true(i + 1 + f->jt < s->n_insns && i + 1 + f->jf < s->n_insns);
		}
	}
	assert_true(n_ja > 0);
	cordon_seccomp_program_free(g);
	cordon_seccomp_program_free(s);
}

static void test_cache(void **state)
{
	static const char *const a1[] = { "ptrace", "kcmp" };
	static const char *const a2[] = { "kcmp", "ptrace" };
	struct policy_in in1 = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, a1, 2, NULL, 0 };
	struct policy_in in2 = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, a2, 2, NULL, 0 };
	struct policy_in other = { CORDON_SECCOMP_STRICT, CORDON_SECCOMP_ERRNO, a2, 2, NULL, 0 };
	static const char *const unknown[] = { "nope_nope" };
	struct policy_in bad = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, unknown, 1, NULL, 0 };
	const struct cordon_seccomp_program *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = (void *)0x1;
	struct cordon_profile p;
	struct cordon_diag d = { 0 };
	struct cordon_seccomp_program *fresh;

	cordon_seccomp_cache_clear();
	fill(&p, &in1);
	assert_int_equal(cordon_seccomp_compile_cached(&p, NULL, &p1, &d), 0);
	fill(&p, &in2);
	assert_int_equal(cordon_seccomp_compile_cached(&p, NULL, &p2, &d), 0);
	assert_ptr_equal(p1, p2); /* equal policies share one program */
	fill(&p, &other);
	assert_int_equal(cordon_seccomp_compile_cached(&p, NULL, &p3, &d), 0);
	assert_ptr_not_equal(p1, p3);
	assert_string_not_equal(p1->policy_hash, p3->policy_hash);

	/* The cached program is the one compile() builds. */
	fresh = compile_ok(&in1, NULL);
	assert_string_equal(fresh->program_hash, p1->program_hash);
	cordon_seccomp_program_free(fresh);

	fill(&p, &bad);
	assert_int_equal(cordon_seccomp_compile_cached(&p, NULL, &p4, &d), -EINVAL);
	assert_ptr_equal(p4, (void *)0x1);
	assert_string_equal(d.message, "seccomp.allow: unknown syscall 'nope_nope'");

	cordon_seccomp_cache_clear();
	fill(&p, &in1);
	assert_int_equal(cordon_seccomp_compile_cached(&p, NULL, &p4, &d), 0);
	assert_non_null(p4);
	cordon_seccomp_cache_clear();
}

static void test_name_known(void **state)
{
	assert_true(cordon_seccomp_syscall_name_known("read"));
	assert_true(cordon_seccomp_syscall_name_known("clone3"));
	assert_true(cordon_seccomp_syscall_name_known("open_tree_attr")); /* cordon's table */
	assert_true(cordon_seccomp_syscall_name_known("stime"));	  /* other arches only */
	assert_false(cordon_seccomp_syscall_name_known("no_such_syscall"));
	assert_false(cordon_seccomp_syscall_name_known("READ"));
	assert_false(cordon_seccomp_syscall_name_known(""));
	assert_false(cordon_seccomp_syscall_name_known(NULL));
	assert_false(cordon_seccomp_syscall_name_known(
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

static void test_null_args(void **state)
{
	struct cordon_seccomp_program *prog = NULL;
	const struct cordon_seccomp_program *cprog = NULL;
	struct cordon_diag d = { 0 };

	assert_int_equal(cordon_seccomp_compile(NULL, NULL, &prog, &d), -EINVAL);
	assert_int_equal(cordon_seccomp_compile_cached(NULL, NULL, &cprog, NULL), -EINVAL);
	assert_int_equal(cordon_seccomp_load(NULL), -EINVAL);
	cordon_seccomp_program_free(NULL);
}

/* The spawn plan's additions (read-write root: openat2 ENOSYS; Landlock
 * the only TCP layer: no TCP Fast Open) are part of the policy hash, each
 * compiles to a longer program, and unknown bits are refused. */
static void test_plan_opts(void **state)
{
	struct policy_in in = { CORDON_SECCOMP_DEFAULT, CORDON_SECCOMP_ERRNO, NULL, 0, NULL, 0 };
	struct cordon_profile p;
	struct cordon_seccomp_program *none = compile_ok(&in, NULL), *both = NULL, *o2 = NULL, *tfo = NULL;
	const struct cordon_seccomp_program *c1 = NULL, *c2 = NULL;
	struct cordon_diag d = { 0 };
	char want[65];

	(void)state;
	fill(&p, &in);
	assert_int_equal(cordon_seccomp_compile_opts(&p, NULL, CORDON_SECCOMP_OPENAT2_ENOSYS, &o2, &d), 0);
	assert_int_equal(cordon_seccomp_compile_opts(&p, NULL, CORDON_SECCOMP_NO_FASTOPEN, &tfo, &d), 0);
	assert_int_equal(cordon_seccomp_compile_opts(&p, NULL, CORDON_SECCOMP_OPTS_ALL, &both, &d), 0);
	sha256_hex("cordon-seccomp-policy/2\nbase=default\naction=errno\narch=c000003e\nkill=process\nallow=\ndeny=\n"
		   "opts=openat2-enosys,no-fastopen,\n",
		   want);
	assert_string_equal(both->policy_hash, want);
	assert_string_not_equal(none->policy_hash, o2->policy_hash);
	assert_string_not_equal(o2->policy_hash, tfo->policy_hash);
	assert_true(o2->n_insns > none->n_insns);
	assert_true(tfo->n_insns > none->n_insns);
	assert_true(both->n_insns > tfo->n_insns);

	assert_int_equal(cordon_seccomp_compile_opts(&p, NULL, 1u << 7, &o2, &d), -EINVAL);
	assert_string_equal(d.message, "unknown seccomp options 0x80");
	assert_int_equal(cordon_seccomp_compile_cached_opts(&p, NULL, CORDON_SECCOMP_NO_FASTOPEN, &c1, &d), 0);
	assert_int_equal(cordon_seccomp_compile_cached_opts(&p, NULL, 0, &c2, &d), 0);
	assert_ptr_not_equal(c1, c2);
	assert_string_equal(c1->program_hash, tfo->program_hash);
	cordon_seccomp_cache_clear();
	cordon_seccomp_program_free(none);
	cordon_seccomp_program_free(o2);
	cordon_seccomp_program_free(tfo);
	cordon_seccomp_program_free(both);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_hash_canonical),
		cmocka_unit_test(test_hash_order_independent),
		cmocka_unit_test(test_hash_distinguishes),
		cmocka_unit_test(test_program_hash_is_sha256_of_insns),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_new_syscalls_by_number),
		cmocka_unit_test(test_caps_adapt),
		cmocka_unit_test(test_strict_program_shape),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_name_known),
		cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_plan_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
