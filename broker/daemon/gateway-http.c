/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The MCP Streamable HTTP transport (see gateway-http.h): it only frames.
 * Every message a client POSTs goes to gateway_session_input(), exactly as
 * a line of gateway.sock; everything the session writes comes back through
 * the session's transport (http_send) and is routed to one HTTP answer:
 *
 *   - a response goes to the POST that carried its request;
 *   - notifications/progress goes to the POST whose request named its
 *     progressToken;
 *   - anything written while a POST's request is being handled goes with
 *     that POST's answer (it is about that request);
 *   - anything else (a connector's log message, list_changed, a relayed
 *     sampling or elicitation request) goes to the session's GET stream,
 *     or, while none is open, to the newest POST stream still open, or is
 *     kept for the next GET (bounded).
 *
 * Each answer that is a stream is a `struct hstream`: its events, numbered
 * "<stream>-<seq>" (the SSE event id), are kept until the stream is
 * complete, so a client whose connection was cut resumes it with GET and
 * Last-Event-ID. A connection waiting for its next event is suspended in
 * libmicrohttpd (MHD_suspend_connection from the content reader) and
 * resumed when an event is pushed; a quiet stream gets an SSE comment every
 * keepalive_sec, which is also how a client gone away is noticed.
 *
 * The request is checked before any of it reaches a session: the path, the
 * method, Host (loopback names only) and Origin (absent, or a loopback
 * origin: DNS-rebinding protection), MCP-Protocol-Version, Content-Type,
 * Accept, and the body's size (cfg.line_max, the bound of a gateway line;
 * 413 beyond it). A session is found by its Mcp-Session-Id (128 random
 * bits) and only for the subject that created it on the same endpoint:
 * anyone else gets 404, as for a session that does not exist.
 *
 * On the TCP listener (mcp_http_listen; a routable address only with TLS,
 * mcp_http_tls_cert and mcp_http_tls_key, and then Host and Origin may
 * also name the mcp_http_hosts) there is no
 * SO_PEERCRED: every request carries "Authorization: Bearer <token>" of an
 * agent (agents.h), checked after Host and Origin on every request (401
 * otherwise), and that agent is the subject: its own sessions, share and
 * audit identity (DSUBJECT_AGENT | its id). */
#include "gateway-http.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>

#include <sodium.h>

#include "cleanup.h"
#include "dbuf.h"
#include "agents.h"
#include "gateway-session.h"
#include "gateway.h"
#include "hex-util.h"
#include "http.h"
#include "log.h"
#include "loop.h"
#include "parse-util.h"

/* What the events of one session may hold, kept for resumption and not
 * yet written, before the session is closed as not reading. */
#define HSESS_BYTES_MAX (16u * 1024 * 1024)
/* The GET stream keeps its last events for resumption up to this much. */
#define STANDING_HISTORY_MAX (1024u * 1024)
/* A cut POST stream is kept this long for a GET with Last-Event-ID. */
#define DETACHED_KEEP_MS (120u * 1000)
#define SID_BYTES	 16

/* Newest first, as gateway.c negotiates them. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

struct hevent {
	struct hevent *next;
	uint64_t seq;
	size_t len;
	char json[]; /* one JSON-RPC message, NUL-terminated */
};

struct hstream;

/* One streamed answer on one connection. Owned by its MHD response (freed
 * by pipe_free); st is NULL once the stream is gone or taken over. */
struct hpipe {
	struct gw_http *g;
	struct hpipe *prev, *next;
	struct hstream *st;
	struct MHD_Connection *conn;
	bool suspended;
	uint64_t last_ms; /* last bytes handed to MHD */
};

struct hsess;

struct hstream {
	struct hsess *hs;
	struct hstream *next;
	unsigned num;
	uint64_t seq;
	bool standing;	/* the GET stream */
	bool json_only; /* a POST answered as application/json: its response alone */
	bool done;	/* every request of the POST answered */
	json_t *ids;	/* the requests still unanswered (POST) */
	json_t *tokens; /* their progress tokens */
	struct hevent *hist, *hist_tail;
	size_t hist_bytes;
	struct dbuf out; /* framed, not yet handed to a connection */
	struct hpipe *pipe;
	uint64_t detached_ms;
};

struct hsess {
	struct gw_http *g;
	struct hsess *prev, *next;
	struct dsession *s;
	char sid[2 * SID_BYTES + 1];
	uint64_t subject; /* struct dsession's: a uid, or DSUBJECT_AGENT | id */
	char bound[CORDON_CONNECTOR_ID_MAX + 1];
	struct hstream *streams;
	struct hstream *standing;
	struct hstream *cur; /* the POST whose request is being handled */
	unsigned next_num;
	uint64_t last_ms;
	size_t bytes; /* history and output of every stream */
};

struct gw_http {
	struct cordon_daemon *d;
	struct cordon_loop *loop;
	struct gw_http_options o;
	struct MHD_Daemon *mhd;
	struct cordon_watch *watch;
	struct cordon_timer *timer;
	struct hsess *sessions;
	struct hpipe *pipes;
	bool in_run;  /* inside MHD_run: schedule() follows anyway */
	bool resumed; /* a connection was resumed: run MHD again at once */
};

enum hkind { H_POST, H_GET, H_DELETE };

/* One HTTP request (MHD's con_cls). */
struct hreq {
	enum hkind kind;
	char connector[CORDON_CONNECTOR_ID_MAX + 1]; /* "" for /mcp */
	bool accept_sse;
	bool too_large;
	struct ucred cred;
	/* The subject: cred.uid on the Unix socket; on TCP the agent whose
	 * bearer token the request carries (is_agent). */
	uint64_t subject;
	bool is_agent;
	struct cordon_agent_info agent;
	struct dbuf body;
};

static void schedule(struct gw_http *g);
static void hsess_free(struct hsess *hs);

