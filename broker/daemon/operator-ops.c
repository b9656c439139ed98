/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operations of the operator socket. Each one either reads or changes
 * state through the broker library (which commits in its own short
 * transaction and audits with the operator actor) and renders what the core
 * returns; this file runs no SQL. Only after a change is committed is the
 * daemon core notified (daemon.h).
 *
 * Why ~1000 lines: one handler for each operation (about two dozen), with its
 * arguments, its rendering and the error text an operator reads; they share
 * the helpers at the top, so they stay in one file. */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "broker.h"
#include "canon.h"
#include "checkpoint.h"
#include "cleanup.h"
#include "connectors.h"
#include "daemon.h"
#include "daemon-log.h"
#include "delegations.h"
#include "grants.h"
#include "hex-util.h"
#include "policy.h"
#include "inventory.h"
#include "operator-agents.h"
#include "operator-display.h"
#include "operator-watch.h"
#include "operator.h"

/* The newest rows an "all" listing shows. */
#define LIST_ALL_LIMIT 200

/* jansson provides json_decrefp(). */
#define _cleanup_json_ _cleanup_(json_decrefp)

static json_t *time_json(uint64_t usec)
{
	char buf[CORDON_TIME_STRING_MAX];

	if (usec == 0)
		return json_null();
	return json_string(cordon_time_format(usec, buf, sizeof(buf)));
}

static int oom(struct cordon_op_error *err)
{
	return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
}

/* An error from the broker library: the code from the errno, the message
 * names the operation and the object. */
static int core_error(struct cordon_op_error *err, int r, const char *what, const char *object)
{
	const char *why;

	switch (-r) {
	case EPERM:
		why = "not permitted";
		break;
	case ENOENT:
		why = "not found";
		break;
	case EALREADY:
		why = "not in a state this applies to (already decided or ended)";
		break;
	case ETIME:
		why = "expired";
		break;
	case ESTALE:
		why = "changed since it was shown (show it again)";
		break;
	case ENODEV:
		why = "the tool is no longer advertised";
		break;
	case EXDEV:
		why = "the path escapes the connector's ceiling";
		break;
	case EEXIST:
		why = "already exists";
		break;
	default:
		why = strerror(-r);
	}
	return cordon_op_error_set(err, -r, cordon_op_errno_code(r), "%s %s: %s", what, object ? object : "", why);
}

static int connector_check(struct cordon_db *db, const char *connector, struct cordon_op_error *err)
{
	int r = cordon_connector_exists(db, connector);

	if (r == -ENOENT)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND, "unknown connector \"%.64s\"",
					   connector);
	if (r < 0)
		return core_error(err, r, "looking up connector", connector);
	return 0;
}

/* ---- status, capabilities, connectors ---------------------------------- */

static int op_status(struct cordon_daemon *d, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	struct cordon_db_counters c;
	struct cordon_broker_status st;
	int r;

	r = cordon_broker_status(db, &st);
	if (r < 0)
		return core_error(err, r, "reading", "status");
	cordon_db_get_counters(db, &c);
	*ret = json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I}}", "health",
			 cordon_daemon_health(d) ? cordon_daemon_health(d) : "failing", "profiles_failed",
			 cordon_daemon_profile_errors(d), "connectors", (json_int_t)st.connectors, "approvals_pending",
			 (json_int_t)st.approvals_pending, "delegations_pending", (json_int_t)st.delegations_pending,
			 "actions_unresolved", (json_int_t)st.actions_unresolved, "inventory_to_review",
			 (json_int_t)st.inventory_to_review, "policy_epoch", (json_int_t)st.policy_epoch, "audit",
			 "last_seq", (json_int_t)st.audit_last_seq, "append_failures",
			 (json_int_t)c.audit_append_failures);
	return *ret ? 0 : oom(err);
}

static int op_capabilities(struct cordon_daemon *d, json_t **ret, struct cordon_op_error *err)
{
	*ret = cordon_daemon_capabilities(d);
	if (!*ret)
		return cordon_op_error_set(err, EAGAIN, CORDON_OP_E_UNAVAILABLE,
					   "the launcher's capability report is not available");
	return 0;
}

static int op_connectors_list(struct cordon_daemon *d, json_t **ret, struct cordon_op_error *err)
{
	*ret = cordon_daemon_connectors(d);
	if (!*ret)
		*ret = json_array();
	return *ret ? 0 : oom(err);
}

static int op_connector_change(struct cordon_daemon *d, const struct cordon_actor *actor,
			       const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	const char *connector = cordon_op_arg_string(req, "connector");
	struct cordon_diag diag = {};
	const char *verb;
	int r;

	if (strcmp(req->op->name, "connectors.add") == 0) {
		verb = "added";
		r = cordon_daemon_connector_add(d, actor, connector, &diag);
	} else if (strcmp(req->op->name, "connectors.remove") == 0) {
		verb = "removed";
		r = cordon_daemon_connector_remove(d, actor, connector, &diag);
	} else {
		verb = "restarted";
		r = cordon_daemon_connector_restart(d, actor, connector, &diag);
	}
	if (r < 0) {
		/* A profile that failed to load: the loader's error, as a
		 * failure (not a bad argument: the operator named it right). */
		if (!strcmp(diag.step, "profile"))
			return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED,
						   "connector \"%.64s\": profile %s (not loaded: fix the file, "
						   "then `cordonctl reload`)",
						   connector, diag.message);
		if (diag.message[0])
			return cordon_op_error_set(err, -r, cordon_op_errno_code(r), "connector \"%.64s\": %s",
						   connector, diag.message);
		return core_error(err, r, "connector", connector);
	}
	*ret = json_pack("{s:s, s:s}", "connector", connector, "result", verb);
	return *ret ? 0 : oom(err);
}

/* ---- inventory ------------------------------------------------------------- */

/* Parses stored JCS text for display; NULL on any problem. */
static json_t *parse_stored(const char *s)
{
	json_t *v = NULL;

	if (!s || cordon_canon_decode(s, strlen(s), NULL, &v, NULL) < 0)
		return NULL;
	return v;
}

/* Renders a stored definition (never masked: a tool definition holds no
 * call's values); warnings (may be NULL) gets the names and values that mix
 * look-alike scripts. */
static char *render_stored(const char *s, size_t *escaped, json_t *warnings)
{
	_cleanup_json_ json_t *v = parse_stored(s);
	struct cordon_display_options opt = { .warnings = warnings };
	char *text = NULL;
	size_t e = 0;

	if (!v || cordon_display_render_opts(v, &opt, &text, &e) < 0)
		return NULL;
	*escaped += e;
	return text;
}

