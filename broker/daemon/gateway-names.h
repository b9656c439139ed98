/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How a session names a connector's tools and prompts (gateway-names.c).
 * The multiplexed view (no binding) names them `<connector>__<item>`; a
 * session bound to one connector (cordon/bind, before initialize) uses that
 * connector's own names and reaches no other connector. Pure string work:
 * whether the connector and the item exist is the caller's question. Used
 * by gateway-call.c and gateway-pass.c. */

#include <stddef.h>

#include <jansson.h>

#include "profile.h"

/* The multiplexed view's resource URIs: GATEWAY_URI_PREFIX "<connector>:"
 * and the connector's own URI unchanged (gateway-pass.c says why). */
#define GATEWAY_URI_PREFIX "cordon+"

/* The connector and item a client's name addresses. bound: the session's
 * connector ("" or NULL: multiplexed). Multiplexed: the name splits at its
 * first "__" (connector before, at most CORDON_CONNECTOR_ID_MAX bytes;
 * item after, not empty). Bound: the whole name is the item, and the
 * connector is bound. Returns 0 (ret_connector filled, *ret_item pointing
 * into name), or -ENOENT when name addresses nothing (NULL, empty, no
 * prefix in the multiplexed view). */
int gateway_name_route(const char *bound, const char *name, char ret_connector[CORDON_CONNECTOR_ID_MAX + 1],
		       const char **ret_item);

/* The name a client sees for connector's item: `<connector>__<item>`, or
 * the item itself in a session bound to connector. Returns 0, or
 * -ENAMETOOLONG when it does not fit size (buf then holds ""). */
int gateway_name_show(const char *bound, const char *connector, const char *item, char *buf, size_t size);

/* The URI a client sees for connector's resource uri: the uri itself in a
 * session bound to connector, GATEWAY_URI_PREFIX "<connector>:<uri>" in the
 * multiplexed view. Returns a new string (free()), or NULL when out of
 * memory. */
char *gateway_uri_show(const char *bound, const char *connector, const char *uri);

/* The string member key of object o (a resource, a template, a content
 * item), rewritten as gateway_uri_show() says; left as it is when o has no
 * such string or memory runs out. */
void gateway_uri_show_in(const char *bound, const char *connector, json_t *o, const char *key);

/* One content item of a result from connector (a tools/call content
 * element, a prompt message's content): the `uri` of a `resource_link`
 * item and of an embedded `resource` item's resource, rewritten as
 * gateway_uri_show() says. Anything else, or an item without a string uri,
 * is left as it is. */
void gateway_content_show_uri(const char *bound, const char *connector, json_t *item);