/* ---- responses ---------------------------------------------------------- */

static void common_headers(struct MHD_Response *resp)
{
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	(void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
}

static enum MHD_Result respond_buf(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
				   size_t len, const char *sid)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result r;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (type)
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (sid)
		(void)MHD_add_response_header(resp, "Mcp-Session-Id", sid);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, POST, DELETE");
	common_headers(resp);
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

/* An HTTP refusal: the status and a JSON-RPC error (id null) naming the
 * problem, marked as cordon's like every error the gateway sends. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, int code, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	json_t *v;
	char *t;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v = json_pack("{s:s, s:n, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", "error", "code", code, "message",
		      msg, "data", "io.cordon/refused_by", "cordon");
	t = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!t)
		return MHD_NO;
	return respond_buf(conn, status, "application/json", t, strlen(t), NULL);
}

/* ---- streams ------------------------------------------------------------ */

static void wake_soon(struct gw_http *g);

static void pipe_wake(struct hpipe *p)
{
	if (p && p->suspended) {
		p->suspended = false;
		MHD_resume_connection(p->conn);
		wake_soon(p->g);
	}
}

static void stream_unlink(struct hstream *st)
{
	for (struct hstream **pp = &st->hs->streams; *pp; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
}

static void stream_free(struct hstream *st)
{
	struct hsess *hs = st->hs;

	if (st->pipe) {
		st->pipe->st = NULL;
		pipe_wake(st->pipe);
	}
	while (st->hist) {
		struct hevent *e = st->hist;

		st->hist = e->next;
		free(e);
	}
	hs->bytes -= st->hist_bytes + st->out.len < hs->bytes ? st->hist_bytes + st->out.len : hs->bytes;
	dbuf_free(&st->out);
	json_decref(st->ids);
	json_decref(st->tokens);
	if (hs->standing == st)
		hs->standing = NULL;
	if (hs->cur == st)
		hs->cur = NULL;
	stream_unlink(st);
	free(st);
}

static struct hstream *stream_new(struct hsess *hs, bool standing)
{
	struct hstream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->hs = hs;
	st->num = ++hs->next_num;
	st->standing = standing;
	st->ids = json_array();
	st->tokens = json_array();
	if (!st->ids || !st->tokens) {
		json_decref(st->ids);
		json_decref(st->tokens);
		free(st);
		return NULL;
	}
	st->next = hs->streams;
	hs->streams = st;
	return st;
}

/* Frames event e of st into its output: raw JSON for a json_only stream,
 * else an SSE event with its id. */
static int stream_frame(struct hstream *st, const struct hevent *e)
{
	char head[48];
	int n;

	if (st->json_only)
		return dbuf_append(&st->out, e->json, e->len, HSESS_BYTES_MAX);
	n = snprintf(head, sizeof(head), "id: %u-%llu\ndata: ", st->num, (unsigned long long)e->seq);
	if (dbuf_append(&st->out, head, (size_t)n, HSESS_BYTES_MAX) < 0 ||
	    dbuf_append(&st->out, e->json, e->len, HSESS_BYTES_MAX) < 0 ||
	    dbuf_append(&st->out, "\n\n", 2, HSESS_BYTES_MAX) < 0)
		return -ENOBUFS;
	return 0;
}

/* Drops the oldest events of the GET stream beyond its history bound (they
 * were framed into its output already; only a resumption needs them). */
static void standing_trim(struct hstream *st)
{
	while (st->standing && st->hist && st->hist_bytes > STANDING_HISTORY_MAX) {
		struct hevent *e = st->hist;

		st->hist = e->next;
		if (!st->hist)
			st->hist_tail = NULL;
		st->hist_bytes -= e->len;
		st->hs->bytes -= e->len;
		free(e);
	}
}

/* Pushes one message to st. Returns 0, or -ENOBUFS/-ENOMEM: the session
 * holds too much that its client does not read (the caller closes it). */
static int stream_push(struct hstream *st, const char *json, size_t len)
{
	struct hsess *hs = st->hs;
	struct hevent *e;
	size_t before = st->out.len;

	if (hs->bytes + 2 * len + 64 > HSESS_BYTES_MAX)
		return -ENOBUFS;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->next = NULL;
	e->seq = ++st->seq;
	e->len = len;
	memcpy(e->json, json, len);
	e->json[len] = 0;
	if (stream_frame(st, e) < 0) {
		free(e);
		return -ENOBUFS;
	}
	if (st->hist_tail)
		st->hist_tail->next = e;
	else
		st->hist = e;
	st->hist_tail = e;
	st->hist_bytes += len;
	hs->bytes += len + (st->out.len - before);
	standing_trim(st);
	pipe_wake(st->pipe);
	return 0;
}

/* Rebuilds st's output from its history after event `after` (a
 * resumption). */
static int stream_replay(struct hstream *st, uint64_t after)
{
	st->hs->bytes -= st->out.len < st->hs->bytes ? st->out.len : st->hs->bytes;
	dbuf_consume(&st->out, st->out.len);
	for (struct hevent *e = st->hist; e; e = e->next) {
		size_t before = st->out.len;

		if (e->seq <= after)
			continue;
		if (stream_frame(st, e) < 0)
			return -ENOBUFS;
		st->hs->bytes += st->out.len - before;
	}
	return 0;
}

static ssize_t pipe_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct hpipe *p = cls;
	struct hstream *st = p->st;

	(void)pos;
	if (!st)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (st->out.len) {
		size_t n = st->out.len < max ? st->out.len : max;

		memcpy(buf, st->out.p, n);
		dbuf_consume(&st->out, n);
		st->hs->bytes -= n < st->hs->bytes ? n : st->hs->bytes;
		p->last_ms = cordon_loop_now_ms();
		return (ssize_t)n;
	}
	if (st->done) {
		/* Complete and written: nothing left to resume. */
		st->pipe = NULL;
		p->st = NULL;
		stream_free(st);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	/* Nothing to write yet: wait, out of MHD's loop, until stream_push
	 * (or the keep-alive, or the stream's end) resumes the connection. */
	MHD_suspend_connection(p->conn);
	p->suspended = true;
	return 0;
}

static void pipe_free(void *cls)
{
	struct hpipe *p = cls;

	if (p->st) {
		/* The connection ended before the stream did: keep it for a
		 * GET with Last-Event-ID. */
		p->st->pipe = NULL;
		p->st->detached_ms = cordon_loop_now_ms();
	}
	if (p->prev)
		p->prev->next = p->next;
	else
		p->g->pipes = p->next;
	if (p->next)
		p->next->prev = p->prev;
	free(p);
}

/* Answers conn with st as a stream (text/event-stream, or application/json
 * for a json_only stream). A stream held by another connection is taken
 * from it (that one ends). */
static enum MHD_Result stream_attach(struct gw_http *g, struct MHD_Connection *conn, struct hstream *st,
				     const char *sid)
{
	struct hpipe *p = calloc(1, sizeof(*p));
	struct MHD_Response *resp;
	enum MHD_Result r;

	if (!p)
		return MHD_NO;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, pipe_read, p, pipe_free);
	if (!resp) {
		free(p);
		return MHD_NO;
	}
	if (st->pipe) {
		st->pipe->st = NULL;
		pipe_wake(st->pipe);
	}
	p->g = g;
	p->st = st;
	p->conn = conn;
	p->last_ms = cordon_loop_now_ms();
	p->next = g->pipes;
	if (g->pipes)
		g->pipes->prev = p;
	g->pipes = p;
	st->pipe = p;
	st->detached_ms = 0;
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				      st->json_only ? "application/json" : "text/event-stream");
	if (sid)
		(void)MHD_add_response_header(resp, "Mcp-Session-Id", sid);
	common_headers(resp);
	r = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return r;
}

