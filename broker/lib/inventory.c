/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "inventory.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "broker-private.h"
#include "connectors.h"
#include "canon.h"
#include "crypto.h"
#include "hex-util.h"

static bool fp_valid(const char *s)
{
	return hex_is_lower_n(s, 64);
}

void cordon_tool_advert_owned_done(struct cordon_tool_advert_owned *a)
{
	if (!a)
		return;
	free(a->name);
	free(a->fingerprint);
	free(a->definition);
	free(a->claims);
	memset(a, 0, sizeof(*a));
}

int cordon_tool_advert_from_json(const json_t *tool, const char *instructions, struct cordon_tool_advert_owned *ret)
{
	struct cordon_tool_advert_owned a = {};
	uint8_t fp[CORDON_HASH_LEN];
	const json_t *name, *ann;
	json_t *empty = NULL;
	int r;

	if (!json_is_object(tool))
		return -EINVAL;
	name = json_object_get(tool, "name");
	if (!json_is_string(name) || !cordon_tool_name_is_valid(json_string_value(name)))
		return -EINVAL;
	r = cordon_tool_fingerprint(tool, instructions, fp);
	if (r < 0)
		return r;
	a.name = strdup(json_string_value(name));
	a.fingerprint = malloc(2 * CORDON_HASH_LEN + 1);
	if (!a.name || !a.fingerprint) {
		r = -ENOMEM;
		goto fail;
	}
	hex_encode(fp, sizeof(fp), a.fingerprint);
	r = cordon_jcs_encode(tool, &a.definition, NULL);
	if (r < 0)
		goto fail;
	ann = json_object_get(tool, "annotations");
	if (!json_is_object(ann))
		ann = empty = json_object();
	if (!ann) {
		r = -ENOMEM;
		goto fail;
	}
	r = cordon_jcs_encode(ann, &a.claims, NULL);
	json_decref(empty);
	if (r < 0)
		goto fail;
	a.advert = (struct cordon_tool_advert){
		.name = a.name, .fingerprint = a.fingerprint, .definition = a.definition, .claims = a.claims
	};
	*ret = a;
	return 0;
fail:
	cordon_tool_advert_owned_done(&a);
	return r;
}

void cordon_inventory_record_done(struct cordon_inventory_record *r)
{
	if (!r)
		return;
	free(r->connector);
	free(r->name);
	free(r->fingerprint);
	free(r->definition);
	free(r->claims);
	free(r->pinned_fingerprint);
	free(r->pinned_definition);
	free(r->reviewed_by);
	memset(r, 0, sizeof(*r));
}

void cordon_inventory_record_view(const struct cordon_inventory_record *r, struct cordon_inventory_entry *ret)
{
	*ret = (struct cordon_inventory_entry){ .connector = r->connector,
						.name = r->name,
						.state = r->state,
						.fingerprint = r->fingerprint,
						.pinned_fingerprint = r->pinned_fingerprint };
}

#define RECORD_COLUMNS                                                                                                 \
	"connector, name, state, fingerprint, definition, claims, pinned_fingerprint, pinned_definition, first_seen, " \
	"updated_at, coalesce(reviewed_at, 0), reviewed_by"

/* One row of RECORD_COLUMNS into *ret (owning its strings). */
static int record_read(sqlite3_stmt *st, struct cordon_inventory_record *ret)
{
	struct cordon_inventory_record rec = {};
	int r;

	rec.state = (enum cordon_inventory_state)sqlite3_column_int(st, 2);
	rec.first_seen = (uint64_t)sqlite3_column_int64(st, 8);
	rec.updated_at = (uint64_t)sqlite3_column_int64(st, 9);
	rec.reviewed_at = (uint64_t)sqlite3_column_int64(st, 10);
	if ((r = db_column_strdup(st, 0, &rec.connector)) < 0 || (r = db_column_strdup(st, 1, &rec.name)) < 0 ||
	    (r = db_column_strdup(st, 3, &rec.fingerprint)) < 0 || (r = db_column_strdup(st, 4, &rec.definition)) < 0 ||
	    (r = db_column_strdup(st, 5, &rec.claims)) < 0 ||
	    (r = db_column_strdup(st, 6, &rec.pinned_fingerprint)) < 0 ||
	    (r = db_column_strdup(st, 7, &rec.pinned_definition)) < 0 ||
	    (r = db_column_strdup(st, 11, &rec.reviewed_by)) < 0) {
		cordon_inventory_record_done(&rec);
		return r;
	}
	*ret = rec;
	return 0;
}

