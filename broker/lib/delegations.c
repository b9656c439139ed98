/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "delegations.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "broker-private.h"
#include "connectors.h"
#include "parse-util.h"
#include "syscall-compat.h"

const char *cordon_delegation_state_to_string(enum cordon_delegation_state s)
{
	switch (s) {
	case CORDON_DELEGATION_PENDING:
		return "pending";
	case CORDON_DELEGATION_ACTIVE:
		return "active";
	case CORDON_DELEGATION_REVOKED:
		return "revoked";
	case CORDON_DELEGATION_EXPIRED:
		return "expired";
	case CORDON_DELEGATION_REFUSED:
		return "refused";
	}
	return "invalid";
}

int cordon_delegation_resolve(const char *const *ceilings, size_t n_ceilings, const char *path, size_t *ret_ceiling,
			      dev_t *ret_dev, ino_t *ret_ino)
{
	int last = -EPERM;

	if (!path || !path_is_absolute_canonical(path))
		return -EINVAL;
	for (size_t i = 0; i < n_ceilings; i++) {
		_cleanup_close_ int cfd = -EBADF, fd = -EBADF;
		const char *c = ceilings[i], *rel;
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
		};
		struct stat st;

		if (!c || !path_is_absolute_canonical(c))
			continue;
		/* Component-wise split only to find the relative remainder to
		 * hand to the kernel; the kernel's RESOLVE_BENEATH walk is what
		 * decides whether the path stays inside. */
		if (!path_is_beneath(path, c))
			continue;
		rel = path + strlen(c);
		while (*rel == '/')
			rel++;
		if (!*rel)
			rel = ".";
		cfd = open(c, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0) {
			last = -errno;
			continue;
		}
		fd = sys_openat2(cfd, rel, &how, sizeof(how));
		if (fd < 0) {
			last = -errno;
			continue;
		}
		if (fstat(fd, &st) < 0) {
			last = -errno;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			last = -ENOTDIR;
			continue;
		}
		*ret_ceiling = i;
		*ret_dev = st.st_dev;
		*ret_ino = st.st_ino;
		return 0;
	}
	return last;
}

#define DROW_COLUMNS                                                                                                   \
	"id, session, connector, path, access, state, lifetime_sec, coalesce(expires_at, 0), coalesce(dev, 0), "       \
	"coalesce(ino, 0)"

static void drow_read(sqlite3_stmt *st, struct cordon_delegation_info *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "%s", (const char *)sqlite3_column_text(st, 0));
	snprintf(d->session, sizeof(d->session), "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(d->connector, sizeof(d->connector), "%s", (const char *)sqlite3_column_text(st, 2));
	snprintf(d->path, sizeof(d->path), "%s", (const char *)sqlite3_column_text(st, 3));
	d->access = (enum cordon_fs_access)sqlite3_column_int(st, 4);
	d->state = (enum cordon_delegation_state)sqlite3_column_int(st, 5);
	d->lifetime_sec = (uint64_t)sqlite3_column_int64(st, 6);
	d->expires_at = (uint64_t)sqlite3_column_int64(st, 7);
	d->dev = (dev_t)sqlite3_column_int64(st, 8);
	d->ino = (ino_t)sqlite3_column_int64(st, 9);
}

int cordon_delegation_get(struct cordon_db *db, const char *id, struct cordon_delegation_info *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT " DROW_COLUMNS " FROM delegations WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "no such delegation");
	drow_read(st, ret);
	return 0;
}

static int audit_delegation(struct cordon_db *db, const struct cordon_actor *actor,
			    const struct cordon_delegation_info *d, enum cordon_delegation_state state,
			    const char *reason)
{
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_DELEGATION,
					 .actor = actor,
					 .delegation_id = d->id,
					 .session = d->session,
					 .connector = d->connector,
					 .path = d->path,
					 .state = cordon_delegation_state_to_string(state),
					 .access = cordon_access_to_string(d->access),
					 .reason = reason };
	return audit_append_tx(db, &ev);
}

