/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "serve-proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"

#define HEADER_LEN 16u

static const char *const type_names[_CORDON_SERVE_TYPE_MAX] = {
	[CORDON_SERVE_PROBE] = "probe",
	[CORDON_SERVE_PROBE_REPLY] = "probe-reply",
	[CORDON_SERVE_SPAWN] = "spawn",
	[CORDON_SERVE_SPAWN_REPLY] = "spawn-reply",
	[CORDON_SERVE_KILL] = "kill",
	[CORDON_SERVE_KILL_REPLY] = "kill-reply",
	[CORDON_SERVE_EXITED] = "exited",
	[CORDON_SERVE_NET_DENIED] = "net-denied",
	[CORDON_SERVE_PROFILES] = "profiles",
	[CORDON_SERVE_PROFILES_REPLY] = "profiles-reply",
	[CORDON_SERVE_CONFIG_READ] = "config-read",
	[CORDON_SERVE_CONFIG_READ_REPLY] = "config-read-reply",
};

/* How many fds each type may carry. */
static unsigned max_fds(uint16_t type)
{
	return type == CORDON_SERVE_SPAWN_REPLY ? 3 : 0;
}

const char *cordon_serve_type_name(uint16_t type)
{
	if (type == 0 || type >= _CORDON_SERVE_TYPE_MAX)
		return "unknown";
	return type_names[type];
}

void cordon_serve_msg_init(struct cordon_serve_msg *m, uint16_t type, uint32_t id)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->id = id;
	for (unsigned i = 0; i < CORDON_SERVE_MAX_FDS; i++)
		m->fds[i] = -EBADF;
}

void cordon_serve_msg_clear(struct cordon_serve_msg *m)
{
	free(m->json);
	m->json = NULL;
	free(m->roots);
	m->roots = NULL;
	m->n_roots = 0;
	for (unsigned i = 0; i < m->n_fds; i++)
		closep(&m->fds[i]);
	m->n_fds = 0;
}

/* Writer. */
struct wbuf {
	uint8_t *p;
	size_t len, size;
	bool overflow;
};

static void put_bytes(struct wbuf *w, const void *data, size_t n)
{
	if (w->overflow || n > w->size - w->len) {
		w->overflow = true;
		return;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void put_le32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put_bytes(w, b, 4);
}

static void put_field(struct wbuf *w, const void *data, size_t n)
{
	put_le32(w, (uint32_t)n);
	put_bytes(w, data, n);
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put_field(w, b, 4);
}

static int put_str(struct wbuf *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n > max)
		return -EINVAL;
	put_field(w, s, n);
	return 0;
}

