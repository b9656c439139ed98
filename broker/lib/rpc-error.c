/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rpc-error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* The message cut to at most max bytes with the marker appended: the
 * longest prefix ending on a UTF-8 character boundary that leaves room for
 * it. */
static json_t *bounded_message(const char *s, size_t n, size_t max)
{
	char marker[80];
	_cleanup_free_ char *buf = NULL;
	size_t keep, mlen;

	if (n <= max)
		return json_stringn(s, n);
	mlen = (size_t)snprintf(marker, sizeof(marker), " [cordon: message truncated, %zu bytes]", n);
	keep = max - mlen;
	/* Back up to the first byte of a character (continuation bytes are
	 * 10xxxxxx); canon admitted the string, so it is valid UTF-8. */
	while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	buf = malloc(keep + mlen);
	if (!buf)
		return NULL;
	memcpy(buf, s, keep);
	memcpy(buf + keep, marker, mlen);
	return json_stringn(buf, keep + mlen);
}

static bool is_marker(const char *key)
{
	return !strcmp(key, CORDON_REFUSED_BY_KEY) || !strcmp(key, CORDON_DATA_DROPPED_KEY);
}

void cordon_rpc_strip_markers(json_t *obj)
{
	const char *key;
	json_t *v;
	void *tmp;

	if (!json_is_object(obj))
		return;
	json_object_foreach_safe(obj, tmp, key, v)
	{
		if (is_marker(key))
			(void)json_object_del(obj, key);
	}
}

static int count_bytes(const char *buffer, size_t size, void *data)
{
	(void)buffer;
	*(size_t *)data += size;
	return 0;
}

json_t *cordon_rpc_data_dropped(size_t bytes)
{
	return json_pack("{s:{s:I, s:i}}", CORDON_DATA_DROPPED_KEY, "bytes", (json_int_t)bytes, "limit",
			 CORDON_RPC_ERROR_DATA_MAX);
}

/* The connector's data as the client gets it: a copy without cordon's
 * markers, or the dropped-marker object when its compact JSON exceeds the
 * bound. NULL on ENOMEM. */
static json_t *bounded_data(const json_t *data)
{
	json_auto_t *copy = json_deep_copy(data);
	size_t n = 0;

	if (!copy)
		return NULL;
	cordon_rpc_strip_markers(copy);
	/* Measured without building the text (data may be megabytes). */
	if (json_dump_callback(copy, count_bytes, &n, JSON_COMPACT | JSON_ENCODE_ANY) < 0)
		return NULL;
	if (n > CORDON_RPC_ERROR_DATA_MAX)
		return cordon_rpc_data_dropped(n);
	return TAKE_PTR(copy);
}

int cordon_rpc_error_relay(const json_t *error, json_t **ret, struct cordon_diag *diag)
{
	const json_t *code, *message, *data;
	json_auto_t *out = NULL;
	json_t *m, *dv;

	if (!json_is_object(error))
		return cordon_diag_set(diag, EBADMSG, "rpc-error", "error is not an object");
	code = json_object_get(error, "code");
	message = json_object_get(error, "message");
	data = json_object_get(error, "data");
	if (!json_is_integer(code))
		return cordon_diag_set(diag, EBADMSG, "rpc-error", "error.code is not an integer");
	if (!json_is_string(message))
		return cordon_diag_set(diag, EBADMSG, "rpc-error", "error.message is not a string");
	out = json_object();
	if (!out || json_object_set_new(out, "code", json_integer(json_integer_value(code))) < 0)
		return cordon_diag_set(diag, ENOMEM, "rpc-error", "out of memory");
	m = bounded_message(json_string_value(message), json_string_length(message), CORDON_RPC_ERROR_MESSAGE_MAX);
	if (!m || json_object_set_new(out, "message", m) < 0)
		return cordon_diag_set(diag, ENOMEM, "rpc-error", "out of memory");
	if (data) {
		dv = bounded_data(data);
		if (!dv || json_object_set_new(out, "data", dv) < 0)
			return cordon_diag_set(diag, ENOMEM, "rpc-error", "out of memory");
	}
	*ret = TAKE_PTR(out);
	return 0;
}

char *cordon_json_escape_controls(const char *text, size_t len, size_t *ret_len)
{
	size_t extra = 0, o = 0;
	char *out;

	/* DEL grows from 1 byte to 6, a C1 control (2 bytes) to 6. */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == 0x7f)
			extra += 5;
		else if (c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] >= 0x80 &&
			 (unsigned char)text[i + 1] <= 0x9f)
			extra += 4;
	}
	out = malloc(len + extra + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == 0x7f) {
			memcpy(out + o, "\\u007f", 6);
			o += 6;
		} else if (c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] >= 0x80 &&
			   (unsigned char)text[i + 1] <= 0x9f) {
			snprintf(out + o, 7, "\\u%04x", (unsigned char)text[i + 1]);
			o += 6;
			i++;
		} else
			out[o++] = (char)c;
	}
	out[o] = 0;
	*ret_len = o;
	return out;
}
