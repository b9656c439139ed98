/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The gateway socket: one MCP session per connection, newline-delimited
 * JSON-RPC, cordond acting as the MCP server.
 *
 * Every line is bounded (cfg.line_max): a longer line gets one error and is
 * discarded up to its newline (resync), so no peer can make the broker hold
 * more than the bound per session. Every message is strictly admitted by
 * canon (duplicate keys, invalid UTF-8, lone surrogates, integers beyond
 * 2^53-1, depth) before anything else looks at it. The subject of a session
 * is the peer's SO_PEERCRED uid/gid/pid, never its clientInfo. Nothing on
 * this socket can reach an operator operation: the method table below is the
 * complete surface.
 *
 * Two views. By default a session sees every connector, each tool and
 * prompt named `<connector>__<name>`, beside the broker's own `cordon__*`
 * tools. A session that sends `cordon/bind {"connector": ID}` before
 * initialize sees only that connector, under its own names, and nothing
 * else (no other connector, no broker tool, no other connector's
 * notifications); the binding is set once and never changes. It narrows
 * what the session addresses, nothing more: the subject is still the
 * peer's credentials, and every call is decided, approved, audited and
 * deduplicated on (connector, tool) exactly as in the multiplexed view.
 *
 * The top of the gateway: requests go down to gateway-call.c (tools),
 * gateway-task.c (the tasks methods; task-augmented calls reach it through the
 * dtask_hooks registered here), gateway-pass.c (resources, prompts,
 * completion) and gateway-relay.c (answers to relayed requests); output
 * goes through gateway-session.c.
 * What connector instances tell sessions comes up through the
 * worker_events registered here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "approval-args.h"
#include "approvals.h"
#include "canon.h"
#include "cleanup.h"
#include "dbuf.h"
#include "daemon.h"
#include "gateway-call.h"
#include "gateway-pass.h"
#include "gateway-relay.h"
#include "gateway-session.h"
#include "gateway-task.h"
#include "gateway.h"
#include "log.h"
#include "parse-util.h"
#include "rpc-error.h"
#include "worker.h"

/* Newest first: the answer when the client's version is not supported. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

static void session_close(struct dsession *s);

static unsigned sessions_per_uid(const struct cordon_daemon *d)
{
	unsigned n = d->cfg.sessions_per_uid ? d->cfg.sessions_per_uid : d->cfg.max_sessions / 4;

	if (n > d->cfg.max_sessions)
		n = d->cfg.max_sessions;
	return n ? n : 1;
}

/* cordon/bind: binds the session to one installed connector. Only before
 * initialize and only once, so what a client negotiated is what it keeps. */
static void do_bind(struct dsession *s, const json_t *id, const json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "connector"));

	if (s->initialized || s->bound[0]) {
		session_send_error(s, id, -32600, "Invalid Request: cordon/bind is allowed once, before initialize");
		return;
	}
	if (!json_is_object(params) || !want || json_object_size(params) != 1) {
		session_send_error(s, id, -32602, "Invalid params: cordon/bind needs exactly {\"connector\": ID}");
		return;
	}
	if (!connector_id_is_valid(want) || !daemon_conn(s->d, want) || !daemon_conn_installed(s->d, want)) {
		session_send_error(s, id, -32602, "Unknown connector '%.64s': no installed connector has this id",
				   want);
		return;
	}
	snprintf(s->bound, sizeof(s->bound), "%s", want);
	log_info("session %s: bound to connector %s", s->id, s->bound);
	session_send_result(s, id, json_pack("{s:s}", "connector", s->bound));
}

/* The combined `instructions` of the multiplexed view: cordon's note, then
 * one "## <connector>" section per installed connector whose instructions
 * are known, in the order of their ids, the whole at most
 * GATEWAY_INSTRUCTIONS_MAX bytes (a section that does not fit is cut on a
 * UTF-8 boundary and the rest left out). */
#define GATEWAY_INSTRUCTIONS_MAX (2 * DCONN_INSTRUCTIONS_MAX)

