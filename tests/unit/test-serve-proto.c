/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launcher helper protocol (launcher/lib/serve-proto.c): round trips of
 * every message type, every rejection of malformed input with its message,
 * fd passing over a real socketpair, truncation and EOF. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "serve-proto.h"

#define BUFSZ (CORDON_SERVE_MAX_MSG + 64)

static uint8_t *buf;

static int setup(void **state)
{
	(void)state;
	buf = malloc(BUFSZ);
	return buf ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(buf);
	return 0;
}

static struct cordon_serve_msg *msg_new(uint16_t type, uint32_t id)
{
	struct cordon_serve_msg *m = malloc(sizeof(*m));

	assert_non_null(m);
	cordon_serve_msg_init(m, type, id);
	return m;
}

/* A message to send with room for every root a test fills in; msg_free()
 * frees the roots with the message (cordon_serve_msg_clear()). */
static struct cordon_serve_msg *msg_new_roots(uint16_t type, uint32_t id)
{
	struct cordon_serve_msg *m = msg_new(type, id);

	m->roots = calloc(CORDON_SERVE_MAX_ROOTS, sizeof(*m->roots));
	assert_non_null(m->roots);
	return m;
}

static void msg_free(struct cordon_serve_msg *m)
{
	cordon_serve_msg_clear(m);
	free(m);
}

/* Encode, decode, compare every field the type carries. */
static struct cordon_serve_msg *round_trip(const struct cordon_serve_msg *in)
{
	struct cordon_serve_msg *out = malloc(sizeof(*out));
	struct cordon_diag d = { 0 };
	int n;

	assert_non_null(out);
	n = cordon_serve_encode(in, buf, BUFSZ);
	assert_true(n >= 16);
	assert_int_equal(cordon_serve_decode(buf, (size_t)n, out, &d), 0);
	assert_int_equal(out->type, in->type);
	assert_int_equal(out->id, in->id);
	assert_int_equal(out->n_fds, 0);
	return out;
}

static void test_round_trip_probe_and_kill(void **state)
{
	struct cordon_serve_msg *in = msg_new(CORDON_SERVE_PROBE, 1), *out;

	(void)state;
	out = round_trip(in);
	assert_null(out->json);
	msg_free(out);
	msg_free(in);

	in = msg_new(CORDON_SERVE_KILL, 0xfffffffe);
	in->instance = 0x01020304;
	out = round_trip(in);
	assert_int_equal(out->instance, 0x01020304);
	msg_free(out);
	msg_free(in);
}

static void test_round_trip_spawn(void **state)
{
	struct cordon_serve_msg *in = msg_new_roots(CORDON_SERVE_SPAWN, 42), *out;

	(void)state;
	snprintf(in->connector, sizeof(in->connector), "filesystem");
	snprintf(in->tag, sizeof(in->tag), "s1-filesystem-3");
	in->n_roots = 3;
	for (unsigned i = 0; i < 3; i++) {
		snprintf(in->roots[i].host, sizeof(in->roots[i].host), "/srv/projects/p%u", i);
		if (i == 1)
			in->roots[i].sandbox[0] = '\0'; /* an empty field round-trips too */
		else
			snprintf(in->roots[i].sandbox, sizeof(in->roots[i].sandbox), "/work/%u", i);
		in->roots[i].access = i;
	}
	out = round_trip(in);
	assert_string_equal(out->connector, "filesystem");
	assert_string_equal(out->tag, "s1-filesystem-3");
	assert_int_equal(out->n_roots, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_string_equal(out->roots[i].host, in->roots[i].host);
		assert_string_equal(out->roots[i].sandbox, in->roots[i].sandbox);
		assert_int_equal(out->roots[i].access, i);
	}
	msg_free(out);

	/* The longest fields that are still valid. */
	memset(in->connector, 'a', 63);
	in->connector[63] = '\0';
	in->n_roots = CORDON_SERVE_MAX_ROOTS;
	for (unsigned i = 0; i < CORDON_SERVE_MAX_ROOTS; i++) {
		snprintf(in->roots[i].host, sizeof(in->roots[i].host), "/h%u", i);
		memset(in->roots[i].sandbox, 'x', 2000);
		in->roots[i].sandbox[0] = '/';
		in->roots[i].sandbox[2000] = '\0';
		in->roots[i].access = 2;
	}
	out = round_trip(in);
	assert_int_equal(strlen(out->connector), 63);
	assert_int_equal(out->n_roots, CORDON_SERVE_MAX_ROOTS);
	assert_int_equal(strlen(out->roots[31].sandbox), 2000);
	msg_free(out);
	msg_free(in);
}

