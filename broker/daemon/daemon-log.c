/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's operator-relevant events (daemon-log.h): the catalogue of
 * names, MESSAGE_IDs and levels (docs/cordond.md keeps the same table),
 * the line format and the per-connector denial summaries. */
#include "daemon-log.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* Generated once (128 random bits each) and never changed: a new event gets
 * a new id, a changed meaning gets a new event. */
/* clang-format off */
static const struct {
	const char *name, *id;
	enum log_level level;
} events[_DLOG_EVENT_MAX] = {
	[DLOG_DAEMON_STARTED]      = { "cordon.daemon.started",      "c6b3e84842f78fdf96dd005715eded3f", LOG_LEVEL_NOTICE },
	[DLOG_DAEMON_STOPPING]     = { "cordon.daemon.stopping",     "637e62fc6f5fcfb1cc60b9e9d79e0508", LOG_LEVEL_NOTICE },
	[DLOG_DAEMON_FATAL]        = { "cordon.daemon.fatal",        "de904575e0f7d46dc0f7713aa66e264d", LOG_LEVEL_CRIT },
	[DLOG_RELOAD_APPLIED]      = { "cordon.reload.applied",      "60465ed24399a799b5f0f25f1b13a313", LOG_LEVEL_NOTICE },
	[DLOG_RELOAD_REFUSED]      = { "cordon.reload.refused",      "48a727b38b64109ffbf8db8a85a5009a", LOG_LEVEL_ERROR },
	[DLOG_APPROVAL_REQUESTED]  = { "cordon.approval.requested",  "ac21264b17ed7b5f7c054c08cf2aa966", LOG_LEVEL_NOTICE },
	[DLOG_APPROVAL_DECIDED]    = { "cordon.approval.decided",    "2a28e7ad72f89aebbedb6c2cd7154b93", LOG_LEVEL_NOTICE },
	[DLOG_GRANT_CHANGED]       = { "cordon.grant.changed",       "dee4a92b0285906727f4469cd5cc895e", LOG_LEVEL_NOTICE },
	[DLOG_CONNECTOR_INSTALLED] = { "cordon.connector.installed", "f17a43f78d40aefeeaab25a238abecbd", LOG_LEVEL_NOTICE },
	[DLOG_CONNECTOR_REMOVED]   = { "cordon.connector.removed",   "18c1c2714a0b9150ff40ec54c02d2ccf", LOG_LEVEL_NOTICE },
	[DLOG_INSTANCE_STARTED]    = { "cordon.instance.started",    "e6e67e2f48b77d380a252782232a9b2c", LOG_LEVEL_INFO },
	[DLOG_INSTANCE_EXITED]     = { "cordon.instance.exited",     "14b3f1b3eca61f84e4d097394ea51a15", LOG_LEVEL_INFO },
	[DLOG_DENIAL_SUMMARY]      = { "cordon.denial.summary",      "37bf101cce17ca0c55d2d2bffaf023e4", LOG_LEVEL_WARNING },
};
/* clang-format on */

const char *dlog_event_name(enum dlog_event ev)
{
	return (unsigned)ev < _DLOG_EVENT_MAX ? events[ev].name : "cordon.unknown";
}

const char *dlog_event_id(enum dlog_event ev)
{
	return (unsigned)ev < _DLOG_EVENT_MAX ? events[ev].id : "00000000000000000000000000000000";
}

enum log_level dlog_event_level(enum dlog_event ev)
{
	return (unsigned)ev < _DLOG_EVENT_MAX ? events[ev].level : LOG_LEVEL_ERROR;
}

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._:/@+,-", c);
}

/* Appends to buf at *n (bounded by size, always NUL-terminated). */
static void put(char *buf, size_t size, size_t *n, const char *s, size_t len)
{
	if (*n + 1 >= size)
		return;
	if (len > size - 1 - *n)
		len = size - 1 - *n;
	memcpy(buf + *n, s, len);
	*n += len;
	buf[*n] = '\0';
}

static void put_value(char *buf, size_t size, size_t *n, const char *v)
{
	size_t len = strlen(v), shown = len > DLOG_VALUE_MAX ? DLOG_VALUE_MAX : len;
	bool plain = len > 0 && len == shown;

	for (size_t i = 0; plain && i < len; i++)
		plain = plain_byte((unsigned char)v[i]) && v[i] != '\0';
	if (plain) {
		put(buf, size, n, v, len);
		return;
	}
	put(buf, size, n, "\"", 1);
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char)v[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\', esc[1] = (char)c;
			put(buf, size, n, esc, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put(buf, size, n, esc, 4);
		} else
			put(buf, size, n, (const char *)&v[i], 1);
	}
	if (shown < len)
		put(buf, size, n, "...", 3);
	put(buf, size, n, "\"", 1);
}