static const char note_bound[] = "The tools of one connector, under their own names. Calls that change something "
				 "wait for an operator's approval; if a call returns an approval code, repeat the "
				 "identical call after approval.";
static const char note_multiplexed[] = "Tools are named <connector>__<tool>. Calls that change something wait for an "
				       "operator's approval; if a call returns an approval code, repeat the identical "
				       "call after approval.";

/* Returns the `instructions` a session's initialize answers with (malloc'ed;
 * NULL: out of memory, and the answer goes without). The bound view: the
 * connector's own, verbatim, or cordon's note when it has none known. */
static char *initialize_instructions(struct dsession *s)
{
	struct cordon_daemon *d = s->d;
	size_t len, cap = GATEWAY_INSTRUCTIONS_MAX + 1;
	char *out;

	if (s->bound[0]) {
		const struct dconn *c = daemon_conn(d, s->bound);

		return strdup(c && c->instructions ? c->instructions : note_bound);
	}
	out = malloc(cap);
	if (!out)
		return NULL;
	len = (size_t)snprintf(out, cap, "%s", note_multiplexed);
	for (const char *last = ""; len < GATEWAY_INSTRUCTIONS_MAX;) {
		const struct dconn *c = NULL;
		size_t head, n;

		/* The next id after last (a few connectors: quadratic is fine). */
		for (size_t i = 0; i < d->n_conns; i++)
			if (d->conns[i].instructions && strcmp(d->conns[i].id, last) > 0 &&
			    (!c || strcmp(d->conns[i].id, c->id) < 0) && daemon_conn_installed(d, d->conns[i].id))
				c = &d->conns[i];
		if (!c)
			break;
		last = c->id;
		head = (size_t)snprintf(out + len, cap - len, "\n\n## %s\n", c->id);
		if (head >= cap - len) {
			out[len] = 0; /* not even the heading fits */
			break;
		}
		len += head;
		n = strlen(c->instructions);
		if (n > GATEWAY_INSTRUCTIONS_MAX - len) {
			n = GATEWAY_INSTRUCTIONS_MAX - len;
			while (n > 0 && ((unsigned char)c->instructions[n] & 0xC0) == 0x80)
				n--;
		}
		memcpy(out + len, c->instructions, n);
		len += n;
		out[len] = 0;
	}
	return out;
}

static void do_initialize(struct dsession *s, const json_t *id, const json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *use = versions[0];
	json_t *ccaps = json_object_get(params, "capabilities");

	if (s->initialized) {
		session_send_error(s, id, -32600, "Invalid Request: the session is already initialized");
		return;
	}
	if (!json_is_object(params) || !want) {
		session_send_error(s, id, -32602, "Invalid params: initialize needs protocolVersion");
		return;
	}
	for (size_t i = 0; i < ELEMENTSOF(versions); i++)
		if (!strcmp(want, versions[i]))
			use = versions[i];
	snprintf(s->version, sizeof(s->version), "%s", use);
	/* The client's _meta goes to the instances started for this session
	 * alone (worker.c), so it is kept only when small: an object of at
	 * most GATEWAY_META_MAX bytes as compact JSON; a larger one is
	 * dropped (logged), the session goes on. */
	json_t *meta = json_object_get(params, "_meta");

	if (json_is_object(meta)) {
		size_t n = json_dumpb(meta, NULL, 0, JSON_COMPACT);

		if (n > 0 && n <= GATEWAY_META_MAX)
			s->client_meta = json_deep_copy(meta);
		else
			log_info("session %s: initialize _meta of %zu bytes not relayed (at most %d)", s->id, n,
				 GATEWAY_META_MAX);
	}
	s->client_sampling = json_object_get(ccaps, "sampling") != NULL;
	s->client_elicitation = json_object_get(ccaps, "elicitation") != NULL;
	s->client_roots = json_object_get(ccaps, "roots") != NULL;
	s->client_tasks = json_is_object(json_object_get(ccaps, "tasks"));
	s->initialized = true;
	/* resources/prompts/completions only when a connector's profile lets
	 * them through, with subscribe/listChanged when one announced them
	 * (gateway-pass.c); logging always (the connectors' own log messages,
	 * relayed by level: do_set_level(), on_worker_notify()). */
	json_t *caps =
		json_pack("{s:{s:b}, s:{}, s:o}", "tools", "listChanged", 1, "logging", "tasks", task_capability());
	pass_capabilities(s, caps);
	char name[80];

	if (s->bound[0])
		snprintf(name, sizeof(name), "cordond/%s", s->bound);
	else
		snprintf(name, sizeof(name), "cordond");
	char *text = initialize_instructions(s);

	session_send_result(s, id,
			    json_pack("{s:s, s:o, s:{s:s, s:s}, s:s*}", "protocolVersion", use, "capabilities", caps,
				      "serverInfo", "name", name, "version", "0.1", "instructions", text));
	free(text);
}

