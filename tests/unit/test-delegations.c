/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Delegated roots against real directories: openat2 beneath the ceiling,
 * symlink escapes, sibling-prefix paths, operator-only activation, expiry by
 * the broker's clock, revocation by the owning session. */

#include <fcntl.h>
#include <sys/stat.h>

#include "broker-test.h"

struct fx {
	struct bt *t;
	char *root; /* a private temp dir holding work/, work-evil/, outside/ */
	char *ceiling;
	char path[4096];
};

static char *ceilings[1];

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char p[4096];

	f->root = cordon_test_mkdtemp("deleg");
	assert_true(asprintf(&f->ceiling, "%s/work", f->root) > 0);
#define MK(fmt) (snprintf(p, sizeof(p), fmt, f->root), assert_int_equal(mkdir(p, 0755), 0))
	MK("%s/work");
	MK("%s/work/proj");
	MK("%s/work/proj/sub");
	MK("%s/work-evil");
	MK("%s/work-evil/x");
	MK("%s/outside");
#undef MK
	snprintf(p, sizeof(p), "%s/outside", f->root);
	{
		char l[4096];
		snprintf(l, sizeof(l), "%s/work/escape", f->root);
		assert_int_equal(symlink(p, l), 0);
		snprintf(l, sizeof(l), "%s/work/inner", f->root);
		assert_int_equal(symlink("proj", l), 0);
		snprintf(l, sizeof(l), "%s/work/dotdot", f->root);
		assert_int_equal(symlink("../outside", l), 0);
		snprintf(l, sizeof(l), "%s/work/file", f->root);
		assert_int_equal(close(open(l, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	}
	ceilings[0] = f->ceiling;
	f->t = bt_new_full(true, ceilings, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	bt_free(f->t);
	assert_int_equal(cordon_test_rm_rf(f->root), 0);
	free(f->root);
	free(f->ceiling);
	free(f);
	return 0;
}

static const char *P(struct fx *f, const char *rel)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->root, rel);
	return f->path;
}

static int request_and_activate(struct fx *f, const char *rel, enum cordon_fs_access acc,
				struct cordon_delegation_info *ret)
{
	struct cordon_delegation_info d;
	int r;

	assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, rel), acc, 0, &d), 0);
	r = cordon_delegation_activate(f->t->db, &f->t->op, d.id, ret);
	if (r < 0 && ret)
		*ret = d;
	return r;
}

static void test_request_is_pending_and_grants_nothing(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d, *act = NULL;
	size_t n = 9;

	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_PENDING);
	assert_int_equal(cordon_delegations_active(f->t->db, "fs", &act, &n), 0);
	assert_int_equal(n, 0);
	cordon_delegations_free(act);
}

static void test_operator_activation_records_dev_ino(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d;
	struct stat st;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ_WRITE, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_ACTIVE);
	assert_int_equal(stat(P(f, "work/proj"), &st), 0);
	assert_int_equal(d.dev, st.st_dev);
	assert_int_equal(d.ino, st.st_ino);
	assert_int_equal(cordon_delegation_get(f->t->db, d.id, &d), 0);
	assert_int_equal(d.ino, st.st_ino);
}

static void test_only_operator_activates(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d;

	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d), 0);
	assert_int_equal(cordon_delegation_activate(f->t->db, &f->t->s1, d.id, NULL), -EPERM);
	assert_int_equal(cordon_delegation_activate(f->t->db, &f->t->sys, d.id, NULL), -EPERM);
	/* And only sessions request. */
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->op, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d),
		-EPERM);
}

static void test_symlink_escape_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d;

	assert_int_equal(request_and_activate(f, "work/escape", CORDON_ACCESS_READ, &d), -EXDEV);
	assert_int_equal(cordon_delegation_get(f->t->db, d.id, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_REFUSED);
}

static void test_relative_symlink_escape_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(request_and_activate(f, "work/dotdot", CORDON_ACCESS_READ, NULL), -EXDEV);
}

static void test_symlink_within_ceiling_allowed(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d;
	struct stat st;

	assert_int_equal(request_and_activate(f, "work/inner", CORDON_ACCESS_READ, &d), 0);
	assert_int_equal(stat(P(f, "work/proj"), &st), 0);
	assert_int_equal(d.ino, st.st_ino);
}