int cordon_serve_encode(const struct cordon_serve_msg *m, uint8_t *buf, size_t size)
{
	struct wbuf w = { .p = buf, .size = size };
	size_t payload_at;
	int r = 0;

	if (m->type == 0 || m->type >= _CORDON_SERVE_TYPE_MAX || m->n_fds > max_fds(m->type))
		return -EINVAL;
	put_le32(&w, CORDON_SERVE_MAGIC);
	put_bytes(&w, (uint8_t[]){ (uint8_t)m->type, (uint8_t)(m->type >> 8), 0, 0 }, 4);
	put_le32(&w, m->id);
	put_le32(&w, 0); /* payload length, patched below */
	payload_at = w.len;

	switch (m->type) {
	case CORDON_SERVE_PROBE:
	case CORDON_SERVE_CONFIG_READ:
		break;
	case CORDON_SERVE_SPAWN:
		if (m->n_roots > CORDON_SERVE_MAX_ROOTS || (m->n_roots > 0 && !m->roots))
			return -EINVAL;
		r = put_str(&w, m->connector, sizeof(m->connector) - 1);
		if (r >= 0)
			r = put_str(&w, m->tag, sizeof(m->tag) - 1);
		put_u32(&w, m->n_roots);
		for (uint32_t i = 0; r >= 0 && i < m->n_roots; i++) {
			if (m->roots[i].access > 2)
				return -EINVAL;
			r = put_str(&w, m->roots[i].host, CORDON_SERVE_MAX_STR - 1);
			if (r >= 0)
				r = put_str(&w, m->roots[i].sandbox, CORDON_SERVE_MAX_STR - 1);
			put_u32(&w, m->roots[i].access);
		}
		break;
	case CORDON_SERVE_KILL:
		put_u32(&w, m->instance);
		break;
	case CORDON_SERVE_PROFILES:
		r = put_str(&w, m->json ? m->json : "", CORDON_SERVE_MAX_JSON);
		break;
	case CORDON_SERVE_PROBE_REPLY:
	case CORDON_SERVE_SPAWN_REPLY:
	case CORDON_SERVE_KILL_REPLY:
	case CORDON_SERVE_PROFILES_REPLY:
	case CORDON_SERVE_CONFIG_READ_REPLY:
		put_u32(&w, (uint32_t)m->status);
		put_u32(&w, m->instance);
		put_u32(&w, (uint32_t)m->diag.error);
		r = put_str(&w, m->diag.step, sizeof(m->diag.step) - 1);
		if (r >= 0)
			r = put_str(&w, m->diag.message, sizeof(m->diag.message) - 1);
		if (r >= 0)
			r = put_str(&w, m->json ? m->json : "", CORDON_SERVE_MAX_JSON);
		break;
	case CORDON_SERVE_EXITED:
	case CORDON_SERVE_NET_DENIED:
		put_u32(&w, m->instance);
		put_u32(&w, (uint32_t)m->wait_status);
		r = put_str(&w, m->json ? m->json : "", CORDON_SERVE_MAX_JSON);
		break;
	}
	if (r < 0)
		return r;
	if (w.overflow || w.len > CORDON_SERVE_MAX_MSG)
		return -EMSGSIZE;
	{
		uint32_t pl = (uint32_t)(w.len - payload_at);

		buf[12] = (uint8_t)pl;
		buf[13] = (uint8_t)(pl >> 8);
		buf[14] = (uint8_t)(pl >> 16);
		buf[15] = (uint8_t)(pl >> 24);
	}
	return (int)w.len;
}

/* Reader: every get checks the remaining length first. */
struct rbuf {
	const uint8_t *p;
	size_t len, off;
	size_t field_at; /* where the field being read starts */
	struct cordon_diag *diag;
	const char *field;
};

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int bad(struct rbuf *r, const char *what)
{
	return cordon_diag_set(r->diag, EBADMSG, "serve", "malformed message: field '%s' at byte %zu: %s", r->field,
			       r->field_at, what);
}

static int get_field(struct rbuf *r, const char *name, const uint8_t **ret, uint32_t *ret_len, uint32_t max)
{
	uint32_t n;

	r->field = name;
	r->field_at = r->off;
	if (r->len - r->off < 4)
		return bad(r, "truncated length");
	n = le32(r->p + r->off);
	if (n > max)
		return bad(r, "too long");
	if (r->len - r->off - 4 < n)
		return bad(r, "truncated value");
	*ret = r->p + r->off + 4;
	*ret_len = n;
	r->off += 4 + (size_t)n;
	return 0;
}

static int get_u32(struct rbuf *r, const char *name, uint32_t *ret)
{
	const uint8_t *v = NULL; /* set by get_field() on success; gcc -O3 cannot tell */
	uint32_t n = 0;
	int e = get_field(r, name, &v, &n, 4);

	if (e < 0)
		return e;
	if (n != 4)
		return bad(r, "not a 4-byte integer");
	*ret = le32(v);
	return 0;
}