/* Whether instance w serves session s: its own, or a shared one of a
 * connector the session sees (every one, or the one it is bound to); an
 * instance started only to take an inventory serves nobody. */
static bool worker_serves(const struct dworker *w, const struct dsession *s)
{
	if (!s->initialized || s->closing || w->for_install)
		return false;
	if (w->session)
		return w->session == s;
	return !s->bound[0] || !strcmp(s->bound, w->conn->id);
}

/* worker_events.log_level: the least severe level any session served by w
 * asked for, so that a shared instance logs what every one of them wants
 * (each session's own level is applied again when relaying). */
static unsigned on_worker_log_level(struct dworker *w)
{
	unsigned lvl = 0;

	for (struct dsession *s = w->d->sessions; s; s = s->next)
		if (s->log_level && worker_serves(w, s) && (!lvl || s->log_level < lvl))
			lvl = s->log_level;
	return lvl;
}

/* logging/setLevel: stored per session, and passed on to the live
 * instances this session uses whose connectors announced `logging`
 * (instances started later get it once initialized). */
static void do_set_level(struct dsession *s, const json_t *id, const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "level"));
	unsigned lvl = worker_log_level_parse(name);

	if (!lvl) {
		session_send_error(s, id, -32602,
				   "Invalid params: level must be one of debug, info, notice, warning, error, "
				   "critical, alert, emergency");
		return;
	}
	s->log_level = lvl;
	session_send_result(s, id, json_object());
	for (struct dworker *w = s->d->workers; w; w = w->next)
		if (worker_serves(w, s))
			worker_log_level_update(w);
}

/* args: params.arguments as canonical bytes, when handle_line() lifted them
 * out of params (only for a tools/call to a connector's tool). */
static void handle_request(struct dsession *s, const char *method, const json_t *id, const json_t *params,
			   struct cordon_canon_lifted *args)
{
	if (!strcmp(method, "initialize")) {
		do_initialize(s, id, params);
		return;
	}
	if (!strcmp(method, "ping")) {
		session_send_result(s, id, json_object());
		return;
	}
	if (!strcmp(method, "cordon/bind")) {
		do_bind(s, id, params);
		return;
	}
	if (!s->initialized) {
		session_send_error(s, id, -32600, "Invalid Request: send initialize before '%.64s'", method);
		return;
	}
	if (params && !json_is_object(params)) {
		session_send_error(s, id, -32602, "Invalid params: params must be an object");
		return;
	}
	if (!strcmp(method, "tools/list")) {
		/* In pages of PASS_PAGE_SIZE from a snapshot taken by the
		 * listing without a cursor (gateway-pass.c). */
		if (!pass_page_next(s, id, params, "tools"))
			pass_page_first(s, id, "tools", broker_tools_list(s->d, s));
		return;
	}
	if (!strcmp(method, "tools/call")) {
		const char *name = json_string_value(json_object_get(params, "name"));

		if (!params || !name) {
			session_send_error(s, id, -32602, "Invalid params: tools/call needs a name");
			return;
		}
		if (!s->bound[0] && !strncmp(name, "cordon__", 8)) {
			if (!broker_tool_call(s, id, name + 8, json_object_get(params, "arguments")))
				session_send_error(s, id, -32602, "Unknown tool: %.160s", name);
			return;
		}
		call_start(s, id, params, args);
		return;
	}
	if (!strcmp(method, "logging/setLevel")) {
		do_set_level(s, id, params);
		return;
	}
	if (task_request(s, method, id, params))
		return;
	if (pass_request(s, method, id, params))
		return;
	session_send_error(s, id, -32601, "Method not found: %.64s", method);
}

