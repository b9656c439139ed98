/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "authz.h"
#include "hex-util.h"

#include <string.h>

/* clang-format off */
static const char *const deny_reasons[_CORDON_DENY_MAX] = {
	[CORDON_DENY_NONE]                 = "none",
	[CORDON_DENY_INVALID_INPUT]        = "invalid-input",
	[CORDON_DENY_CONNECTOR_MISMATCH]   = "connector-mismatch",
	[CORDON_DENY_TOOL_MISMATCH]        = "tool-mismatch",
	[CORDON_DENY_NOT_GRANTED]          = "not-granted",
	[CORDON_DENY_NOT_IN_INVENTORY]     = "not-in-inventory",
	[CORDON_DENY_PENDING_REVIEW]       = "pending-review",
	[CORDON_DENY_CHANGED]              = "definition-changed",
	[CORDON_DENY_GONE]                 = "tool-gone",
	[CORDON_DENY_FINGERPRINT_MISMATCH] = "fingerprint-mismatch",
	[CORDON_DENY_STALE_POLICY]         = "stale-policy-epoch",
	[CORDON_DENY_DELEGATION]           = "delegation-not-active",
	[CORDON_DENY_INVALID_TIER]         = "invalid-tier",
};
/* clang-format on */

const char *cordon_deny_reason_to_string(enum cordon_deny_reason r)
{
	if ((unsigned)r >= _CORDON_DENY_MAX)
		return "invalid";
	return deny_reasons[r];
}

const char *cordon_verdict_to_string(enum cordon_verdict v)
{
	switch (v) {
	case CORDON_VERDICT_DENY:
		return "deny";
	case CORDON_VERDICT_ALLOW:
		return "allow";
	case CORDON_VERDICT_APPROVE:
		return "approve";
	}
	return "invalid";
}

const char *cordon_inventory_state_to_string(enum cordon_inventory_state s)
{
	switch (s) {
	case CORDON_INVENTORY_PENDING_REVIEW:
		return "pending_review";
	case CORDON_INVENTORY_REVIEWED:
		return "reviewed";
	case CORDON_INVENTORY_CHANGED:
		return "changed";
	case CORDON_INVENTORY_GONE:
		return "gone";
	}
	return "invalid";
}

const char *cordon_risk_name(enum cordon_risk r)
{
	const char *s = cordon_risk_to_string(r);

	return s ? s : "invalid";
}

bool cordon_tool_name_is_valid(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return false;
	}
	return true;
}

static bool tier_is_valid(enum cordon_risk r)
{
	return (unsigned)r <= CORDON_RISK_CRITICAL;
}

bool cordon_risk_policy_tier(const struct cordon_risk_policy *p, const char *tool, enum cordon_risk *ret)
{
	enum cordon_risk tier;

	/* A policy with an invalid default is broken as a whole: deny even
	 * tools it names validly. */
	if (!p || !tool || (p->n_risk > 0 && !p->risk) || !tier_is_valid(p->default_risk))
		return false;
	tier = p->default_risk;
	for (size_t i = 0; i < p->n_risk; i++)
		if (p->risk[i].tool && strcmp(p->risk[i].tool, tool) == 0) {
			tier = p->risk[i].risk;
			break;
		}
	if (!tier_is_valid(tier))
		return false;
	*ret = tier;
	return true;
}

static bool fingerprint_is_valid(const char *s)
{
	return hex_is_lower_n(s, 64);
}

static bool grant_contains(const struct cordon_authz_input *in, const char *tool)
{
	if (!in->have_grant_row || (in->n_grant > 0 && !in->grant))
		return false;
	for (size_t i = 0; i < in->n_grant; i++)
		if (in->grant[i] && strcmp(in->grant[i], tool) == 0)
			return true;
	return false;
}

static struct cordon_decision deny(enum cordon_deny_reason reason, enum cordon_risk tier)
{
	return (struct cordon_decision){ .verdict = CORDON_VERDICT_DENY, .tier = tier, .reason = reason };
}

/* The order of the checks is the order of the table in docs/authorization.md:
 * identity of the call, grant, inventory, policy freshness, delegation, tier.
 * Every branch that is not an explicit allow/approve falls through to deny. */