static void test_round_trip_replies(void **state)
{
	static const uint16_t types[] = { CORDON_SERVE_PROBE_REPLY, CORDON_SERVE_SPAWN_REPLY, CORDON_SERVE_KILL_REPLY,
					  CORDON_SERVE_PROFILES_REPLY, CORDON_SERVE_CONFIG_READ_REPLY };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		struct cordon_serve_msg *in = msg_new(types[i], 7), *out;

		in->status = -EPERM;
		in->instance = 9;
		in->diag.error = EPERM;
		snprintf(in->diag.step, sizeof(in->diag.step), "root");
		snprintf(in->diag.message, sizeof(in->diag.message), "root '/etc' is not beneath the ceiling");
		in->json = strdup("{\"a\":1}");
		out = round_trip(in);
		assert_int_equal(out->status, -EPERM);
		assert_int_equal(out->instance, 9);
		assert_int_equal(out->diag.error, EPERM);
		assert_string_equal(out->diag.step, "root");
		assert_string_equal(out->diag.message, in->diag.message);
		assert_string_equal(out->json, "{\"a\":1}");
		msg_free(out);
		msg_free(in);
	}
	/* Success with no JSON decodes to an empty string, not NULL. */
	{
		struct cordon_serve_msg *in = msg_new(CORDON_SERVE_KILL_REPLY, 8), *out;

		out = round_trip(in);
		assert_int_equal(out->status, 0);
		assert_string_equal(out->json, "");
		msg_free(out);
		msg_free(in);
	}
}

/* PROFILES carries the set as one JSON field. */
static void test_round_trip_profiles(void **state)
{
	struct cordon_serve_msg *in = msg_new(CORDON_SERVE_PROFILES, 12), *out;

	(void)state;
	in->json = strdup("{\"cat\":\"0123\"}");
	out = round_trip(in);
	assert_int_equal(out->type, CORDON_SERVE_PROFILES);
	assert_int_equal(out->id, 12);
	assert_string_equal(out->json, in->json);
	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_PROFILES), "profiles");
	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_PROFILES_REPLY), "profiles-reply");
	msg_free(out);
	msg_free(in);
}

/* CONFIG_READ carries nothing (the helper knows its one file); its reply
 * carries the file's text in the JSON field, up to the config bound, and
 * a refusal's diag. A request with any payload is refused: no request can
 * name a file. */
static void test_round_trip_config_read(void **state)
{
	struct cordon_serve_msg *in = msg_new(CORDON_SERVE_CONFIG_READ, 21), *out;
	struct cordon_diag d = { 0 };
	struct cordon_serve_msg m;
	int n;

	(void)state;
	out = round_trip(in);
	assert_int_equal(out->type, CORDON_SERVE_CONFIG_READ);
	assert_int_equal(out->id, 21);
	assert_null(out->json);
	msg_free(out);
	n = cordon_serve_encode(in, buf, BUFSZ);
	assert_int_equal(n, 16); /* the header alone */
	msg_free(in);

	/* A payload on the request (e.g. a path) is trailing bytes. */
	memcpy(buf + 16, "\x05\0\0\0/etc/", 9);
	buf[12] = 9;
	assert_int_equal(cordon_serve_decode(buf, 25, &m, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "trailing bytes"));

	/* The reply: the file's bytes, the largest the bound allows. */
	in = msg_new(CORDON_SERVE_CONFIG_READ_REPLY, 21);
	in->json = malloc(CORDON_SERVE_MAX_CONFIG + 1);
	assert_non_null(in->json);
	memset(in->json, 'x', CORDON_SERVE_MAX_CONFIG);
	memcpy(in->json, "approval_wait: 5s\n#", 19);
	in->json[CORDON_SERVE_MAX_CONFIG] = '\0';
	out = round_trip(in);
	assert_int_equal(out->status, 0);
	assert_int_equal(strlen(out->json), CORDON_SERVE_MAX_CONFIG);
	assert_memory_equal(out->json, "approval_wait: 5s\n#", 19);
	msg_free(out);
	msg_free(in);

	/* A refusal names the file and the rule. */
	in = msg_new(CORDON_SERVE_CONFIG_READ_REPLY, 22);
	in->status = -ELOOP;
	in->diag.error = ELOOP;
	snprintf(in->diag.step, sizeof(in->diag.step), "config");
	snprintf(in->diag.message, sizeof(in->diag.message),
		 "configuration '/etc/cordon/cordond.yaml' is a symlink; refusing it");
	out = round_trip(in);
	assert_int_equal(out->status, -ELOOP);
	assert_int_equal(out->diag.error, ELOOP);
	assert_string_equal(out->diag.step, "config");
	assert_string_equal(out->diag.message, in->diag.message);
	assert_string_equal(out->json, "");
	msg_free(out);
	msg_free(in);

	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_CONFIG_READ), "config-read");
	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_CONFIG_READ_REPLY), "config-read-reply");
}