static void handle_notification(struct dsession *s, const char *method, const json_t *params)
{
	if (!strcmp(method, "notifications/cancelled")) {
		json_t *rid = json_object_get(params, "requestId");

		if (rid)
			call_cancel(s, rid);
	}
	/* notifications/initialized, roots/list_changed, progress: nothing to do. */
}

static void handle_line(struct dsession *s, const char *line, size_t len)
{
	struct cordon_canon_limits lim = { .max_bytes = s->d->cfg.line_max };
	struct cordon_diag diag = {};
	_cleanup_(json_decrefp) json_t *msg = NULL;
	_cleanup_(cordon_canon_lifted_done) struct cordon_canon_lifted args = {};
	json_t *id, *method;
	const char *name;
	int r;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	/* Same admission and tree as cordon_canon_decode(), except that a
	 * params.arguments object comes as canonical bytes, never as a tree:
	 * a tools/call forwards, hashes and binds only those bytes (issue 16). */
	r = cordon_canon_decode_lifted(line, len, &lim, "params", "arguments", &msg, &args, &diag);
	if (r < 0) {
		session_send_error(s, NULL, -32700, "Parse error: %s", diag.message);
		return;
	}
	/* Only a tools/call request to a connector's tool takes the lifted
	 * bytes (call_start); every other message gets them back in its tree. */
	method = json_object_get(msg, "method");
	name = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
	if (args.jcs && (!json_object_get(msg, "id") || !json_is_string(method) ||
			 strcmp(json_string_value(method), "tools/call") != 0 || !name ||
			 (!s->bound[0] && !strncmp(name, "cordon__", 8)))) {
		r = cordon_canon_lifted_restore(msg, line, len, &lim, "params", "arguments", &args, &diag);
		if (r < 0) {
			session_send_error(s, NULL, -32603, "Internal error: %s", diag.message);
			return;
		}
	}
	if (json_is_array(msg)) {
		session_send_error(s, NULL, -32600, "Invalid Request: batches are not supported");
		return;
	}
	if (!json_is_object(msg)) {
		session_send_error(s, NULL, -32600, "Invalid Request: a message must be a JSON object");
		return;
	}
	id = json_object_get(msg, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		session_send_error(s, NULL, -32600, "Invalid Request: id must be a string or an integer");
		return;
	}
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0) {
		session_send_error(s, id, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	method = json_object_get(msg, "method");
	if (!method) {
		/* A response from the client: only to a relayed connector
		 * request (sampling, elicitation); anything else is dropped. */
		(void)relay_client_response(s, msg);
		return;
	}
	if (!json_is_string(method)) {
		session_send_error(s, id, -32600, "Invalid Request: method must be a string");
		return;
	}
	if (!id)
		handle_notification(s, json_string_value(method), json_object_get(msg, "params"));
	else
		handle_request(s, json_string_value(method), id, json_object_get(msg, "params"), &args);
}

/* How long a half-closed session may wait for the answers it owes: long
 * enough for a call held for approval to get its answer (approval_wait),
 * and a little more for it to be written. */
static uint64_t eof_grace_ms(const struct cordon_daemon *d)
{
	return d->cfg.approval_wait_ms + 5000;
}

/* Whether session s still owes its client something: a call not yet
 * answered, or bytes not yet written. */
static bool session_owes(const struct dsession *s)
{
	return s->calls || s->wbuf.len;
}

/* The client half-closed: handle a last unterminated line, stop reading,
 * and close now unless answers are owed (then gateway_tick closes it when
 * they are out, or after eof_grace_ms()). */
static void session_eof(struct dsession *s)
{
	if (s->rbuf.len && !s->discarding)
		handle_line(s, s->rbuf.p, s->rbuf.len);
	dbuf_consume(&s->rbuf, s->rbuf.len);
	s->eof_ms = cordon_loop_now_ms();
	if (!session_owes(s))
		s->closing = true;
	else
		session_flush(s);
}

static void on_session(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct dsession *s = userdata;
	char buf[65536];

	(void)loop;
	if (revents & EPOLLOUT)
		session_flush(s);
	if (s->eof_ms) {
		/* Only writing now: a full hang-up or an error ends it. */
		if (revents & (EPOLLHUP | EPOLLERR))
			s->closing = true;
		if (s->closing)
			session_close(s);
		return;
	}
	for (int rounds = 0; rounds < 64 && !s->closing && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)); rounds++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n == 0 && s->initialized) {
			/* The client shut down its sending side: a last line
			 * without its newline still counts, and the answers it is
			 * owed still go out (session_eof). */
			session_eof(s);
			break;
		}
		if (n <= 0) {
			s->closing = true;
			break;
		}
		while (off < (size_t)n && !s->closing) {
			char *nl = memchr(buf + off, '\n', (size_t)n - off);
			size_t chunk = nl ? (size_t)(nl - (buf + off)) : (size_t)n - off;

			if (!s->discarding && dbuf_append(&s->rbuf, buf + off, chunk, s->d->cfg.line_max) < 0) {
				/* Oversize: one error, then drop bytes up to the
				 * next newline and carry on with the next message. */
				session_send_error(s, NULL, -32600,
						   "Invalid Request: message exceeds %llu bytes; discarded",
						   (unsigned long long)s->d->cfg.line_max);
				dbuf_consume(&s->rbuf, s->rbuf.len);
				s->discarding = true;
			}
			off += chunk;
			if (nl) {
				off++;
				if (!s->discarding)
					handle_line(s, s->rbuf.p ? s->rbuf.p : "", s->rbuf.len);
				s->discarding = false;
				dbuf_consume(&s->rbuf, s->rbuf.len);
			}
		}
		/* A short read drained the socket; the watch is level-triggered,
		 * so bytes that arrive later wake the loop again, and a read
		 * that would only say EAGAIN is one syscall per message saved. */
		if ((size_t)n < sizeof(buf))
			break;
	}
	if (s->closing)
		session_close(s);
}

