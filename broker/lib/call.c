/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "call.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "authz.h"
#include "canon.h"
#include "cleanup.h"

void cordon_tool_call_done(struct cordon_tool_call *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->arguments_jcs);
	free(c->idempotency_key);
	memset(c, 0, sizeof(*c));
}

static bool key_valid(const char *k, size_t n)
{
	if (n == 0 || n > CORDON_IDEMPOTENCY_KEY_MAX || strlen(k) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (k[i] < 0x21 || k[i] > 0x7e)
			return false;
	return true;
}

static int parse(const json_t *params, char **lifted, size_t lifted_len, struct cordon_tool_call *ret,
		 struct cordon_diag *diag)
{
	/* Consumed whatever happens (call.h). */
	_cleanup_free_ char *lifted_jcs = lifted ? TAKE_PTR(*lifted) : NULL;
	struct cordon_tool_call c = {};
	const json_t *name, *meta, *key;
	json_t *args = NULL;
	int r;

	if (!json_is_object(params))
		return cordon_diag_set(diag, EINVAL, "call", "params must be an object");
	name = json_object_get(params, "name");
	if (!json_is_string(name) || !cordon_tool_name_is_valid(json_string_value(name)))
		return cordon_diag_set(diag, EINVAL, "call", "params.name must be a valid tool name");
	if (lifted_jcs) {
		/* Admitted and canonicalised by cordon_canon_decode_lifted(). */
		if (json_object_get(params, "arguments"))
			return cordon_diag_set(diag, EINVAL, "call", "params.arguments given twice");
		c.arguments_jcs = TAKE_PTR(lifted_jcs);
		c.arguments_jcs_len = lifted_len;
		r = 0;
	} else {
		/* Absent arguments are {} everywhere (canon); null or a non-object is refused. */
		r = cordon_canon_arguments(json_object_get(params, "arguments"), &args, diag);
		if (r < 0)
			return r;
		r = cordon_canon_admit(args, NULL, diag);
		if (r >= 0)
			r = cordon_jcs_encode(args, &c.arguments_jcs, &c.arguments_jcs_len);
		json_decref(args);
	}
	if (r < 0) {
		cordon_tool_call_done(&c);
		if (diag && diag->error == 0)
			cordon_diag_set(diag, -r, "call", "params.arguments cannot be canonicalised");
		return r;
	}
	meta = json_object_get(params, "_meta");
	if (meta && !json_is_object(meta)) {
		cordon_tool_call_done(&c);
		return cordon_diag_set(diag, EINVAL, "call", "params._meta must be an object");
	}
	key = meta ? json_object_get(meta, CORDON_IDEMPOTENCY_META_KEY) : NULL;
	if (key) {
		if (!json_is_string(key) || !key_valid(json_string_value(key), json_string_length(key))) {
			cordon_tool_call_done(&c);
			return cordon_diag_set(diag, EINVAL, "call",
					       "params._meta[\"%s\"] must be 1..%d printable ASCII characters",
					       CORDON_IDEMPOTENCY_META_KEY, CORDON_IDEMPOTENCY_KEY_MAX);
		}
		c.idempotency_key = strdup(json_string_value(key));
	}
	c.name = strdup(json_string_value(name));
	if (!c.name || (key && !c.idempotency_key)) {
		cordon_tool_call_done(&c);
		return cordon_diag_set(diag, ENOMEM, "call", "out of memory");
	}
	*ret = c;
	return 0;
}

int cordon_tool_call_parse(const json_t *params, struct cordon_tool_call *ret, struct cordon_diag *diag)
{
	return parse(params, NULL, 0, ret, diag);
}

int cordon_tool_call_parse_lifted(const json_t *params, char **arguments_jcs, size_t arguments_jcs_len,
				  struct cordon_tool_call *ret, struct cordon_diag *diag)
{
	return parse(params, arguments_jcs, arguments_jcs_len, ret, diag);
}