/* What the connector claims next to what cordon decided. Claims never change
 * a tier; a contradiction is worth an operator's attention. */
static json_t *claim_notes(const json_t *claims, enum cordon_risk tier)
{
	json_t *notes = json_array();
	const json_t *ro = json_object_get(claims, "readOnlyHint");
	const json_t *destr = json_object_get(claims, "destructiveHint");

	if (!notes)
		return NULL;
	if (json_is_true(ro) && tier != CORDON_RISK_READ)
		(void)json_array_append_new(
			notes,
			json_sprintf("the connector claims readOnlyHint, cordon's tier is %s", cordon_risk_name(tier)));
	if (json_is_false(destr) && tier >= CORDON_RISK_DESTRUCTIVE)
		(void)json_array_append_new(
			notes, json_sprintf("the connector claims destructiveHint false, cordon's tier is %s",
					    cordon_risk_name(tier)));
	if (tier == CORDON_RISK_READ && (json_is_false(ro) || json_is_true(destr)))
		(void)json_array_append_new(
			notes,
			json_string(
				"the connector says it may modify things, cordon's tier is read: check the profile"));
	return notes;
}

static int inventory_entry_json(const char *connector, const struct cordon_inventory_record *rec,
				const struct cordon_risk_policy *policy, char **grant, json_t **ret,
				struct cordon_op_error *err)
{
	_cleanup_free_ char *def_text = NULL, *pinned_text = NULL, *diff = NULL;
	_cleanup_json_ json_t *claims = NULL, *warnings = json_array();
	enum cordon_risk tier = CORDON_RISK_HIGH;
	size_t escaped = 0;
	bool tier_ok;
	json_t *o;

	tier_ok = cordon_risk_policy_tier(policy, rec->name, &tier);
	if (!warnings)
		return oom(err);
	def_text = render_stored(rec->definition, &escaped, warnings);
	if (rec->pinned_definition && rec->pinned_fingerprint &&
	    strcmp(rec->pinned_fingerprint, rec->fingerprint) != 0) {
		pinned_text = render_stored(rec->pinned_definition, &escaped, NULL);
		if (pinned_text && def_text && cordon_display_diff(pinned_text, def_text, &diff) < 0)
			return oom(err);
	}
	claims = parse_stored(rec->claims);
	if (!claims)
		claims = json_object();
	o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:O, s:o, s:s, s:s?, s:o, s:o, s:o, s:s?, s:s?, s:s?, s:I}",
		      "connector", connector, "tool", rec->name, "state", cordon_inventory_state_to_string(rec->state),
		      "tier", tier_ok ? cordon_risk_name(tier) : "invalid", "granted", strv_contains(grant, rec->name),
		      "claims", claims, "notes", claim_notes(claims, tier), "fingerprint", rec->fingerprint,
		      "pinned_fingerprint", rec->pinned_fingerprint, "first_seen", time_json(rec->first_seen),
		      "updated_at", time_json(rec->updated_at), "reviewed_at", time_json(rec->reviewed_at),
		      "reviewed_by", rec->reviewed_by, "definition", def_text, "diff", diff, "escaped",
		      (json_int_t)escaped);
	if (!o || json_object_set(o, "warnings", warnings) < 0) {
		json_decref(o);
		return oom(err);
	}
	*ret = o;
	return 0;
}

/* What an inventory walk renders each entry with. */
struct inventory_render {
	const char *connector;
	const struct cordon_risk_policy *policy;
	char **grant;
	json_t *tools;
	struct cordon_review_set *set; /* NULL, or the tools awaiting review shown */
	struct cordon_op_error *err;
};

static int inventory_render_one(const struct cordon_inventory_record *rec, void *userdata)
{
	struct inventory_render *w = userdata;
	json_t *e = NULL;
	int r;

	r = inventory_entry_json(w->connector, rec, w->policy, w->grant, &e, w->err);
	if (r < 0)
		return r;
	if (json_array_append_new(w->tools, e) < 0)
		return oom(w->err);
	/* The fingerprint set is over exactly the entries rendered. */
	if (w->set && cordon_inventory_awaits_review(rec->state))
		cordon_review_set_add(w->set, rec->name, rec->fingerprint);
	return 0;
}

static int op_inventory_show(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			     struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector"), *tool = cordon_op_arg_string(req, "tool");
	bool all = cordon_op_arg_bool(req, "all", false) || tool;
	_cleanup_json_ json_t *arr = json_array();
	struct cordon_risk_policy_owned pol = {};
	struct cordon_review_set set;
	struct inventory_render w = { .connector = connector, .tools = arr, .set = tool ? NULL : &set, .err = err };
	char review_set[CORDON_REVIEW_SET_HEX_LEN + 1];
	char **grant = NULL;
	size_t n_grant = 0;
	int r;

	if (!arr)
		return oom(err);
	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	if ((r = cordon_risk_policy_load(db, connector, &pol)) < 0)
		return core_error(err, r, "risk policy of", connector);
	if ((r = cordon_grants_list(db, connector, &grant, &n_grant)) < 0) {
		cordon_risk_policy_owned_done(&pol);
		return core_error(err, r, "grant of", connector);
	}
	w.policy = &pol.policy;
	w.grant = grant;
	if (tool) {
		struct cordon_inventory_record rec = {};

		r = cordon_inventory_get(db, connector, tool, &rec);
		if (r >= 0)
			r = inventory_render_one(&rec, &w);
		else if (r == -ENOENT)
			r = 0; /* no such tool: the empty list below says so */
		cordon_inventory_record_done(&rec);
	} else {
		/* By default what needs an operator's review. */
		cordon_review_set_init(&set, connector);
		r = cordon_inventory_list(db, connector,
					  all ? 0
					      : CORDON_STATE_BIT(CORDON_INVENTORY_PENDING_REVIEW) |
							  CORDON_STATE_BIT(CORDON_INVENTORY_CHANGED),
					  inventory_render_one, &w);
		cordon_review_set_final(&set, review_set);
	}
	cordon_risk_policy_owned_done(&pol);
	strv_free(grant);
	if (r < 0)
		return err->code ? r : core_error(err, r, "inventory of", connector);
	if (tool && json_array_size(arr) == 0)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND, "connector %s has no tool \"%.64s\"",
					   connector, tool);
	*ret = json_pack("{s:s, s:b, s:O}", "connector", connector, "all", all, "tools", arr);
	if (*ret && !tool && set.n > 0 &&
	    json_object_set_new(*ret, "review_set",
				json_pack("{s:s, s:I}", "fingerprint_set", review_set, "tools", (json_int_t)set.n)) < 0)
		return oom(err);
	return *ret ? 0 : oom(err);
}