/* ---- sessions ----------------------------------------------------------- */

static bool array_take(json_t *a, const json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x) if (json_equal(x, v))
	{
		json_array_remove(a, i);
		return true;
	}
	return false;
}

static bool array_has(const json_t *a, const json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x) if (json_equal(x, v)) return true;
	return false;
}

/* Where message m of session hs goes (see the top of this file). *ret_final:
 * it answers the last request its stream waits for. */
static struct hstream *route(struct hsess *hs, const json_t *m, bool *ret_final)
{
	const json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
	struct hstream *newest = NULL;

	*ret_final = false;
	if (id && !method) {
		for (struct hstream *st = hs->streams; st; st = st->next)
			if (!st->standing && array_take(st->ids, id)) {
				*ret_final = json_array_size(st->ids) == 0;
				return st;
			}
	} else if (json_is_string(method) && !strcmp(json_string_value(method), "notifications/progress")) {
		const json_t *tok = json_object_get(json_object_get(m, "params"), "progressToken");

		for (struct hstream *st = hs->streams; tok && st; st = st->next)
			if (!st->standing && !st->json_only && !st->done && array_has(st->tokens, tok))
				return st;
	}
	if (hs->cur && !hs->cur->json_only)
		return hs->cur;
	if (hs->standing && hs->standing->pipe)
		return hs->standing;
	/* Streams are listed newest first. */
	for (struct hstream *st = hs->streams; st && !newest; st = st->next)
		if (!st->standing && !st->json_only && !st->done && st->pipe)
			newest = st;
	return newest ? newest : hs->standing;
}

/* The session's transport: every message cordon writes to it. */
static void http_send(struct dsession *s, const char *bytes, size_t len)
{
	struct hsess *hs = s->transport_data;
	json_t *m = json_loadb(bytes, len, 0, NULL);
	struct hstream *st;
	bool final;

	if (!m) {
		/* cordon writes JSON; nothing else may reach a client. */
		log_notice("session %s: a message that is not JSON was not sent", s->id);
		return;
	}
	st = route(hs, m, &final);
	json_decref(m);
	if (!st) {
		log_notice("session %s: no stream for a message; closing", s->id);
		s->closing = true;
		return;
	}
	if (stream_push(st, bytes, len) < 0) {
		log_notice("session %s: more than %u MiB not read by the HTTP client; closing", s->id,
			   HSESS_BYTES_MAX >> 20);
		s->closing = true;
		return;
	}
	if (final)
		st->done = true;
	hs->last_ms = cordon_loop_now_ms();
}

static void http_closed(struct dsession *s)
{
	struct hsess *hs = s->transport_data;

	hs->s = NULL;
	hsess_free(hs);
}

static const struct dtransport http_transport = {
	.send = http_send,
	.closed = http_closed,
};

static void hsess_free(struct hsess *hs)
{
	struct gw_http *g = hs->g;

	if (hs->s) {
		/* The session ends first; it calls http_closed, which comes
		 * back here with hs->s NULL. */
		gateway_session_end(hs->s);
		return;
	}
	while (hs->streams)
		stream_free(hs->streams);
	if (hs->prev)
		hs->prev->next = hs->next;
	else
		g->sessions = hs->next;
	if (hs->next)
		hs->next->prev = hs->prev;
	free(hs);
}

static struct hsess *hsess_new(struct gw_http *g, const struct hreq *rq, const char *connector, int *ret_why)
{
	struct hsess *hs = calloc(1, sizeof(*hs));
	uint8_t rnd[SID_BYTES];

