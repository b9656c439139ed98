/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The schema, as forward migrations. migrations[i] takes the database from
 * user_version i to i + 1. Never edit a released migration: append one. */

#include "db-schema.h"

#include "action-state.h"
#include "approval-state.h"
#include "authz.h"

/* Columns holding times are microseconds since the epoch (UTC). Enumerations
 * are stored as their C values (enum cordon_risk etc.), documented beside the
 * column; CHECK constraints keep a buggy caller from writing garbage. */
static const char migration_1[] =
	"CREATE TABLE meta ("
	"  key TEXT PRIMARY KEY NOT NULL,"
	"  value INTEGER NOT NULL"
	") STRICT;"
	"INSERT INTO meta(key, value) VALUES ('policy_epoch', 1), ('audit_last_seq', 0);"

	/* One row per installed connector. generation counts launches: a
	 * relaunch bumps it and so revokes every approval bound to the old one. */
	"CREATE TABLE connectors ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  generation INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),"
	"  default_risk INTEGER NOT NULL CHECK (default_risk BETWEEN 0 AND 4),"
	"  approval_ttl_sec INTEGER NOT NULL CHECK (approval_ttl_sec > 0),"
	"  ceilings TEXT NOT NULL DEFAULT '[]'," /* JSON array of absolute paths */
	"  installed_at INTEGER NOT NULL"
	") STRICT;"

	/* First-party risk policy and replay class, from the profile at install. */
	"CREATE TABLE risk_policy ("
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  tool TEXT NOT NULL,"
	"  tier INTEGER CHECK (tier IS NULL OR tier BETWEEN 0 AND 4),"	/* NULL: default_risk */
	"  replay INTEGER NOT NULL DEFAULT 0 CHECK (replay IN (0, 1))," /* 1: safe */
	"  PRIMARY KEY (connector, tool)"
	") STRICT;"

	/* The explicit grant set: no row, no tool. */
	"CREATE TABLE grants ("
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  tool TEXT NOT NULL,"
	"  granted_at INTEGER NOT NULL,"
	"  PRIMARY KEY (connector, tool)"
	") STRICT;"

	/* state: 0 pending_review, 1 reviewed, 2 changed, 3 gone. fingerprint
	 * and definition are what the connector advertises now; the pinned_*
	 * columns are what an operator reviewed (kept for the diff). */
	"CREATE TABLE tool_inventory ("
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 3),"
	"  fingerprint TEXT NOT NULL,"
	"  definition TEXT NOT NULL,"
	"  claims TEXT NOT NULL DEFAULT '{}',"
	"  pinned_fingerprint TEXT,"
	"  pinned_definition TEXT,"
	"  first_seen INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL,"
	"  reviewed_at INTEGER,"
	"  reviewed_by TEXT,"
	"  PRIMARY KEY (connector, name)"
	") STRICT;"

	/* Approvals: metadata only. binding is the HMAC over the bound fields;
	 * the key never leaves process memory, so a binding is useless outside
	 * the process that made it (and approvals die with it).
	 * state: 0 requested, 1 approved, 2 denied, 3 expired, 4 revoked, 5 consumed. */
	"CREATE TABLE approvals ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  session TEXT NOT NULL,"
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  generation INTEGER NOT NULL,"
	"  tool TEXT NOT NULL,"
	"  fingerprint TEXT NOT NULL,"
	"  policy_epoch INTEGER NOT NULL,"
	"  tier INTEGER NOT NULL CHECK (tier BETWEEN 1 AND 4),"
	"  binding BLOB NOT NULL CHECK (length(binding) = 32),"
	"  state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 5),"
	"  created_at INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL,"
	"  decided_at INTEGER,"
	"  decided_by TEXT,"
	"  reason TEXT"
	") STRICT;"
	"CREATE INDEX approvals_binding ON approvals(binding, state);"
	"CREATE INDEX approvals_session ON approvals(session, state);"
	"CREATE INDEX approvals_state ON approvals(state);"

	/* Delegated roots. state: 0 pending, 1 active, 2 revoked, 3 expired,
	 * 4 refused. dev/ino are those of the directory openat2 resolved
	 * beneath the ceiling at activation. */
	"CREATE TABLE delegations ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  session TEXT NOT NULL,"
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  path TEXT NOT NULL,"
	"  access INTEGER NOT NULL CHECK (access IN (0, 2))," /* enum cordon_fs_access: read, read-write */
	"  lifetime_sec INTEGER NOT NULL DEFAULT 0,"
	"  state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 4),"
	"  ceiling TEXT,"
	"  dev INTEGER,"
	"  ino INTEGER,"
	"  created_at INTEGER NOT NULL,"
	"  activated_at INTEGER,"
	"  expires_at INTEGER," /* NULL: until the session ends or revocation */
	"  ended_at INTEGER"
	") STRICT;"
	"CREATE INDEX delegations_state ON delegations(connector, state);"

	/* The action ledger. state: 0 prepared, 1 dispatched, 2 succeeded,
	 * 3 failed, 4 abandoned, 5 outcome_unknown. */
	"CREATE TABLE actions ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  session TEXT NOT NULL,"
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  tool TEXT NOT NULL,"
	"  tier INTEGER NOT NULL CHECK (tier BETWEEN 0 AND 4),"
	"  replay INTEGER NOT NULL CHECK (replay IN (0, 1)),"
	"  approval_id TEXT REFERENCES approvals(id),"
	"  request_hash BLOB NOT NULL CHECK (length(request_hash) = 32),"
	"  state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 5),"
	"  created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL,"
	"  resolved_by TEXT"
	") STRICT;"
	"CREATE INDEX actions_state ON actions(state);"

	/* Idempotency identities of replay-safe calls, scoped per connector
	 * (and, from migration 2, per subject). request_hash = SHA-256 over the tool and JCS(arguments). */
	"CREATE TABLE idempotency ("
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  key TEXT NOT NULL,"
	"  request_hash BLOB NOT NULL CHECK (length(request_hash) = 32),"
	"  action_id TEXT NOT NULL REFERENCES actions(id),"
	"  result BLOB,"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (connector, key)"
	") STRICT;"

	/* Resource locks: token is the newest fencing token ever issued for
	 * the resource and only grows. */
	"CREATE TABLE locks ("
	"  resource TEXT PRIMARY KEY NOT NULL,"
	"  token INTEGER NOT NULL CHECK (token > 0),"
	"  holder TEXT,"
	"  expires_at INTEGER"
	") STRICT;"

	/* The audit log: record is the JCS bytes; leaf = SHA-256(0x00 || record).
	 * seq duplicates the record's own field for lookups; verify trusts the
	 * record, never this column, and is what notices a mismatch. */
	"CREATE TABLE audit ("
	"  id INTEGER PRIMARY KEY,"
	"  seq INTEGER NOT NULL,"
	"  record BLOB NOT NULL,"
	"  leaf BLOB NOT NULL"
	") STRICT;"
	"CREATE INDEX audit_seq ON audit(seq);"

	/* Signed checkpoints: note is the C2SP signed note text. */
	"CREATE TABLE checkpoints ("
	"  id INTEGER PRIMARY KEY,"
	"  size INTEGER NOT NULL,"
	"  root BLOB NOT NULL,"
	"  note BLOB NOT NULL,"
	"  created_at INTEGER NOT NULL"
	") STRICT;";

