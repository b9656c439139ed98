/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The approval webhook's URL: see webhook-url.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"
#include "webhook-url.h"

int cordon_webhook_url_parse(const char *s, struct cordon_webhook_url *ret, char *err, size_t errsize)
{
	struct cordon_webhook_url u = { .port = 80 };
	char host[24];
	const char *p, *hend, *slash;
	size_t hl;

	if (!s || strlen(s) >= CORDON_WEBHOOK_URL_MAX) {
		snprintf(err, errsize, "must be an http:// URL of at most %d bytes", CORDON_WEBHOOK_URL_MAX - 1);
		return -EINVAL;
	}
	if (strncasecmp(s, "https://", 8) == 0) {
		snprintf(err, errsize,
			 "https is not supported (cordond has no TLS client): use a local relay's "
			 "http://127.0.0.1 URL");
		return -EINVAL;
	}
	if (strncmp(s, "http://", 7) != 0) {
		snprintf(err, errsize, "must start with http:// (got \"%.40s\")", s);
		return -EINVAL;
	}
	p = s + 7;
	slash = strchr(p, '/');
	hend = slash ? slash : p + strlen(p);
	hl = (size_t)(hend - p);
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errsize, "has no host, or a host longer than %zu bytes", sizeof(host) - 1);
		return -EINVAL;
	}
	memcpy(host, p, hl);
	host[hl] = 0;
	{
		char *colon = strchr(host, ':');
		uint64_t port;

		if (colon) {
			*colon = 0;
			if (parse_u64(colon + 1, &port) < 0 || port == 0 || port > 65535) {
				snprintf(err, errsize, "port \"%.8s\" is not 1 to 65535", colon + 1);
				return -EINVAL;
			}
			u.port = (uint16_t)port;
		}
	}
	if (inet_pton(AF_INET, host, &u.addr) != 1) {
		snprintf(err, errsize, "host \"%s\" is not an IPv4 loopback address (cordond resolves no names)", host);
		return -EINVAL;
	}
	if ((ntohl(u.addr.s_addr) >> 24) != 127) {
		snprintf(err, errsize,
			 "host %s is not on the loopback (127.0.0.0/8): a remote endpoint needs a local relay", host);
		return -EINVAL;
	}
	snprintf(u.host, sizeof(u.host), "%s:%u", host, (unsigned)u.port);
	snprintf(u.path, sizeof(u.path), "%s", slash ? slash : "/");
	for (const char *c = u.path; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || *c == '#') {
			snprintf(err, errsize, "the path may hold printable ASCII only, no space or '#'");
			return -EINVAL;
		}
	*ret = u;
	return 0;
}