struct cordon_decision cordon_authz_decide(const struct cordon_authz_input *in)
{
	const struct cordon_authz_request *req;
	const struct cordon_inventory_entry *inv;
	enum cordon_risk tier = CORDON_RISK_HIGH;

	if (!in || !in->request || !in->connector || !in->tool)
		return deny(CORDON_DENY_INVALID_INPUT, tier);
	req = in->request;
	if (!req->session || !*req->session || !req->connector || !req->tool || !cordon_tool_name_is_valid(in->tool))
		return deny(CORDON_DENY_INVALID_INPUT, tier);

	/* The tier is computed first only so that denies can report it; it
	 * never lowers a decision and annotations are not an input at all. */
	if (!cordon_risk_policy_tier(in->policy, in->tool, &tier))
		return deny(CORDON_DENY_INVALID_TIER, CORDON_RISK_HIGH);

	if (strcmp(req->connector, in->connector) != 0)
		return deny(CORDON_DENY_CONNECTOR_MISMATCH, tier);
	if (strcmp(req->tool, in->tool) != 0)
		return deny(CORDON_DENY_TOOL_MISMATCH, tier);

	if (!grant_contains(in, in->tool))
		return deny(CORDON_DENY_NOT_GRANTED, tier);

	inv = in->inventory;
	if (!inv)
		return deny(CORDON_DENY_NOT_IN_INVENTORY, tier);
	if (!inv->connector || !inv->name || strcmp(inv->connector, in->connector) != 0 ||
	    strcmp(inv->name, in->tool) != 0)
		return deny(CORDON_DENY_INVALID_INPUT, tier);
	switch (inv->state) {
	case CORDON_INVENTORY_REVIEWED:
		break;
	case CORDON_INVENTORY_PENDING_REVIEW:
		return deny(CORDON_DENY_PENDING_REVIEW, tier);
	case CORDON_INVENTORY_CHANGED:
		return deny(CORDON_DENY_CHANGED, tier);
	case CORDON_INVENTORY_GONE:
		return deny(CORDON_DENY_GONE, tier);
	default:
		return deny(CORDON_DENY_INVALID_INPUT, tier);
	}
	/* Reviewed means: the operator pinned a fingerprint, the connector
	 * still advertises exactly that, and the caller computed the same. */
	if (!fingerprint_is_valid(inv->pinned_fingerprint) || !fingerprint_is_valid(inv->fingerprint) ||
	    !fingerprint_is_valid(req->fingerprint))
		return deny(CORDON_DENY_FINGERPRINT_MISMATCH, tier);
	if (strcmp(inv->pinned_fingerprint, inv->fingerprint) != 0 ||
	    strcmp(inv->pinned_fingerprint, req->fingerprint) != 0)
		return deny(CORDON_DENY_FINGERPRINT_MISMATCH, tier);

	if (in->policy_epoch == 0 || req->policy_epoch != in->policy_epoch)
		return deny(CORDON_DENY_STALE_POLICY, tier);

	if (req->delegation) {
		const struct cordon_delegation_view *d = NULL;

		if (in->n_delegations > 0 && !in->delegations)
			return deny(CORDON_DENY_INVALID_INPUT, tier);
		for (size_t i = 0; i < in->n_delegations; i++)
			if (in->delegations[i].id && strcmp(in->delegations[i].id, req->delegation) == 0) {
				d = &in->delegations[i];
				break;
			}
		if (!d || d->state != CORDON_DELEGATION_ACTIVE || !d->session || !d->connector ||
		    strcmp(d->session, req->session) != 0 || strcmp(d->connector, in->connector) != 0 ||
		    (d->expires_at != 0 && req->now >= d->expires_at))
			return deny(CORDON_DENY_DELEGATION, tier);
		/* A read-only delegated root cannot back anything above read. */
		if (tier > CORDON_RISK_READ && d->access != CORDON_ACCESS_READ_WRITE)
			return deny(CORDON_DENY_DELEGATION, tier);
	}

	if (tier == CORDON_RISK_READ)
		return (struct cordon_decision){ .verdict = CORDON_VERDICT_ALLOW, .tier = tier };
	return (struct cordon_decision){ .verdict = CORDON_VERDICT_APPROVE, .tier = tier };
}