/* Copies a string field into out (size bytes incl. NUL); refuses NUL bytes. */
static int get_str(struct rbuf *r, const char *name, char *out, size_t size)
{
	const uint8_t *v = NULL; /* set by get_field() on success; gcc -O3 cannot tell */
	uint32_t n = 0;
	int e = get_field(r, name, &v, &n, (uint32_t)(size - 1));

	if (e < 0)
		return e;
	if (memchr(v, '\0', n))
		return bad(r, "contains NUL");
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

static int get_json(struct rbuf *r, char **ret)
{
	const uint8_t *v = NULL; /* set by get_field() on success; gcc -O3 cannot tell */
	uint32_t n = 0;
	int e = get_field(r, "json", &v, &n, CORDON_SERVE_MAX_JSON);
	char *s;

	if (e < 0)
		return e;
	if (memchr(v, '\0', n))
		return bad(r, "contains NUL");
	s = malloc((size_t)n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n);
	s[n] = '\0';
	*ret = s;
	return 0;
}

int cordon_serve_decode(const uint8_t *buf, size_t len, struct cordon_serve_msg *ret, struct cordon_diag *diag)
{
	struct rbuf r = { .p = buf, .diag = diag, .field = "header" };
	struct cordon_serve_msg m;
	uint32_t pl, u = 0;
	int e = 0;

	cordon_serve_msg_init(&m, 0, 0);
	if (len < HEADER_LEN || len > CORDON_SERVE_MAX_MSG)
		return cordon_diag_set(diag, EBADMSG, "serve", "malformed message: %zu bytes (header is %u, limit %u)",
				       len, HEADER_LEN, CORDON_SERVE_MAX_MSG);
	if (le32(buf) != CORDON_SERVE_MAGIC)
		return cordon_diag_set(diag, EBADMSG, "serve", "malformed message: bad magic");
	m.type = (uint16_t)(buf[4] | buf[5] << 8);
	if (buf[6] || buf[7])
		return cordon_diag_set(diag, EBADMSG, "serve", "malformed message: unknown flags");
	if (m.type == 0 || m.type >= _CORDON_SERVE_TYPE_MAX)
		return cordon_diag_set(diag, EBADMSG, "serve", "malformed message: unknown type %u", m.type);
	m.id = le32(buf + 8);
	pl = le32(buf + 12);
	if (pl != len - HEADER_LEN)
		return cordon_diag_set(diag, EBADMSG, "serve",
				       "malformed message: payload length %u but %zu bytes follow the header", pl,
				       len - HEADER_LEN);
	r.len = len;
	r.off = HEADER_LEN;

	switch (m.type) {
	case CORDON_SERVE_PROBE:
	case CORDON_SERVE_CONFIG_READ:
		break;
	case CORDON_SERVE_SPAWN:
		e = get_str(&r, "connector", m.connector, sizeof(m.connector));
		if (e >= 0)
			e = get_str(&r, "tag", m.tag, sizeof(m.tag));
		if (e >= 0)
			e = get_u32(&r, "n_roots", &m.n_roots);
		if (e >= 0 && m.n_roots > CORDON_SERVE_MAX_ROOTS) {
			r.field = "n_roots";
			e = bad(&r, "too many roots");
		}
		if (e >= 0 && m.n_roots > 0) {
			/* Bounded by the check above: at most 32 roots. */
			m.roots = calloc(m.n_roots, sizeof(*m.roots));
			if (!m.roots)
				e = -ENOMEM;
		}
		for (uint32_t i = 0; e >= 0 && i < m.n_roots; i++) {
			e = get_str(&r, "root.host", m.roots[i].host, sizeof(m.roots[i].host));
			if (e >= 0)
				e = get_str(&r, "root.sandbox", m.roots[i].sandbox, sizeof(m.roots[i].sandbox));
			if (e >= 0)
				e = get_u32(&r, "root.access", &m.roots[i].access);
			if (e >= 0 && m.roots[i].access > 2)
				e = bad(&r, "unknown access");
		}
		break;
	case CORDON_SERVE_KILL:
		e = get_u32(&r, "instance", &m.instance);
		break;
	case CORDON_SERVE_PROFILES:
		e = get_json(&r, &m.json);
		break;
	case CORDON_SERVE_PROBE_REPLY:
	case CORDON_SERVE_SPAWN_REPLY:
	case CORDON_SERVE_KILL_REPLY:
	case CORDON_SERVE_PROFILES_REPLY:
	case CORDON_SERVE_CONFIG_READ_REPLY:
		e = get_u32(&r, "status", &u);
		m.status = (int32_t)u;
		if (e >= 0)
			e = get_u32(&r, "instance", &m.instance);
		if (e >= 0)
			e = get_u32(&r, "diag.error", &u);
		m.diag.error = (int)u;
		if (e >= 0 && u > 4095)
			e = bad(&r, "not an errno");
		if (e >= 0)
			e = get_str(&r, "diag.step", m.diag.step, sizeof(m.diag.step));
		if (e >= 0)
			e = get_str(&r, "diag.message", m.diag.message, sizeof(m.diag.message));
		if (e >= 0)
			e = get_json(&r, &m.json);
		if (e >= 0 && (m.status > 0 || m.status < -4095)) {
			r.field = "status";
			r.field_at = HEADER_LEN;
			e = bad(&r, "not 0 or -errno");
		}
		break;
	case CORDON_SERVE_EXITED:
	case CORDON_SERVE_NET_DENIED:
		e = get_u32(&r, "instance", &m.instance);
		if (e >= 0)
			e = get_u32(&r, "wait_status", &u);
		m.wait_status = (int32_t)u;
		if (e >= 0)
			e = get_json(&r, &m.json);
		break;
	}
	if (e >= 0 && r.off != len) {
		r.field = "end";
		r.field_at = r.off;
		e = bad(&r, "trailing bytes");
	}
	if (e < 0) {
		free(m.json);
		free(m.roots);
		return e;
	}
	*ret = m;
	return 0;
}

int cordon_serve_send(int sock, const struct cordon_serve_msg *m)
{
	_cleanup_free_ uint8_t *buf = malloc(CORDON_SERVE_MAX_MSG);
	union {
		char buf[CMSG_SPACE(sizeof(int) * CORDON_SERVE_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	int len;

	if (!buf)
		return -ENOMEM;
	len = cordon_serve_encode(m, buf, CORDON_SERVE_MAX_MSG);
	if (len < 0)
		return len;
	iov = (struct iovec){ .iov_base = buf, .iov_len = (size_t)len };
	if (m->n_fds > 0) {
		struct cmsghdr *c;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * m->n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * m->n_fds);
		memcpy(CMSG_DATA(c), m->fds, sizeof(int) * m->n_fds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != len)
		return -EIO;
	return 0;
}

int cordon_serve_recv(int sock, struct cordon_serve_msg *ret, struct cordon_diag *diag)
{
	_cleanup_free_ uint8_t *buf = malloc(CORDON_SERVE_MAX_MSG + 1);
	union {
		char buf[CMSG_SPACE(sizeof(int) * CORDON_SERVE_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof(control.buf)
	};
	int fds[CORDON_SERVE_MAX_FDS];
	unsigned n_fds = 0;
	ssize_t n;
	int r;

	if (!buf)
		return -ENOMEM;
	iov = (struct iovec){ .iov_base = buf, .iov_len = CORDON_SERVE_MAX_MSG + 1 };
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* Collect every fd first, so an error path closes them all. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n_fds < CORDON_SERVE_MAX_FDS)
				fds[n_fds++] = fd;
			else
				close(fd);
		}
	}
	if (n == 0 && n_fds == 0)
		return -ECONNRESET;
	r = 0;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		r = cordon_diag_set(diag, EBADMSG, "serve", "malformed message: truncated packet or control data");
	if (r >= 0)
		r = cordon_serve_decode(buf, (size_t)n, ret, diag);
	if (r >= 0 && n_fds > max_fds(ret->type)) {
		r = cordon_diag_set(diag, EBADMSG, "serve", "malformed message: %u fds on a %s message", n_fds,
				    cordon_serve_type_name(ret->type));
		free(ret->json);
		ret->json = NULL;
		free(ret->roots);
		ret->roots = NULL;
	}
	if (r < 0) {
		for (unsigned i = 0; i < n_fds; i++)
			close(fds[i]);
		return r;
	}
	memcpy(ret->fds, fds, sizeof(int) * n_fds);
	ret->n_fds = n_fds;
	return 0;
}
