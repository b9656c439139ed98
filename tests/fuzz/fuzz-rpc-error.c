/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the relay of a connector's JSON-RPC error
 * (rpc-error.h). The input is decoded by canon as the worker decodes a
 * connector's line, then taken as the `error` member. Properties:
 *   - relaying never crashes and fails only with -EBADMSG or -ENOMEM;
 *   - a relayed error has exactly code, message and perhaps data; the code
 *     is the connector's; the message is at most 4096 bytes of valid UTF-8
 *     (jansson checks it), the connector's own when that was within bounds;
 *   - data is at most 16384 bytes of compact JSON, or the dropped marker,
 *     and never carries cordon's refused_by marker at its top level;
 *   - the line cordond would write, escaped by cordon_json_escape_controls,
 *     holds no DEL or C1 byte and decodes to the same value.
 * A violated property aborts, so libFuzzer reports it as a crash. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "rpc-error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void violated(const char *what)
{
	fprintf(stderr, "fuzz-rpc-error: property violated: %s\n", what);
	abort();
}

static void check_line(const json_t *out)
{
	char *t = json_dumps(out, JSON_COMPACT);
	char *e;
	size_t n = 0;
	json_t *back;

	if (!t)
		return;
	e = cordon_json_escape_controls(t, strlen(t), &n);
	if (e) {
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)e[i] == 0x7f ||
			    ((unsigned char)e[i] == 0xc2 && i + 1 < n && ((unsigned char)e[i + 1] & 0xe0) == 0x80))
				violated("a raw control byte after escaping");
		back = json_loadb(e, n, 0, NULL);
		if (!back || !json_equal(back, (json_t *)out))
			violated("escaping changed the value");
		json_decref(back);
	}
	free(e);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_diag d = {};
	json_t *in = NULL, *out = NULL;
	const json_t *m, *dv;
	int r;

	if (cordon_canon_decode((const char *)data, size, NULL, &in, &d) < 0)
		return 0;
	r = cordon_rpc_error_relay(in, &out, &d);
	if (r < 0) {
		if (r != -EBADMSG && r != -ENOMEM)
			violated("an undocumented errno");
		json_decref(in);
		return 0;
	}
	m = json_object_get(out, "message");
	dv = json_object_get(out, "data");
	if (json_object_size(out) != (dv ? 3u : 2u) || !json_is_string(m))
		violated("not {code, message[, data]}");
	if (!json_equal(json_object_get(out, "code"), json_object_get(in, "code")))
		violated("the code changed");
	if (json_string_length(m) > CORDON_RPC_ERROR_MESSAGE_MAX)
		violated("message beyond the bound");
	if (json_string_length(json_object_get(in, "message")) <= CORDON_RPC_ERROR_MESSAGE_MAX &&
	    !json_equal(m, json_object_get(in, "message")))
		violated("a message within the bound changed");
	if (dv) {
		char *t = json_dumps(dv, JSON_COMPACT | JSON_ENCODE_ANY);

		if (t && strlen(t) > CORDON_RPC_ERROR_DATA_MAX)
			violated("data beyond the bound");
		free(t);
		if (json_is_object(dv) && json_object_get(dv, CORDON_REFUSED_BY_KEY))
			violated("the connector's data carries cordon's marker");
	}
	check_line(out);
	json_decref(out);
	json_decref(in);
	return 0;
}
