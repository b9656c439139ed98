/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gateway session's output, and each local uid's share of the gateway.
 * The lowest part of the gateway: the modules above it (gateway.c,
 * gateway-call.c, gateway-pass.c, gateway-relay.c) and daemon.c write to
 * sessions through it; it calls nothing of theirs. */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "cleanup.h"
#include "dbuf.h"
#include "gateway-session.h"
#include "log.h"
#include "rpc-error.h"

#define SESSION_WBUF_MAX (64u * 1024 * 1024)

/* ---- per-uid shares (issue 11 findings 3 and 6) -------------------------
 *
 * Any local user can reach the gateway, so no uid may take the broker's
 * memory or its session slots for itself: each uid holds at most
 * cfg.sessions_per_uid sessions, and the canonical argument bytes its calls
 * hold (queued for an instance, waiting for an approval, in flight) count
 * against cfg.held_per_uid and, with every other uid's, cfg.held_max. The
 * table is small (one entry per uid with a session or a held call) and
 * scanned linearly. */

/* Held calls are freed in bulk (a session with 64 waiting 4 MiB calls
 * ends): glibc keeps such memory in its heap (the mmap threshold grows
 * after the first large free), so RSS would stay at its peak. Once this
 * much was released, malloc_trim(0) gives the free pages back, at most
 * once per interval. */
#define TRIM_AFTER_BYTES (8u * 1024 * 1024)
#define TRIM_INTERVAL_MS 1000u

struct duid *uid_share_get(struct cordon_daemon *d, uint64_t subject, bool create)
{
	for (size_t i = 0; i < d->n_uids; i++)
		if (d->uids[i].subject == subject)
			return &d->uids[i];
	if (!create)
		return NULL;
	if (d->n_uids == d->cap_uids) {
		size_t nc = d->cap_uids ? d->cap_uids * 2 : 8;
		struct duid *n = reallocarray(d->uids, nc, sizeof(*n));

		if (!n)
			return NULL;
		d->uids = n;
		d->cap_uids = nc;
	}
	d->uids[d->n_uids] = (struct duid){ .subject = subject };
	return &d->uids[d->n_uids++];
}

void uid_share_put(struct cordon_daemon *d, struct duid *u)
{
	if (u->sessions || u->held_bytes)
		return;
	*u = d->uids[--d->n_uids];
}

static const char *size_text(uint64_t b, char *buf, size_t size)
{
	if (b && b % (1024 * 1024) == 0)
		snprintf(buf, size, "%llu MiB", (unsigned long long)(b / (1024 * 1024)));
	else if (b && b % 1024 == 0)
		snprintf(buf, size, "%llu KiB", (unsigned long long)(b / 1024));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)b);
	return buf;
}

const char *subject_text(const struct cordon_daemon *d, uint64_t subject, char *buf, size_t size)
{
	if (!(subject & DSUBJECT_AGENT)) {
		snprintf(buf, size, "uid %u", (unsigned)subject);
		return buf;
	}
	for (const struct dsession *s = d->sessions; s; s = s->next)
		if (s->subject == subject) {
			snprintf(buf, size, "agent %s", s->agent);
			return buf;
		}
	snprintf(buf, size, "agent #%llu", (unsigned long long)(subject & ~DSUBJECT_AGENT));
	return buf;
}

int held_charge(struct cordon_daemon *d, uint64_t subject, uint64_t bytes, char *ret_msg, size_t msg_size)
{
	struct duid *u = uid_share_get(d, subject, true);
	char lim[32], who[48];

	if (!u) {
		snprintf(ret_msg, msg_size, "cordon: refused: out of memory; nothing was sent");
		return -ENOMEM;
	}
	if (u->held_bytes + bytes > d->cfg.held_per_uid) {
		snprintf(ret_msg, msg_size,
			 "cordon: refused: the arguments held for %s would exceed the per-uid budget of %s "
			 "(%llu bytes held, %llu in this call); nothing was sent",
			 subject_text(d, subject, who, sizeof(who)), size_text(d->cfg.held_per_uid, lim, sizeof(lim)),
			 (unsigned long long)u->held_bytes, (unsigned long long)bytes);
		uid_share_put(d, u);
		return -EDQUOT;
	}
	if (d->held_bytes + bytes > d->cfg.held_max) {
		snprintf(ret_msg, msg_size,
			 "cordon: refused: the arguments held for all users would exceed the global budget of %s "
			 "(%llu bytes held, %llu in this call); nothing was sent",
			 size_text(d->cfg.held_max, lim, sizeof(lim)), (unsigned long long)d->held_bytes,
			 (unsigned long long)bytes);
		uid_share_put(d, u);
		return -EDQUOT;
	}
	u->held_bytes += bytes;
	d->held_bytes += bytes;
	return 0;
}