/* The inventory entry of one tool, for the checks the operator verbs make
 * before they change anything. */
struct inventory_find {
	const char *tool;
	bool found;
	enum cordon_inventory_state state;
	char fingerprint[CORDON_FINGERPRINT_HEX_MAX];
};

static int inventory_find_one(const struct cordon_inventory_record *rec, void *userdata)
{
	struct inventory_find *f = userdata;

	if (strcmp(rec->name, f->tool) != 0)
		return 0;
	f->found = true;
	f->state = rec->state;
	snprintf(f->fingerprint, sizeof(f->fingerprint), "%s", rec->fingerprint ? rec->fingerprint : "");
	return 0;
}

/* 1 and the tool's state and advertised fingerprint (fingerprint may be
 * NULL) when connector's inventory has tool, 0 when it does not. */
static int inventory_lookup(struct cordon_db *db, const char *connector, const char *tool,
			    enum cordon_inventory_state *ret_state, char *fingerprint, struct cordon_op_error *err)
{
	struct inventory_find f = { .tool = tool };
	int r = cordon_inventory_list(db, connector, 0, inventory_find_one, &f);

	if (r < 0)
		return core_error(err, r, "inventory of", connector);
	if (!f.found)
		return 0;
	*ret_state = f.state;
	if (fingerprint)
		memcpy(fingerprint, f.fingerprint, sizeof(f.fingerprint));
	return 1;
}

/* A grant may name only a tool the connector advertises (in its inventory
 * and not gone), unless the operator says --allow-unknown: a typo must not
 * change the policy. */
static int grant_tool_check(struct cordon_db *db, const char *connector, const char *tool, bool allow_unknown,
			    struct cordon_op_error *err)
{
	enum cordon_inventory_state state = CORDON_INVENTORY_GONE;
	int r;

	if (allow_unknown)
		return 0;
	r = inventory_lookup(db, connector, tool, &state, NULL, err);
	if (r < 0)
		return r;
	if (r == 0 || state == CORDON_INVENTORY_GONE)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND,
					   "%s does not advertise a tool \"%.64s\"%s; see `cordonctl inventory show %s "
					   "--all` (or grant it anyway with --allow-unknown)",
					   connector, tool, r == 0 ? "" : " any more", connector);
	return 0;
}

static int op_inventory_review(struct cordon_daemon *d, const struct cordon_actor *actor,
			       const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector"), *tool = cordon_op_arg_string(req, "tool"),
		   *fp = cordon_op_arg_string(req, "fingerprint");
	enum cordon_inventory_state state;
	char current[CORDON_FINGERPRINT_HEX_MAX];
	int r;

	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	r = inventory_lookup(db, connector, tool, &state, current, err);
	if (r < 0)
		return r;
	if (r == 0)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND,
					   "connector %s has no tool \"%.64s\" in its inventory; run `cordonctl "
					   "inventory show %s --all`",
					   connector, tool, connector);
	if (state != CORDON_INVENTORY_GONE && strcmp(fp, current) != 0)
		return cordon_op_error_set(err, ESTALE, CORDON_OP_E_STALE,
					   "fingerprint %.64s does not match the tool's current fingerprint %s; run "
					   "`cordonctl inventory show %s %s`",
					   fp, current, connector, tool);
	r = cordon_inventory_review(db, actor, connector, tool, fp);
	if (r == -ESTALE)
		return cordon_op_error_set(
			err, ESTALE, CORDON_OP_E_STALE,
			"tool %s of %s now advertises a definition other than %.16s...: show it again", tool, connector,
			fp);
	if (r < 0)
		return core_error(err, r, "review of", tool);
	cordon_daemon_policy_changed(d, connector);
	*ret = json_pack("{s:s, s:s, s:s, s:s}", "connector", connector, "tool", tool, "state", "reviewed",
			 "fingerprint", fp);
	return *ret ? 0 : oom(err);
}

/* Bulk review: every tool awaiting review, bound to the fingerprint set
 * `inventory show` printed for them. */
static int op_inventory_review_all(struct cordon_daemon *d, const struct cordon_actor *actor,
				   const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector"),
		   *set = cordon_op_arg_string(req, "fingerprint_set");
	_cleanup_json_ json_t *arr = json_array();
	struct cordon_reviewed_tool *tools = NULL;
	uint64_t epoch = 0;
	size_t n = 0;
	int r;

	if (!arr)
		return oom(err);
	if (!hex_is_lower_n(set, CORDON_REVIEW_SET_HEX_LEN))
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "argument \"fingerprint_set\" must be the 64 lowercase hex digits "
					   "`cordonctl inventory show %.64s` printed",
					   connector);
	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	r = cordon_inventory_review_all(db, actor, connector, set, &tools, &n);
	if (r == -ESTALE)
		return cordon_op_error_set(err, ESTALE, CORDON_OP_E_STALE,
					   "the tools of %s awaiting review are no longer the set %.16s... you were "
					   "shown (a tool was added, changed or reviewed since): nothing was reviewed; "
					   "run `cordonctl inventory show %s` again",
					   connector, set, connector);
	if (r == -EALREADY)
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_ALREADY, "no tool of %s awaits review",
					   connector);
	if (r < 0)
		return core_error(err, r, "review of the tools of", connector);
	cordon_daemon_policy_changed(d, connector);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "tool", tools[i].name, "fingerprint",
							 tools[i].fingerprint, "was",
							 cordon_inventory_state_to_string(tools[i].was))) < 0) {
			cordon_reviewed_tools_free(tools, n);
			return oom(err);
		}
	cordon_reviewed_tools_free(tools, n);
	(void)cordon_db_policy_epoch(db, &epoch);
	*ret = json_pack("{s:s, s:s, s:s, s:O, s:I}", "connector", connector, "state", "reviewed", "fingerprint_set",
			 set, "reviewed", arr, "policy_epoch", (json_int_t)epoch);
	return *ret ? 0 : oom(err);
}

/* ---- grants ------------------------------------------------------------------ */

/* One row of grants.show: a tool, its tier and its inventory state. */
static json_t *grant_row_json(const struct cordon_risk_policy *policy, const char *tool, const char *inventory)
{
	enum cordon_risk tier = CORDON_RISK_HIGH;
	bool ok = cordon_risk_policy_tier(policy, tool, &tier);

	return json_pack("{s:s, s:s, s:s}", "tool", tool, "tier", ok ? cordon_risk_name(tier) : "invalid", "inventory",
			 inventory);
}