static void session_close(struct dsession *s)
{
	struct cordon_daemon *d = s->d;

	if (s->transport)
		s->transport->closed(s);
	pass_session_closed(s);
	relay_session_closed(s);
	task_session_closed(s);
	json_decref(s->client_meta);
	/* Calls: pending approvals die with the session (cordon_session_end
	 * revokes them); an in-flight call on a shared instance completes in
	 * the ledger but has nobody to answer. */
	while (s->calls) {
		struct dcall *c = s->calls;

		s->calls = c->next;
		c->next = NULL;
		c->s = NULL;
		if (c->state != DC_IN_FLIGHT)
			call_free(c);
	}
	/* Per-session instances end with their session. */
	for (struct dworker *w = d->workers; w;) {
		if (w->session != s) {
			w = w->next;
			continue;
		}
		worker_kill(w, "session ended");
		/* The kill fails that instance's calls, and their callbacks may
		 * end other instances too, so a `next` saved before it can dangle:
		 * rescan from the head (the dead one is already unlinked). */
		w = d->workers;
	}
	(void)cordon_session_end(d->db, s->id);
	approval_args_session_ended(d, s->id);
	{
		struct duid *u = uid_share_get(d, s->subject, false);

		if (u) {
			u->sessions -= u->sessions > 0;
			uid_share_put(d, u);
		}
	}
	if (s->watch)
		cordon_loop_unwatch(s->watch);
	if (s->fd >= 0)
		close(s->fd);
	dbuf_free(&s->rbuf);
	dbuf_free(&s->wbuf);
	if (s->prev)
		s->prev->next = s->next;
	else
		d->sessions = s->next;
	if (s->next)
		s->next->prev = s->prev;
	d->n_sessions--;
	/* The shared instances it saw may log at a more severe level now. */
	if (s->log_level)
		for (struct dworker *w = d->workers; w; w = w->next)
			if (!w->session)
				worker_log_level_update(w);
	free(s);
}

