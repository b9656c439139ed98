/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tool and prompt names and resource URIs toward a session: prefixed in
 * the multiplexed view, the connector's own in a session bound to one
 * connector. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway-names.h"

int gateway_name_route(const char *bound, const char *name, char ret_connector[CORDON_CONNECTOR_ID_MAX + 1],
		       const char **ret_item)
{
	const char *sep;

	if (!name || !*name)
		return -ENOENT;
	if (bound && *bound) {
		if (strlen(bound) > CORDON_CONNECTOR_ID_MAX)
			return -ENOENT;
		strcpy(ret_connector, bound);
		*ret_item = name;
		return 0;
	}
	sep = strstr(name, "__");
	if (!sep || sep == name || (size_t)(sep - name) > CORDON_CONNECTOR_ID_MAX || !sep[2])
		return -ENOENT;
	memcpy(ret_connector, name, (size_t)(sep - name));
	ret_connector[sep - name] = 0;
	*ret_item = sep + 2;
	return 0;
}

int gateway_name_show(const char *bound, const char *connector, const char *item, char *buf, size_t size)
{
	int n;

	if (bound && *bound)
		n = snprintf(buf, size, "%s", item);
	else
		n = snprintf(buf, size, "%s__%s", connector, item);
	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return 0;
}

char *gateway_uri_show(const char *bound, const char *connector, const char *uri)
{
	char *t;

	if (bound && *bound)
		return strdup(uri);
	return asprintf(&t, GATEWAY_URI_PREFIX "%s:%s", connector, uri) < 0 ? NULL : t;
}

void gateway_uri_show_in(const char *bound, const char *connector, json_t *o, const char *key)
{
	const char *uri = json_string_value(json_object_get(o, key));
	char *t = uri ? gateway_uri_show(bound, connector, uri) : NULL;

	if (t)
		json_object_set_new(o, key, json_string(t));
	free(t);
}

void gateway_content_show_uri(const char *bound, const char *connector, json_t *item)
{
	const char *type = json_string_value(json_object_get(item, "type"));

	if (!type)
		return;
	if (!strcmp(type, "resource_link"))
		gateway_uri_show_in(bound, connector, item, "uri");
	else if (!strcmp(type, "resource"))
		gateway_uri_show_in(bound, connector, json_object_get(item, "resource"), "uri");
}