/* Collects [name, state] of every inventory entry, by name. */
static int inventory_state_one(const struct cordon_inventory_record *rec, void *userdata)
{
	return json_array_append_new(userdata, json_pack("[s, i]", rec->name, (int)rec->state)) < 0 ? -ENOMEM : 0;
}

/* The state a granted tool has in what inventory_state_one() collected. */
static const char *inventory_state_of(const json_t *inventory, const char *tool)
{
	const json_t *e;
	size_t k;

	json_array_foreach(inventory, k, e)
	{
		if (strcmp(json_string_value(json_array_get(e, 0)), tool) == 0)
			return cordon_inventory_state_to_string(
				(enum cordon_inventory_state)json_integer_value(json_array_get(e, 1)));
	}
	return "not-advertised";
}

static int op_grants_show(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			  struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector");
	_cleanup_json_ json_t *granted = json_array(), *available = json_array(), *inventory = json_array();
	struct cordon_risk_policy_owned pol = {};
	const json_t *e;
	char **grant = NULL;
	size_t n = 0, k;
	int r;

	if (!granted || !available || !inventory)
		return oom(err);
	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	if ((r = cordon_grants_list(db, connector, &grant, &n)) < 0)
		return core_error(err, r, "grant of", connector);
	if ((r = cordon_risk_policy_load(db, connector, &pol)) < 0) {
		strv_free(grant);
		return core_error(err, r, "risk policy of", connector);
	}
	r = cordon_inventory_list(db, connector, 0, inventory_state_one, inventory);
	for (size_t i = 0; r >= 0 && i < n; i++)
		(void)json_array_append_new(
			granted, grant_row_json(&pol.policy, grant[i], inventory_state_of(inventory, grant[i])));
	/* Not granted: what the connector advertises now that the grant lacks. */
	json_array_foreach(inventory, k, e)
	{
		const char *name = json_string_value(json_array_get(e, 0));
		enum cordon_inventory_state state =
			(enum cordon_inventory_state)json_integer_value(json_array_get(e, 1));

		if (r < 0 || state == CORDON_INVENTORY_GONE || strv_contains(grant, name))
			continue;
		(void)json_array_append_new(available,
					    grant_row_json(&pol.policy, name, cordon_inventory_state_to_string(state)));
	}
	strv_free(grant);
	cordon_risk_policy_owned_done(&pol);
	if (r < 0)
		return core_error(err, r, "inventory of", connector);
	*ret = json_pack("{s:s, s:O, s:O}", "connector", connector, "granted", granted, "not_granted", available);
	return *ret ? 0 : oom(err);
}

/* The cordon.grant.changed line of one grant added or removed. */
static void grant_logged(const struct cordon_actor *actor, const char *connector, const char *tool, bool granted)
{
	char by[64];

	dlog_event(DLOG_GRANT_CHANGED, "connector", connector, "tool", tool, "change", granted ? "granted" : "revoked",
		   "by", dlog_actor(actor, by, sizeof(by)));
}

static int op_grants_change(struct cordon_daemon *d, const struct cordon_actor *actor,
			    const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector"), *tool = cordon_op_arg_string(req, "tool");
	bool add = strcmp(req->op->name, "grants.add") == 0;
	int r;

	if (!cordon_tool_name_is_valid(tool))
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "\"%.64s\" is not a valid tool name (1..128 of A-Z a-z 0-9 _ . -)", tool);
	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	if (add &&
	    (r = grant_tool_check(db, connector, tool, cordon_op_arg_bool(req, "allow_unknown", false), err)) < 0)
		return r;
	r = add ? cordon_grant_add(db, actor, connector, tool) : cordon_grant_remove(db, actor, connector, tool);
	if (r == -EEXIST)
		return cordon_op_error_set(err, EEXIST, CORDON_OP_E_EXISTS, "%s is already granted on %s", tool,
					   connector);
	if (r == -ENOENT)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND, "%s is not granted on %s", tool,
					   connector);
	if (r < 0)
		return core_error(err, r, add ? "grant of" : "revocation of", tool);
	grant_logged(actor, connector, tool, add);
	cordon_daemon_policy_changed(d, connector);
	*ret = json_pack("{s:s, s:s, s:b}", "connector", connector, "tool", tool, "granted", add);
	return *ret ? 0 : oom(err);
}

static int op_grants_set(struct cordon_daemon *d, const struct cordon_actor *actor, const struct cordon_op_request *req,
			 json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *connector = cordon_op_arg_string(req, "connector");
	const json_t *tools = cordon_op_arg_list(req, "tools"), *e;
	_cleanup_json_ json_t *added = json_array(), *removed = json_array();
	char **grant = NULL;
	size_t n = 0, i;
	int r = 0;

	if (!added || !removed)
		return oom(err);
	json_array_foreach(tools, i, e)
	{
		if (!cordon_tool_name_is_valid(json_string_value(e)))
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
						   "element %zu of \"tools\" is not a valid tool name", i);
		for (size_t j = 0; j < i; j++)
			if (json_equal(json_array_get(tools, j), (json_t *)e))
				return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "\"tools\" names %s twice",
							   json_string_value(e));
	}
	r = connector_check(db, connector, err);
	if (r < 0)
		return r;
	if ((r = cordon_grants_list(db, connector, &grant, &n)) < 0)
		return core_error(err, r, "grant of", connector);
	/* Every tool it would add must be known before anything changes. */
	json_array_foreach(tools, i, e)
	{
		if (strv_contains(grant, json_string_value(e)))
			continue;
		r = grant_tool_check(db, connector, json_string_value(e),
				     cordon_op_arg_bool(req, "allow_unknown", false), err);
		if (r < 0) {
			strv_free(grant);
			return r;
		}
	}
	/* Removals first: if anything fails half-way, the connector has at most
	 * the authority it had before or the target set, never more than both. */
	for (char **g = grant; *g && r >= 0; g++) {
		bool keep = false;

		json_array_foreach(tools, i, e) keep |= strcmp(json_string_value(e), *g) == 0;
		if (keep)
			continue;
		r = cordon_grant_remove(db, actor, connector, *g);
		if (r >= 0) {
			grant_logged(actor, connector, *g, false);
			(void)json_array_append_new(removed, json_string(*g));
		} else
			core_error(err, r, "revocation of", *g);
	}
	json_array_foreach(tools, i, e)
	{
		if (r < 0)
			break;
		if (strv_contains(grant, json_string_value(e)))
			continue;
		r = cordon_grant_add(db, actor, connector, json_string_value(e));
		if (r >= 0) {
			grant_logged(actor, connector, json_string_value(e), true);
			(void)json_array_append_new(added, json_incref((json_t *)e));
		} else
			core_error(err, r, "grant of", json_string_value(e));
	}
	strv_free(grant);
	if (json_array_size(added) + json_array_size(removed) > 0)
		cordon_daemon_policy_changed(d, connector);
	if (r < 0)
		return r;
	*ret = json_pack("{s:s, s:O, s:O, s:O}", "connector", connector, "granted", tools, "added", added, "removed",
			 removed);
	return *ret ? 0 : oom(err);
}