	if (!hs) {
		*ret_why = -ENOMEM;
		return NULL;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		free(hs);
		*ret_why = -EIO;
		return NULL;
	}
	hex_encode(rnd, sizeof(rnd), hs->sid);
	hs->g = g;
	hs->subject = rq->subject;
	snprintf(hs->bound, sizeof(hs->bound), "%s", connector);
	hs->last_ms = cordon_loop_now_ms();
	hs->standing = stream_new(hs, true);
	if (!hs->standing) {
		free(hs);
		*ret_why = -ENOMEM;
		return NULL;
	}
	hs->next = g->sessions;
	if (g->sessions)
		g->sessions->prev = hs;
	g->sessions = hs;
	hs->s = gateway_session_new(g->d, &rq->cred, rq->is_agent ? &rq->agent : NULL, &http_transport, hs, ret_why);
	if (!hs->s) {
		hsess_free(hs);
		return NULL;
	}
	return hs;
}

/* Equal in time independent of where they differ (ids are secrets). */
static bool sid_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* The session named by the request's Mcp-Session-Id, if it is the
 * requester's and was created on this endpoint; else NULL (404). */
static struct hsess *hsess_find(struct gw_http *g, struct MHD_Connection *conn, const struct hreq *rq)
{
	const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");

	if (!sid || strlen(sid) != 2 * SID_BYTES)
		return NULL;
	for (struct hsess *hs = g->sessions; hs; hs = hs->next)
		if (sid_equal(hs->sid, sid))
			return hs->s && hs->subject == rq->subject && !strcmp(hs->bound, rq->connector) ? hs : NULL;
	return NULL;
}

/* ---- requests ----------------------------------------------------------- */

/* Splits authority a (a Host header, or the host[:port] of an origin; n
 * bytes) into its host, "[v6]" kept whole: the host's length, or 0 when a
 * is malformed (an open bracket, an empty host, a port that is not 1 to 5
 * digits). */
static size_t authority_host_len(const char *a, size_t n)
{
	size_t hl;

	if (n && a[0] == '[') {
		const char *end = memchr(a, ']', n);

		if (!end)
			return 0;
		hl = (size_t)(end - a) + 1;
	} else {
		const char *colon = memchr(a, ':', n);

		hl = colon ? (size_t)(colon - a) : n;
	}
	if (hl < n) {
		if (a[hl] != ':' || hl + 1 == n || n - hl - 1 > 5)
			return 0;
		for (size_t i = hl + 1; i < n; i++)
			if (a[i] < '0' || a[i] > '9')
				return 0;
	}
	return hl;
}

/* Whether an authority names this machine's loopback: localhost,
 * 127.0.0.1, [::1], any port. */
static bool authority_is_loopback(const char *a, size_t n)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };
	size_t hl = authority_host_len(a, n);

	for (size_t i = 0; hl && i < ELEMENTSOF(names); i++)
		if (strlen(names[i]) == hl && !strncasecmp(a, names[i], hl))
			return true;
	return false;
}

/* Whether authority a (host[:port]) names one of hosts ("name[,name...]",
 * mcp_http_hosts, validated by the config), case-insensitively, any port. */
static bool authority_in_hosts(const char *hosts, const char *a, size_t n)
{
	size_t hl = authority_host_len(a, n);

	if (!hosts || hl == 0)
		return false;
	for (const char *p = hosts;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == hl && !strncasecmp(p, a, hl))
			return true;
		if (!end)
			return false;
		p = end + 1;
	}
}

/* Whether Host (or an Origin's authority) is one this listener answers
 * to: a loopback name, or on a TLS listener one of mcp_http_hosts. */
static bool authority_allowed(const struct gw_http *g, const char *a, size_t n)
{
	return authority_is_loopback(a, n) || (g->o.tls_cert && authority_in_hosts(g->o.hosts, a, n));
}

static bool origin_allowed(const struct gw_http *g, const char *o)
{
	const char *rest;
	bool https = false;

	if (!strncasecmp(o, "http://", 7))
		rest = o + 7;
	else if (!strncasecmp(o, "https://", 8)) {
		rest = o + 8;
		https = true;
	} else
		return false; /* "null", or another scheme */
	/* A configured name only as an https origin: its pages came over
	 * TLS too. */
	if (authority_is_loopback(rest, strlen(rest)))
		return true;
	return https && g->o.tls_cert && authority_in_hosts(g->o.hosts, rest, strlen(rest));
}

/* Whether an Accept header admits type ("a/b"): the type itself, "a/ *"
 * or "* / *" among its comma-separated entries. */
static bool accepts(const char *accept, const char *type)
{
	const char *slash = strchr(type, '/');

	for (const char *p = accept; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *semi = memchr(p, ';', n);

		while (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		if (semi)
			n = (size_t)(semi - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == strlen(type) && !strncasecmp(p, type, n)) || (n == 3 && !strncmp(p, "*/*", 3)) ||
		    (n == (size_t)(slash - type) + 2 && !strncasecmp(p, type, n - 1) && p[n - 1] == '*'))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static bool version_known(const char *v)
{
	for (size_t i = 0; i < ELEMENTSOF(versions); i++)
		if (!strcmp(v, versions[i]))
			return true;
	return false;
}

/* 401 with the challenge of RFC 6750: error is NULL when the request had
 * no credentials, "invalid_token" when its token is not one cordond
 * accepts (malformed, unknown and revoked are not told apart). */
static enum MHD_Result unauthorized(struct MHD_Connection *conn, const char *error, const char *msg)
{
	json_t *v = json_pack("{s:s, s:n, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", "error", "code", -32000,
			      "message", msg, "data", "io.cordon/refused_by", "cordon");
	char *t = v ? json_dumps(v, JSON_COMPACT) : NULL;
	struct MHD_Response *resp;
	enum MHD_Result r;

	json_decref(v);
	if (!t)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(t), t, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(t);
		return MHD_NO;
	}
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				      error ? "Bearer realm=\"cordon\", error=\"invalid_token\""
					    : "Bearer realm=\"cordon\"");
	common_headers(resp);
	r = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, resp);
	MHD_destroy_response(resp);
	return r;
}

