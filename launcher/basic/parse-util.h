/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* All parsers are strict: the whole string must be consumed, no leading
 * whitespace or sign, no empty input. They return 0 and write *ret only on
 * success, -EINVAL for a malformed string and -ERANGE for overflow. */

/* Decimal unsigned integer. */
int parse_u64(const char *s, uint64_t *ret);

/* A size: a decimal integer with an optional K, M or G suffix (powers of
 * 1024), e.g. "64M". */
int parse_size(const char *s, uint64_t *ret);

/* A duration: a decimal integer with a mandatory s, m or h suffix, in seconds. */
int parse_duration_sec(const char *s, uint64_t *ret);

/* A non-negative decimal number with at most 6 fractional digits, returned
 * in millionths ("0.5" -> 500000). */
int parse_decimal_micro(const char *s, uint64_t *ret);

/* True when s is a valid connector id: [a-z0-9][a-z0-9-]{0,31}. */
bool connector_id_is_valid(const char *s);

/* True when s is an absolute, canonical path: starts with '/', no empty,
 * "." or ".." component, no trailing '/' except "/" itself, no NUL or
 * control characters, at most PATH_MAX-1 bytes. */
bool path_is_absolute_canonical(const char *s);

/* True when `path` equals `dir` or lies beneath it, comparing whole path
 * components (so "/work-evil" is not beneath "/work"). Both must be canonical.
 * For policy checks on the host, resolve with openat2 instead: this is only
 * for validating profile text. */
bool path_is_beneath(const char *path, const char *dir);