/* ---- approvals ----------------------------------------------------------------- */

static int resolve_approval(struct cordon_db *db, const char *ref, char id[static 48], struct cordon_op_error *err)
{
	int r = cordon_approval_resolve(db, ref, id);

	if (r == -ENOENT)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND,
					   "no approval \"%.64s\" is known (give its id or its display code; finished "
					   "approvals are forgotten after the retention period)",
					   ref);
	if (r == -ENOTUNIQ)
		return cordon_op_error_set(err, ENOTUNIQ, CORDON_OP_E_AMBIGUOUS,
					   "display code %s matches several outstanding approvals: give the id", ref);
	if (r < 0)
		return core_error(err, r, "approval", ref);
	return 0;
}

static json_t *approval_json(struct cordon_db *db, const struct cordon_approval_info *a)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b}", "id", a->id, "display_code",
			 a->display_code, "state", cordon_approval_state_to_string(a->state), "tier",
			 cordon_risk_name(a->tier), "session", a->session, "connector", a->connector, "tool", a->tool,
			 "created_at", time_json(a->created_at), "expires_at", time_json(a->expires_at), "past_expiry",
			 a->expires_at <= cordon_db_now(db));
}

/* An "all" listing: the newest rows of every state; otherwise the given
 * states, oldest first. */
static struct cordon_list_filter list_filter(bool all, uint32_t states, const char *connector)
{
	return (struct cordon_list_filter){ .states = all ? 0 : states,
					    .connector = connector,
					    .newest_first = all,
					    .limit = all ? LIST_ALL_LIMIT : 0 };
}

/* What a listing callback appends to. */
struct list_render {
	struct cordon_db *db;
	json_t *arr;
};

static int approval_render_one(const struct cordon_approval_info *info, void *userdata)
{
	struct list_render *w = userdata;

	return json_array_append_new(w->arr, approval_json(w->db, info)) < 0 ? -ENOMEM : 0;
}

static int op_approvals_list(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			     struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	_cleanup_json_ json_t *arr = json_array();
	struct list_render w = { .db = db, .arr = arr };
	struct cordon_list_filter f =
		list_filter(cordon_op_arg_bool(req, "all", false),
			    CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) | CORDON_STATE_BIT(CORDON_APPROVAL_APPROVED),
			    cordon_op_arg_string(req, "connector"));
	int r;

	if (!arr)
		return oom(err);
	r = cordon_approvals_list(db, &f, approval_render_one, &w);
	if (r == -ENOMEM)
		return oom(err);
	if (r < 0)
		return core_error(err, r, "listing", "approvals");
	*ret = json_incref(arr);
	return 0;
}

/* Records that an operator was shown an approval's masked values: who,
 * which approval; never a value. */
static int audit_revealed(struct cordon_db *db, const struct cordon_actor *actor,
			  const struct cordon_approval_info *info)
{
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_APPROVAL_REVEALED,
					 .actor = actor,
					 .approval_id = info->id,
					 .session = info->session,
					 .connector = info->connector,
					 .tool = info->tool,
					 .tier = (int)info->tier,
					 .reason = "operator-reveal" };

	return cordon_audit_append(db, &ev);
}

static int op_approvals_show(struct cordon_daemon *d, const struct cordon_actor *actor,
			     const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	_cleanup_json_ json_t *o = NULL, *args = NULL, *masked_paths = json_array(), *warnings = json_array();
	bool reveal = cordon_op_arg_bool(req, "reveal", false);
	struct cordon_approval_info info;
	char id[48];
	int r;

	if (!masked_paths || !warnings)
		return oom(err);
	r = resolve_approval(db, cordon_op_arg_string(req, "id"), id, err);
	if (r < 0)
		return r;
	r = cordon_approval_get(db, id, &info);
	if (r < 0)
		return core_error(err, r, "approval", id);
	o = approval_json(db, &info);
	if (!o)
		return oom(err);
	args = cordon_daemon_approval_arguments(d, id);
	if (args) {
		_cleanup_free_ char *text = NULL;
		size_t escaped = 0;
		/* Masked and escaped for display, after the binding was computed
		 * over the exact bytes: what the operator approves is the call,
		 * not this rendering. A critical call is never masked: the
		 * operator must see every byte it will execute (escaped, so
		 * hidden and bidi characters show). Other tiers are masked unless
		 * the operator asks to reveal, which is audited. */
		bool critical = info.tier == CORDON_RISK_CRITICAL;
		struct cordon_display_options opt = { .mask = !critical && !reveal,
						      .masked_paths = masked_paths,
						      .warnings = warnings };

		r = cordon_display_render_opts(args, &opt, &text, &escaped);
		if (r < 0)
			return oom(err);
		if (reveal && !critical) {
			r = audit_revealed(db, actor, &info);
			if (r < 0)
				return core_error(err, r, "auditing the reveal of", id);
		}
		if (json_object_set_new(o, "arguments", json_string(text)) < 0 ||
		    json_object_set_new(o, "masking",
					json_string(critical ? "off: critical tier, every value shown in full"
						    : reveal ? "off: revealed by the operator (audited)"
							     : "on: likely secrets masked")) < 0 ||
		    json_object_set(o, "masked", masked_paths) < 0 || json_object_set(o, "warnings", warnings) < 0 ||
		    json_object_set_new(o, "escaped", json_integer((json_int_t)escaped)) < 0)
			return oom(err);
	} else if (json_object_set_new(o, "arguments", json_null()) < 0 ||
		   json_object_set_new(
			   o, "arguments_note",
			   json_string(info.state == CORDON_APPROVAL_REQUESTED
					       ? "the arguments could not be kept (out of memory): deny it; "
						 "the agent's identical call asks again"
					       : "the arguments are kept only while an approval is pending; "
						 "this one is no longer")) < 0)
		return oom(err);
	if (info.tier == CORDON_RISK_CRITICAL && info.state == CORDON_APPROVAL_REQUESTED) {
		char code[CORDON_CONFIRM_CODE_LEN + 1];

		r = cordon_approval_confirmation_code(db, cordon_daemon_key(d), actor, id, code);
		if (r < 0)
			return core_error(err, r, "confirmation code of", id);
		if (json_object_set_new(o, "confirmation_code", json_string(code)) < 0)
			return oom(err);
	}
	*ret = TAKE_PTR(o);
	return 0;
}

