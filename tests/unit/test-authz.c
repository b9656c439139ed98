/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Table-driven tests of the pure authorization decision: every row of the
 * decision table in docs/authorization.md, plus "annotations never change a
 * tier" and "any error denies". */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "authz.h"
#include "cleanup.h"

#define FP_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define FP_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const struct cordon_tool_risk risks[] = {
	{ .tool = "read_file", .risk = CORDON_RISK_READ },
	{ .tool = "write_file", .risk = CORDON_RISK_WRITE },
	{ .tool = "delete_file", .risk = CORDON_RISK_DESTRUCTIVE },
	{ .tool = "run_command", .risk = CORDON_RISK_CRITICAL },
};
static const struct cordon_risk_policy policy = {
	.default_risk = CORDON_RISK_HIGH,
	.risk = risks,
	.n_risk = ELEMENTSOF(risks),
};

/* A baseline input that allows (read_file, reviewed, granted); each row
 * mutates one thing. */
struct fixture {
	struct cordon_inventory_entry inv;
	struct cordon_authz_request req;
	struct cordon_delegation_view dels[2];
	const char *grant[5];
	struct cordon_risk_policy pol;
	struct cordon_tool_risk bad_risk;
	struct cordon_authz_input in;
};

static void base(struct fixture *f, const char *tool)
{
	memset(f, 0, sizeof(*f));
	f->inv = (struct cordon_inventory_entry){ .connector = "fs",
						  .name = tool,
						  .state = CORDON_INVENTORY_REVIEWED,
						  .fingerprint = FP_A,
						  .pinned_fingerprint = FP_A };
	f->req = (struct cordon_authz_request){
		.session = "s1", .connector = "fs", .tool = tool, .fingerprint = FP_A, .policy_epoch = 7, .now = 1000
	};
	f->dels[0] = (struct cordon_delegation_view){ .id = "dl_1",
						      .session = "s1",
						      .connector = "fs",
						      .state = CORDON_DELEGATION_ACTIVE,
						      .access = CORDON_ACCESS_READ_WRITE,
						      .expires_at = 2000 };
	f->dels[1] = (struct cordon_delegation_view){ .id = "dl_ro",
						      .session = "s1",
						      .connector = "fs",
						      .state = CORDON_DELEGATION_ACTIVE,
						      .access = CORDON_ACCESS_READ,
						      .expires_at = 0 };
	f->grant[0] = "read_file";
	f->grant[1] = "write_file";
	f->grant[2] = "delete_file";
	f->grant[3] = "run_command";
	f->grant[4] = "unnamed_tool";
	f->pol = policy;
	f->in = (struct cordon_authz_input){ .connector = "fs",
					     .tool = tool,
					     .inventory = &f->inv,
					     .grant = f->grant,
					     .n_grant = 5,
					     .have_grant_row = true,
					     .policy = &f->pol,
					     .delegations = f->dels,
					     .n_delegations = 2,
					     .policy_epoch = 7,
					     .request = &f->req };
}

enum mutation {
	M_NONE,
	M_NULL_INPUT,
	M_NULL_REQUEST,
	M_EMPTY_SESSION,
	M_BAD_TOOL_NAME,
	M_REQ_OTHER_CONNECTOR,
	M_REQ_OTHER_TOOL,
	M_NO_GRANT_ROW,
	M_EMPTY_GRANT,
	M_NOT_IN_GRANT,
	M_NO_INVENTORY,
	M_INV_OTHER_CONNECTOR,
	M_PENDING_REVIEW,
	M_CHANGED,
	M_GONE,
	M_BAD_STATE,
	M_FP_ADVERTISED_DIFFERS,
	M_FP_REQUEST_DIFFERS,
	M_FP_NOT_PINNED,
	M_FP_MALFORMED,
	M_STALE_EPOCH,
	M_EPOCH_ZERO,
	M_NO_POLICY,
	M_BAD_DEFAULT_TIER,
	M_BAD_NAMED_TIER,
	M_DELEGATION_OK,
	M_DELEGATION_UNKNOWN,
	M_DELEGATION_PENDING,
	M_DELEGATION_REVOKED,
	M_DELEGATION_EXPIRED,
	M_DELEGATION_OTHER_SESSION,
	M_DELEGATION_OTHER_CONNECTOR,
	M_DELEGATION_READONLY,
};

