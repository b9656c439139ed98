/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The approval webhook's URL (webhook.h), checked by the configuration
 * loader and used by the client: http:// to an IPv4 loopback address only
 * (cordond has no TLS client and resolves no names). */

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define CORDON_WEBHOOK_URL_MAX 256

struct cordon_webhook_url {
	struct in_addr addr;
	uint16_t port;
	char host[32]; /* "127.0.0.1:8080", for the Host header */
	char path[CORDON_WEBHOOK_URL_MAX];
};

/* Parses "http://127.x.y.z[:port][/path]". Returns 0 and fills *ret, or
 * -EINVAL with a message in err (what is wrong and what to do). */
int cordon_webhook_url_parse(const char *s, struct cordon_webhook_url *ret, char *err, size_t errsize);