/* On TCP: the agent of the request's "Authorization: Bearer <token>"
 * (cordonctl agents add), checked on every request, so a revoked token is
 * refused from the next request on. Sets rq->is_agent and returns MHD_YES,
 * or queues the 401. */
static enum MHD_Result authenticate(struct gw_http *g, struct MHD_Connection *conn, struct hreq *rq)
{
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	int r;

	if (!auth)
		return unauthorized(conn, NULL,
				    "Unauthorized: MCP over TCP needs an Authorization: Bearer token (cordonctl agents "
				    "add NAME)");
	if (strncasecmp(auth, "Bearer ", 7) != 0)
		return unauthorized(conn, "invalid_token", "Unauthorized: the Authorization scheme must be Bearer");
	auth += 7;
	while (*auth == ' ')
		auth++;
	r = cordon_agent_authenticate(g->d->db, auth, &rq->agent);
	if (r == -EACCES)
		return unauthorized(conn, "invalid_token",
				    "Unauthorized: the bearer token is not valid or was revoked");
	if (r < 0)
		return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "cordond: cannot check the token now");
	rq->is_agent = true;
	rq->subject = DSUBJECT_AGENT | (uint64_t)rq->agent.id;
	return MHD_YES;
}

/* The first call for a request: its headers. Returns MHD_YES to read on
 * (rq set), or the result of queuing a refusal. */
static enum MHD_Result request_head(struct gw_http *g, struct MHD_Connection *conn, const char *url, const char *method,
				    struct hreq *rq)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	socklen_t len = sizeof(rq->cred);

	/* The subject on the Unix socket: the peer's credentials, never
	 * anything it sent. On TCP there are none: the bearer token is
	 * checked below, after Host and Origin. */
	if (g->o.tcp) {
		rq->cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	} else {
		if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &rq->cred, &len) < 0)
			return MHD_NO;
		rq->subject = rq->cred.uid;
	}
	if (!strncmp(url, "/mcp/", 5)) {
		if (!connector_id_is_valid(url + 5))
			return refuse(conn, MHD_HTTP_NOT_FOUND, -32000, "Not found: '%.80s' is not a connector id",
				      url + 5);
		snprintf(rq->connector, sizeof(rq->connector), "%s", url + 5);
	} else if (strcmp(url, "/mcp") != 0)
		return refuse(conn, MHD_HTTP_NOT_FOUND, -32000,
			      "Not found: the MCP endpoints are /mcp and /mcp/<connector>");
	/* DNS rebinding: a browser page of another site that made its name
	 * resolve to this machine still sends its own Host and Origin. */
	if (!host || !authority_allowed(g, host, strlen(host)))
		return refuse(conn, MHD_HTTP_FORBIDDEN, -32000,
			      "Forbidden: Host '%.80s' is not a loopback name (localhost, 127.0.0.1, [::1])%s",
			      host ? host : "", g->o.tls_cert ? " nor one of mcp_http_hosts" : "");
	if (origin && !origin_allowed(g, origin))
		return refuse(conn, MHD_HTTP_FORBIDDEN, -32000,
			      "Forbidden: Origin '%.80s' is not allowed (only http(s)://localhost, 127.0.0.1 or "
			      "[::1]%s)",
			      origin, g->o.tls_cert ? ", or https:// and a name of mcp_http_hosts" : "");
	if (g->o.tcp) {
		enum MHD_Result r = authenticate(g, conn, rq);

		if (r != MHD_YES || !rq->is_agent)
			return r;
	}
	if (pv && !version_known(pv))
		return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
			      "Bad Request: unsupported MCP-Protocol-Version '%.40s' (supported: 2025-11-25, "
			      "2025-06-18, 2025-03-26)",
			      pv);
	if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
		rq->kind = H_POST;
		if (!ctype || strncasecmp(ctype, "application/json", 16) != 0 ||
		    (ctype[16] && ctype[16] != ';' && ctype[16] != ' '))
			return refuse(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
				      "Unsupported Media Type: the body must be application/json");
		if (accept && !accepts(accept, "application/json") && !accepts(accept, "text/event-stream"))
			return refuse(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000,
				      "Not Acceptable: the client must accept application/json and text/event-stream");
		rq->accept_sse = !accept || accepts(accept, "text/event-stream");
		if (clen) {
			uint64_t n;

			if (parse_u64(clen, &n) < 0)
				return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
					      "Bad Request: invalid Content-Length");
			if (n > g->d->cfg.line_max)
				return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
					      "Content Too Large: a message is at most %llu bytes",
					      (unsigned long long)g->d->cfg.line_max);
		}
		return MHD_YES;
	}
	if (!strcmp(method, MHD_HTTP_METHOD_GET)) {
		rq->kind = H_GET;
		if (!accept || !accepts(accept, "text/event-stream"))
			return refuse(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000,
				      "Not Acceptable: GET opens a text/event-stream; the client must accept it");
	} else if (!strcmp(method, MHD_HTTP_METHOD_DELETE)) {
		rq->kind = H_DELETE;
	} else {
		return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed: %.16s", method);
	}
	if ((clen && strcmp(clen, "0") != 0) ||
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32000, "Content Too Large: %s takes no body", method);
	if (!MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id"))
		return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000, "Bad Request: Mcp-Session-Id header is required");
	return MHD_YES;
}

static enum MHD_Result do_get(struct gw_http *g, struct MHD_Connection *conn, struct hreq *rq)
{
	struct hsess *hs = hsess_find(g, conn, rq);
	const char *last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	struct hstream *st;

