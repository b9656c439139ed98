/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The approval webhook: see webhook.h. One delivery at a time (a pager
 * needs order more than throughput), driven by the loop:
 *
 *   idle --(queue not empty)--> connecting --(EPOLLOUT, SO_ERROR 0)--> sending
 *   sending --(all written)--> reading --(status line)--> done
 *   any step --(error, deadline)--> back-off timer --> connecting (next attempt)
 *
 * A body leaves the queue when it is delivered (2xx), when its last attempt
 * fails, or when a full queue pushes it out (oldest first). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "approval-events.h"
#include "audit.h"
#include "cleanup.h"
#include "clock.h"
#include "cordon-version.h"
#include "daemon-state.h"
#include "hex-util.h"
#include "log.h"
#include "loop.h"
#include "parse-util.h"
#include "webhook.h"

#define STATUS_LINE_MAX 512
#define SCAN_PAGE	256 /* audit records read per tick at most */

enum wstate { W_IDLE, W_CONNECTING, W_SENDING, W_READING, W_BACKOFF };

struct wbody {
	char *text;
	size_t len;
	char event[32];
};

struct cordon_webhook {
	struct cordon_webhook_url url;
	uint8_t *secret; /* sodium_malloc */
	size_t secret_len;
	struct cordon_loop *loop;
	struct daemon_metrics *m; /* counts deliveries (cordon_webhook_*_total) */
	uint64_t cursor;	  /* the last audit seq read */
	bool started;
	/* The queue: a ring; q[head] is being delivered. */
	struct wbody q[CORDON_WEBHOOK_QUEUE];
	unsigned head, n;
	/* The delivery of q[head]. */
	enum wstate state;
	unsigned attempt; /* 1-based */
	int fd;
	struct cordon_watch *watch;
	struct cordon_timer *timer; /* deadline, or back-off */
	char *req;
	size_t req_len, req_off;
	char status[STATUS_LINE_MAX];
	size_t status_len;
	struct daemon_metrics unstarted; /* counts until cordon_webhook_start() */
};

/* ---- set-up --------------------------------------------------------------- */