static void test_round_trip_events(void **state)
{
	static const uint16_t types[] = { CORDON_SERVE_EXITED, CORDON_SERVE_NET_DENIED };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct cordon_serve_msg *in = msg_new(types[i], 0), *out;

		in->instance = 3;
		in->wait_status = 9; /* killed by SIGKILL */
		in->json = strdup("{\"exit\":{\"how\":\"signaled\"}}");
		out = round_trip(in);
		assert_int_equal(out->instance, 3);
		assert_int_equal(out->wait_status, 9);
		assert_string_equal(out->json, in->json);
		msg_free(out);
		msg_free(in);
	}
	/* The largest JSON that is allowed. */
	{
		struct cordon_serve_msg *in = msg_new(CORDON_SERVE_EXITED, 0), *out;

		in->json = malloc(CORDON_SERVE_MAX_JSON + 1);
		assert_non_null(in->json);
		memset(in->json, ' ', CORDON_SERVE_MAX_JSON);
		in->json[CORDON_SERVE_MAX_JSON] = '\0';
		out = round_trip(in);
		assert_int_equal(strlen(out->json), CORDON_SERVE_MAX_JSON);
		msg_free(out);
		msg_free(in);
	}
}

static void test_encode_rejections(void **state)
{
	struct cordon_serve_msg *m = msg_new_roots(0, 1);

	(void)state;
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL); /* type 0 */
	m->type = _CORDON_SERVE_TYPE_MAX;
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	m->type = CORDON_SERVE_PROBE;
	m->n_fds = 1; /* a probe carries no fds */
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	m->n_fds = 0;
	assert_int_equal(cordon_serve_encode(m, buf, 15), -EMSGSIZE);
	assert_int_equal(cordon_serve_encode(m, buf, 16), 16);

	m->type = CORDON_SERVE_SPAWN;
	snprintf(m->connector, sizeof(m->connector), "cat");
	m->n_roots = CORDON_SERVE_MAX_ROOTS + 1;
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	m->n_roots = 1;
	snprintf(m->roots[0].host, sizeof(m->roots[0].host), "/a");
	m->roots[0].access = 3;
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	m->roots[0].access = 0;
	memset(m->connector, 'a', sizeof(m->connector)); /* no NUL within the field */
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	snprintf(m->connector, sizeof(m->connector), "cat");
	/* 32 roots of two 4095-byte paths: more than one message holds. */
	m->n_roots = CORDON_SERVE_MAX_ROOTS;
	for (unsigned i = 0; i < CORDON_SERVE_MAX_ROOTS; i++) {
		memset(m->roots[i].host, 'h', CORDON_SERVE_MAX_STR - 1);
		m->roots[i].host[CORDON_SERVE_MAX_STR - 1] = '\0';
		memset(m->roots[i].sandbox, 's', CORDON_SERVE_MAX_STR - 1);
		m->roots[i].sandbox[CORDON_SERVE_MAX_STR - 1] = '\0';
		m->roots[i].access = 0;
	}
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EMSGSIZE);

	cordon_serve_msg_clear(m);
	cordon_serve_msg_init(m, CORDON_SERVE_EXITED, 0);
	m->json = malloc(CORDON_SERVE_MAX_JSON + 2);
	assert_non_null(m->json);
	memset(m->json, ' ', CORDON_SERVE_MAX_JSON + 1);
	m->json[CORDON_SERVE_MAX_JSON + 1] = '\0';
	assert_int_equal(cordon_serve_encode(m, buf, BUFSZ), -EINVAL);
	msg_free(m);
}

