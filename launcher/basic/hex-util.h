/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lower-case hexadecimal: the one encoder and validator of the tree
 * (fingerprints, digests, ids). */

#include <stdbool.h>
#include <stddef.h>

/* Writes 2*n lower-case hex digits of p[0..n) and a NUL to out (at least
 * 2*n+1 bytes). */
void hex_encode(const void *p, size_t n, char *out);

/* The value of one lower-case hex digit, or -EINVAL (upper case is not hex
 * here: every value we store or compare is lower case). */
int unhex_lower(char c);

/* True when s is exactly n lower-case hex digits (strlen(s) == n). s may be
 * NULL (false). */
bool hex_is_lower_n(const char *s, size_t n);