static int read_secret(const char *path, uint8_t **ret, size_t *ret_len, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	uint8_t *buf;
	ssize_t n;
	size_t len;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return cordon_diag_set(diag, errno, "webhook", "approval_webhook_secret_file '%s': %m", path);
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(diag, errno, "webhook", "approval_webhook_secret_file '%s': %m", path);
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(diag, EINVAL, "webhook",
				       "approval_webhook_secret_file '%s' is not a regular file", path);
	/* Like a credential file: whoever can read the secret can forge
	 * notifications, whoever can write it can silence them. */
	if ((st.st_mode & 077) != 0 || (st.st_uid != 0 && st.st_uid != geteuid()))
		return cordon_diag_set(
			diag, EPERM, "webhook",
			"approval_webhook_secret_file '%s' must be owned by root (or cordond's user) and "
			"not readable or writable by group or others (chmod 0600)",
			path);
	if (st.st_size > CORDON_WEBHOOK_SECRET_MAX + 1)
		return cordon_diag_set(diag, EFBIG, "webhook", "approval_webhook_secret_file '%s': more than %d bytes",
				       path, CORDON_WEBHOOK_SECRET_MAX);
	buf = sodium_malloc(CORDON_WEBHOOK_SECRET_MAX + 2);
	if (!buf)
		return cordon_diag_set(diag, ENOMEM, "webhook", "cannot allocate the webhook secret");
	len = 0;
	while (len < CORDON_WEBHOOK_SECRET_MAX + 2) {
		n = read(fd, buf + len, CORDON_WEBHOOK_SECRET_MAX + 2 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			sodium_free(buf);
			return cordon_diag_set(diag, e, "webhook", "approval_webhook_secret_file '%s': %s", path,
					       strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* One trailing newline (what `echo` or an editor leaves) is not part
	 * of the secret. */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len < CORDON_WEBHOOK_SECRET_MIN || len > CORDON_WEBHOOK_SECRET_MAX) {
		sodium_free(buf);
		return cordon_diag_set(diag, EINVAL, "webhook",
				       "approval_webhook_secret_file '%s': the secret must be %d to %d bytes (e.g. "
				       "`openssl rand -hex 32`)",
				       path, CORDON_WEBHOOK_SECRET_MIN, CORDON_WEBHOOK_SECRET_MAX);
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

int cordon_webhook_new(const char *url, const char *secret_path, struct cordon_webhook **ret, struct cordon_diag *diag)
{
	struct cordon_webhook *w;
	char err[200];
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_diag_set(diag, ENOMEM, "webhook", "out of memory");
	w->fd = -EBADF;
	w->m = &w->unstarted;
	r = cordon_webhook_url_parse(url, &w->url, err, sizeof(err));
	if (r < 0) {
		free(w);
		return cordon_diag_set(diag, -r, "webhook", "approval_webhook_url: %s", err);
	}
	if (sodium_init() < 0) {
		free(w);
		return cordon_diag_set(diag, EIO, "webhook", "libsodium cannot start");
	}
	r = read_secret(secret_path, &w->secret, &w->secret_len, diag);
	if (r < 0) {
		free(w);
		return r;
	}
	*ret = w;
	return 0;
}

uint16_t cordon_webhook_port(const struct cordon_webhook *w)
{
	return w->url.port;
}

/* ---- one attempt ---------------------------------------------------------- */

static void attempt_close(struct cordon_webhook *w)
{
	if (w->watch)
		cordon_loop_unwatch(w->watch);
	w->watch = NULL;
	if (w->timer)
		cordon_loop_timer_cancel(w->timer);
	w->timer = NULL;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -EBADF;
	free(w->req);
	w->req = NULL;
	w->req_len = w->req_off = w->status_len = 0;
}

static void body_pop(struct cordon_webhook *w)
{
	free(w->q[w->head].text);
	w->q[w->head] = (struct wbody){};
	w->head = (w->head + 1) % CORDON_WEBHOOK_QUEUE;
	w->n--;
	w->attempt = 0;
}

static void attempt_start(struct cordon_webhook *w);

static void on_backoff(struct cordon_loop *loop, void *userdata)
{
	struct cordon_webhook *w = userdata;

	(void)loop;
	w->timer = NULL;
	attempt_start(w);
}

/* Starts the next body, if any (after a delivery ended either way). */
static void next_body(struct cordon_webhook *w)
{
	w->state = W_IDLE;
	if (w->n > 0)
		attempt_start(w);
}

/* The attempt failed (why: for the log); retries after a back-off while
 * attempts remain. */
static void attempt_failed(struct cordon_webhook *w, const char *why)
{
	const struct wbody *b = &w->q[w->head];

	attempt_close(w);
	if (w->attempt < CORDON_WEBHOOK_ATTEMPTS) {
		uint64_t ms = (uint64_t)CORDON_WEBHOOK_BACKOFF_MS << (w->attempt - 1);

		log_warning("approval webhook http://%s%s: %s event, attempt %u of %u: %s; trying again in %" PRIu64
			    " ms",
			    w->url.host, w->url.path, b->event, w->attempt, CORDON_WEBHOOK_ATTEMPTS, why, ms);
		w->state = W_BACKOFF;
		if (cordon_loop_timer(w->loop, ms, on_backoff, w, &w->timer) >= 0)
			return;
	}
	log_error("approval webhook http://%s%s: %s event not delivered after %u attempt(s): %s", w->url.host,
		  w->url.path, b->event, w->attempt, why);
	w->m->webhook_failed++;
	body_pop(w);
	next_body(w);
}

static void attempt_done(struct cordon_webhook *w)
{
	attempt_close(w);
	w->m->webhook_delivered++;
	body_pop(w);
	next_body(w);
}

static void on_deadline(struct cordon_loop *loop, void *userdata)
{
	struct cordon_webhook *w = userdata;

	(void)loop;
	w->timer = NULL;
	attempt_failed(w, "no answer within the deadline");
}

/* Judges the status line "HTTP/1.x NNN ...": 2xx is delivered. */
static void judge_status(struct cordon_webhook *w)
{
	char why[80];
	int code;

	if (w->status_len < 12 || strncmp(w->status, "HTTP/1.", 7) != 0 || w->status[8] != ' ' ||
	    sscanf(w->status + 9, "%3d", &code) != 1) {
		attempt_failed(w, "the answer is not HTTP/1.x");
		return;
	}
	if (code >= 200 && code < 300) {
		attempt_done(w);
		return;
	}
	snprintf(why, sizeof(why), "HTTP status %d", code);
	attempt_failed(w, why);
}

static void on_io(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct cordon_webhook *w = userdata;
	char why[120];

	(void)loop;
	if (w->state == W_CONNECTING) {
		int e = 0;
		socklen_t el = sizeof(e);

		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e != 0) {
			snprintf(why, sizeof(why), "connect: %s", strerror(e));
			attempt_failed(w, why);
			return;
		}
		w->state = W_SENDING;
	}
	if (w->state == W_SENDING) {
		while (w->req_off < w->req_len) {
			ssize_t k = send(fd, w->req + w->req_off, w->req_len - w->req_off, MSG_NOSIGNAL);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (k < 0) {
				snprintf(why, sizeof(why), "send: %s", strerror(errno));
				attempt_failed(w, why);
				return;
			}
			w->req_off += (size_t)k;
		}
		w->state = W_READING;
		if (cordon_loop_watch_modify(w->watch, EPOLLIN) < 0) {
			attempt_failed(w, "cannot watch the socket");
			return;
		}
		return;
	}
	if (w->state == W_READING && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		for (;;) {
			ssize_t k = recv(fd, w->status + w->status_len, sizeof(w->status) - 1 - w->status_len, 0);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (k < 0) {
				snprintf(why, sizeof(why), "recv: %s", strerror(errno));
				attempt_failed(w, why);
				return;
			}
			w->status_len += (size_t)k;
			w->status[w->status_len] = 0;
			/* The status line is all cordond reads; the rest of
			 * the answer is not its business. */
			if (memchr(w->status, '\n', w->status_len) || k == 0 ||
			    w->status_len == sizeof(w->status) - 1) {
				judge_status(w);
				return;
			}
		}
	}
}

/* The request, signed now (a receiver may refuse old timestamps, so each
 * attempt carries its own). */
static int build_request(struct cordon_webhook *w)
{
	const struct wbody *b = &w->q[w->head];
	char ts[24], sig[65];
	int n;

	snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
	cordon_webhook_sign(w->secret, w->secret_len, ts, b->text, b->len, sig);
	n = asprintf(&w->req,
		     "POST %s HTTP/1.1\r\n"
		     "Host: %s\r\n"
		     "User-Agent: cordond/%s\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n"
		     "X-Cordon-Event: %s\r\n"
		     "X-Cordon-Timestamp: %s\r\n"
		     "X-Cordon-Signature: sha256=%s\r\n"
		     "Connection: close\r\n"
		     "\r\n"
		     "%s",
		     w->url.path, w->url.host, CORDON_VERSION, b->len, b->event, ts, sig, b->text);
	if (n < 0) {
		w->req = NULL;
		return -ENOMEM;
	}
	w->req_len = (size_t)n;
	w->req_off = 0;
	return 0;
}

static void attempt_start(struct cordon_webhook *w)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(w->url.port), .sin_addr = w->url.addr };
	char why[120];
	int r;

	w->attempt++;
	if (w->attempt > 1)
		w->m->webhook_retries++;
	w->state = W_CONNECTING;
	if (build_request(w) < 0) {
		attempt_failed(w, "out of memory");
		return;
	}
	w->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd < 0) {
		snprintf(why, sizeof(why), "socket: %s", strerror(errno));
		attempt_failed(w, why);
		return;
	}
	if (connect(w->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		snprintf(why, sizeof(why), "connect: %s", strerror(errno));
		attempt_failed(w, why);
		return;
	}
	r = cordon_loop_watch(w->loop, w->fd, EPOLLOUT, on_io, w, &w->watch);
	if (r >= 0)
		r = cordon_loop_timer(w->loop, CORDON_WEBHOOK_DEADLINE_MS, on_deadline, w, &w->timer);
	if (r < 0) {
		snprintf(why, sizeof(why), "cannot watch the socket: %s", strerror(-r));
		attempt_failed(w, why);
	}
}

/* ---- the queue ------------------------------------------------------------ */

int cordon_webhook_enqueue(struct cordon_webhook *w, const char *body, const char *event)
{
	struct wbody *b;
	char *t = strdup(body);

	if (!t)
		return -ENOMEM;
	if (w->n == CORDON_WEBHOOK_QUEUE) {
		/* Full: the oldest body that is not on the wire goes. A pager
		 * rather hears about the newest calls. */
		unsigned victim = w->state == W_IDLE ? 0 : 1; /* from head */

		if (w->m->webhook_dropped % 100 == 0)
			log_warning("approval webhook: queue full (%d bodies); dropping the oldest (%" PRIu64
				    " dropped so far)",
				    CORDON_WEBHOOK_QUEUE, w->m->webhook_dropped + 1);
		w->m->webhook_dropped++;
		free(w->q[(w->head + victim) % CORDON_WEBHOOK_QUEUE].text);
		for (unsigned k = victim; k + 1 < w->n; k++)
			w->q[(w->head + k) % CORDON_WEBHOOK_QUEUE] = w->q[(w->head + k + 1) % CORDON_WEBHOOK_QUEUE];
		w->q[(w->head + w->n - 1) % CORDON_WEBHOOK_QUEUE] = (struct wbody){};
		w->n--;
	}
	b = &w->q[(w->head + w->n) % CORDON_WEBHOOK_QUEUE];
	*b = (struct wbody){ .text = t, .len = strlen(t) };
	snprintf(b->event, sizeof(b->event), "%s", event);
	w->n++;
	if (w->started && w->state == W_IDLE)
		attempt_start(w);
	return 0;
}

const char *cordon_webhook_queued(const struct cordon_webhook *w, unsigned i, unsigned *ret_n)
{
	if (ret_n)
		*ret_n = w->n;
	return i < w->n ? w->q[(w->head + i) % CORDON_WEBHOOK_QUEUE].text : NULL;
}

/* ---- events from the audit log ------------------------------------------- */

int cordon_webhook_start(struct cordon_webhook *w, struct cordon_daemon *d)
{
	int64_t last = 0, cps = 0, cpt = 0;
	int r;

	r = cordon_audit_position(d->db, &last, &cps, &cpt);
	if (r < 0)
		return r;
	d->m.webhook_dropped += w->unstarted.webhook_dropped;
	w->m = &d->m;
	w->loop = d->loop;
	w->cursor = (uint64_t)last;
	w->started = true;
	if (w->n > 0 && w->state == W_IDLE)
		attempt_start(w);
	return 0;
}

void cordon_webhook_tick(struct cordon_webhook *w, struct cordon_daemon *d)
{
	struct cordon_db *db = w ? d->db : NULL;
	int64_t last = 0, cps = 0, cpt = 0;

	if (!w || !w->started || cordon_audit_position(db, &last, &cps, &cpt) < 0 || (uint64_t)last <= w->cursor)
		return;
	for (int pages = 0; pages < 4 && w->cursor < (uint64_t)last; pages++) {
		struct cordon_audit_export_query q = { .after_seq = w->cursor, .limit = SCAN_PAGE };
		json_t *page = NULL, *rec;
		uint64_t next;
		size_t i;

		if (cordon_audit_export(db, &q, &page) < 0)
			return; /* tried again at the next tick */
		json_array_foreach(json_object_get(page, "records"), i, rec)
		{
			const char *ev = json_string_value(json_object_get(rec, "event"));
			json_t *body;
			char *text;

			if (!approval_event_is(ev, false))
				continue;
			body = approval_event_json(d, rec);
			text = body ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
			if (!text || cordon_webhook_enqueue(w, text, ev) < 0)
				log_error("approval webhook: cannot queue the %s event of record %" JSON_INTEGER_FORMAT
					  " (out of memory)",
					  ev, json_integer_value(json_object_get(rec, "seq")));
			free(text);
			json_decref(body);
		}
		next = (uint64_t)json_integer_value(json_object_get(page, "next_seq"));
		json_decref(page);
		if (next <= w->cursor)
			break;
		w->cursor = next;
	}
}

void cordon_webhook_sign(const uint8_t *secret, size_t secret_len, const char *timestamp, const char *body,
			 size_t body_len, char ret[static 65])
{
	crypto_auth_hmacsha256_state st;
	uint8_t mac[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256_init(&st, secret, secret_len);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)timestamp, strlen(timestamp));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)".", 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)body, body_len);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
	hex_encode(mac, sizeof(mac), ret);
}

void cordon_webhook_free(struct cordon_webhook *w)
{
	if (!w)
		return;
	attempt_close(w);
	while (w->n > 0)
		body_pop(w);
	if (w->secret) {
		sodium_memzero(w->secret, w->secret_len);
		sodium_free(w->secret);
	}
	free(w);
}