/* Pending requests of one session (NULL: of all sessions). */
static int count_pending(struct cordon_db *db, const char *session, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT count(*) FROM delegations WHERE state = ?2 AND (?1 IS NULL OR session = ?1)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, session)) < 0 || (r = db_bind_int64(db, st, 2, CORDON_DELEGATION_PENDING)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	*ret = r ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	return 0;
}

int cordon_delegation_request(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			      const char *path, enum cordon_fs_access access, uint64_t lifetime_sec,
			      struct cordon_delegation_info *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_delegation_info d = {};
	uint64_t n;
	int r;

	if (!actor || actor->kind != CORDON_ACTOR_SESSION || !cordon_session_id_is_valid(actor->session_id))
		return db_failf(db, EPERM, "delegations are requested by a session");
	if (!path || !path_is_absolute_canonical(path) || strlen(path) >= sizeof(d.path))
		return db_failf(db, EINVAL, "delegation path must be absolute and canonical");
	if (access != CORDON_ACCESS_READ && access != CORDON_ACCESS_READ_WRITE)
		return db_failf(db, EINVAL, "delegation access must be read or read-write");
	if (lifetime_sec > UINT64_C(365) * 24 * 3600)
		return db_failf(db, EINVAL, "delegation lifetime too long");
	db_new_id("dl", d.id, sizeof(d.id));
	snprintf(d.session, sizeof(d.session), "%s", actor->session_id);
	snprintf(d.connector, sizeof(d.connector), "%s", connector ? connector : "");
	snprintf(d.path, sizeof(d.path), "%s", path);
	d.access = access;
	d.state = CORDON_DELEGATION_PENDING;
	d.lifetime_sec = lifetime_sec;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = cordon_connector_exists(db, connector);
	if (r < 0)
		return r;
	/* Pending requests cost a row and an operator's attention each; like
	 * approvals, a session may keep only a few waiting (issue 11: 2000
	 * requests in a second, 20 MB). */
	r = count_pending(db, d.session, &n);
	if (r < 0)
		return r;
	if (n >= CORDON_DELEGATION_PENDING_PER_SESSION)
		return db_failf(db, EDQUOT,
				"session has %llu pending delegation requests (the cap is %u); wait for the operator "
				"to approve or deny them",
				(unsigned long long)n, CORDON_DELEGATION_PENDING_PER_SESSION);
	r = count_pending(db, NULL, &n);
	if (r < 0)
		return r;
	if (n >= CORDON_DELEGATION_PENDING_TOTAL)
		return db_failf(db, EDQUOT, "%llu delegation requests are pending in total (the cap is %u)",
				(unsigned long long)n, CORDON_DELEGATION_PENDING_TOTAL);
	r = db_prepare(db,
		       "INSERT INTO delegations(id, session, connector, path, access, lifetime_sec, state, created_at) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8, ?7)",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, d.id)) < 0 || (r = db_bind_text(db, st, 2, d.session)) < 0 ||
	    (r = db_bind_text(db, st, 3, d.connector)) < 0 || (r = db_bind_text(db, st, 4, d.path)) < 0 ||
	    (r = db_bind_int64(db, st, 5, access)) < 0 || (r = db_bind_int64(db, st, 6, (int64_t)lifetime_sec)) < 0 ||
	    (r = db_bind_int64(db, st, 7, (int64_t)cordon_db_now(db))) < 0 ||
	    (r = db_bind_int64(db, st, 8, d.state)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = audit_delegation(db, actor, &d, CORDON_DELEGATION_PENDING, "requested");
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret)
		*ret = d;
	return 0;
}

static int end_cas(struct cordon_db *db, const char *id, enum cordon_delegation_state from,
		   enum cordon_delegation_state to)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "UPDATE delegations SET state = ?3, ended_at = ?4 WHERE id = ?1 AND state = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, from)) < 0 ||
	    (r = db_bind_int64(db, st, 3, to)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	return sqlite3_changes(db->sql) == 1 ? 0 : db_failf(db, EALREADY, "delegation changed state");
}