/* Idempotency identities are scoped to the subject (issue 11, finding 5):
 * under (connector, key) alone a session of another uid sending the same
 * key got the first caller's stored result and took its key. subject is
 * "uid:<n>" for a gateway session (SO_PEERCRED) or "session:<id>" when the
 * caller proved no subject. Existing rows keep working: a gateway session
 * id ("gw-<n>-u<uid>-<random>") names the uid it was accepted from, so its
 * rows move to that uid's scope (a retry across the upgrade still finds its
 * identity and is never run twice); any other session's rows are scoped to
 * that session alone, the narrowest scope. */
static const char migration_2[] =
	"CREATE TABLE idempotency_v2 ("
	"  connector TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,"
	"  subject TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 80),"
	"  key TEXT NOT NULL,"
	"  request_hash BLOB NOT NULL CHECK (length(request_hash) = 32),"
	"  action_id TEXT NOT NULL REFERENCES actions(id),"
	"  result BLOB,"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (connector, subject, key)"
	") STRICT;"
	"INSERT INTO idempotency_v2(connector, subject, key, request_hash, action_id, result, created_at) "
	"SELECT i.connector, "
	"  CASE WHEN a.session GLOB 'gw-[0-9]*-u[0-9]*-?*' "
	"            AND substr(a.session, instr(substr(a.session, 4), '-') + 4) GLOB 'u[0-9]*-?*' "
	"            AND NOT substr(substr(a.session, instr(substr(a.session, 4), '-') + 5), 1, "
	"                    instr(substr(a.session, instr(substr(a.session, 4), '-') + 5), '-') - 1) GLOB '*[^0-9]*' "
	"       THEN 'uid:' || substr(substr(a.session, instr(substr(a.session, 4), '-') + 5), 1, "
	"                    instr(substr(a.session, instr(substr(a.session, 4), '-') + 5), '-') - 1) "
	"       ELSE 'session:' || coalesce(a.session, '') END, "
	"  i.key, i.request_hash, i.action_id, i.result, i.created_at "
	"FROM idempotency i LEFT JOIN actions a ON a.id = i.action_id;"
	"DROP TABLE idempotency;"
	"ALTER TABLE idempotency_v2 RENAME TO idempotency;"
	"CREATE INDEX idempotency_action ON idempotency(action_id);";