static int load_record(struct cordon_db *db, const char *connector, const char *tool,
		       struct cordon_inventory_record *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT " RECORD_COLUMNS " FROM tool_inventory WHERE connector = ?1 AND name = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "tool not in the inventory");
	return record_read(st, ret);
}

int cordon_inventory_get(struct cordon_db *db, const char *connector, const char *tool,
			 struct cordon_inventory_record *ret)
{
	return load_record(db, connector, tool, ret);
}

#define N_STATES (CORDON_INVENTORY_GONE + 1)

int cordon_inventory_list(struct cordon_db *db, const char *connector, uint32_t states, cordon_inventory_cb cb,
			  void *userdata)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       "SELECT " RECORD_COLUMNS " FROM tool_inventory WHERE connector = ?1 "
		       "AND state IN (?2, ?3, ?4, ?5) ORDER BY name",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_states(db, st, 2, N_STATES, states)) < 0)
		return r;
	for (;;) {
		struct cordon_inventory_record rec;

		r = db_step_row(db, st);
		if (r <= 0)
			return r;
		r = record_read(st, &rec);
		if (r < 0)
			return r;
		r = cb(&rec, userdata);
		cordon_inventory_record_done(&rec);
		if (r < 0)
			return r;
	}
}

int inventory_count(struct cordon_db *db, uint32_t states, uint64_t *ret)
{
	return db_count_in_states(db, "SELECT count(*) FROM tool_inventory WHERE state IN (?1, ?2, ?3, ?4)", N_STATES,
				  states, ret);
}

static int audit_inventory(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			   const char *tool, enum cordon_inventory_state state, const char *fingerprint,
			   const char *reason)
{
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_INVENTORY,
					 .actor = actor,
					 .connector = connector,
					 .tool = tool,
					 .state = cordon_inventory_state_to_string(state),
					 .fingerprint = fingerprint,
					 .reason = reason };
	return audit_append_tx(db, &ev);
}

static int set_state(struct cordon_db *db, const char *connector, const struct cordon_tool_advert *t,
		     enum cordon_inventory_state state)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       "UPDATE tool_inventory SET state = ?3, fingerprint = ?4, definition = ?5, claims = ?6, "
		       "updated_at = ?7 WHERE connector = ?1 AND name = ?2",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, t->name)) < 0 ||
	    (r = db_bind_int64(db, st, 3, state)) < 0 || (r = db_bind_text(db, st, 4, t->fingerprint)) < 0 ||
	    (r = db_bind_text(db, st, 5, t->definition)) < 0 ||
	    (r = db_bind_text(db, st, 6, t->claims ? t->claims : "{}")) < 0 ||
	    (r = db_bind_int64(db, st, 7, (int64_t)cordon_db_now(db))) < 0)
		return r;
	return db_step_done(db, st);
}