/* Helpers to build raw packets. */
struct pkt {
	uint8_t b[4096];
	size_t n;
};

static void p_u32(struct pkt *p, uint32_t v)
{
	p->b[p->n++] = (uint8_t)v;
	p->b[p->n++] = (uint8_t)(v >> 8);
	p->b[p->n++] = (uint8_t)(v >> 16);
	p->b[p->n++] = (uint8_t)(v >> 24);
}

static void p_field(struct pkt *p, const void *data, uint32_t n)
{
	p_u32(p, n);
	memcpy(p->b + p->n, data, n);
	p->n += n;
}

static void p_int(struct pkt *p, uint32_t v)
{
	p_u32(p, 4);
	p_u32(p, v);
}

static void p_hdr(struct pkt *p, uint16_t type)
{
	p->n = 0;
	p_u32(p, CORDON_SERVE_MAGIC);
	p->b[p->n++] = (uint8_t)type;
	p->b[p->n++] = (uint8_t)(type >> 8);
	p->b[p->n++] = 0;
	p->b[p->n++] = 0;
	p_u32(p, 77);
	p_u32(p, 0);
}

static void p_done(struct pkt *p)
{
	uint32_t pl = (uint32_t)(p->n - 16);

	memcpy(p->b + 12, (uint8_t[]){ (uint8_t)pl, (uint8_t)(pl >> 8), (uint8_t)(pl >> 16), (uint8_t)(pl >> 24) }, 4);
}

static void assert_bad(const uint8_t *b, size_t n, const char *want)
{
	struct cordon_serve_msg m;
	struct cordon_diag d = { 0 };

	assert_int_equal(cordon_serve_decode(b, n, &m, &d), -EBADMSG);
	assert_int_equal(d.error, EBADMSG);
	assert_string_equal(d.step, "serve");
	if (!strstr(d.message, want))
		fail_msg("diag '%s' does not say '%s'", d.message, want);
}

static void spawn_prefix(struct pkt *p)
{
	p_hdr(p, CORDON_SERVE_SPAWN);
	p_field(p, "cat", 3);
	p_field(p, "t", 1);
}

static void test_decode_rejections_header(void **state)
{
	struct pkt p;

	(void)state;
	p_hdr(&p, CORDON_SERVE_PROBE);
	p_done(&p);
	assert_bad(p.b, 15, "15 bytes (header is 16");
	assert_bad(p.b, 0, "0 bytes");
	assert_bad(buf, CORDON_SERVE_MAX_MSG + 1, "limit 262144");
	p.b[0] ^= 1;
	assert_bad(p.b, p.n, "bad magic");
	p.b[0] ^= 1;
	p.b[7] = 1;
	assert_bad(p.b, p.n, "unknown flags");
	p.b[7] = 0;
	p.b[4] = 0;
	assert_bad(p.b, p.n, "unknown type 0");
	p.b[4] = _CORDON_SERVE_TYPE_MAX;
	assert_bad(p.b, p.n, "unknown type 13");
	p.b[4] = 0;
	p.b[5] = 1; /* type 256 */
	assert_bad(p.b, p.n, "unknown type 256");
	p.b[5] = 0;
	p.b[4] = CORDON_SERVE_PROBE;
	p.b[12] = 1; /* payload length 1, none follows */
	assert_bad(p.b, p.n, "payload length 1 but 0 bytes follow");
	/* A PROBE with a payload. */
	p_hdr(&p, CORDON_SERVE_PROBE);
	p_int(&p, 1);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'end' at byte 16: trailing bytes");
}