/* Why approval info (looked up by ref) can no longer be decided, each with
 * its own code (issue 14): expired, already used, already denied, revoked,
 * already approved. */
static int approval_not_decidable(const struct cordon_approval_info *info, const char *ref, struct cordon_op_error *err)
{
	char when[CORDON_TIME_STRING_MAX];

	switch (info->state) {
	case CORDON_APPROVAL_REQUESTED:
		return cordon_op_error_set(err, ESTALE, CORDON_OP_E_STALE,
					   "approval %s changed while it was being decided: show it again", ref);
	case CORDON_APPROVAL_EXPIRED:
		return cordon_op_error_set(err, ETIME, CORDON_OP_E_EXPIRED,
					   "approval %s (%s, %s/%s) expired at %s; the agent's identical call asks "
					   "for a new one",
					   info->display_code, info->id, info->connector, info->tool,
					   cordon_time_format(info->expires_at, when, sizeof(when)));
	case CORDON_APPROVAL_CONSUMED:
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_USED,
					   "approval %s (%s, %s/%s) was approved and its call has run; a repeat needs "
					   "a new approval",
					   info->display_code, info->id, info->connector, info->tool);
	case CORDON_APPROVAL_DENIED:
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_WAS_DENIED,
					   "approval %s (%s, %s/%s) was already denied", info->display_code, info->id,
					   info->connector, info->tool);
	case CORDON_APPROVAL_REVOKED:
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_REVOKED,
					   "approval %s (%s, %s/%s) was revoked (a change of its tool's grant or "
					   "tier, a relaunch, the end of its session or an operator); the agent's "
					   "identical call asks for a new one",
					   info->display_code, info->id, info->connector, info->tool);
	case CORDON_APPROVAL_APPROVED:
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_ALREADY,
					   "approval %s (%s, %s/%s) is already approved", info->display_code, info->id,
					   info->connector, info->tool);
	}
	return cordon_op_error_set(err, EALREADY, CORDON_OP_E_ALREADY, "approval %s is not pending", ref);
}

static int op_approvals_decide(struct cordon_daemon *d, const struct cordon_actor *actor,
			       const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	bool approve = strcmp(req->op->name, "approvals.approve") == 0;
	const char *code = approve ? cordon_op_arg_string(req, "code") : NULL;
	struct cordon_approval_info info;
	char id[48];
	int r;

	r = resolve_approval(db, cordon_op_arg_string(req, "id"), id, err);
	if (r < 0)
		return r;
	r = cordon_approval_decide(db, cordon_daemon_key(d), actor, id, approve, code);
	if (r == -EACCES)
		return cordon_op_error_set(err, EACCES, CORDON_OP_E_CODE,
					   code ? "wrong confirmation code for critical approval %s"
						: "approval %s is critical: approve it with the confirmation code that "
						  "`cordonctl approvals show` prints (--code)",
					   id);
	if ((r == -ETIME || r == -EALREADY) && cordon_approval_get(db, id, &info) == 0)
		return approval_not_decidable(&info, id, err);
	if (r < 0)
		return core_error(err, r, approve ? "approving" : "denying", id);
	cordon_daemon_approval_decided(d, id);
	r = cordon_approval_get(db, id, &info);
	if (r < 0)
		return core_error(err, r, "approval", id);
	dlog_approval_decided(&info, actor);
	*ret = approval_json(db, &info);
	return *ret ? 0 : oom(err);
}

/* ---- delegations --------------------------------------------------------------- */

static json_t *delegation_json(const struct cordon_delegation_info *i)
{
	_cleanup_free_ char *path = NULL;
	size_t escaped = 0;

	if (cordon_display_escape(i->path, strlen(i->path), &path, &escaped) < 0)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:o}", "id", i->id, "session", i->session, "connector",
			 i->connector, "path", path, "access", cordon_access_to_string(i->access), "state",
			 cordon_delegation_state_to_string(i->state), "lifetime_seconds", (json_int_t)i->lifetime_sec,
			 "expires_at", time_json(i->expires_at));
}

static int op_delegations_list(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			       struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	_cleanup_json_ json_t *arr = json_array();
	struct cordon_list_filter f = list_filter(
		cordon_op_arg_bool(req, "all", false),
		CORDON_STATE_BIT(CORDON_DELEGATION_PENDING) | CORDON_STATE_BIT(CORDON_DELEGATION_ACTIVE), NULL);
	struct cordon_delegation_info *v = NULL;
	size_t n = 0;
	int r;

	if (!arr)
		return oom(err);
	r = cordon_delegations_list(db, &f, &v, &n);
	if (r < 0)
		return core_error(err, r, "listing", "delegations");
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, delegation_json(&v[i])) < 0) {
			cordon_delegations_free(v);
			return oom(err);
		}
	cordon_delegations_free(v);
	*ret = json_incref(arr);
	return 0;
}

static int op_delegations_change(struct cordon_daemon *d, const struct cordon_actor *actor,
				 const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *id = cordon_op_arg_string(req, "id");
	struct cordon_delegation_info info;
	int r;

	r = cordon_delegation_get(db, id, &info);
	if (r < 0)
		return core_error(err, r, "delegation", id);
	if (strcmp(req->op->name, "delegations.approve") == 0)
		r = cordon_delegation_activate(db, actor, id, NULL);
	else if (strcmp(req->op->name, "delegations.deny") == 0)
		r = cordon_delegation_refuse(db, actor, id);
	else
		r = cordon_delegation_revoke(db, actor, id);
	if (r == -EXDEV || (r == -EPERM && strcmp(req->op->name, "delegations.approve") == 0))
		return cordon_op_error_set(err, EXDEV, CORDON_OP_E_OUTSIDE,
					   "delegation %s: %s is not beneath any ceiling directory of connector %s "
					   "(refused)",
					   id, info.path, info.connector);
	if (r < 0)
		return core_error(err, r, "delegation", id);
	cordon_daemon_delegations_changed(d, info.connector);
	r = cordon_delegation_get(db, id, &info);
	if (r < 0)
		return core_error(err, r, "delegation", id);
	*ret = delegation_json(&info);
	return *ret ? 0 : oom(err);
}

/* ---- actions ----------------------------------------------------------------- */