	if (!hs)
		return refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
	hs->last_ms = cordon_loop_now_ms();
	if (last) {
		/* "<stream>-<seq>": the rest of that stream, on this connection. */
		unsigned num = 0;
		unsigned long long seq = 0;
		int used = 0;

		if (sscanf(last, "%u-%llu%n", &num, &seq, &used) != 2 || (size_t)used != strlen(last))
			return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
				      "Bad Request: Last-Event-ID '%.40s' is not "
				      "one of this server's event ids",
				      last);
		for (st = hs->streams; st; st = st->next)
			if (st->num == num)
				break;
		if (!st || seq > st->seq || (st->hist && st->hist->seq > seq + 1))
			return refuse(conn, MHD_HTTP_NOT_FOUND, -32000,
				      "Not found: the stream of event '%.40s' is complete or no longer kept", last);
		if (stream_replay(st, seq) < 0)
			return MHD_NO;
		return stream_attach(g, conn, st, NULL);
	}
	st = hs->standing;
	if (!st)
		return MHD_NO;
	if (st->pipe)
		return refuse(conn, MHD_HTTP_CONFLICT, -32000,
			      "Conflict: the session's GET stream is already open on another connection");
	/* What was kept while no GET was open is in its output already. An
	 * SSE comment first, so the client has the headers at once. */
	if (!st->out.len && dbuf_append(&st->out, ": stream open\n\n", 15, HSESS_BYTES_MAX) < 0)
		return MHD_NO;
	return stream_attach(g, conn, st, NULL);
}

static enum MHD_Result do_post(struct gw_http *g, struct MHD_Connection *conn, struct hreq *rq)
{
	const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	json_error_t jerr;
	json_t *m = json_loadb(rq->body.p ? rq->body.p : "", rq->body.len, 0, &jerr);
	const json_t *id, *method;
	struct hstream *st;
	struct hsess *hs;
	bool init;

	if (rq->too_large) {
		json_decref(m);
		return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
			      "Content Too Large: a message is at most %llu bytes",
			      (unsigned long long)g->d->cfg.line_max);
	}
	if (!m)
		return refuse(conn, MHD_HTTP_BAD_REQUEST, -32700, "Parse error: %s (line %d, column %d)", jerr.text,
			      jerr.line, jerr.column);
	if (json_is_array(m)) {
		json_decref(m);
		return refuse(conn, MHD_HTTP_BAD_REQUEST, -32600, "Invalid Request: batches are not supported");
	}
	if (!json_is_object(m)) {
		json_decref(m);
		return refuse(conn, MHD_HTTP_BAD_REQUEST, -32600, "Invalid Request: a message must be a JSON object");
	}
	id = json_object_get(m, "id");
	method = json_object_get(m, "method");
	init = json_is_string(method) && !strcmp(json_string_value(method), "initialize");
	if (!sid) {
		int why = 0;

		if (!init || !id) {
			json_decref(m);
			return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
				      "Bad Request: no Mcp-Session-Id; a session starts with initialize");
		}
		hs = hsess_new(g, rq, rq->connector, &why);
		if (!hs) {
			char who[48];

			json_decref(m);
			if (why == -EDQUOT)
				return refuse(conn, MHD_HTTP_TOO_MANY_REQUESTS, -32000,
					      "cordond: too many sessions for %s (at most %u per subject)",
					      subject_text(g->d, rq->subject, who, sizeof(who)),
					      gateway_sessions_per_uid(g->d));
			return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "cordond: too many sessions");
		}
		if (rq->connector[0] && gateway_session_bind(hs->s, rq->connector) < 0) {
			json_decref(m);
			hsess_free(hs);
			return refuse(conn, MHD_HTTP_NOT_FOUND, -32000,
				      "Not found: no installed connector has the id '%.64s'", rq->connector);
		}
	} else {
		hs = hsess_find(g, conn, rq);
		if (!hs) {
			json_decref(m);
			return refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
		}
	}
	hs->last_ms = cordon_loop_now_ms();
	if (!id || !json_is_string(method)) {
		/* A notification, or the client's answer to a relayed request:
		 * handled, and nothing to answer on this connection. */
		json_decref(m);
		gateway_session_input(hs->s, rq->body.p, rq->body.len);
		return respond_buf(conn, MHD_HTTP_ACCEPTED, NULL, NULL, 0, NULL);
	}
	st = stream_new(hs, false);
	if (!st || json_array_append(st->ids, (json_t *)id) < 0) {
		json_decref(m);
		if (st)
			stream_free(st);
		return MHD_NO;
	}
	{
		const json_t *tok =
			json_object_get(json_object_get(json_object_get(m, "params"), "_meta"), "progressToken");

		if (tok)
			(void)json_array_append(st->tokens, (json_t *)tok);
	}
	json_decref(m);
	st->json_only = !rq->accept_sse;
	hs->cur = st;
	gateway_session_input(hs->s, rq->body.p, rq->body.len);
	hs->cur = NULL;
	if (init && hs->s && !hs->s->initialized) {
		/* initialize was refused: no session comes of it. */
		enum MHD_Result r = MHD_NO;

		if (st->hist)
			r = respond_buf(conn, MHD_HTTP_OK, "application/json", strdup(st->hist->json), st->hist->len,
					NULL);
		hsess_free(hs);
		return r;
	}
	if (st->done && st->hist && !st->hist->next) {
		/* Answered at once, and alone: plain JSON. */
		char *body = strndup(st->hist->json, st->hist->len);
		size_t n = st->hist->len;

		stream_free(st);
		if (!body)
			return MHD_NO;
		return respond_buf(conn, MHD_HTTP_OK, "application/json", body, n, init ? hs->sid : NULL);
	}
	if (!st->json_only && !st->out.len && hs->s && !strcmp(hs->s->version, "2025-11-25")) {
		/* 2025-11-25: an event with an id and no data first, so a client
		 * cut before the first real event can still resume. */
		char prime[48];
		int n = snprintf(prime, sizeof(prime), "id: %u-0\ndata: \n\n", st->num);

		(void)dbuf_append(&st->out, prime, (size_t)n, HSESS_BYTES_MAX);
	}
	return stream_attach(g, conn, st, init ? hs->sid : NULL);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct gw_http *g = cls;
	struct hreq *rq = *con_cls;
	enum MHD_Result r;

	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		return request_head(g, conn, url, method, rq);
	}
	if (*upload_data_size) {
		/* The body, bounded as a gateway line: beyond it, nothing more
		 * is kept and the answer is 413. */
		if (!rq->too_large && dbuf_append(&rq->body, upload_data, *upload_data_size, g->d->cfg.line_max) < 0) {
			rq->too_large = true;
			dbuf_free(&rq->body);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	switch (rq->kind) {
	case H_POST:
		r = do_post(g, conn, rq);
		break;
	case H_GET:
		r = do_get(g, conn, rq);
		break;
	case H_DELETE: {
		struct hsess *hs = hsess_find(g, conn, rq);

		if (!hs)
			return refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
		hsess_free(hs);
		r = respond_buf(conn, MHD_HTTP_OK, NULL, NULL, 0, NULL);
		break;
	}
	default:
		r = MHD_NO;
	}
	return r;
}

static void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct hreq *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq) {
		dbuf_free(&rq->body);
		free(rq);
	}
	*con_cls = NULL;
}