struct row {
	const char *name;
	const char *tool;
	enum mutation m;
	enum cordon_verdict verdict;
	enum cordon_risk tier;
	enum cordon_deny_reason reason;
};

/* clang-format off */
static const struct row rows[] = {
	{ "read tier allows",            "read_file",    M_NONE, CORDON_VERDICT_ALLOW,   CORDON_RISK_READ,        CORDON_DENY_NONE },
	{ "write tier needs approval",   "write_file",   M_NONE, CORDON_VERDICT_APPROVE, CORDON_RISK_WRITE,       CORDON_DENY_NONE },
	{ "destructive needs approval",  "delete_file",  M_NONE, CORDON_VERDICT_APPROVE, CORDON_RISK_DESTRUCTIVE, CORDON_DENY_NONE },
	{ "critical needs approval",     "run_command",  M_NONE, CORDON_VERDICT_APPROVE, CORDON_RISK_CRITICAL,    CORDON_DENY_NONE },
	{ "unnamed tool is high",        "unnamed_tool", M_NONE, CORDON_VERDICT_APPROVE, CORDON_RISK_HIGH,        CORDON_DENY_NONE },
	{ "null input",                  "read_file", M_NULL_INPUT,          CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_INPUT },
	{ "null request",                "read_file", M_NULL_REQUEST,        CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_INPUT },
	{ "empty session",               "read_file", M_EMPTY_SESSION,       CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_INPUT },
	{ "invalid tool name",           "read_file", M_BAD_TOOL_NAME,       CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_INPUT },
	{ "request for other connector", "read_file", M_REQ_OTHER_CONNECTOR, CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_CONNECTOR_MISMATCH },
	{ "request for other tool",      "read_file", M_REQ_OTHER_TOOL,      CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_TOOL_MISMATCH },
	{ "no grant row",                "read_file", M_NO_GRANT_ROW,        CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_NOT_GRANTED },
	{ "empty grant set",             "read_file", M_EMPTY_GRANT,         CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_NOT_GRANTED },
	{ "tool not in grant",           "read_file", M_NOT_IN_GRANT,        CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_NOT_GRANTED },
	{ "not in inventory",            "read_file", M_NO_INVENTORY,        CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_NOT_IN_INVENTORY },
	{ "inventory of other connector","read_file", M_INV_OTHER_CONNECTOR, CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_INVALID_INPUT },
	{ "pending review",              "read_file", M_PENDING_REVIEW,      CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_PENDING_REVIEW },
	{ "changed definition",          "read_file", M_CHANGED,             CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_CHANGED },
	{ "gone",                        "read_file", M_GONE,                CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_GONE },
	{ "invalid inventory state",     "read_file", M_BAD_STATE,           CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_INVALID_INPUT },
	{ "advertised fp differs",       "read_file", M_FP_ADVERTISED_DIFFERS, CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_FINGERPRINT_MISMATCH },
	{ "request fp differs",          "read_file", M_FP_REQUEST_DIFFERS,  CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_FINGERPRINT_MISMATCH },
	{ "reviewed but not pinned",     "read_file", M_FP_NOT_PINNED,       CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_FINGERPRINT_MISMATCH },
	{ "malformed fingerprint",       "read_file", M_FP_MALFORMED,        CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_FINGERPRINT_MISMATCH },
	{ "stale policy epoch",          "read_file", M_STALE_EPOCH,         CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_STALE_POLICY },
	{ "epoch zero",                  "read_file", M_EPOCH_ZERO,          CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_STALE_POLICY },
	{ "no risk policy",              "read_file", M_NO_POLICY,           CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_TIER },
	{ "invalid default tier",        "unnamed_tool", M_BAD_DEFAULT_TIER, CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_TIER },
	{ "invalid named tier",          "read_file", M_BAD_NAMED_TIER,      CORDON_VERDICT_DENY, CORDON_RISK_HIGH, CORDON_DENY_INVALID_TIER },
	{ "active delegation, write",    "write_file", M_DELEGATION_OK,      CORDON_VERDICT_APPROVE, CORDON_RISK_WRITE, CORDON_DENY_NONE },
	{ "unknown delegation",          "read_file", M_DELEGATION_UNKNOWN,  CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "pending delegation",          "read_file", M_DELEGATION_PENDING,  CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "revoked delegation",          "read_file", M_DELEGATION_REVOKED,  CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "expired delegation",          "read_file", M_DELEGATION_EXPIRED,  CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "delegation of other session", "read_file", M_DELEGATION_OTHER_SESSION, CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "delegation of other connector","read_file", M_DELEGATION_OTHER_CONNECTOR, CORDON_VERDICT_DENY, CORDON_RISK_READ, CORDON_DENY_DELEGATION },
	{ "read-only delegation, write", "write_file", M_DELEGATION_READONLY, CORDON_VERDICT_DENY, CORDON_RISK_WRITE, CORDON_DENY_DELEGATION },
};
/* clang-format on */

