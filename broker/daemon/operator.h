/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The operator socket server and the operations behind it, over the
 * daemon.h contract (started by daemon-core.c).
 *
 * Authority, checked again for EVERY request: the peer's credentials as the
 * kernel recorded them at connect() (SO_PEERCRED: uid and primary gid;
 * SO_PEERGROUPS: supplementary groups), which the peer cannot forge. Allowed:
 * uid 0, or a process holding the operator group (primary or supplementary)
 * — the same credentials the kernel checked against the socket file's group
 * permission. In addition, when the group database can be read, it must
 * still list the user in the group (getgrouplist of the uid's user, re-read
 * each time), so that removing someone from the group takes effect on their
 * next request even though their login session keeps its old groups; when it
 * cannot be read (a sandboxed daemon without /etc access, a uid without a
 * passwd entry) the kernel credentials decide. The peer's pid is never used:
 * pids are recycled between connect() and any check, so a pid identifies
 * nothing. A process that hands its connected socket to another (SCM_RIGHTS)
 * hands over its authority, as with any Unix-socket credential.
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

struct cordon_operator;

/* Serves the operator protocol on an already bound and listening AF_UNIX
 * socket (mode 0660, root and operator_gid). Every request's SO_PEERCRED is
 * checked: uid 0 or a member of operator_gid. */
int cordon_operator_start(struct cordon_daemon *d, int listen_fd, gid_t operator_gid, struct cordon_operator **ret);
void cordon_operator_free(struct cordon_operator *op);

struct cordon_operator_options {
	unsigned max_connections;  /* 0: 32 */
	unsigned idle_timeout_ms;  /* 0: 60000 */
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