/* "/x/work-evil" starts with the string "/x/work" but is not beneath it. */
static void test_sibling_with_common_prefix_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(request_and_activate(f, "work-evil/x", CORDON_ACCESS_READ, NULL), -EPERM);
	assert_int_equal(request_and_activate(f, "outside", CORDON_ACCESS_READ, NULL), -EPERM);
}

static void test_non_directory_and_missing_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(request_and_activate(f, "work/file", CORDON_ACCESS_READ, NULL), -ENOTDIR);
	assert_int_equal(request_and_activate(f, "work/nope", CORDON_ACCESS_READ, NULL), -ENOENT);
}

static void test_non_canonical_path_refused_at_request(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d;
	char p[4200];

	snprintf(p, sizeof(p), "%s/work/../outside", f->root);
	assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s1, "fs", p, CORDON_ACCESS_READ, 0, &d), -EINVAL);
	assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s1, "fs", "relative/x", CORDON_ACCESS_READ, 0, &d),
			 -EINVAL);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work"), CORDON_ACCESS_READ_EXEC, 0, &d),
		-EINVAL);
}

static void test_resolve_directly(void **state)
{
	struct fx *f = *state;
	const char *c[2] = { "/nonexistent-ceiling", f->ceiling };
	size_t which = 9;
	dev_t dev;
	ino_t ino;

	assert_int_equal(cordon_delegation_resolve(c, 2, P(f, "work/proj/sub"), &which, &dev, &ino), 0);
	assert_int_equal(which, 1);
	/* The ceiling itself is beneath itself. */
	assert_int_equal(cordon_delegation_resolve(c, 2, f->ceiling, &which, &dev, &ino), 0);
	assert_int_equal(cordon_delegation_resolve(c, 2, P(f, "work-evil"), &which, &dev, &ino), -EPERM);
}

static void test_expiry_enforced_by_broker_clock(void **state)
{
	struct fx *f = *state;
	struct bt *t = f->t;
	struct cordon_delegation_info d;
	uint64_t n;
	struct cordon_decide_request r = {
		.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	struct cordon_broker_decision dec;

	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 60, &d),
			 0);
	assert_int_equal(cordon_delegation_activate(t->db, &t->op, d.id, &d), 0);
	assert_int_equal(d.expires_at, T0 + 60 * SEC);
	r.delegation = d.id;
	assert_int_equal(cordon_broker_decide(t->db, &r, &dec), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	cordon_virtual_clock_advance(&t->clock, 60 * SEC);
	/* Past expiry the decision denies even before any sweep ran. */
	assert_int_equal(cordon_broker_decide(t->db, &r, &dec), 0);
	assert_int_equal(dec.decision.reason, CORDON_DENY_DELEGATION);
	assert_int_equal(cordon_delegations_expire(t->db, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cordon_delegation_get(t->db, d.id, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_EXPIRED);
}

static void test_read_delegation_cannot_back_a_write(void **state)
{
	struct fx *f = *state;
	struct bt *t = f->t;
	struct cordon_delegation_info d;
	struct cordon_decide_request r = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = bt_fp(t, "write_file")
	};
	struct cordon_broker_decision dec;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ, &d), 0);
	r.delegation = d.id;
	assert_int_equal(cordon_broker_decide(t->db, &r, &dec), 0);
	assert_int_equal(dec.decision.reason, CORDON_DENY_DELEGATION);
	/* Another session cannot use s1's delegation. */
	r.tool = "read_file";
	r.fingerprint = bt_fp(t, "read_file");
	r.session = "s2";
	assert_int_equal(cordon_broker_decide(t->db, &r, &dec), 0);
	assert_int_equal(dec.decision.reason, CORDON_DENY_DELEGATION);
}

static void test_session_revokes_only_its_own(void **state)
{
	struct fx *f = *state;
	struct bt *t = f->t;
	struct cordon_delegation_info d;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ, &d), 0);
	assert_int_equal(cordon_delegation_revoke(t->db, &t->s2, d.id), -EPERM);
	assert_int_equal(cordon_delegation_revoke(t->db, &t->s1, d.id), 0);
	assert_int_equal(cordon_delegation_get(t->db, d.id, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_REVOKED);
	assert_int_equal(cordon_delegation_revoke(t->db, &t->s1, d.id), -EALREADY);
	/* Revoked cannot be re-activated. */
	assert_int_equal(cordon_delegation_activate(t->db, &t->op, d.id, NULL), -EALREADY);
}