int cordon_delegation_activate(struct cordon_db *db, const struct cordon_actor *actor, const char *id,
			       struct cordon_delegation_info *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_delegation_info d;
	const char **ceilings = NULL;
	json_t *arr = NULL;
	size_t n = 0, which = 0;
	dev_t dev = 0;
	ino_t ino = 0;
	uint64_t now;
	int r, res;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may activate a delegation");
	r = cordon_delegation_get(db, id, &d);
	if (r < 0)
		return r;
	if (d.state != CORDON_DELEGATION_PENDING)
		return db_failf(db, EALREADY, "delegation is %s", cordon_delegation_state_to_string(d.state));
	r = connector_ceilings(db, d.connector, &arr);
	if (r < 0)
		return r;
	n = json_array_size(arr);
	ceilings = calloc(n ? n : 1, sizeof(char *));
	if (!ceilings) {
		json_decref(arr);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ceilings[i] = json_string_value(json_array_get(arr, i));

	/* Resolution happens outside the transaction (filesystem I/O); the
	 * transaction below re-checks that the request is still pending. */
	res = cordon_delegation_resolve(ceilings, n, d.path, &which, &dev, &ino);

	r = db_tx_begin(db, &tx);
	if (r < 0)
		goto out;
	if (res < 0) {
		r = end_cas(db, id, CORDON_DELEGATION_PENDING, CORDON_DELEGATION_REFUSED);
		if (r >= 0)
			r = audit_delegation(db, actor, &d, CORDON_DELEGATION_REFUSED,
					     res == -EXDEV   ? "escapes-ceiling"
					     : res == -EPERM ? "outside-ceiling"
							     : "unresolvable");
		if (r >= 0)
			r = db_tx_commit(&tx);
		if (r >= 0)
			r = db_failf(db, -res, "'%s' is not a directory beneath the connector's ceiling (%s)", d.path,
				     strerror(-res));
		goto out;
	}
	now = cordon_db_now(db);
	d.expires_at = d.lifetime_sec ? now + d.lifetime_sec * CORDON_USEC_PER_SEC : 0;
	r = db_prepare(db,
		       "UPDATE delegations SET state = ?8, ceiling = ?2, dev = ?3, ino = ?4, activated_at = ?5, "
		       "expires_at = ?6 WHERE id = ?1 AND state = ?7",
		       &st);
	if (r < 0)
		goto out;
	if ((r = db_bind_text(db, st, 1, id)) < 0 || (r = db_bind_text(db, st, 2, ceilings[which])) < 0 ||
	    (r = db_bind_int64(db, st, 3, (int64_t)dev)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)ino)) < 0 ||
	    (r = db_bind_int64(db, st, 5, (int64_t)now)) < 0 ||
	    (r = db_bind_int64(db, st, 7, CORDON_DELEGATION_PENDING)) < 0 ||
	    (r = db_bind_int64(db, st, 8, CORDON_DELEGATION_ACTIVE)) < 0)
		goto out;
	r = d.expires_at ? db_bind_int64(db, st, 6, (int64_t)d.expires_at) : (sqlite3_bind_null(st, 6), 0);
	if (r < 0)
		goto out;
	r = db_step_done(db, st);
	if (r < 0)
		goto out;
	if (sqlite3_changes(db->sql) != 1) {
		r = db_failf(db, EALREADY, "delegation changed state");
		goto out;
	}
	d.state = CORDON_DELEGATION_ACTIVE;
	d.dev = dev;
	d.ino = ino;
	r = audit_delegation(db, actor, &d, CORDON_DELEGATION_ACTIVE, "operator-activated");
	if (r < 0)
		goto out;
	r = db_tx_commit(&tx);
	if (r < 0)
		goto out;
	if (ret)
		*ret = d;
out:
	free(ceilings);
	json_decref(arr);
	return r;
}