/* Audit retention (cordon_audit_prune()): records 1..through are deleted;
 * stack holds the RFC 6962 Merkle state of those records (the roots of the
 * perfect subtrees, largest first: popcount(through) hashes of 32 bytes),
 * which with the kept records rebuilds every later checkpoint's root. The
 * signed checkpoints are never deleted. One row at most. */
static const char migration_3[] = "CREATE TABLE audit_pruned ("
				  "  id INTEGER PRIMARY KEY CHECK (id = 1),"
				  "  through INTEGER NOT NULL CHECK (through > 0),"
				  "  stack BLOB NOT NULL,"
				  "  pruned_at INTEGER NOT NULL"
				  ") STRICT;";

/* Agents (issue 18): the bearer tokens of MCP clients that reach cordond
 * over TCP. token_hash is SHA-256 of the token (32 random bytes, so an
 * unkeyed hash cannot be searched); the token itself is never stored. A
 * name is unique among the agents not revoked; id never repeats (it keys
 * the agent's sessions and budgets). */
static const char migration_4[] = "CREATE TABLE agents ("
				  "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
				  "  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 20),"
				  "  token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
				  "  created_at INTEGER NOT NULL,"
				  "  created_by TEXT NOT NULL,"
				  "  revoked_at INTEGER"
				  ") STRICT;"
				  "CREATE UNIQUE INDEX agents_live_name ON agents(name) WHERE revoked_at IS NULL;";

/* The numbers the migrations above store, check and default to, tied to the
 * enums the code binds in their place (no SQL statement spells a state as a
 * number). Stored values never change: an enum that needs a new value gets
 * it appended, with a migration widening the CHECK. */
/* clang-format off */
_Static_assert(CORDON_RISK_READ == 0 && CORDON_RISK_WRITE == 1 && CORDON_RISK_DESTRUCTIVE == 2 &&
	       CORDON_RISK_HIGH == 3 && CORDON_RISK_CRITICAL == 4,
	       "connectors.default_risk, risk_policy.tier, actions.tier: BETWEEN 0 AND 4; "
	       "approvals.tier: BETWEEN 1 AND 4 (above read)");
_Static_assert(CORDON_REPLAY_UNSAFE == 0 && CORDON_REPLAY_SAFE == 1,
	       "risk_policy.replay, actions.replay: IN (0, 1), DEFAULT 0 (unsafe)");
_Static_assert(CORDON_ACCESS_READ == 0 && CORDON_ACCESS_READ_WRITE == 2,
	       "delegations.access: IN (0, 2)");
_Static_assert(CORDON_INVENTORY_PENDING_REVIEW == 0 && CORDON_INVENTORY_REVIEWED == 1 &&
	       CORDON_INVENTORY_CHANGED == 2 && CORDON_INVENTORY_GONE == 3,
	       "tool_inventory.state: BETWEEN 0 AND 3");
_Static_assert(CORDON_APPROVAL_REQUESTED == 0 && CORDON_APPROVAL_APPROVED == 1 && CORDON_APPROVAL_DENIED == 2 &&
	       CORDON_APPROVAL_EXPIRED == 3 && CORDON_APPROVAL_REVOKED == 4 && CORDON_APPROVAL_CONSUMED == 5,
	       "approvals.state: BETWEEN 0 AND 5");
_Static_assert(CORDON_DELEGATION_PENDING == 0 && CORDON_DELEGATION_ACTIVE == 1 && CORDON_DELEGATION_REVOKED == 2 &&
	       CORDON_DELEGATION_EXPIRED == 3 && CORDON_DELEGATION_REFUSED == 4,
	       "delegations.state: BETWEEN 0 AND 4");
_Static_assert(CORDON_ACTION_PREPARED == 0 && CORDON_ACTION_DISPATCHED == 1 && CORDON_ACTION_SUCCEEDED == 2 &&
	       CORDON_ACTION_FAILED == 3 && CORDON_ACTION_ABANDONED == 4 && CORDON_ACTION_OUTCOME_UNKNOWN == 5,
	       "actions.state: BETWEEN 0 AND 5");
/* clang-format on */

const char *const cordon_db_migrations[] = {
	migration_1,
	migration_2,
	migration_3,
	migration_4,
};

const unsigned cordon_db_n_migrations = sizeof(cordon_db_migrations) / sizeof(cordon_db_migrations[0]);