static void test_decode_rejections_fields(void **state)
{
	struct pkt p;

	(void)state;
	/* Truncated length: the field's u32 length is cut. */
	p_hdr(&p, CORDON_SERVE_SPAWN);
	p.b[p.n++] = 3;
	p.b[p.n++] = 0;
	p_done(&p);
	assert_bad(p.b, p.n, "field 'connector' at byte 16: truncated length");
	/* Truncated value. */
	p_hdr(&p, CORDON_SERVE_SPAWN);
	p_u32(&p, 10);
	memcpy(p.b + p.n, "cat", 3);
	p.n += 3;
	p_done(&p);
	assert_bad(p.b, p.n, "field 'connector' at byte 16: truncated value");
	/* Too long: the connector field holds at most 63 bytes. */
	{
		char c[64];

		memset(c, 'a', sizeof(c));
		p_hdr(&p, CORDON_SERVE_SPAWN);
		p_field(&p, c, 64);
		p_done(&p);
		assert_bad(p.b, p.n, "field 'connector' at byte 16: too long");
	}
	/* NUL inside a string. */
	p_hdr(&p, CORDON_SERVE_SPAWN);
	p_field(&p, "c\0t", 3);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'connector' at byte 16: contains NUL");
	/* Missing tag. */
	p_hdr(&p, CORDON_SERVE_SPAWN);
	p_field(&p, "cat", 3);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'tag' at byte 23: truncated length");
	/* n_roots not a 4-byte integer. */
	spawn_prefix(&p);
	p_field(&p, "\x01\x00", 2);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'n_roots' at byte 28: not a 4-byte integer");
	/* Too many roots. */
	spawn_prefix(&p);
	p_int(&p, CORDON_SERVE_MAX_ROOTS + 1);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'n_roots' at byte 28: too many roots");
	/* Fewer roots than announced. */
	spawn_prefix(&p);
	p_int(&p, 2);
	p_field(&p, "/a", 2);
	p_field(&p, "", 0);
	p_int(&p, 0);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'root.host'");
	/* Unknown access. */
	spawn_prefix(&p);
	p_int(&p, 1);
	p_field(&p, "/a", 2);
	p_field(&p, "", 0);
	p_int(&p, 3);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'root.access' at byte 46: unknown access");
	/* KILL: an 8-byte integer where 4 are expected. */
	p_hdr(&p, CORDON_SERVE_KILL);
	p_field(&p, "\x01\x00\x00\x00\x00\x00\x00\x00", 8);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'instance' at byte 16: too long");
}

static void reply_prefix(struct pkt *p, uint16_t type, uint32_t status, uint32_t err)
{
	p_hdr(p, type);
	p_int(p, status);
	p_int(p, 1);
	p_int(p, err);
	p_field(p, "step", 4);
	p_field(p, "msg", 3);
}

static void test_decode_rejections_replies(void **state)
{
	struct pkt p;

	(void)state;
	reply_prefix(&p, CORDON_SERVE_SPAWN_REPLY, 1, 0);
	p_field(&p, "{}", 2);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'status' at byte 16: not 0 or -errno");
	reply_prefix(&p, CORDON_SERVE_SPAWN_REPLY, (uint32_t)-5000, 0);
	p_field(&p, "{}", 2);
	p_done(&p);
	assert_bad(p.b, p.n, "not 0 or -errno");
	reply_prefix(&p, CORDON_SERVE_KILL_REPLY, (uint32_t)-EPERM, 5000);
	p_field(&p, "{}", 2);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'diag.error' at byte 32: not an errno");
	reply_prefix(&p, CORDON_SERVE_PROBE_REPLY, 0, 0);
	p_field(&p, "{\0}", 3);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'json' at byte 55: contains NUL");
	/* A step longer than the diag holds. */
	p_hdr(&p, CORDON_SERVE_PROBE_REPLY);
	p_int(&p, 0);
	p_int(&p, 0);
	p_int(&p, 0);
	p_field(&p, "0123456789012345678901234567890123", 34);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'diag.step' at byte 40: too long");
	/* EXITED without its JSON. */
	p_hdr(&p, CORDON_SERVE_EXITED);
	p_int(&p, 1);
	p_int(&p, 0);
	p_done(&p);
	assert_bad(p.b, p.n, "field 'json' at byte 32: truncated length");
	/* JSON longer than CORDON_SERVE_MAX_JSON. */
	{
		size_t n = 16;

		memcpy(buf, p.b, 16);
		buf[4] = CORDON_SERVE_NET_DENIED;
		memcpy(buf + n, "\x04\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00", 16);
		n += 16;
		{
			uint32_t l = CORDON_SERVE_MAX_JSON + 1;

			memcpy(buf + n, (uint8_t[]){ (uint8_t)l, (uint8_t)(l >> 8), (uint8_t)(l >> 16), 0 }, 4);
		}
		n += 4;
		memset(buf + n, ' ', CORDON_SERVE_MAX_JSON + 1);
		n += CORDON_SERVE_MAX_JSON + 1;
		{
			uint32_t pl = (uint32_t)(n - 16);

			memcpy(buf + 12, (uint8_t[]){ (uint8_t)pl, (uint8_t)(pl >> 8), (uint8_t)(pl >> 16), 0 }, 4);
		}
		assert_bad(buf, n, "field 'json' at byte 32: too long");
	}
}

