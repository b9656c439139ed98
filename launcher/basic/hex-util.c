/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hex-util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

void hex_encode(const void *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int unhex_lower(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -EINVAL;
}

bool hex_is_lower_n(const char *s, size_t n)
{
	if (!s || strnlen(s, n + 1) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (unhex_lower(s[i]) < 0)
			return false;
	return true;
}