static const struct cordon_authz_input *apply(struct fixture *f, enum mutation m)
{
	switch (m) {
	case M_NONE:
		break;
	case M_NULL_INPUT:
		return NULL;
	case M_NULL_REQUEST:
		f->in.request = NULL;
		break;
	case M_EMPTY_SESSION:
		f->req.session = "";
		break;
	case M_BAD_TOOL_NAME:
		f->in.tool = "read file/../x";
		break;
	case M_REQ_OTHER_CONNECTOR:
		f->req.connector = "github";
		break;
	case M_REQ_OTHER_TOOL:
		f->req.tool = "write_file";
		break;
	case M_NO_GRANT_ROW:
		f->in.have_grant_row = false;
		break;
	case M_EMPTY_GRANT:
		f->in.n_grant = 0;
		break;
	case M_NOT_IN_GRANT:
		/* A near miss: grants match whole names only. */
		f->grant[0] = "read_files";
		f->grant[1] = "write_file_";
		f->grant[2] = "delete";
		f->grant[3] = "run_command.";
		f->grant[4] = "Unnamed_tool";
		break;
	case M_NO_INVENTORY:
		f->in.inventory = NULL;
		break;
	case M_INV_OTHER_CONNECTOR:
		f->inv.connector = "github";
		break;
	case M_PENDING_REVIEW:
		f->inv.state = CORDON_INVENTORY_PENDING_REVIEW;
		break;
	case M_CHANGED:
		f->inv.state = CORDON_INVENTORY_CHANGED;
		f->inv.fingerprint = FP_B;
		break;
	case M_GONE:
		f->inv.state = CORDON_INVENTORY_GONE;
		break;
	case M_BAD_STATE:
		f->inv.state = (enum cordon_inventory_state)42;
		break;
	case M_FP_ADVERTISED_DIFFERS:
		f->inv.fingerprint = FP_B;
		break;
	case M_FP_REQUEST_DIFFERS:
		f->req.fingerprint = FP_B;
		break;
	case M_FP_NOT_PINNED:
		f->inv.pinned_fingerprint = NULL;
		break;
	case M_FP_MALFORMED:
		f->inv.pinned_fingerprint = f->inv.fingerprint = f->req.fingerprint = "AAAA";
		break;
	case M_STALE_EPOCH:
		f->req.policy_epoch = 6;
		break;
	case M_EPOCH_ZERO:
		f->req.policy_epoch = f->in.policy_epoch = 0;
		break;
	case M_NO_POLICY:
		f->in.policy = NULL;
		break;
	case M_BAD_DEFAULT_TIER:
		f->pol.default_risk = (enum cordon_risk)9;
		break;
	case M_BAD_NAMED_TIER:
		f->bad_risk = (struct cordon_tool_risk){ .tool = (char *)f->in.tool, .risk = (enum cordon_risk) - 1 };
		f->pol.risk = &f->bad_risk;
		f->pol.n_risk = 1;
		break;
	case M_DELEGATION_OK:
		f->req.delegation = "dl_1";
		break;
	case M_DELEGATION_UNKNOWN:
		f->req.delegation = "dl_nope";
		break;
	case M_DELEGATION_PENDING:
		f->req.delegation = "dl_1";
		f->dels[0].state = CORDON_DELEGATION_PENDING;
		break;
	case M_DELEGATION_REVOKED:
		f->req.delegation = "dl_1";
		f->dels[0].state = CORDON_DELEGATION_REVOKED;
		break;
	case M_DELEGATION_EXPIRED:
		f->req.delegation = "dl_1";
		f->req.now = 2000; /* expires_at is exclusive */
		break;
	case M_DELEGATION_OTHER_SESSION:
		f->req.delegation = "dl_1";
		f->dels[0].session = "s2";
		break;
	case M_DELEGATION_OTHER_CONNECTOR:
		f->req.delegation = "dl_1";
		f->dels[0].connector = "github";
		break;
	case M_DELEGATION_READONLY:
		f->req.delegation = "dl_ro";
		break;
	}
	return &f->in;
}