static int sync_one(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
		    const struct cordon_tool_advert *t, struct cordon_inventory_sync_result *res)
{
	struct cordon_inventory_record rec = {};
	enum cordon_inventory_state next;
	int r;

	r = load_record(db, connector, t->name, &rec);
	if (r == -ENOENT) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		uint64_t now = cordon_db_now(db);

		r = db_prepare(db,
			       "INSERT INTO tool_inventory(connector, name, state, fingerprint, definition, claims, "
			       "first_seen, updated_at) VALUES (?1, ?2, ?7, ?3, ?4, ?5, ?6, ?6)",
			       &st);
		if (r < 0)
			return r;
		if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, t->name)) < 0 ||
		    (r = db_bind_text(db, st, 3, t->fingerprint)) < 0 ||
		    (r = db_bind_text(db, st, 4, t->definition)) < 0 ||
		    (r = db_bind_text(db, st, 5, t->claims ? t->claims : "{}")) < 0 ||
		    (r = db_bind_int64(db, st, 6, (int64_t)now)) < 0 ||
		    (r = db_bind_int64(db, st, 7, CORDON_INVENTORY_PENDING_REVIEW)) < 0)
			return r;
		r = db_step_done(db, st);
		if (r < 0)
			return r;
		res->added++;
		return audit_inventory(db, actor, connector, t->name, CORDON_INVENTORY_PENDING_REVIEW, t->fingerprint,
				       "new");
	}
	if (r < 0)
		return r;

	if (rec.pinned_fingerprint)
		next = strcmp(rec.pinned_fingerprint, t->fingerprint) == 0 ? CORDON_INVENTORY_REVIEWED
									   : CORDON_INVENTORY_CHANGED;
	else
		next = CORDON_INVENTORY_PENDING_REVIEW;

	if (next == rec.state && strcmp(rec.fingerprint, t->fingerprint) == 0) {
		res->unchanged++;
		cordon_inventory_record_done(&rec);
		return 0;
	}
	r = set_state(db, connector, t, next);
	if (r >= 0 && strcmp(rec.fingerprint, t->fingerprint) != 0)
		/* Bindings include the fingerprint; revoking makes it visible. */
		r = approvals_revoke_tx(db, actor, APPROVALS_TOOL, connector, t->name, "fingerprint-change", NULL);
	if (r >= 0)
		r = audit_inventory(db, actor, connector, t->name, next, t->fingerprint,
				    next == CORDON_INVENTORY_REVIEWED		   ? "matches-pinned"
				    : strcmp(rec.fingerprint, t->fingerprint) != 0 ? "fingerprint-change"
										   : "re-advertised");
	if (r >= 0) {
		if (next == CORDON_INVENTORY_REVIEWED)
			res->reverted++;
		else
			res->changed++;
	}
	cordon_inventory_record_done(&rec);
	return r;
}

static int mark_gone(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
		     const struct cordon_tool_advert *tools, size_t n, struct cordon_inventory_sync_result *res)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char **gone = NULL;
	size_t n_gone = 0;
	int r;

	r = db_prepare(db, "SELECT name FROM tool_inventory WHERE connector = ?1 AND state != ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_int64(db, st, 2, CORDON_INVENTORY_GONE)) < 0)
		return r;
	for (;;) {
		const char *name;
		bool found = false;

		r = db_step_row(db, st);
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		name = (const char *)sqlite3_column_text(st, 0);
		for (size_t i = 0; i < n && !found; i++)
			found = strcmp(tools[i].name, name) == 0;
		if (found)
			continue;
		char **ng = reallocarray(gone, n_gone + 1, sizeof(char *));
		if (!ng) {
			r = -ENOMEM;
			goto out;
		}
		gone = ng;
		gone[n_gone] = strdup(name);
		if (!gone[n_gone]) {
			r = -ENOMEM;
			goto out;
		}
		n_gone++;
	}
	db_stmt_release(TAKE_PTR(st));
	for (size_t i = 0; i < n_gone; i++) {
		r = db_prepare(
			db, "UPDATE tool_inventory SET state = ?4, updated_at = ?3 WHERE connector = ?1 AND name = ?2",
			&st);
		if (r < 0)
			goto out;
		if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, gone[i])) < 0 ||
		    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) < 0 ||
		    (r = db_bind_int64(db, st, 4, CORDON_INVENTORY_GONE)) < 0)
			goto out;
		r = db_step_done(db, st);
		db_stmt_release(TAKE_PTR(st));
		if (r < 0)
			goto out;
		r = approvals_revoke_tx(db, actor, APPROVALS_TOOL, connector, gone[i], "tool-gone", NULL);
		if (r < 0)
			goto out;
		r = audit_inventory(db, actor, connector, gone[i], CORDON_INVENTORY_GONE, NULL, "not-advertised");
		if (r < 0)
			goto out;
		res->gone++;
	}
	r = 0;
out:
	for (size_t i = 0; i < n_gone; i++)
		free(gone[i]);
	free(gone);
	return r;
}