static int action_render_one(const struct cordon_action_info *a, void *userdata)
{
	struct list_render *w = userdata;
	json_t *o = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:o, s:o, s:s?}", "id", a->id, "session", a->session,
		"connector", a->connector, "tool", a->tool, "tier", cordon_risk_name(a->tier), "replay",
		cordon_replay_to_string(a->replay), "approval_id", a->approval_id[0] ? a->approval_id : NULL, "state",
		cordon_action_state_to_string(a->state), "created_at", time_json(a->created_at), "updated_at",
		time_json(a->updated_at), "resolved_by", a->resolved_by[0] ? a->resolved_by : NULL);

	return json_array_append_new(w->arr, o) < 0 ? -ENOMEM : 0;
}

static int op_actions_list(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			   struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	_cleanup_json_ json_t *arr = json_array();
	struct list_render w = { .db = db, .arr = arr };
	/* By default the operator's queue: what never ran for sure or may have. */
	struct cordon_list_filter f = list_filter(
		cordon_op_arg_bool(req, "all", false),
		CORDON_STATE_BIT(CORDON_ACTION_ABANDONED) | CORDON_STATE_BIT(CORDON_ACTION_OUTCOME_UNKNOWN), NULL);
	int r;

	if (!arr)
		return oom(err);
	r = cordon_actions_list(db, &f, action_render_one, &w);
	if (r == -ENOMEM)
		return oom(err);
	if (r < 0)
		return core_error(err, r, "listing", "actions");
	*ret = json_incref(arr);
	return 0;
}

static int op_actions_resolve(struct cordon_daemon *d, const struct cordon_actor *actor,
			      const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *id = cordon_op_arg_string(req, "id"), *outcome = cordon_op_arg_string(req, "outcome");
	enum cordon_action_state s;
	bool ok;
	int r;

	if (strcmp(outcome, "succeeded") == 0)
		ok = true;
	else if (strcmp(outcome, "failed") == 0)
		ok = false;
	else
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "argument \"outcome\" must be \"succeeded\" or \"failed\"");
	r = cordon_action_resolve(db, actor, id, ok);
	if (r == -ESTALE)
		return cordon_op_error_set(err, EALREADY, CORDON_OP_E_ALREADY,
					   "action %s is not outcome_unknown or abandoned", id);
	if (r < 0)
		return core_error(err, r, "action", id);
	r = cordon_action_state(db, id, &s);
	if (r < 0)
		return core_error(err, r, "action", id);
	*ret = json_pack("{s:s, s:s}", "id", id, "state", cordon_action_state_to_string(s));
	return *ret ? 0 : oom(err);
}

/* ---- audit ----------------------------------------------------------------------- */

static int op_audit_tail(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			 struct cordon_op_error *err)
{
	int r = cordon_audit_tail(cordon_daemon_db(d), cordon_op_arg_uint(req, "count", 20), ret);

	if (r == -ENOMEM)
		return oom(err);
	if (r < 0)
		return core_error(err, r, "reading", "the audit log");
	return 0;
}

static int op_audit_verify(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			   struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *vkey = cordon_op_arg_string(req, "key");
	struct cordon_note_verifier v;
	struct cordon_audit_report rep;
	const char *key_source = "none";
	bool have = false;
	char text[512];
	int r;

	if (vkey) {
		struct cordon_diag diag = {};

		r = cordon_note_verifier_parse(vkey, &v, &diag);
		if (r < 0)
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "argument \"key\": %s",
						   diag.message);
		have = true;
		key_source = "given";
	} else if (cordon_daemon_audit_verifier(d, &v) == 0) {
		have = true;
		key_source = "daemon";
	}
	r = cordon_audit_verify(db, have ? &v : NULL, &rep);
	if (r < 0)
		return core_error(err, r, "verifying", "the audit log");
	cordon_audit_report_format(&rep, text, sizeof(text));
	*ret = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:s}", "verdict",
			 cordon_audit_verdict_to_string(rep.verdict), "seq", (json_int_t)rep.seq, "first",
			 (json_int_t)rep.first, "last", (json_int_t)rep.last, "signed_through",
			 (json_int_t)rep.signed_through, "pruned_through", (json_int_t)rep.pruned_through,
			 "checkpoints", (json_int_t)rep.n_checkpoints, "message", rep.message, "report", text, "key",
			 key_source);
	return *ret ? 0 : oom(err);
}

/* An ISO 8601 UTC time argument (cordon_time_parse()); absent: 0. */
static int time_arg(const struct cordon_op_request *req, const char *name, uint64_t *ret, struct cordon_op_error *err)
{
	const char *s = cordon_op_arg_string(req, name);

	*ret = 0;
	if (s && cordon_time_parse(s, ret) < 0)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "argument \"%s\": \"%.64s\" is not an ISO 8601 UTC time (YYYY-MM-DD, "
					   "YYYY-MM-DDTHH:MM:SSZ or with fractional seconds)",
					   name, s);
	return 0;
}

/* One page of the log for `cordonctl audit export`; the client pages (and
 * follows) by passing next_seq back as after_seq. A page is bounded
 * (CORDON_AUDIT_EXPORT_PAGE records), so a slow reader costs the daemon at
 * most one page of output on its connection (operator.c reads no further
 * request until it is written): the daemon keeps no follow state. */
static int op_audit_export(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
			   struct cordon_op_error *err)
{
	struct cordon_audit_export_query q = {
		.after_seq = cordon_op_arg_uint(req, "after_seq", 0),
		.limit = cordon_op_arg_uint(req, "limit", CORDON_AUDIT_EXPORT_PAGE),
	};
	int r;

	if ((r = time_arg(req, "since", &q.since_usec, err)) < 0 ||
	    (r = time_arg(req, "until", &q.until_usec, err)) < 0)
		return r;
	if (q.since_usec && q.until_usec && q.since_usec > q.until_usec)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "\"since\" (%.40s) is after \"until\" (%.40s)",
					   cordon_op_arg_string(req, "since"), cordon_op_arg_string(req, "until"));
	r = cordon_audit_export(cordon_daemon_db(d), &q, ret);
	if (r == -ENOMEM)
		return oom(err);
	if (r < 0)
		return core_error(err, r, "reading", "the audit log");
	return 0;
}

/* The daemon's checkpoint verifier key, in the form `audit verify --key`
 * and cordon-audit-verify take. */