/* Admits a new session of the peer cred: the global and the per-uid caps,
 * then a session linked into d->sessions with a fresh id. Returns it, or
 * NULL with *ret_why set: -EUSERS (cfg.max_sessions reached), -EDQUOT (the
 * uid's share reached) or -ENOMEM. fd may be -EBADF (another transport
 * sets s->transport before anything is sent). */
static struct dsession *session_admit(struct cordon_daemon *d, int fd, const struct ucred *cred,
				      const struct cordon_agent_info *agent, int *ret_why)
{
	uint64_t subject = agent ? DSUBJECT_AGENT | (uint64_t)agent->id : cred->uid;
	struct dsession *s;
	struct duid *u;
	uint64_t rnd64 = 0;
	uint32_t rnd;

	if (d->n_sessions >= d->cfg.max_sessions) {
		d->m.sessions_refused++;
		*ret_why = -EUSERS;
		return NULL;
	}
	/* One uid's share: idle or not, its sessions cannot take every slot
	 * (connections that never initialize are also closed after
	 * cfg.initialize_timeout_ms, see gateway_tick). */
	u = uid_share_get(d, subject, true);
	if (!u || u->sessions >= sessions_per_uid(d)) {
		if (u)
			uid_share_put(d, u);
		d->m.sessions_refused++;
		*ret_why = u ? -EDQUOT : -ENOMEM;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		uid_share_put(d, u);
		*ret_why = -ENOMEM;
		return NULL;
	}
	s->d = d;
	s->fd = fd;
	s->cred = *cred;
	s->subject = subject;
	if (agent)
		snprintf(s->agent, sizeof(s->agent), "%s", agent->name);
	s->accepted_ms = cordon_loop_now_ms();
	/* Session ids must never repeat across restarts: delegations and
	 * approvals are keyed by them. 64 random bits beside the counter. */
	if (getrandom(&rnd64, sizeof(rnd64), 0) != sizeof(rnd64))
		rnd64 = ((uint64_t)cordon_loop_now_ms() << 20) ^ (uint64_t)getpid();
	rnd = (uint32_t)rnd64;
	/* The id names its subject (the audit's actor is the session): an
	 * agent's name is at most 20 bytes, so the id fits in 63. */
	if (agent)
		snprintf(s->id, sizeof(s->id), "gw-%llu-a%s-%08x%08x", (unsigned long long)++d->session_counter,
			 agent->name, rnd, (uint32_t)(rnd64 >> 32));
	else
		snprintf(s->id, sizeof(s->id), "gw-%llu-u%u-%08x%08x", (unsigned long long)++d->session_counter,
			 (unsigned)s->cred.uid, rnd, (uint32_t)(rnd64 >> 32));
	u->sessions++;
	s->next = d->sessions;
	if (d->sessions)
		d->sessions->prev = s;
	d->sessions = s;
	d->n_sessions++;
	d->m.sessions_total++;
	return s;
}