void held_release(struct cordon_daemon *d, uint64_t subject, uint64_t bytes)
{
	struct duid *u = uid_share_get(d, subject, false);

	if (u) {
		u->held_bytes -= bytes < u->held_bytes ? bytes : u->held_bytes;
		uid_share_put(d, u);
	}
	d->held_bytes -= bytes < d->held_bytes ? bytes : d->held_bytes;
	d->held_released += bytes;
}

void held_trim(struct cordon_daemon *d, uint64_t now)
{
	if (d->held_released < TRIM_AFTER_BYTES || now - d->last_trim_ms < TRIM_INTERVAL_MS)
		return;
	(void)malloc_trim(0);
	d->held_released = 0;
	d->last_trim_ms = now;
}

void session_flush(struct dsession *s)
{
	if (s->transport)
		return; /* the transport writes what it is given */
	while (s->wbuf.len > 0) {
		ssize_t n = send(s->fd, s->wbuf.p, s->wbuf.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			/* Peer gone: the read side sees EOF and closes. */
			dbuf_consume(&s->wbuf, s->wbuf.len);
			s->closing = true;
			break;
		}
		dbuf_consume(&s->wbuf, (size_t)n);
	}
	/* After the client's EOF only the answers still owed go out. */
	(void)cordon_loop_watch_modify(s->watch, (s->eof_ms ? 0 : EPOLLIN) | (s->wbuf.len ? EPOLLOUT : 0));
}

/* JSON escapes U+0000..U+001F; DEL and the C1 controls would go out raw (a
 * terminal acts on U+009B as on ESC [). Lines are JSON from jansson or
 * built around it, so such bytes are inside strings: written as \u escapes
 * they are the same value. Scanned first: almost no line has any. */
static bool has_raw_controls(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] == 0x7f ||
		    ((unsigned char)p[i] == 0xc2 && i + 1 < n && ((unsigned char)p[i + 1] & 0xe0) == 0x80))
			return true;
	return false;
}

void session_send(struct dsession *s, const char *bytes, size_t len)
{
	_cleanup_free_ char *escaped = NULL;

	if (s->closing)
		return;
	if (has_raw_controls(bytes, len)) {
		escaped = cordon_json_escape_controls(bytes, len, &len);
		if (!escaped) {
			log_notice("session %s: out of memory escaping a line; closing", s->id);
			s->closing = true;
			return;
		}
		bytes = escaped;
	}
	if (s->transport) {
		s->transport->send(s, bytes, len);
		return;
	}
	if (dbuf_append(&s->wbuf, bytes, len, SESSION_WBUF_MAX) < 0 ||
	    dbuf_append(&s->wbuf, "\n", 1, SESSION_WBUF_MAX) < 0) {
		/* A client that does not read its responses cannot make the
		 * broker buffer without bound: drop it. */
		log_notice("session %s: output buffer full; closing", s->id);
		s->closing = true;
		return;
	}
	session_flush(s);
}

void session_send_json(struct dsession *s, json_t *msg)
{
	char *t;

	if (!msg)
		return;
	t = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (t) {
		session_send(s, t, strlen(t));
		free(t);
	}
}

void session_send_error(struct dsession *s, const json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->d->m.gateway_errors++;
	session_send_json(s,
			  json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				    "error", "code", code, "message", msg, "data", CORDON_REFUSED_BY_KEY, "cordon"));
}

int session_send_connector_error(struct dsession *s, const json_t *id, const char *connector, const json_t *msg)
{
	const json_t *error = json_object_get(msg, "error");
	struct cordon_diag diag = {};
	json_t *relayed = NULL;

	if (!error) {
		if (s && json_object_get(msg, "result"))
			session_send_error(s, id, -32603,
					   "cordon: connector %s answered with a result that is not an object",
					   connector);
		else if (s)
			session_send_error(s, id, -32603,
					   "cordon: connector %s answered with neither a result nor an error",
					   connector);
		return -EBADMSG;
	}
	if (cordon_rpc_error_relay(error, &relayed, &diag) < 0) {
		if (s && diag.error == ENOMEM)
			session_send_error(s, id, -32603, "cordon: out of memory relaying connector %s's error",
					   connector);
		else if (s)
			session_send_error(s, id, -32603, "cordon: connector %s sent a malformed error: %s", connector,
					   diag.message);
		return -diag.error;
	}
	if (s)
		session_send_json(s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
					       "error", relayed));
	else
		json_decref(relayed);
	return 0;
}

void session_send_result(struct dsession *s, const json_t *id, json_t *result)
{
	session_send_json(s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

void session_notify_all_list_changed(struct cordon_daemon *d, const char *connector)
{
	static const char msg[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}";

	for (struct dsession *s = d->sessions; s; s = s->next)
		if (s->initialized && (!connector || !s->bound[0] || !strcmp(s->bound, connector)))
			session_send(s, msg, sizeof(msg) - 1);
}
