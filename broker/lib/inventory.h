/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The reviewed tool inventory, per (connector, tool name).
 *
 *   new name                          -> pending_review
 *   reviewed, same fingerprint        -> reviewed (no change)
 *   reviewed, different fingerprint   -> changed  (denied until re-reviewed; the
 *                                        pinned and the new definition are both kept)
 *   changed, back to the pinned one   -> reviewed
 *   no longer advertised              -> gone
 *   gone, advertised again            -> reviewed / changed / pending_review by fingerprint
 * A renamed tool is a new name (pending_review) plus a gone one. Only an
 * operator can review (cordon_inventory_review). A fingerprint change or a
 * tool going away revokes the tool's outstanding approvals. */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "authz.h"
#include "db.h"

/* One advertised tool as the daemon computed it from tools/list. */
struct cordon_tool_advert {
	const char *name;
	const char *fingerprint; /* 64 lowercase hex (cordon_tool_fingerprint) */
	const char *definition;	 /* JCS of the whole tool object (kept for the diff) */
	const char *claims;	 /* JCS of its annotations, display only; NULL: "{}" */
};

/* The same, owning its strings; built from a tools/list entry with canon's
 * fingerprint and JCS. */
struct cordon_tool_advert_owned {
	struct cordon_tool_advert advert;
	char *name, *fingerprint, *definition, *claims;
};

/* Builds an advert from one tools/list element and the server's instructions
 * (NULL when absent). Returns 0, -EINVAL (not an object, no valid name) or a
 * canon.h errno. */
int cordon_tool_advert_from_json(const json_t *tool, const char *instructions, struct cordon_tool_advert_owned *ret);
void cordon_tool_advert_owned_done(struct cordon_tool_advert_owned *a);

struct cordon_inventory_sync_result {
	uint64_t added, changed, reverted, gone, unchanged;
};

/* Applies one tools/list snapshot (the complete list) for a connector in one
 * transaction. Duplicate names or an invalid entry reject the whole snapshot
 * (-EINVAL). System or operator actor. */
int cordon_inventory_sync(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			  const struct cordon_tool_advert *tools, size_t n, struct cordon_inventory_sync_result *ret);

/* Operator review: pins the fingerprint the operator saw. -EPERM for a
 * non-operator, -ENOENT for an unknown tool, -ESTALE when the advertised
 * fingerprint is no longer expected_fingerprint, -EALREADY when reviewed,
 * -ENODEV when gone. */
int cordon_inventory_review(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			    const char *tool, const char *expected_fingerprint);

/* The fingerprint set: what a bulk review approves, bound to what the
 * operator was shown. SHA-256, as 64 lowercase hex, over
 *   "cordon-review-set-v1\n" connector "\n"
 * then for each tool awaiting review (pending_review or changed), by name
 * (strcmp order, as cordon_inventory_list walks):
 *   name "\n" fingerprint "\n"
 * Tool names and fingerprints hold no newline (their alphabets), so the
 * encoding is unambiguous. Pure code. */
#define CORDON_REVIEW_SET_HEX_LEN 64
struct cordon_review_set {
	uint8_t state[384]; /* crypto_hash_sha256_state, opaque here */
	size_t n;	    /* tools added */
};
void cordon_review_set_init(struct cordon_review_set *s, const char *connector);
/* Adds one tool: call in name order, only for tools awaiting review. */
void cordon_review_set_add(struct cordon_review_set *s, const char *name, const char *fingerprint);
/* Writes the hex digest (NUL-terminated); s is finished. */
void cordon_review_set_final(struct cordon_review_set *s, char ret[static CORDON_REVIEW_SET_HEX_LEN + 1]);
/* Whether the state bit set of a tool awaiting review holds state. */
bool cordon_inventory_awaits_review(enum cordon_inventory_state state);

/* One tool a bulk review pinned. */
struct cordon_reviewed_tool {
	char *name, *fingerprint;
	enum cordon_inventory_state was; /* pending_review or changed */
};

/* Bulk operator review: in one transaction, reviews every tool of connector
 * awaiting review (as cordon_inventory_review does one), if and only if
 * those tools and their fingerprints still hash to expected_set (the set
 * `inventory show` printed); bumps the policy epoch once (reason
 * "inventory-review", which revokes outstanding approvals like any policy
 * change) and audits each tool with the operator as actor. All or nothing.
 * Returns 0 and writes *ret_tools (free with cordon_reviewed_tools_free)
 * and *ret_n; -EPERM for a non-operator, -EINVAL for a malformed set,
 * -ENOENT for an unknown connector, -EALREADY when nothing awaits review,
 * -ESTALE when the set differs (nothing changed). */
int cordon_inventory_review_all(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
				const char *expected_set, struct cordon_reviewed_tool **ret_tools, size_t *ret_n);
void cordon_reviewed_tools_free(struct cordon_reviewed_tool *t, size_t n);

struct cordon_inventory_record {
	char *connector, *name;
	enum cordon_inventory_state state;
	char *fingerprint, *definition, *claims;
	char *pinned_fingerprint, *pinned_definition; /* NULL when never reviewed */
	uint64_t first_seen, updated_at, reviewed_at;
	char *reviewed_by;
};

/* Loads one entry: 0, -ENOENT, -errno. */
int cordon_inventory_get(struct cordon_db *db, const char *connector, const char *tool,
			 struct cordon_inventory_record *ret);
void cordon_inventory_record_done(struct cordon_inventory_record *r);

/* Calls cb for each inventory entry of a connector in one of `states`
 * (CORDON_STATE_BIT()s of enum cordon_inventory_state; 0: every state), by
 * name, all read by one query. The record is borrowed for the call; cb must
 * not change the database (the walk holds a read cursor). cb returning < 0
 * stops and is returned. */
typedef int (*cordon_inventory_cb)(const struct cordon_inventory_record *rec, void *userdata);
int cordon_inventory_list(struct cordon_db *db, const char *connector, uint32_t states, cordon_inventory_cb cb,
			  void *userdata);

/* A view for cordon_authz_decide() borrowing r's strings. */
void cordon_inventory_record_view(const struct cordon_inventory_record *r, struct cordon_inventory_entry *ret);