size_t dlog_format(char *buf, size_t size, enum dlog_event ev, const char *const *kv, size_t n_pairs)
{
	size_t n = 0;

	if (!size)
		return 0;
	buf[0] = '\0';
	put(buf, size, &n, "[", 1);
	put(buf, size, &n, dlog_event_name(ev), strlen(dlog_event_name(ev)));
	put(buf, size, &n, " ", 1);
	put(buf, size, &n, dlog_event_id(ev), strlen(dlog_event_id(ev)));
	put(buf, size, &n, "]", 1);
	for (size_t i = 0; i < n_pairs; i++) {
		if (!kv[2 * i] || !kv[2 * i + 1])
			continue;
		put(buf, size, &n, " ", 1);
		put(buf, size, &n, kv[2 * i], strlen(kv[2 * i]));
		put(buf, size, &n, "=", 1);
		put_value(buf, size, &n, kv[2 * i + 1]);
	}
	return n;
}

void dlog_event_at(enum dlog_event ev, enum log_level level, ...)
{
	const char *kv[2 * DLOG_FIELDS_MAX];
	size_t n = 0;
	char line[1000];
	const char *k;
	va_list ap;

	va_start(ap, level);
	while ((k = va_arg(ap, const char *)) && n < DLOG_FIELDS_MAX) {
		kv[2 * n] = k;
		kv[2 * n + 1] = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	dlog_format(line, sizeof(line), ev, kv, n);
	log_internal(level ? level : dlog_event_level(ev), 0, "%s", line);
}

const char *dlog_actor(const struct cordon_actor *a, char *buf, size_t size)
{
	cordon_actor_describe(a, buf, size);
	return buf;
}

void dlog_approval_decided(const struct cordon_approval_info *a, const struct cordon_actor *actor)
{
	char by[64];

	dlog_event(DLOG_APPROVAL_DECIDED, "approval", a->id, "decision", cordon_approval_state_to_string(a->state),
		   "connector", a->connector, "tool", a->tool, "session", a->session, "by",
		   dlog_actor(actor, by, sizeof(by)));
}

void dlog_instance_exited(const char *connector, const char *tag, int pid, bool have_status, int status,
			  const char *reason, bool crashed)
{
	char st[48], pid_s[24];

	if (!have_status)
		snprintf(st, sizeof(st), "-");
	else if (WIFEXITED(status))
		snprintf(st, sizeof(st), "exit:%d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(st, sizeof(st), "signal:%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(st, sizeof(st), "wait:%d", status);
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	dlog_event_at(DLOG_INSTANCE_EXITED, crashed ? LOG_LEVEL_WARNING : 0, "connector", connector, "instance", tag,
		      "pid", pid > 0 ? pid_s : NULL, "status", st, "reason", reason, "crashed", crashed ? "yes" : "no",
		      (const char *)NULL);
}

static void denial_log(struct dlog_denial_slot *s, uint64_t now)
{
	char count[24], window[24];

	snprintf(count, sizeof(count), "%llu", (unsigned long long)s->pending);
	snprintf(window, sizeof(window), "%u", DLOG_DENIAL_WINDOW_MS / 1000);
	dlog_event(DLOG_DENIAL_SUMMARY, "connector", s->connector, "denied", count, "last_reason", s->reason,
		   "window_s", window);
	s->pending = 0;
	s->logged_ms = now;
}

void dlog_denial(struct dlog_denials *t, const char *connector, const char *reason, uint64_t now)
{
	struct dlog_denial_slot *s = NULL, *free_slot = NULL;

	for (size_t i = 0; i < DLOG_DENIAL_SLOTS && !s; i++) {
		if (!t->slot[i].connector[0]) {
			if (!free_slot)
				free_slot = &t->slot[i];
		} else if (!strcmp(t->slot[i].connector, connector))
			s = &t->slot[i];
	}
	if (!s) {
		if (!free_slot) /* more connectors than cordond loads: not reachable */
			return;
		s = free_slot;
		snprintf(s->connector, sizeof(s->connector), "%s", connector);
	}
	s->pending++;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	if (!s->logged_ms || now - s->logged_ms >= DLOG_DENIAL_WINDOW_MS)
		denial_log(s, now);
}

void dlog_denials_flush(struct dlog_denials *t, uint64_t now, bool all)
{
	for (size_t i = 0; i < DLOG_DENIAL_SLOTS && t->slot[i].connector[0]; i++)
		if (t->slot[i].pending && (all || now - t->slot[i].logged_ms >= DLOG_DENIAL_WINDOW_MS))
			denial_log(&t->slot[i], now);
}