static void test_decision_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
		struct fixture f;
		struct cordon_decision d;

		base(&f, rows[i].tool);
		d = cordon_authz_decide(apply(&f, rows[i].m));
		if (d.verdict != rows[i].verdict || d.tier != rows[i].tier || d.reason != rows[i].reason)
			fail_msg("row '%s': got %s/%s/%s, want %s/%s/%s", rows[i].name,
				 cordon_verdict_to_string(d.verdict), cordon_risk_name(d.tier),
				 cordon_deny_reason_to_string(d.reason), cordon_verdict_to_string(rows[i].verdict),
				 cordon_risk_name(rows[i].tier), cordon_deny_reason_to_string(rows[i].reason));
	}
}

/* Every mutation but M_NONE/M_DELEGATION_OK must deny whatever the tool's tier:
 * a deny never becomes an allow because a tool happens to be read tier. */
static void test_every_error_denies_for_every_tier(void **state)
{
	static const char *const tools[] = { "read_file", "write_file", "delete_file", "run_command", "unnamed_tool" };

	(void)state;
	for (size_t t = 0; t < ELEMENTSOF(tools); t++)
		for (int m = M_NULL_INPUT; m <= M_DELEGATION_READONLY; m++) {
			struct fixture f;
			struct cordon_decision d;

			if (m == M_DELEGATION_OK || (m == M_DELEGATION_READONLY && t == 0))
				continue;
			base(&f, tools[t]);
			const struct cordon_authz_input *in = apply(&f, (enum mutation)m);
			if (m == M_REQ_OTHER_TOOL && t == 1)
				f.req.tool = "read_file";
			d = cordon_authz_decide(in);
			if (d.verdict != CORDON_VERDICT_DENY)
				fail_msg("tool %s mutation %d: not denied", tools[t], m);
			assert_int_not_equal(d.reason, CORDON_DENY_NONE);
		}
}

/* The decision has no annotation input at all; this documents that the tier
 * of a tool the policy does not name is default_risk, whatever the tool's
 * name suggests ("read_" prefix, "readOnlyHint" in its definition). */
static void test_unnamed_tool_gets_default_risk(void **state)
{
	struct fixture f;
	struct cordon_decision d;

	(void)state;
	base(&f, "read_file_fast");
	f.grant[4] = "read_file_fast";
	d = cordon_authz_decide(&f.in);
	assert_int_equal(d.verdict, CORDON_VERDICT_APPROVE);
	assert_int_equal(d.tier, CORDON_RISK_HIGH);
}

