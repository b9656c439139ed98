/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The authorization decision: ONE pure function of its inputs. It reads no
 * database, no clock and no global state, so a table of rows tests it
 * completely; the caller loads a snapshot (grant, inventory entry, risk
 * policy, delegations, epoch, now) and passes it in. Any error, missing
 * input or inconsistency is a deny. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

enum cordon_inventory_state {
	CORDON_INVENTORY_PENDING_REVIEW = 0, /* new or renamed: nobody has reviewed it */
	CORDON_INVENTORY_REVIEWED = 1,	     /* fingerprint pinned by an operator */
	CORDON_INVENTORY_CHANGED = 2,	     /* advertised fingerprint differs from the pinned one */
	CORDON_INVENTORY_GONE = 3,	     /* no longer advertised */
};

/* Fingerprints are 64 lowercase hex characters (SHA-256). */
#define CORDON_FINGERPRINT_HEX_MAX 65

struct cordon_inventory_entry {
	const char *connector;
	const char *name;
	enum cordon_inventory_state state;
	const char *fingerprint;	/* advertised now */
	const char *pinned_fingerprint; /* reviewed; NULL when never reviewed */
};

/* The first-party risk policy of one connector (from its profile at install).
 * Tools it does not name get default_risk. Annotations are not an input. */
struct cordon_risk_policy {
	enum cordon_risk default_risk;
	const struct cordon_tool_risk *risk;
	size_t n_risk;
};

enum cordon_delegation_state {
	CORDON_DELEGATION_PENDING = 0,
	CORDON_DELEGATION_ACTIVE = 1,
	CORDON_DELEGATION_REVOKED = 2,
	CORDON_DELEGATION_EXPIRED = 3,
	CORDON_DELEGATION_REFUSED = 4,
};

struct cordon_delegation_view {
	const char *id;
	const char *session;
	const char *connector;
	enum cordon_delegation_state state;
	enum cordon_fs_access access; /* CORDON_ACCESS_READ or CORDON_ACCESS_READ_WRITE */
	uint64_t expires_at;	      /* usec; 0 = no expiry */
};

struct cordon_authz_request {
	const char *session;
	const char *connector;
	const char *tool;
	const char *fingerprint; /* of the tool definition the connector advertises now */
	uint64_t policy_epoch;	 /* epoch at which the caller loaded this snapshot */
	const char *delegation;	 /* id of a delegated root the call relies on, or NULL */
	uint64_t now;		 /* usec, for delegation expiry */
};

struct cordon_authz_input {
	const char *connector; /* the connector the session is talking to */
	const char *tool;
	const struct cordon_inventory_entry *inventory; /* NULL: not in the inventory */
	const char *const *grant;			/* the connector's grant set */
	size_t n_grant;
	bool have_grant_row; /* false: no grant set loaded at all (deny) */
	const struct cordon_risk_policy *policy;
	const struct cordon_delegation_view *delegations;
	size_t n_delegations;
	uint64_t policy_epoch; /* current */
	const struct cordon_authz_request *request;
};

enum cordon_verdict {
	CORDON_VERDICT_DENY = 0,
	CORDON_VERDICT_ALLOW = 1,
	CORDON_VERDICT_APPROVE = 2, /* needs a one-use approval of `tier` */
};

enum cordon_deny_reason {
	CORDON_DENY_NONE = 0,
	CORDON_DENY_INVALID_INPUT,
	CORDON_DENY_CONNECTOR_MISMATCH,
	CORDON_DENY_TOOL_MISMATCH,
	CORDON_DENY_NOT_GRANTED,
	CORDON_DENY_NOT_IN_INVENTORY,
	CORDON_DENY_PENDING_REVIEW,
	CORDON_DENY_CHANGED,
	CORDON_DENY_GONE,
	CORDON_DENY_FINGERPRINT_MISMATCH,
	CORDON_DENY_STALE_POLICY,
	CORDON_DENY_DELEGATION,
	CORDON_DENY_INVALID_TIER,
	_CORDON_DENY_MAX,
};

struct cordon_decision {
	enum cordon_verdict verdict;
	enum cordon_risk tier; /* the tool's tier (also set on deny when known) */
	enum cordon_deny_reason reason;
};

/* Decides. Never fails: every problem is a deny with a reason. */
struct cordon_decision cordon_authz_decide(const struct cordon_authz_input *in);

/* The tier of a tool under a policy: the named tier, else default_risk.
 * Returns true and writes *ret; false (writing nothing) when the policy is
 * NULL or the tier found is out of range — the decision then denies. */
bool cordon_risk_policy_tier(const struct cordon_risk_policy *p, const char *tool, enum cordon_risk *ret);

const char *cordon_deny_reason_to_string(enum cordon_deny_reason r);
const char *cordon_verdict_to_string(enum cordon_verdict v);
const char *cordon_inventory_state_to_string(enum cordon_inventory_state s);
const char *cordon_risk_name(enum cordon_risk r); /* never NULL; "invalid" when out of range */

/* Tool names: 1..128 bytes of [A-Za-z0-9_.-] (MCP's recommended charset). */
bool cordon_tool_name_is_valid(const char *s);