static void test_session_end_ends_delegations(void **state)
{
	struct fx *f = *state;
	struct bt *t = f->t;
	struct cordon_delegation_info d;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ, &d), 0);
	assert_int_equal(cordon_session_end(t->db, "s1"), 0);
	assert_int_equal(cordon_delegation_get(t->db, d.id, &d), 0);
	assert_int_equal(d.state, CORDON_DELEGATION_REVOKED);
}

static void test_operator_refuses_pending(void **state)
{
	struct fx *f = *state;
	struct bt *t = f->t;
	struct cordon_delegation_info d;

	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d),
			 0);
	assert_int_equal(cordon_delegation_refuse(t->db, &t->s1, d.id), -EPERM);
	assert_int_equal(cordon_delegation_refuse(t->db, &t->op, d.id), 0);
	assert_int_equal(cordon_delegation_activate(t->db, &t->op, d.id, NULL), -EALREADY);
}

static void test_list_by_state(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d, *v = NULL;
	size_t n = 0;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ, &d), 0);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj/sub"), CORDON_ACCESS_READ, 0, &d),
		0);
	assert_int_equal(cordon_delegations_list(
				 f->t->db,
				 &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_DELEGATION_PENDING),
							       .connector = "fs" },
				 &v, &n),
			 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, d.id);
	cordon_delegations_free(v);
	assert_int_equal(cordon_delegations_list(f->t->db, &(struct cordon_list_filter){ .connector = "fs" }, &v, &n),
			 0);
	assert_int_equal(n, 2);
	cordon_delegations_free(v);
}

/* The operator's listings: every connector, newest first, at most `limit`,
 * states by name; a second connector's rows are there and filtered out by
 * name. */
static void test_list_filter_for_operator(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d[3], *v = NULL;
	struct cordon_profile p;
	size_t n = 0;

	bt_profile(&p, ceilings, 1);
	p.id = (char *)"other";
	assert_int_equal(cordon_connector_install(f->t->db, &f->t->sys, &p), 0);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d[0]),
		0);
	cordon_virtual_clock_advance(&f->t->clock, SEC);
	assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s2, "other", P(f, "work/proj/sub"),
						   CORDON_ACCESS_READ_WRITE, 0, &d[1]),
			 0);
	cordon_virtual_clock_advance(&f->t->clock, SEC);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d[2]),
		0);
	assert_int_equal(cordon_delegation_refuse(f->t->db, &f->t->op, d[2].id), 0);

	assert_int_equal(cordon_delegations_list(f->t->db, NULL, &v, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(v[i].id, d[i].id);
	assert_string_equal(v[1].connector, "other");
	assert_int_equal(v[1].access, CORDON_ACCESS_READ_WRITE);
	assert_int_equal(v[2].state, CORDON_DELEGATION_REFUSED);
	cordon_delegations_free(v);

	assert_int_equal(cordon_delegations_list(
				 f->t->db, &(struct cordon_list_filter){ .newest_first = true, .limit = 2 }, &v, &n),
			 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, d[2].id);
	assert_string_equal(v[1].id, d[1].id);
	cordon_delegations_free(v);

	assert_int_equal(cordon_delegations_list(
				 f->t->db,
				 &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_DELEGATION_PENDING) |
									 CORDON_STATE_BIT(CORDON_DELEGATION_ACTIVE) },
				 &v, &n),
			 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, d[0].id);
	assert_string_equal(v[1].id, d[1].id);
	cordon_delegations_free(v);

	assert_int_equal(
		cordon_delegations_list(f->t->db, &(struct cordon_list_filter){ .connector = "other" }, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, d[1].id);
	cordon_delegations_free(v);
	assert_int_equal(cordon_delegations_list(f->t->db, &(struct cordon_list_filter){ .connector = "nope" }, &v, &n),
			 0);
	assert_int_equal(n, 0);
	cordon_delegations_free(v);
}