static int op_audit_key(struct cordon_daemon *d, json_t **ret, struct cordon_op_error *err)
{
	_cleanup_free_ char *key = NULL;
	struct cordon_note_verifier v;

	if (cordon_daemon_audit_verifier(d, &v) < 0)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_UNAVAILABLE, "the daemon has no audit signing key");
	if (cordon_note_verifier_format(&v, &key) < 0)
		return oom(err);
	*ret = json_pack("{s:s, s:s}", "key", key, "origin", CORDON_DAEMON_AUDIT_ORIGIN);
	return *ret ? 0 : oom(err);
}

/* ---- revoke-all ------------------------------------------------------------------ */

static int op_revoke_all(struct cordon_daemon *d, const struct cordon_actor *actor, json_t **ret,
			 struct cordon_op_error *err)
{
	struct cordon_revoke_all_result res = {};
	unsigned instances;
	int r;

	r = cordon_revoke_all(cordon_daemon_db(d), actor, &res);
	if (r < 0)
		return core_error(err, r, "revoke-all", "");
	instances = cordon_daemon_revoked_all(d);
	*ret = json_pack("{s:I, s:I, s:I, s:I}", "grants", (json_int_t)res.grants, "approvals",
			 (json_int_t)res.approvals, "delegations", (json_int_t)res.delegations, "instances",
			 (json_int_t)instances);
	return *ret ? 0 : oom(err);
}

/* ---- reload ---------------------------------------------------------------------- */

static int op_reload(struct cordon_daemon *d, const struct cordon_actor *actor, json_t **ret,
		     struct cordon_op_error *err)
{
	struct cordon_diag diag = {};
	int r;

	r = cordon_daemon_reload(d, actor, ret, &diag);
	if (r < 0)
		return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED, "reload refused, nothing changed: %s",
					   diag.message);
	return 0;
}

/* ---- backup ---------------------------------------------------------------------- */

/* The copy goes into the file the operator opened and passed with the
 * request: cordond is confined to its state directory (Landlock) and never
 * opens a path an operator names; the operator's own permissions decide
 * where a backup may go, and the file is theirs (cordonctl creates it
 * 0600, O_EXCL). Audited: who took a copy of the database. */
static int op_backup(struct cordon_daemon *d, const struct cordon_actor *actor, const struct cordon_op_request *req,
		     json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_OPERATOR_BACKUP, .actor = actor,
					 .reason = "backup" };
	struct cordon_diag diag = {};
	uint64_t bytes = 0, seq = 0;
	struct cordon_broker_status st;
	int r;

	if (req->fd < 0)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_MISSING_ARG,
					   "backup needs the target file passed with the request (SCM_RIGHTS); "
					   "use `cordonctl backup PATH`");
	/* Audited first, so the copy holds the record of its own making. */
	r = cordon_audit_append(db, &ev);
	if (r < 0)
		return core_error(err, r, "auditing", "the backup");
	r = cordon_db_backup_to_fd(db, req->fd, &bytes, &diag);
	if (r < 0)
		return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED, "backup failed: %s", diag.message);
	if (cordon_broker_status(db, &st) >= 0)
		seq = st.audit_last_seq;
	*ret = json_pack("{s:I, s:I}", "bytes", (json_int_t)bytes, "audit_last_seq", (json_int_t)seq);
	return *ret ? 0 : oom(err);
}

int cordon_operator_execute(struct cordon_daemon *d, const struct cordon_actor *actor,
			    const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	const char *op;
	json_t *res = NULL;
	int r;

	if (!actor || !cordon_actor_is_operator(actor))
		return cordon_op_error_set(err, EPERM, CORDON_OP_E_DENIED, "operator operations need an operator");
	if (!req || !req->op)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "no operation");
	op = req->op->name;
	if (!strcmp(op, "status"))
		r = op_status(d, &res, err);
	else if (!strcmp(op, "capabilities"))
		r = op_capabilities(d, &res, err);
	else if (!strcmp(op, "connectors.list"))
		r = op_connectors_list(d, &res, err);
	else if (!strncmp(op, "connectors.", 11))
		r = op_connector_change(d, actor, req, &res, err);
	else if (!strcmp(op, "inventory.show"))
		r = op_inventory_show(d, req, &res, err);
	else if (!strcmp(op, "inventory.review"))
		r = op_inventory_review(d, actor, req, &res, err);
	else if (!strcmp(op, "inventory.review-all"))
		r = op_inventory_review_all(d, actor, req, &res, err);
	else if (!strcmp(op, "grants.show"))
		r = op_grants_show(d, req, &res, err);
	else if (!strcmp(op, "grants.set"))
		r = op_grants_set(d, actor, req, &res, err);
	else if (!strcmp(op, "grants.add") || !strcmp(op, "grants.remove"))
		r = op_grants_change(d, actor, req, &res, err);
	else if (!strcmp(op, "approvals.list"))
		r = op_approvals_list(d, req, &res, err);
	else if (!strcmp(op, "approvals.show"))
		r = op_approvals_show(d, actor, req, &res, err);
	else if (!strcmp(op, "approvals.watch"))
		r = op_approvals_watch(d, req, &res, err);
	else if (!strcmp(op, "approvals.approve") || !strcmp(op, "approvals.deny"))
		r = op_approvals_decide(d, actor, req, &res, err);
	else if (!strcmp(op, "delegations.list"))
		r = op_delegations_list(d, req, &res, err);
	else if (!strncmp(op, "delegations.", 12))
		r = op_delegations_change(d, actor, req, &res, err);
	else if (!strcmp(op, "actions.list"))
		r = op_actions_list(d, req, &res, err);
	else if (!strcmp(op, "actions.resolve"))
		r = op_actions_resolve(d, actor, req, &res, err);
	else if (!strcmp(op, "audit.tail"))
		r = op_audit_tail(d, req, &res, err);
	else if (!strcmp(op, "audit.verify"))
		r = op_audit_verify(d, req, &res, err);
	else if (!strcmp(op, "audit.export"))
		r = op_audit_export(d, req, &res, err);
	else if (!strcmp(op, "audit.key"))
		r = op_audit_key(d, &res, err);
	else if (!strncmp(op, "agents.", 7))
		r = operator_agents_execute(d, actor, req, &res, err);
	else if (!strcmp(op, "revoke-all"))
		r = op_revoke_all(d, actor, &res, err);
	else if (!strcmp(op, "reload"))
		r = op_reload(d, actor, &res, err);
	else if (!strcmp(op, "backup"))
		r = op_backup(d, actor, req, &res, err);
	else
		r = cordon_op_error_set(err, ENOSYS, CORDON_OP_E_UNKNOWN_OP, "op %s has no handler", op);
	if (r < 0) {
		json_decref(res);
		return r;
	}
	*ret = res;
	return 0;
}
