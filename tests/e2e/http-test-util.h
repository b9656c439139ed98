/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Raw HTTP/1.1 answers for the MCP-over-HTTP e2e tests (test-mcp-http.c,
 * test-mcp-http-tcp.c): the status, the head, a de-chunked body, one header's
 * value, and reading a connection to its end. Test code: a failure asserts. */

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct hresp {
	int status;
	char *head; /* status line and headers */
	char *body; /* de-chunked */
};

static inline void hresp_done(struct hresp *r)
{
	free(r->head);
	free(r->body);
	*r = (struct hresp){};
}

/* The value of header name in r (a static copy), or NULL. */
static inline const char *header(const struct hresp *r, const char *name)
{
	static char v[256];
	size_t n = strlen(name);

	for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n"))
		if (!strncasecmp(p + 2, name, n) && p[2 + n] == ':') {
			const char *s = p + 3 + n, *e = strstr(s, "\r\n");

			while (*s == ' ')
				s++;
			snprintf(v, sizeof(v), "%.*s", (int)(e ? e - s : (long)strlen(s)), s);
			return v;
		}
	return NULL;
}

static inline char *dechunk(const char *p)
{
	size_t cap = strlen(p) + 1, len = 0;
	char *out = malloc(cap);

	assert_non_null(out);
	for (;;) {
		char *end;
		unsigned long n = strtoul(p, &end, 16);

		if (end == p || !(p = strstr(end, "\r\n")))
			break;
		p += 2;
		if (n == 0 || strlen(p) < n)
			break;
		memcpy(out + len, p, n);
		len += n;
		p += n + 2;
	}
	out[len] = 0;
	return out;
}

/* Reads fd to EOF (30 s at most between bytes: the test fails otherwise). */
static inline char *read_all(int fd)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);

	assert_non_null(buf);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t k;

		assert_int_equal(poll(&pfd, 1, 30000), 1);
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		k = read(fd, buf + len, cap - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = 0;
	return buf;
}
