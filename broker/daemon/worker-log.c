/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a connector instance leaves in the broker log: the broker's lines
 * about it (prefixed with the connector and instance), its protocol
 * warnings (rate-limited per instance) and its stderr, line by line,
 * rate-limited (WORKER_STDERR_RATE bytes a second, the rest counted and
 * reported), each line capped, control characters replaced and credential
 * values scrubbed. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "dbuf.h"
#include "log.h"
#include "worker-log.h"

/* Protocol warnings (lines cordond ignores with a warning) per instance:
 * at most WORKER_WARN_BURST per window, then one "N suppressed" summary
 * (issue 11 finding 9d). */
#define WORKER_WARN_BURST     10
#define WORKER_WARN_WINDOW_MS 10000

#define WORKER_STDERR_LINE_MAX 4096u
#define WORKER_STDERR_RATE     16384u /* bytes per second to the log */

void worker_log(struct dworker *w, int lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_internal((enum log_level)lvl, 0, "connector %s instance %s: %s", w->conn->id, w->tag, msg);
}

void worker_warn_flush(struct dworker *w)
{
	if (w->warn_suppressed)
		worker_log(w, LOG_LEVEL_WARNING, "%llu protocol warnings suppressed (rate limit: %u per %u s)",
			   (unsigned long long)w->warn_suppressed, WORKER_WARN_BURST, WORKER_WARN_WINDOW_MS / 1000);
	w->warn_suppressed = 0;
	w->warn_window_n = 0;
}

void worker_warn(struct dworker *w, const char *fmt, ...)
{
	uint64_t now = cordon_loop_now_ms();
	char msg[512];
	va_list ap;

	if (!w->warn_window_ms || now - w->warn_window_ms >= WORKER_WARN_WINDOW_MS) {
		worker_warn_flush(w);
		w->warn_window_ms = now;
	}
	if (w->warn_window_n >= WORKER_WARN_BURST) {
		w->warn_suppressed++;
		return;
	}
	w->warn_window_n++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	worker_log(w, LOG_LEVEL_WARNING, "%s", msg);
}

void worker_warn_tick(struct dworker *w, uint64_t now)
{
	if (w->warn_suppressed && now - w->warn_window_ms >= WORKER_WARN_WINDOW_MS) {
		worker_warn_flush(w);
		w->warn_window_ms = 0;
	}
}

/* Overwrites every occurrence of each credential value with '*', in place
 * (same length, so a partial overlap cannot re-form a secret). */
static void scrub_values(char *s, char *const *secrets, size_t n_secrets)
{
	for (size_t i = 0; i < n_secrets; i++) {
		const char *sec = secrets[i];
		size_t n = strlen(sec);
		char *p = s;

		if (n < 4)
			continue;
		while ((p = strstr(p, sec)))
			memset(p, '*', n), p += n;
	}
}

/* Every current credential value of the connector: the ones read at
 * start-up and the ones each live instance was started with (a rotated
 * file's new value arrives with the next instance; issue 11 finding 10a).
 * Scrubbing is hygiene for the log, not a boundary: a connector holding a
 * credential can always encode it. */
static void scrub(struct dworker *w, char *s)
{
	scrub_values(s, w->conn->secrets, w->conn->n_secrets);
	scrub_values(s, w->secrets, w->n_secrets);
	for (struct dworker *x = w->d->workers; x; x = x->next)
		if (x != w && x->conn == w->conn)
			scrub_values(s, x->secrets, x->n_secrets);
}

/* The longest credential value scrub() looks for. */
static size_t secrets_longest(struct dworker *w)
{
	size_t m = 0;

	for (size_t i = 0; i < w->conn->n_secrets; i++)
		m = strlen(w->conn->secrets[i]) > m ? strlen(w->conn->secrets[i]) : m;
	for (struct dworker *x = w->d->workers; x; x = x->next)
		if (x == w || x->conn == w->conn)
			for (size_t i = 0; i < x->n_secrets; i++)
				m = strlen(x->secrets[i]) > m ? strlen(x->secrets[i]) : m;
	for (size_t i = 0; i < w->n_secrets; i++) /* w may be off the list already */
		m = strlen(w->secrets[i]) > m ? strlen(w->secrets[i]) : m;
	return m;
}

void worker_excerpt(struct dworker *w, const char *s, size_t len, char *out, size_t size)
{
	/* Scrub more than the excerpt shows, so a credential value that starts
	 * inside it and ends beyond it is still masked whole. */
	size_t take = len < WORKER_EXCERPT_BYTES + secrets_longest(w) ? len : WORKER_EXCERPT_BYTES + secrets_longest(w);
	size_t shown = len < WORKER_EXCERPT_BYTES ? len : WORKER_EXCERPT_BYTES, o = 0;
	_cleanup_free_ char *raw = malloc(take + 1);

	assert(size >= WORKER_EXCERPT_MAX);
	if (!raw) {
		snprintf(out, size, "(no excerpt: out of memory)");
		return;
	}
	memcpy(raw, s, take);
	raw[take] = '\0';
	for (size_t i = 0; i < take; i++) /* scrub() stops at a NUL; no secret holds one */
		if (raw[i] == '\0')
			raw[i] = '\x01';
	scrub(w, raw);
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char)raw[i];

		if (c == '\\' || c == '"')
			o += (size_t)snprintf(out + o, size - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

void worker_on_stderr(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct dworker *w = userdata;
	char buf[8192];
	ssize_t n;
	uint64_t now = cordon_loop_now_ms();

	(void)loop;
	(void)revents;
	n = read(fd, buf, sizeof(buf));
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN) {
			cordon_loop_unwatch(w->w_err);
			w->w_err = NULL;
		}
		return;
	}
	if (now - w->stderr_window_ms >= 1000) {
		if (w->stderr_dropped)
			worker_log(w, LOG_LEVEL_NOTICE, "stderr: %llu bytes dropped (rate limit)",
				   (unsigned long long)w->stderr_dropped);
		w->stderr_window_ms = now;
		w->stderr_window_bytes = 0;
		w->stderr_dropped = 0;
	}
	for (ssize_t off = 0; off < n;) {
		char *nl = memchr(buf + off, '\n', (size_t)(n - off));
		size_t chunk = nl ? (size_t)(nl - (buf + off)) : (size_t)(n - off);
		size_t room = WORKER_STDERR_LINE_MAX - w->ebuf.len;

		(void)dbuf_append(&w->ebuf, buf + off, chunk < room ? chunk : room, WORKER_STDERR_LINE_MAX);
		off += (ssize_t)chunk;
		if (nl || w->ebuf.len >= WORKER_STDERR_LINE_MAX) {
			if (nl)
				off++;
			if (w->stderr_window_bytes + w->ebuf.len > WORKER_STDERR_RATE)
				w->stderr_dropped += w->ebuf.len;
			else {
				char line[WORKER_STDERR_LINE_MAX + 1];

				w->stderr_window_bytes += w->ebuf.len;
				memcpy(line, w->ebuf.p, w->ebuf.len);
				line[w->ebuf.len] = 0;
				for (char *p = line; *p; p++)
					if ((unsigned char)*p < 0x20 && *p != '\t')
						*p = '?';
				scrub(w, line);
				worker_log(w, LOG_LEVEL_INFO, "stderr: %s", line);
			}
			dbuf_consume(&w->ebuf, w->ebuf.len);
		}
	}
}