/* Every prefix of a valid message is refused, never read past. */
static void test_decode_every_prefix(void **state)
{
	struct cordon_serve_msg *m = msg_new_roots(CORDON_SERVE_SPAWN, 5);
	struct cordon_serve_msg out;
	struct cordon_diag d;
	int n;

	(void)state;
	snprintf(m->connector, sizeof(m->connector), "cat");
	m->n_roots = 2;
	snprintf(m->roots[0].host, sizeof(m->roots[0].host), "/a/b");
	snprintf(m->roots[1].host, sizeof(m->roots[1].host), "/c");
	n = cordon_serve_encode(m, buf, BUFSZ);
	assert_true(n > 16);
	for (int len = 0; len < n; len++) {
		/* Copy into an exact-size heap block so ASan catches overreads. */
		uint8_t *c = malloc((size_t)len + 1);

		assert_non_null(c);
		memcpy(c, buf, (size_t)len);
		if (len >= 16) {
			uint32_t pl = (uint32_t)(len - 16);

			memcpy(c + 12, (uint8_t[]){ (uint8_t)pl, (uint8_t)(pl >> 8), 0, 0 }, 4);
		}
		assert_int_equal(cordon_serve_decode(c, (size_t)len, &out, &d), -EBADMSG);
		free(c);
	}
	msg_free(m);
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void test_fd_passing(void **state)
{
	struct cordon_serve_msg *m = msg_new(CORDON_SERVE_SPAWN_REPLY, 11), *r = msg_new(0, 0);
	struct cordon_diag d = { 0 };
	int sv[2], pipes[3][2];
	char c;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pipe2(pipes[i], O_CLOEXEC), 0);
	m->instance = 4;
	m->json = strdup("{}");
	for (int i = 0; i < 3; i++)
		m->fds[i] = pipes[i][1];
	m->n_fds = 3;
	assert_int_equal(cordon_serve_send(sv[0], m), 0);
	/* The sender still owns its fds. */
	for (int i = 0; i < 3; i++)
		assert_true(fcntl(pipes[i][1], F_GETFD) >= 0);
	m->n_fds = 0;

	assert_int_equal(cordon_serve_recv(sv[1], r, &d), 0);
	assert_int_equal(r->type, CORDON_SERVE_SPAWN_REPLY);
	assert_int_equal(r->id, 11);
	assert_int_equal(r->instance, 4);
	assert_int_equal(r->n_fds, 3);
	for (int i = 0; i < 3; i++) {
		/* Received fds are CLOEXEC and are the very pipes sent. */
		assert_true(fcntl(r->fds[i], F_GETFD) & FD_CLOEXEC);
		assert_int_equal(write(r->fds[i], "x", 1), 1);
		assert_int_equal(read(pipes[i][0], &c, 1), 1);
		assert_int_equal(c, 'x');
	}
	msg_free(r);
	for (int i = 0; i < 3; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	msg_free(m);
	close(sv[0]);
	close(sv[1]);
}

static void send_raw(int sock, const void *b, size_t n, const int *fds, unsigned n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)b, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n_fds) {
		struct cmsghdr *h;

		memset(&c, 0, sizeof(c));
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(h), fds, sizeof(int) * n_fds);
	}
	assert_int_equal(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t)n);
}