static void on_accept(struct cordon_loop *loop, int lfd, uint32_t revents, void *userdata)
{
	struct cordon_daemon *d = userdata;

	(void)revents;
	for (int i = 0; i < 64; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct dsession *s;
		struct ucred cred;
		socklen_t len = sizeof(struct ucred);
		int why = 0;

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			continue;
		}
		s = session_admit(d, fd, &cred, NULL, &why);
		if (!s) {
			char busy[240];
			int n;

			if (why == -EUSERS)
				n = snprintf(busy, sizeof(busy),
					     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,"
					     "\"message\":\"cordond: too many "
					     "sessions\",\"data\":{\"io.cordon/refused_by\":\"cordon\"}}}\n");
			else
				n = snprintf(busy, sizeof(busy),
					     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":"
					     "\"cordond: too many sessions for uid %u (at most %u per uid); "
					     "closing\",\"data\":{\"io.cordon/refused_by\":\"cordon\"}}}\n",
					     (unsigned)cred.uid, sessions_per_uid(d));
			if (why != -ENOMEM)
				(void)send(fd, busy, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		if (cordon_loop_watch(loop, fd, EPOLLIN, on_session, s, &s->watch) < 0) {
			/* Closed at once: nothing was said on it yet. */
			session_close(s);
			continue;
		}
	}
}

struct dsession *gateway_session_new(struct cordon_daemon *d, const struct ucred *cred,
				     const struct cordon_agent_info *agent, const struct dtransport *t, void *data,
				     int *ret_why)
{
	struct dsession *s = session_admit(d, -EBADF, cred, agent, ret_why);

	if (!s)
		return NULL;
	s->transport = t;
	s->transport_data = data;
	return s;
}

unsigned gateway_sessions_per_uid(const struct cordon_daemon *d)
{
	return sessions_per_uid(d);
}

unsigned cordon_daemon_agent_revoked(struct cordon_daemon *d, int64_t agent_id)
{
	return gateway_end_subject(d, DSUBJECT_AGENT | (uint64_t)agent_id);
}

unsigned gateway_end_subject(struct cordon_daemon *d, uint64_t subject)
{
	unsigned n = 0;
	struct dsession *s = d->sessions;

	/* Ending one session may end others' calls: rescan from the head. */
	while (s) {
		if (s->subject != subject) {
			s = s->next;
			continue;
		}
		gateway_session_end(s);
		n++;
		s = d->sessions;
	}
	return n;
}

int gateway_session_bind(struct dsession *s, const char *connector)
{
	if (s->initialized || s->bound[0])
		return -EALREADY;
	if (!connector_id_is_valid(connector) || !daemon_conn(s->d, connector) ||
	    !daemon_conn_installed(s->d, connector))
		return -ENOENT;
	snprintf(s->bound, sizeof(s->bound), "%s", connector);
	log_info("session %s: bound to connector %s", s->id, s->bound);
	return 0;
}

void gateway_session_input(struct dsession *s, const char *msg, size_t len)
{
	handle_line(s, msg, len);
}

void gateway_session_end(struct dsession *s)
{
	session_close(s);
}

/* ---- what connector instances tell the sessions (worker_events) ---------- */

static void on_tools_changed(struct cordon_daemon *d, const char *connector)
{
	session_notify_all_list_changed(d, connector);
}

/* A relayed log message's data, serialized, at most this many bytes. */
#define LOG_DATA_MAX CORDON_RPC_ERROR_DATA_MAX

static void on_worker_notify(struct dworker *w, const char *method, const json_t *params)
{
	if (!strcmp(method, "notifications/tasks/status")) {
		task_upstream_status(w, params);
		return;
	}
	if (!strcmp(method, "notifications/message")) {
		/* A connector's log message (the worker checked its level and
		 * rate): to each session the instance serves whose level admits
		 * it, with its logger and its data (up
		 * to LOG_DATA_MAX serialized, else the marker a connector's
		 * error data gets), and the connector in _meta; anything else
		 * in its params (its own _meta) is not relayed. A session that
		 * set no level gets every level of its own instance, but a
		 * shared instance's messages only once it asked for them with
		 * logging/setLevel: they may come from other sessions' calls,
		 * other users' included. */
		unsigned lvl = worker_log_level_parse(json_string_value(json_object_get(params, "level")));
		json_t *logger = json_object_get(params, "logger"), *data = json_object_get(params, "data");
		size_t n = data ? json_dumpb(data, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY) : 0;
		json_t *p;

		p = json_pack("{s:s, s:{s:s}}", "level", worker_log_level_name(lvl), "_meta", "io.cordon/connector",
			      w->conn->id);
		if (!p)
			return;
		if (json_is_string(logger))
			json_object_set(p, "logger", logger);
		if (n > LOG_DATA_MAX || (data && !n))
			json_object_set_new(p, "data", cordon_rpc_data_dropped(n));
		else
			json_object_set(p, "data", data ? data : json_null());
		for (struct dsession *s = w->d->sessions; s; s = s->next)
			if (worker_serves(w, s) && (s->log_level ? lvl >= s->log_level : w->session == s))
				session_send_json(s, json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
							       "notifications/message", "params", p));
		json_decref(p);
		return;
	}
	if (!strcmp(method, "notifications/resources/updated")) {
		/* To the sessions it serves that subscribed to the URI. */
		for (struct dsession *s = w->d->sessions; s; s = s->next)
			if (worker_serves(w, s))
				pass_resource_updated(s, w->conn->id, params);
		return;
	}
	/* resources/prompts list_changed: to the sessions this instance serves
	 * (a session bound to another connector sees nothing of this one). */
	for (struct dsession *s = w->d->sessions; s; s = s->next)
		if (s->initialized && (!w->session || w->session == s) &&
		    (!s->bound[0] || !strcmp(s->bound, w->conn->id)))
			session_send_json(s, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method));
}

