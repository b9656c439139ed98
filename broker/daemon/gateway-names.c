/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tool and prompt names toward a session: prefixed in the multiplexed view,
 * the connector's own in a session bound to one connector. */
#include <errno.h>
#include <stdio.h>
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