static void test_fds_refused_and_closed(void **state)
{
	struct cordon_serve_msg *r = msg_new(0, 0);
	struct cordon_diag d = { 0 };
	struct pkt p;
	int sv[2], pp[2], five[5];
	size_t before;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	before = count_fds();

	/* An fd on a PROBE. */
	p_hdr(&p, CORDON_SERVE_PROBE);
	p_done(&p);
	send_raw(sv[0], p.b, p.n, &pp[0], 1);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "1 fds on a probe message"));
	assert_int_equal(count_fds(), before);

	/* Four fds on a SPAWN_REPLY (three allowed). */
	cordon_serve_msg_init(r, CORDON_SERVE_SPAWN_REPLY, 1);
	{
		int len = cordon_serve_encode(r, buf, BUFSZ);
		int four[4] = { pp[0], pp[1], pp[0], pp[1] };

		assert_true(len > 0);
		send_raw(sv[0], buf, (size_t)len, four, 4);
	}
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "4 fds on a spawn-reply message"));
	assert_int_equal(count_fds(), before);

	/* Five fds: more than the control buffer holds (MSG_CTRUNC). */
	for (int i = 0; i < 5; i++)
		five[i] = pp[i % 2];
	send_raw(sv[0], p.b, p.n, five, 5);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "truncated packet or control data"));
	assert_int_equal(count_fds(), before);

	/* Fds on a packet that does not decode. */
	p.b[0] = 0;
	send_raw(sv[0], p.b, p.n, &pp[1], 1);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "bad magic"));
	assert_int_equal(count_fds(), before);

	close(pp[0]);
	close(pp[1]);
	close(sv[0]);
	close(sv[1]);
	free(r);
}

static void test_truncated_packet_and_eof(void **state)
{
	struct cordon_serve_msg *r = msg_new(0, 0);
	struct cordon_diag d = { 0 };
	struct pkt p;
	int sv[2], sz = 1024 * 1024;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	/* Larger than the receive buffer (MAX_MSG + 1): MSG_TRUNC. */
	memset(buf, 0, BUFSZ);
	p_hdr(&p, CORDON_SERVE_PROBE);
	memcpy(buf, p.b, 16);
	send_raw(sv[0], buf, CORDON_SERVE_MAX_MSG + 2, NULL, 0);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "truncated packet"));
	/* Exactly one byte over the limit: not truncated, but too long. */
	send_raw(sv[0], buf, CORDON_SERVE_MAX_MSG + 1, NULL, 0);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -EBADMSG);
	assert_non_null(strstr(d.message, "limit 262144"));
	/* The socket still works after both. */
	p_done(&p);
	send_raw(sv[0], p.b, p.n, NULL, 0);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), 0);
	assert_int_equal(r->type, CORDON_SERVE_PROBE);
	assert_int_equal(r->id, 77);
	cordon_serve_msg_clear(r);
	/* EOF. */
	close(sv[0]);
	assert_int_equal(cordon_serve_recv(sv[1], r, &d), -ECONNRESET);
	close(sv[1]);
	free(r);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_PROBE), "probe");
	assert_string_equal(cordon_serve_type_name(CORDON_SERVE_NET_DENIED), "net-denied");
	assert_string_equal(cordon_serve_type_name(0), "unknown");
	assert_string_equal(cordon_serve_type_name(_CORDON_SERVE_TYPE_MAX), "unknown");
	assert_string_equal(cordon_serve_type_name(0xffff), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_probe_and_kill),
		cmocka_unit_test(test_round_trip_spawn),
		cmocka_unit_test(test_round_trip_replies),
		cmocka_unit_test(test_round_trip_profiles),
		cmocka_unit_test(test_round_trip_config_read),
		cmocka_unit_test(test_round_trip_events),
		cmocka_unit_test(test_encode_rejections),
		cmocka_unit_test(test_decode_rejections_header),
		cmocka_unit_test(test_decode_rejections_fields),
		cmocka_unit_test(test_decode_rejections_replies),
		cmocka_unit_test(test_decode_every_prefix),
		cmocka_unit_test(test_fd_passing),
		cmocka_unit_test(test_fds_refused_and_closed),
		cmocka_unit_test(test_truncated_packet_and_eof),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