static void test_state_names(void **state)
{
	(void)state;
	assert_string_equal(cordon_delegation_state_to_string(CORDON_DELEGATION_PENDING), "pending");
	assert_string_equal(cordon_delegation_state_to_string(CORDON_DELEGATION_ACTIVE), "active");
	assert_string_equal(cordon_delegation_state_to_string(CORDON_DELEGATION_REVOKED), "revoked");
	assert_string_equal(cordon_delegation_state_to_string(CORDON_DELEGATION_EXPIRED), "expired");
	assert_string_equal(cordon_delegation_state_to_string(CORDON_DELEGATION_REFUSED), "refused");
	assert_string_equal(cordon_delegation_state_to_string((enum cordon_delegation_state)5), "invalid");
}

/* Retention deletes ended delegations older than the age, and only those. */
static void test_prune_deletes_old_ended_only(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info ended, active, pending, recent;
	struct cordon_prune_result pr;

	assert_int_equal(request_and_activate(f, "work/proj", CORDON_ACCESS_READ, &ended), 0);
	assert_int_equal(cordon_delegation_revoke(f->t->db, &f->t->op, ended.id), 0);
	assert_int_equal(request_and_activate(f, "work/proj/sub", CORDON_ACCESS_READ, &active), 0);
	assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0,
						   &pending),
			 0);
	cordon_virtual_clock_advance(&f->t->clock, 8 * 24 * 3600 * SEC);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &recent),
		0);
	assert_int_equal(cordon_delegation_refuse(f->t->db, &f->t->op, recent.id), 0);

	assert_int_equal(cordon_broker_prune(f->t->db, &f->t->sys, 7 * 24 * 3600 * SEC, &pr), 0);
	assert_int_equal(pr.delegations, 1);
	assert_int_equal(cordon_delegation_get(f->t->db, ended.id, &ended), -ENOENT);
	assert_int_equal(cordon_delegation_get(f->t->db, active.id, &active), 0);
	assert_int_equal(active.state, CORDON_DELEGATION_ACTIVE);
	assert_int_equal(cordon_delegation_get(f->t->db, pending.id, &pending), 0);
	assert_int_equal(cordon_delegation_get(f->t->db, recent.id, &recent), 0);
	assert_int_equal(recent.state, CORDON_DELEGATION_REFUSED);
}

/* Issue 11 finding 9: pending requests are capped per session like
 * approvals; the cap+1st is refused with the exact reason, another session
 * still may ask, and a decided request frees a place. */
static void test_pending_requests_capped_per_session(void **state)
{
	struct fx *f = *state;
	struct cordon_delegation_info d, first = {};
	int64_t before, after;

	for (unsigned i = 0; i < CORDON_DELEGATION_PENDING_PER_SESSION; i++) {
		assert_int_equal(cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"),
							   CORDON_ACCESS_READ, 0, &d),
				 0);
		if (i == 0)
			first = d;
	}
	assert_int_equal(cordon_db_meta_get(f->t->db, "audit_last_seq", &before), 0);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d),
		-EDQUOT);
	assert_string_equal(cordon_db_last_error(f->t->db),
			    "session has 16 pending delegation requests (the cap is 16); wait for the operator to "
			    "approve or deny them");
	/* Nothing stored, nothing audited. */
	assert_int_equal(cordon_db_meta_get(f->t->db, "audit_last_seq", &after), 0);
	assert_int_equal(after, before);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s2, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d), 0);
	assert_int_equal(cordon_delegation_refuse(f->t->db, &f->t->op, first.id), 0);
	assert_int_equal(
		cordon_delegation_request(f->t->db, &f->t->s1, "fs", P(f, "work/proj"), CORDON_ACCESS_READ, 0, &d), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_request_is_pending_and_grants_nothing),
		T(test_list_filter_for_operator),
		cmocka_unit_test(test_state_names),
		T(test_prune_deletes_old_ended_only),
		T(test_operator_activation_records_dev_ino),
		T(test_only_operator_activates),
		T(test_symlink_escape_refused),
		T(test_relative_symlink_escape_refused),
		T(test_symlink_within_ceiling_allowed),
		T(test_sibling_with_common_prefix_refused),
		T(test_non_directory_and_missing_refused),
		T(test_non_canonical_path_refused_at_request),
		T(test_resolve_directly),
		T(test_expiry_enforced_by_broker_clock),
		T(test_read_delegation_cannot_back_a_write),
		T(test_session_revokes_only_its_own),
		T(test_session_end_ends_delegations),
		T(test_operator_refuses_pending),
		T(test_list_by_state),
		T(test_pending_requests_capped_per_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