int cordon_inventory_sync(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			  const struct cordon_tool_advert *tools, size_t n, struct cordon_inventory_sync_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_inventory_sync_result res = {};
	int r;

	if (!actor || actor->kind == CORDON_ACTOR_SESSION)
		return db_failf(db, EPERM, "a session cannot change the inventory");
	if (n > 0 && !tools)
		return db_failf(db, EINVAL, "no tools");
	for (size_t i = 0; i < n; i++) {
		if (!cordon_tool_name_is_valid(tools[i].name) || !fp_valid(tools[i].fingerprint) ||
		    !tools[i].definition)
			return db_failf(db, EINVAL, "advertised tool %zu is invalid", i);
		for (size_t j = 0; j < i; j++)
			if (strcmp(tools[i].name, tools[j].name) == 0)
				return db_failf(db, EINVAL, "tool '%s' is advertised twice", tools[i].name);
	}
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = cordon_connector_exists(db, connector);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = sync_one(db, actor, connector, &tools[i], &res);
		if (r < 0)
			return r;
	}
	r = mark_gone(db, actor, connector, tools, n, &res);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret)
		*ret = res;
	return 0;
}

int cordon_inventory_review(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			    const char *tool, const char *expected_fingerprint)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_inventory_record rec = {};
	char who[128];
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may review tools");
	if (!fp_valid(expected_fingerprint))
		return db_failf(db, EINVAL, "invalid fingerprint");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = load_record(db, connector, tool, &rec);
	if (r < 0)
		return r;
	if (rec.state == CORDON_INVENTORY_GONE)
		r = db_failf(db, ENODEV, "tool is no longer advertised");
	else if (strcmp(rec.fingerprint, expected_fingerprint) != 0)
		r = db_failf(db, ESTALE, "the connector now advertises a different definition; review it again");
	else if (rec.state == CORDON_INVENTORY_REVIEWED)
		r = db_failf(db, EALREADY, "already reviewed");
	cordon_inventory_record_done(&rec);
	if (r < 0)
		return r;

	cordon_actor_describe(actor, who, sizeof(who));
	r = db_prepare(db,
		       "UPDATE tool_inventory SET state = ?5, pinned_fingerprint = fingerprint, "
		       "pinned_definition = definition, reviewed_at = ?3, reviewed_by = ?4, updated_at = ?3 "
		       "WHERE connector = ?1 AND name = ?2",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0 ||
	    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) < 0 || (r = db_bind_text(db, st, 4, who)) < 0 ||
	    (r = db_bind_int64(db, st, 5, CORDON_INVENTORY_REVIEWED)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = audit_inventory(db, actor, connector, tool, CORDON_INVENTORY_REVIEWED, expected_fingerprint, "review");
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

/* ---- bulk review ---- */

_Static_assert(sizeof(((struct cordon_review_set *)0)->state) >= sizeof(crypto_hash_sha256_state),
	       "cordon_review_set.state holds a crypto_hash_sha256_state");

void cordon_review_set_init(struct cordon_review_set *s, const char *connector)
{
	crypto_hash_sha256_state *st = (crypto_hash_sha256_state *)(void *)s->state;
	static const char tag[] = "cordon-review-set-v1\n";

	s->n = 0;
	crypto_hash_sha256_init(st);
	crypto_hash_sha256_update(st, (const unsigned char *)tag, sizeof(tag) - 1);
	crypto_hash_sha256_update(st, (const unsigned char *)connector, strlen(connector));
	crypto_hash_sha256_update(st, (const unsigned char *)"\n", 1);
}

void cordon_review_set_add(struct cordon_review_set *s, const char *name, const char *fingerprint)
{
	crypto_hash_sha256_state *st = (crypto_hash_sha256_state *)(void *)s->state;

	crypto_hash_sha256_update(st, (const unsigned char *)name, strlen(name));
	crypto_hash_sha256_update(st, (const unsigned char *)"\n", 1);
	crypto_hash_sha256_update(st, (const unsigned char *)fingerprint, strlen(fingerprint));
	crypto_hash_sha256_update(st, (const unsigned char *)"\n", 1);
	s->n++;
}

void cordon_review_set_final(struct cordon_review_set *s, char ret[static CORDON_REVIEW_SET_HEX_LEN + 1])
{
	uint8_t h[CORDON_HASH_LEN];

	crypto_hash_sha256_final((crypto_hash_sha256_state *)(void *)s->state, h);
	hex_encode(h, sizeof(h), ret);
	sodium_memzero(s->state, sizeof(s->state));
}

bool cordon_inventory_awaits_review(enum cordon_inventory_state state)
{
	return state == CORDON_INVENTORY_PENDING_REVIEW || state == CORDON_INVENTORY_CHANGED;
}

void cordon_reviewed_tools_free(struct cordon_reviewed_tool *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		free(t[i].name);
		free(t[i].fingerprint);
	}
	free(t);
}

