/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Delegated filesystem roots.
 *
 * An agent may request an extra root (path, read or read-write, optional
 * lifetime); the request is stored pending and grants nothing. Only the
 * operator API activates it, and only when the path resolves beneath one of
 * the connector's ceiling directories: openat2(ceiling_fd, relative path,
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), and the resolved directory's
 * st_dev/st_ino are recorded for the launcher to re-check. No string-prefix
 * test decides anything ("/work-evil" is not beneath "/work", and a symlink
 * in "/work" pointing outside is refused by the kernel). Expiry is enforced
 * by the broker's clock; the requesting session may revoke its own (that
 * only reduces authority); nothing here edits a profile or a ceiling. */

#include <stdint.h>
#include <sys/types.h>

#include "actor.h"
#include "authz.h"
#include "db.h"

struct cordon_delegation_info {
	char id[48];
	char session[64];
	char connector[33];
	char path[4096];
	enum cordon_fs_access access;
	enum cordon_delegation_state state;
	uint64_t lifetime_sec; /* 0: until session end or revocation */
	uint64_t expires_at;   /* usec; 0 when none */
	dev_t dev;
	ino_t ino;
};

/* Resolves path beneath one of ceilings with openat2. Returns 0 and writes the
 * index of the ceiling used and the directory's dev/ino; -EXDEV when the path
 * escapes (symlink or ".." leading out), -EPERM when it is beneath no ceiling,
 * -ENOTDIR, -ENOENT, -EINVAL (not absolute/canonical), -errno. */
int cordon_delegation_resolve(const char *const *ceilings, size_t n_ceilings, const char *path, size_t *ret_ceiling,
			      dev_t *ret_dev, ino_t *ret_ino);

/* Pending (requested, not yet decided) delegations a session may have, and
 * all sessions together (the approvals' defaults). */
#define CORDON_DELEGATION_PENDING_PER_SESSION 16u
#define CORDON_DELEGATION_PENDING_TOTAL	      256u

/* Session actor only (the agent asks). access: CORDON_ACCESS_READ or
 * CORDON_ACCESS_READ_WRITE. Stored pending. -EDQUOT (nothing stored; the
 * db's last error says which cap) when the session already has
 * CORDON_DELEGATION_PENDING_PER_SESSION pending requests or all sessions
 * CORDON_DELEGATION_PENDING_TOTAL. */
int cordon_delegation_request(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			      const char *path, enum cordon_fs_access access, uint64_t lifetime_sec,
			      struct cordon_delegation_info *ret);

/* Operator only: checks the path against the connector's ceilings (recorded at
 * install) and activates. -EPERM/-EXDEV when outside the ceiling (the request
 * is marked refused), -EALREADY when not pending. */
int cordon_delegation_activate(struct cordon_db *db, const struct cordon_actor *actor, const char *id,
			       struct cordon_delegation_info *ret);

/* Operator: refuse a pending request. */
int cordon_delegation_refuse(struct cordon_db *db, const struct cordon_actor *actor, const char *id);

/* Operator, or the session that requested it. */
int cordon_delegation_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *id);

int cordon_delegation_get(struct cordon_db *db, const char *id, struct cordon_delegation_info *ret);

/* Marks active delegations past expiry expired (audited). */
int cordon_delegations_expire(struct cordon_db *db, uint64_t *ret_n);

/* Active delegations of a connector (all sessions), for authz views: a
 * malloc'd array (free with cordon_delegations_free). Entries past expiry
 * are returned too; the decision compares expires_at with now. */
int cordon_delegations_active(struct cordon_db *db, const char *connector, struct cordon_delegation_info **ret,
			      size_t *ret_n);
void cordon_delegations_free(struct cordon_delegation_info *v);

/* The delegations the filter selects (NULL: every delegation, oldest
 * first), for the operator surface: a malloc'd array as above. */
int cordon_delegations_list(struct cordon_db *db, const struct cordon_list_filter *f,
			    struct cordon_delegation_info **ret, size_t *ret_n);

/* "pending", "active", "revoked", "expired", "refused"; "invalid" out of range. */
const char *cordon_delegation_state_to_string(enum cordon_delegation_state s);

/* Views for cordon_authz_decide() borrowing v's strings; *ret is malloc'd. */
int cordon_delegations_views(const struct cordon_delegation_info *v, size_t n, struct cordon_delegation_view **ret);