static void on_worker_gone(struct dworker *w)
{
	relay_worker_gone(w);
	task_worker_gone(w);
	/* Calls held for an approval still name the instance they were
	 * decided against: they must not dispatch to a dead one (the
	 * approval is bound to its launch generation anyway). */
	for (struct dsession *s = w->d->sessions; s; s = s->next)
		for (struct dcall *call = s->calls; call; call = call->next)
			if (call->w == w)
				call->w = NULL;
}

static const struct worker_events gateway_worker_events = {
	.tools_changed = on_tools_changed,
	.notify = on_worker_notify,
	.log_level = on_worker_log_level,
	.client_request = relay_server_request,
	.gone = on_worker_gone,
};

int gateway_start(struct cordon_daemon *d)
{
	d->worker_events = &gateway_worker_events;
	d->task_hooks = &gateway_task_hooks;
	return cordon_loop_watch(d->loop, d->gateway_fd, EPOLLIN, on_accept, d, &d->w_gateway);
}

void gateway_stop(struct cordon_daemon *d)
{
	if (d->w_gateway)
		cordon_loop_unwatch(d->w_gateway);
	d->w_gateway = NULL;
	while (d->sessions)
		session_close(d->sessions);
	/* No session is left to tell anything. */
	d->worker_events = NULL;
	d->task_hooks = NULL;
	/* Every session closed, so no approval is pending any more. */
	approval_args_free_all(d);
	/* Calls still in flight on shared instances release into nothing. */
	free(d->uids);
	d->uids = NULL;
	d->n_uids = d->cap_uids = 0;
}

void gateway_tick(struct cordon_daemon *d)
{
	uint64_t now = cordon_loop_now_ms();

	for (struct dsession *s = d->sessions, *sn; s; s = sn) {
		sn = s->next;
		for (struct dcall *c = s->calls, *cn; c; c = cn) {
			cn = c->next;
			call_tick(c, now);
		}
		if (!s->initialized && !s->closing && now - s->accepted_ms >= s->d->cfg.initialize_timeout_ms) {
			/* Never initialized: an idle connection must not keep a
			 * slot (issue 11 finding 6). */
			session_send_error(s, NULL, -32000, "cordond: no initialize within %llu s; closing",
					   (unsigned long long)((d->cfg.initialize_timeout_ms + 999) / 1000));
			s->closing = true;
		}
		if (s->eof_ms && !s->closing && (!session_owes(s) || now - s->eof_ms >= eof_grace_ms(d))) {
			if (session_owes(s))
				log_info("session %s: closed %llu s after the client's end of input with answers still "
					 "owed",
					 s->id, (unsigned long long)(eof_grace_ms(d) / 1000));
			s->closing = true;
		}
		if (s->closing)
			session_close(s);
	}
	held_trim(d, now);
	calls_tick(d);
	tasks_tick(d, now);
}