/* ---- the loop ----------------------------------------------------------- */

static void run(struct gw_http *g)
{
	g->in_run = true;
	(void)MHD_run(g->mhd);
	g->in_run = false;
	schedule(g);
}

/* A resumed connection: MHD in external mode hears of it only at its next
 * MHD_run (its inter-thread signal is not in the epoll set we watch), so
 * run it at once after this loop pass. */
static void wake_soon(struct gw_http *g)
{
	g->resumed = true;
	if (!g->in_run)
		schedule(g);
}

static void timer_fired(struct cordon_loop *loop, void *userdata)
{
	struct gw_http *g = userdata;

	(void)loop;
	g->timer = NULL;
	run(g);
}

static void schedule(struct gw_http *g)
{
	MHD_UNSIGNED_LONG_LONG t;

	cordon_loop_timer_cancel(g->timer);
	g->timer = NULL;
	if (g->resumed) {
		g->resumed = false;
		(void)cordon_loop_timer(g->loop, 0, timer_fired, g, &g->timer);
	} else if (MHD_get_timeout(g->mhd, &t) == MHD_YES)
		(void)cordon_loop_timer(g->loop, t, timer_fired, g, &g->timer);
}

static void mhd_event(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	(void)loop;
	(void)fd;
	(void)revents;
	run(userdata);
}

void gateway_http_tick(struct gw_http *g)
{
	uint64_t now = cordon_loop_now_ms();

	if (!g)
		return;
	/* A comment on every quiet stream: the client knows the stream is
	 * alive, and a client gone away is noticed (a suspended connection is
	 * not read, so its end is seen only when writing). */
	for (struct hpipe *p = g->pipes; p; p = p->next)
		if (p->st && p->suspended && !p->st->json_only && now - p->last_ms >= g->o.keepalive_sec * 1000ull &&
		    dbuf_append(&p->st->out, ": keepalive\n\n", 13, HSESS_BYTES_MAX) >= 0)
			pipe_wake(p);
	for (struct hsess *hs = g->sessions, *hn; hs; hs = hn) {
		bool busy = false;

		hn = hs->next;
		for (struct hstream *st = hs->streams, *sn; st; st = sn) {
			sn = st->next;
			if (st->pipe || (!st->standing && !st->done))
				busy = true;
			/* A cut stream nobody resumed: what it still had is lost. */
			if (!st->standing && !st->pipe && st->detached_ms &&
			    now - st->detached_ms >= DETACHED_KEEP_MS && (st->done || !hs->s || !hs->s->calls))
				stream_free(st);
		}
		if (!busy && hs->s && !hs->s->calls && now - hs->last_ms >= g->d->cfg.http_session_idle_ms) {
			log_info("session %s: no HTTP request for %llu s; closed", hs->s->id,
				 (unsigned long long)(g->d->cfg.http_session_idle_ms / 1000));
			hsess_free(hs);
		}
	}
}

int gateway_http_tcp_listen(const char *addr, bool tls, int *ret_fd, int *ret_port, struct cordon_diag *diag)
{
	struct sockaddr_storage ss;
	unsigned len;
	_cleanup_close_ int fd = -EBADF;
	int one = 1, r;

	/* A routable address only for TLS (the config refuses it without;
	 * this is the second lock). */
	r = tls ? cordon_http_parse_listen_any(addr, &ss, &len, diag) : cordon_http_parse_listen(addr, &ss, &len, diag);
	if (r < 0)
		return r;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return cordon_diag_set(diag, errno, "mcp-http", "socket: %s", strerror(errno));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return cordon_diag_set(diag, errno, "mcp-http", "mcp_http_listen %s: bind: %s", addr, strerror(errno));
	if (listen(fd, 64) < 0)
		return cordon_diag_set(diag, errno, "mcp-http", "mcp_http_listen %s: listen: %s", addr,
				       strerror(errno));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, (socklen_t *)&len) < 0)
		return cordon_diag_set(diag, errno, "mcp-http", "getsockname: %s", strerror(errno));
	*ret_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

#define TLS_PEM_MAX (64u * 1024)