static int end_one(struct cordon_db *db, const struct cordon_actor *actor, const char *id,
		   enum cordon_delegation_state to, const char *reason, bool pending_only)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_delegation_info d;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = cordon_delegation_get(db, id, &d);
	if (r < 0)
		return r;
	if (actor->kind == CORDON_ACTOR_SESSION && strcmp(actor->session_id, d.session) != 0)
		return db_failf(db, EPERM, "a session may revoke only its own delegations");
	if (d.state != CORDON_DELEGATION_PENDING && (pending_only || d.state != CORDON_DELEGATION_ACTIVE))
		return db_failf(db, EALREADY, "delegation is %s", cordon_delegation_state_to_string(d.state));
	r = end_cas(db, id, d.state, to);
	if (r < 0)
		return r;
	r = audit_delegation(db, actor, &d, to, reason);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_delegation_refuse(struct cordon_db *db, const struct cordon_actor *actor, const char *id)
{
	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may refuse a delegation");
	return end_one(db, actor, id, CORDON_DELEGATION_REFUSED, "operator-refused", true);
}

int cordon_delegation_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *id)
{
	if (!actor || (actor->kind != CORDON_ACTOR_OPERATOR && actor->kind != CORDON_ACTOR_SESSION))
		return db_failf(db, EPERM, "only an operator or the owning session may revoke a delegation");
	return end_one(db, actor, id, CORDON_DELEGATION_REVOKED,
		       actor->kind == CORDON_ACTOR_OPERATOR ? "operator-revoked" : "session-revoked", false);
}

#define N_STATES (CORDON_DELEGATION_REFUSED + 1)

/* Ends, one at a time, every delegation select_sql finds: ?1 is arg_text
 * (when not NULL) or arg_int (when >= 0), and "state IN (?2, ..., ?6)" is
 * bound to from_states. */
static int end_where(struct cordon_db *db, const struct cordon_actor *actor, const char *select_sql,
		     const char *arg_text, int64_t arg_int, uint32_t from_states, enum cordon_delegation_state to,
		     const char *reason, uint64_t *ret_n)
{
	uint64_t n = 0;
	int r;

	for (;;) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		struct cordon_delegation_info d;

		r = db_prepare(db, select_sql, &st);
		if (r < 0)
			return r;
		if (arg_text && (r = db_bind_text(db, st, 1, arg_text)) < 0)
			return r;
		if (!arg_text && arg_int >= 0 && (r = db_bind_int64(db, st, 1, arg_int)) < 0)
			return r;
		if ((r = db_bind_states(db, st, 2, N_STATES, from_states)) < 0)
			return r;
		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		drow_read(st, &d);
		db_stmt_release(TAKE_PTR(st));
		r = end_cas(db, d.id, d.state, to);
		if (r < 0)
			return r;
		r = audit_delegation(db, actor, &d, to, reason);
		if (r < 0)
			return r;
		n++;
	}
	if (ret_n)
		*ret_n = n;
	return 0;
}

#define OUTSTANDING (CORDON_STATE_BIT(CORDON_DELEGATION_PENDING) | CORDON_STATE_BIT(CORDON_DELEGATION_ACTIVE))

int delegations_end_all_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *session,
			   const char *reason, uint64_t *ret_n)
{
	if (session)
		return end_where(db, actor,
				 "SELECT " DROW_COLUMNS " FROM delegations WHERE state IN (?2, ?3, ?4, ?5, ?6) "
				 "AND session = ?1 LIMIT 1",
				 session, -1, OUTSTANDING, CORDON_DELEGATION_REVOKED, reason, ret_n);
	return end_where(db, actor,
			 "SELECT " DROW_COLUMNS " FROM delegations WHERE state IN (?2, ?3, ?4, ?5, ?6) LIMIT 1", NULL,
			 -1, OUTSTANDING, CORDON_DELEGATION_REVOKED, reason, ret_n);
}

