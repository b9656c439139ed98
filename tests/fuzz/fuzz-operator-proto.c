/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the operator protocol (one request line) and the
 * operator surface's display helpers. Properties checked on every input:
 *   - decoding never crashes; a refusal carries a code from the protocol's
 *     vocabulary and a non-empty message; nothing is kept from it but the id;
 *   - an accepted request names an op of the table, its args are an object
 *     that passes the op's argument rules again after re-encoding
 *     (encode(decode(x)) decodes to the same op and equal args);
 *   - every response (ok or error) is exactly one line;
 *   - rendering the args (masked) and escaping the raw input never leave a
 *     hidden code point (bidi, zero-width, tags, controls) or invalid UTF-8
 *     in the output.
 * A violated property aborts, so libFuzzer reports it as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "operator-display.h"
#include "operator-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void violated(const char *what)
{
	fprintf(stderr, "fuzz-operator-proto: property violated: %s\n", what);
	abort();
}

static const char *const codes[] = {
	CORDON_OP_E_PARSE,	CORDON_OP_E_TOO_LARGE,	 CORDON_OP_E_INVALID,	  CORDON_OP_E_VERSION,
	CORDON_OP_E_UNKNOWN_OP, CORDON_OP_E_UNKNOWN_ARG, CORDON_OP_E_MISSING_ARG, CORDON_OP_E_BAD_ARG,
};

static void one_line(const char *s, size_t n)
{
	if (n == 0 || s[n - 1] != '\n' || memchr(s, '\n', n - 1) || strlen(s) != n)
		violated("response is not exactly one line");
}

/* Output of the display helpers: valid UTF-8 (NUL excluded) with no hidden
 * code point other than newline and tab. */
static void clean_text(const char *s)
{
	size_t n = strlen(s), bad;
	const unsigned char *p = (const unsigned char *)s;

	if (!cordon_utf8_valid(s, n, &bad))
		violated("display output is not valid UTF-8");
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l;

		if (p[i] < 0x80) {
			cp = p[i];
			l = 1;
		} else if ((p[i] & 0xe0) == 0xc0) {
			cp = ((uint32_t)(p[i] & 0x1f) << 6) | (p[i + 1] & 0x3f);
			l = 2;
		} else if ((p[i] & 0xf0) == 0xe0) {
			cp = ((uint32_t)(p[i] & 0x0f) << 12) | ((uint32_t)(p[i + 1] & 0x3f) << 6) | (p[i + 2] & 0x3f);
			l = 3;
		} else {
			cp = ((uint32_t)(p[i] & 0x07) << 18) | ((uint32_t)(p[i + 1] & 0x3f) << 12) |
			     ((uint32_t)(p[i + 2] & 0x3f) << 6) | (p[i + 3] & 0x3f);
			l = 4;
		}
		if (cp != '\n' && cp != '\t' && cordon_display_codepoint_is_hidden(cp))
			violated("display output contains a hidden code point");
		i += l;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_op_request req, again;
	struct cordon_op_error e = {};
	char *line = NULL, *text = NULL;
	size_t len;
	int r;

	r = cordon_op_request_decode((const char *)data, size, &req, &e);
	if (r < 0) {
		bool known = false;

		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			known |= e.code && strcmp(e.code, codes[i]) == 0;
		if (!known || !e.message[0])
			violated("refusal without a protocol error code or message");
		if (req.op || req.args)
			violated("a refused request kept an op or args");
		if (cordon_op_response_error(req.id, &e, &line, &len) < 0)
			violated("error response does not encode");
		one_line(line, len);
		free(line);
		cordon_op_request_done(&req);
	} else {
		if (!req.op || !json_is_object(req.args) || !json_is_integer(req.id))
			violated("accepted request without op, args or id");
		if (cordon_op_request_encode((uint64_t)json_integer_value(req.id), req.op->name, req.args, &line,
					     &len) < 0)
			violated("accepted request does not re-encode");
		one_line(line, len);
		if (cordon_op_request_decode(line, len - 1, &again, &e) < 0)
			violated("re-encoded request is refused");
		if (again.op != req.op || !json_equal(again.args, req.args))
			violated("re-encoded request differs");
		cordon_op_request_done(&again);
		free(line);
		if (cordon_op_response_ok(req.id, req.args, &line, &len) < 0)
			violated("ok response does not encode");
		one_line(line, len);
		free(line);
		if (cordon_display_render(req.args, true, NULL, &text, NULL) < 0)
			violated("admitted args do not render");
		clean_text(text);
		free(text);
		{
			/* Masking off, with mixed-script warnings (the critical and
			 * --reveal rendering). */
			json_t *warnings = json_array();
			struct cordon_display_options o = { .warnings = warnings };

			if (!warnings || cordon_display_render_opts(req.args, &o, &text, NULL) < 0)
				violated("admitted args do not render unmasked");
			clean_text(text);
			free(text);
			json_decref(warnings);
		}
		cordon_op_request_done(&req);
	}
	if (cordon_display_escape((const char *)data, size, &text, NULL) < 0)
		violated("escape failed");
	clean_text(text);
	free(text);
	return 0;
}