int gateway_http_tls_read(const char *path, const char *what, bool secret, char **ret, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	size_t len = 0, size;
	char *buf;

	if (sodium_init() < 0)
		return cordon_diag_set(diag, EIO, "mcp-http", "libsodium cannot start");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cordon_diag_set(diag, errno, "mcp-http", "%s '%s': %s", what, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(diag, EINVAL, "mcp-http", "%s '%s' is not a regular file", what, path);
	/* Like a credential file: whoever reads the key can impersonate
	 * cordond to every agent. */
	if (secret && ((st.st_mode & 077) != 0 || (st.st_uid != 0 && st.st_uid != geteuid())))
		return cordon_diag_set(diag, EPERM, "mcp-http",
				       "%s '%s' must be owned by root (or cordond's user) and not readable or "
				       "writable by group or others (chmod 0600)",
				       what, path);
	if (st.st_size <= 0 || (uint64_t)st.st_size > TLS_PEM_MAX)
		return cordon_diag_set(diag, EFBIG, "mcp-http", "%s '%s': must be 1 byte to %u KiB of PEM", what, path,
				       TLS_PEM_MAX / 1024);
	size = (size_t)st.st_size + 1;
	buf = sodium_malloc(size + 1);
	if (!buf)
		return cordon_diag_set(diag, ENOMEM, "mcp-http", "%s: out of memory", what);
	/* One byte more than fstat said: a file that grew is refused. */
	while (len < size) {
		ssize_t n = read(fd, buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			gateway_http_tls_free(buf);
			return cordon_diag_set(diag, e, "mcp-http", "%s '%s': %s", what, path, strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	if (len != size - 1 || memchr(buf, 0, len) || !strstr(buf, "-----BEGIN ")) {
		gateway_http_tls_free(buf);
		return cordon_diag_set(diag, EINVAL, "mcp-http", "%s '%s': not a PEM file (or it changed while read)",
				       what, path);
	}
	*ret = buf;
	return 0;
}

void gateway_http_tls_free(char *pem)
{
	/* sodium_free() wipes it. */
	if (pem)
		sodium_free(pem);
}

int gateway_http_start(struct cordon_daemon *d, int unix_listen_fd, const struct gw_http_options *o,
		       struct gw_http **ret, struct cordon_diag *diag)
{
	struct gw_http *g = calloc(1, sizeof(*g));
	const union MHD_DaemonInfo *info;
	int r;

	if (!g)
		return cordon_diag_set(diag, ENOMEM, "mcp-http", "out of memory");
	g->d = d;
	g->loop = d->loop;
	if (o)
		g->o = *o;
	if (!g->o.keepalive_sec)
		g->o.keepalive_sec = 15;
	if (!g->o.conn_timeout_sec)
		g->o.conn_timeout_sec = 60;
	if (!g->o.max_connections)
		g->o.max_connections = 2 * d->cfg.max_sessions + 16;
	/* External epoll, driven by cordond's loop (like http.c); suspended
	 * connections are how a stream waits for its next event. No
	 * MHD_USE_ERROR_LOG: nothing logs behind the daemon's back. */
	if (g->o.tls_cert && (!g->o.tls_key || !g->o.tcp)) {
		free(g);
		return cordon_diag_set(diag, EINVAL, "mcp-http", "TLS needs a TCP listener, a certificate and a key");
	}
	if (g->o.tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		free(g);
		return cordon_diag_set(diag, ENOTSUP, "mcp-http",
				       "mcp_http_tls_cert: this libmicrohttpd was built without TLS (GnuTLS); "
				       "serve MCP on 127.0.0.1 without the TLS keys, or install a libmicrohttpd "
				       "with TLS");
	}
	/* With TLS, MHD keeps the PEM pointers (the caller keeps them alive
	 * until gateway_http_free()). The options after the TLS ones are
	 * the same either way. */
	if (g->o.tls_cert)
		g->mhd = MHD_start_daemon(
			MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TLS, 0, NULL, NULL, handler, g,
			MHD_OPTION_HTTPS_MEM_CERT, g->o.tls_cert, MHD_OPTION_HTTPS_MEM_KEY, g->o.tls_key,
			MHD_OPTION_LISTEN_SOCKET, unix_listen_fd, MHD_OPTION_CONNECTION_LIMIT, g->o.max_connections,
			MHD_OPTION_CONNECTION_TIMEOUT, g->o.conn_timeout_sec, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			(size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED, request_completed, g, MHD_OPTION_END);
	else
		g->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, handler, g,
					  MHD_OPTION_LISTEN_SOCKET, unix_listen_fd, MHD_OPTION_CONNECTION_LIMIT,
					  g->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, g->o.conn_timeout_sec,
					  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
					  MHD_OPTION_NOTIFY_COMPLETED, request_completed, g, MHD_OPTION_END);
	if (!g->mhd) {
		bool tls = g->o.tls_cert != NULL;

		free(g);
		return cordon_diag_set(diag, EINVAL, "mcp-http",
				       tls ? "libmicrohttpd refused to start TLS on the MCP TCP socket (is "
					     "mcp_http_tls_key the key of mcp_http_tls_cert, both PEM?)"
					   : "libmicrohttpd refused to start on the MCP socket");
	}
	info = MHD_get_daemon_info(g->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	r = info ? cordon_loop_watch(g->loop, info->epoll_fd, EPOLLIN, mhd_event, g, &g->watch) : -EINVAL;
	if (r < 0) {
		(void)MHD_quiesce_daemon(g->mhd);
		MHD_stop_daemon(g->mhd);
		free(g);
		return cordon_diag_set(diag, -r, "mcp-http", "watching the MCP HTTP socket: %s", strerror(-r));
	}
	schedule(g);
	*ret = g;
	return 0;
}

void gateway_http_free(struct gw_http *g)
{
	if (!g)
		return;
	while (g->sessions)
		hsess_free(g->sessions);
	/* Every stream is gone: its connections end at their next read.
	 * MHD must not be stopped with a suspended connection. */
	for (struct hpipe *p = g->pipes; p; p = p->next) {
		p->st = NULL;
		pipe_wake(p);
	}
	(void)MHD_run(g->mhd);
	cordon_loop_timer_cancel(g->timer);
	cordon_loop_unwatch(g->watch);
	/* The listening socket stays the caller's. */
	(void)MHD_quiesce_daemon(g->mhd);
	MHD_stop_daemon(g->mhd);
	free(g);
}