/* What the walk inside the bulk review's transaction collects. */
struct review_walk {
	struct cordon_review_set set;
	struct cordon_reviewed_tool *tools;
	size_t n;
};

static int review_collect(const struct cordon_inventory_record *rec, void *userdata)
{
	struct review_walk *w = userdata;
	struct cordon_reviewed_tool *t;

	if (!cordon_inventory_awaits_review(rec->state))
		return 0;
	t = reallocarray(w->tools, w->n + 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	w->tools = t;
	t[w->n] = (struct cordon_reviewed_tool){ .name = strdup(rec->name),
						 .fingerprint = strdup(rec->fingerprint),
						 .was = rec->state };
	w->n++;
	if (!t[w->n - 1].name || !t[w->n - 1].fingerprint)
		return -ENOMEM;
	cordon_review_set_add(&w->set, rec->name, rec->fingerprint);
	return 0;
}

int cordon_inventory_review_all(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
				const char *expected_set, struct cordon_reviewed_tool **ret_tools, size_t *ret_n)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct review_walk w = {};
	char got[CORDON_REVIEW_SET_HEX_LEN + 1], who[128];
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may review tools");
	if (!expected_set || !hex_is_lower_n(expected_set, CORDON_REVIEW_SET_HEX_LEN))
		return db_failf(db, EINVAL, "invalid fingerprint set (64 lowercase hex digits)");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = cordon_connector_exists(db, connector);
	if (r < 0)
		return r;
	/* The set is computed from the rows this transaction sees and is
	 * about to update: nothing can change between the check and the
	 * writes. */
	cordon_review_set_init(&w.set, connector);
	r = cordon_inventory_list(db, connector, 0, review_collect, &w);
	cordon_review_set_final(&w.set, got);
	if (r < 0)
		goto fail;
	if (w.n == 0) {
		r = db_failf(db, EALREADY, "no tool of %s awaits review", connector);
		goto fail;
	}
	if (strcmp(got, expected_set) != 0) {
		r = db_failf(db, ESTALE, "the tools awaiting review are not the set shown (now %s)", got);
		goto fail;
	}
	cordon_actor_describe(actor, who, sizeof(who));
	for (size_t i = 0; i < w.n; i++) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;

		/* The fingerprint in the WHERE clause: only the definition the
		 * operator was shown is pinned. */
		r = db_prepare(db,
			       "UPDATE tool_inventory SET state = ?5, pinned_fingerprint = fingerprint, "
			       "pinned_definition = definition, reviewed_at = ?3, reviewed_by = ?4, updated_at = ?3 "
			       "WHERE connector = ?1 AND name = ?2 AND fingerprint = ?6",
			       &st);
		if (r < 0)
			goto fail;
		if ((r = db_bind_text(db, st, 1, connector)) < 0 ||
		    (r = db_bind_text(db, st, 2, w.tools[i].name)) < 0 ||
		    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) < 0 ||
		    (r = db_bind_text(db, st, 4, who)) < 0 ||
		    (r = db_bind_int64(db, st, 5, CORDON_INVENTORY_REVIEWED)) < 0 ||
		    (r = db_bind_text(db, st, 6, w.tools[i].fingerprint)) < 0)
			goto fail;
		r = db_step_done(db, st);
		if (r < 0)
			goto fail;
		r = audit_inventory(db, actor, connector, w.tools[i].name, CORDON_INVENTORY_REVIEWED,
				    w.tools[i].fingerprint, "review-all");
		if (r < 0)
			goto fail;
	}
	/* One epoch for the whole review (earlier decisions of these tools are
	 * stale: they were denied as unreviewed); approvals are revoked for
	 * exactly the reviewed tools, as a grant change revokes its tool's
	 * (policy_epoch_bump_tx). */
	r = policy_epoch_add_tx(db, NULL);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < w.n; i++) {
		r = approvals_revoke_tx(db, actor, APPROVALS_TOOL, connector, w.tools[i].name, "inventory-review",
					NULL);
		if (r < 0)
			goto fail;
	}
	r = db_tx_commit(&tx);
	if (r < 0)
		goto fail;
	*ret_tools = w.tools;
	*ret_n = w.n;
	return 0;
fail:
	cordon_reviewed_tools_free(w.tools, w.n);
	return r;
}