static void test_default_risk_from_profile_applies(void **state)
{
	struct fixture f;
	struct cordon_decision d;

	(void)state;
	base(&f, "unnamed_tool");
	f.pol.default_risk = CORDON_RISK_CRITICAL;
	d = cordon_authz_decide(&f.in);
	assert_int_equal(d.verdict, CORDON_VERDICT_APPROVE);
	assert_int_equal(d.tier, CORDON_RISK_CRITICAL);
}

static void test_decision_is_pure(void **state)
{
	struct fixture f;
	struct cordon_decision a, b;

	(void)state;
	base(&f, "write_file");
	a = cordon_authz_decide(&f.in);
	b = cordon_authz_decide(&f.in);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void test_tool_name_validation(void **state)
{
	(void)state;
	assert_true(cordon_tool_name_is_valid("read_file"));
	assert_true(cordon_tool_name_is_valid("a.b-c_D9"));
	assert_false(cordon_tool_name_is_valid(""));
	assert_false(cordon_tool_name_is_valid(NULL));
	assert_false(cordon_tool_name_is_valid("a b"));
	assert_false(cordon_tool_name_is_valid("a/b"));
	assert_false(cordon_tool_name_is_valid("é"));
	char longname[130];
	memset(longname, 'a', 129);
	longname[129] = 0;
	assert_false(cordon_tool_name_is_valid(longname));
	longname[128] = 0;
	assert_true(cordon_tool_name_is_valid(longname));
}

static void test_reason_strings_are_total(void **state)
{
	(void)state;
	for (int r = 0; r < _CORDON_DENY_MAX; r++)
		assert_non_null(cordon_deny_reason_to_string((enum cordon_deny_reason)r));
	assert_string_equal(cordon_deny_reason_to_string((enum cordon_deny_reason)999), "invalid");
	assert_string_equal(cordon_risk_name((enum cordon_risk)99), "invalid");
}

/* One table of tier names: the broker's cordon_risk_name() says what the
 * profile's vocabulary (launcher/lib names.c) says, both ways. */
static void test_risk_names_are_one_table(void **state)
{
	static const char *const want[] = { "read", "write", "destructive", "high", "critical" };

	(void)state;
	assert_int_equal(CORDON_RISK_COUNT, 5);
	for (int i = 0; i < CORDON_RISK_COUNT; i++) {
		enum cordon_risk r = CORDON_RISK_HIGH;

		assert_string_equal(cordon_risk_name((enum cordon_risk)i), want[i]);
		assert_ptr_equal(cordon_risk_name((enum cordon_risk)i), cordon_risk_names[i]);
		assert_int_equal(cordon_risk_from_string(want[i], &r), 0);
		assert_int_equal(r, i);
	}
	assert_null(cordon_risk_to_string((enum cordon_risk)CORDON_RISK_COUNT));
	assert_int_equal(cordon_risk_from_string("low", &(enum cordon_risk){ 0 }), -EINVAL);
	assert_string_equal(cordon_replay_to_string(CORDON_REPLAY_UNSAFE), "unsafe");
	assert_string_equal(cordon_replay_to_string(CORDON_REPLAY_SAFE), "safe");
	assert_null(cordon_replay_to_string((enum cordon_replay)CORDON_REPLAY_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decision_table),
		cmocka_unit_test(test_every_error_denies_for_every_tier),
		cmocka_unit_test(test_unnamed_tool_gets_default_risk),
		cmocka_unit_test(test_default_risk_from_profile_applies),
		cmocka_unit_test(test_decision_is_pure),
		cmocka_unit_test(test_tool_name_validation),
		cmocka_unit_test(test_reason_strings_are_total),
		cmocka_unit_test(test_risk_names_are_one_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
