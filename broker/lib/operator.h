/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The operator socket server (cordon_operator_start/free in daemon.h) and
 * the operations behind it.
 *
 * Authority: the peer's uid and gid come from SO_PEERCRED, which the kernel
 * records at connect() and which the peer cannot forge. They are read and
 * checked again for EVERY request: uid 0, or a primary gid equal to the
 * operator group, or membership of that group in the group database
 * (getgrouplist of the uid's user, re-read each time so removing someone
 * from the group takes effect on their next request, even on an open
 * connection). The peer's pid is never used: it can be recycled between
 * connect() and the check, so it identifies nothing.
 *
 * Resources: at most max_connections connections (the next one is answered
 * with a "busy" error line and closed), an idle timeout per connection (a
 * partial line does not reset it, so a slow writer is cut off), requests of
 * at most CORDON_OP_MAX_REQUEST bytes (a longer line is answered with
 * request-too-large and the connection closed, since the stream cannot be
 * resynchronised), and a bound on unsent response bytes (the connection is
 * not read while its responses are not drained). Requests on one connection
 * are answered in order; every handler runs to completion on the loop. */

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "actor.h"
#include "daemon.h"
#include "operator-proto.h"

#define CORDON_OPERATOR_CHANNEL "operator-socket"

struct cordon_operator_options {
	unsigned max_connections; /* 0: 32 */
	unsigned idle_timeout_ms; /* 0: 60000 */
	size_t max_pending_output; /* 0: CORDON_OP_MAX_RESPONSE */
};

/* cordon_operator_start() with explicit limits (o may be NULL). listen_fd
 * stays owned by the caller (close it after cordon_operator_free). */
int cordon_operator_start_opts(struct cordon_daemon *d, int listen_fd, gid_t operator_gid,
			       const struct cordon_operator_options *o, struct cordon_operator **ret);

/* Checks the peer of a connected AF_UNIX socket. Returns 0 and writes the
 * peer's uid; -EPERM (not root, not in the operator group) or -errno
 * (SO_PEERCRED failed) with err filled. */
int cordon_operator_peer_check(int fd, gid_t operator_gid, uid_t *ret_uid, struct cordon_op_error *err);

/* Runs one decoded request as actor (an operator). Writes a new reference to
 * the result on success and returns 0; -errno with err filled otherwise.
 * State changes are committed through the broker library before the daemon
 * is notified (daemon.h). */
int cordon_operator_execute(struct cordon_daemon *d, const struct cordon_actor *actor,
			    const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err);

/* Resolves an approval reference — a full id ("ap_...") or the display code
 * of an outstanding (requested/approved) approval, case-insensitive — to an
 * id. -ENOENT, -ENOTUNIQ (a display code shared by several). */
struct cordon_db;
int cordon_operator_resolve_approval(struct cordon_db *db, const char *ref, char ret[static 48]);