int cordon_delegations_expire(struct cordon_db *db, uint64_t *ret_n)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_actor sys = cordon_actor_system();
	uint64_t n = 0;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = end_where(db, &sys,
		      "SELECT " DROW_COLUMNS " FROM delegations WHERE state IN (?2, ?3, ?4, ?5, ?6) "
		      "AND expires_at IS NOT NULL AND expires_at <= ?1 LIMIT 1",
		      NULL, (int64_t)cordon_db_now(db), CORDON_STATE_BIT(CORDON_DELEGATION_ACTIVE),
		      CORDON_DELEGATION_EXPIRED, "lifetime", &n);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_n)
		*ret_n = n;
	return 0;
}

int delegations_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(
		db, "DELETE FROM delegations WHERE state IN (?2, ?3, ?4) AND coalesce(ended_at, created_at) < ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)cutoff)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_DELEGATION_REVOKED)) < 0 ||
	    (r = db_bind_int64(db, st, 3, CORDON_DELEGATION_EXPIRED)) < 0 ||
	    (r = db_bind_int64(db, st, 4, CORDON_DELEGATION_REFUSED)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_n = (uint64_t)sqlite3_changes(db->sql);
	return 0;
}

int delegations_count(struct cordon_db *db, uint32_t states, uint64_t *ret)
{
	return db_count_in_states(db, "SELECT count(*) FROM delegations WHERE state IN (?1, ?2, ?3, ?4, ?5)", N_STATES,
				  states, ret);
}

void cordon_delegations_free(struct cordon_delegation_info *v)
{
	free(v);
}

/* Collects the rows st returns into a malloc'd array. */
static int drows_collect(struct cordon_db *db, sqlite3_stmt *st, struct cordon_delegation_info **ret, size_t *ret_n)
{
	struct cordon_delegation_info *v = NULL;
	size_t n = 0;
	int r;

	for (;;) {
		struct cordon_delegation_info *nv;

		r = db_step_row(db, st);
		if (r < 0) {
			free(v);
			return r;
		}
		if (r == 0)
			break;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		drow_read(st, &v[n++]);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int cordon_delegations_active(struct cordon_db *db, const char *connector, struct cordon_delegation_info **ret,
			      size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       "SELECT " DROW_COLUMNS " FROM delegations WHERE connector = ?1 AND state = ?2 "
		       "ORDER BY created_at, id",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_DELEGATION_ACTIVE)) < 0)
		return r;
	return drows_collect(db, st, ret, ret_n);
}

int cordon_delegations_list(struct cordon_db *db, const struct cordon_list_filter *f,
			    struct cordon_delegation_info **ret, size_t *ret_n)
{
	static const struct cordon_list_filter every = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (!f)
		f = &every;
	r = db_prepare(db,
		       f->newest_first ? "SELECT " DROW_COLUMNS " FROM delegations WHERE state IN (?1, ?2, ?3, ?4, ?5) "
					 "AND (?6 IS NULL OR connector = ?6) ORDER BY created_at DESC, id LIMIT ?7"
				       : "SELECT " DROW_COLUMNS " FROM delegations WHERE state IN (?1, ?2, ?3, ?4, ?5) "
					 "AND (?6 IS NULL OR connector = ?6) ORDER BY created_at, id LIMIT ?7",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_states(db, st, 1, N_STATES, f->states)) < 0 ||
	    (r = db_bind_text(db, st, 6, f->connector)) < 0 ||
	    (r = db_bind_int64(db, st, 7, f->limit ? (int64_t)f->limit : -1)) < 0)
		return r;
	return drows_collect(db, st, ret, ret_n);
}

int cordon_delegations_views(const struct cordon_delegation_info *v, size_t n, struct cordon_delegation_view **ret)
{
	struct cordon_delegation_view *out = calloc(n ? n : 1, sizeof(*out));

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct cordon_delegation_view){ .id = v[i].id,
							  .session = v[i].session,
							  .connector = v[i].connector,
							  .state = v[i].state,
							  .access = v[i].access,
							  .expires_at = v[i].expires_at };
	*ret = out;
	return 0;
}
