/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "parse-util.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static int parse_digits(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*p = s;
	*ret = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(&s, &v);
	if (r < 0)
		return r;
	if (*s)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_with_suffix(const char *s, const char *suffixes, const uint64_t *factors, bool suffix_required,
			     uint64_t *ret)
{
	uint64_t v, f = 1;
	const char *p;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(&s, &v);
	if (r < 0)
		return r;
	if (*s) {
		p = strchr(suffixes, *s);
		if (!p || s[1])
			return -EINVAL;
		f = factors[p - suffixes];
	} else if (suffix_required)
		return -EINVAL;
	if (v > UINT64_MAX / f)
		return -ERANGE;
	*ret = v * f;
	return 0;
}

int parse_size(const char *s, uint64_t *ret)
{
	static const uint64_t factors[] = { 1024ULL, 1024ULL * 1024, 1024ULL * 1024 * 1024 };

	return parse_with_suffix(s, "KMG", factors, false, ret);
}

int parse_duration_sec(const char *s, uint64_t *ret)
{
	static const uint64_t factors[] = { 1, 60, 3600 };

	return parse_with_suffix(s, "smh", factors, true, ret);
}

int parse_decimal_micro(const char *s, uint64_t *ret)
{
	uint64_t ip, frac = 0;
	int r, digits = 0;

	if (!s)
		return -EINVAL;
	r = parse_digits(&s, &ip);
	if (r < 0)
		return r;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (++digits > 6)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*s - '0');
		}
		for (int i = digits; i < 6; i++)
			frac *= 10;
	}
	if (*s)
		return -EINVAL;
	if (ip > (UINT64_MAX - frac) / 1000000)
		return -ERANGE;
	*ret = ip * 1000000 + frac;
	return 0;
}

bool connector_id_is_valid(const char *s)
{
	size_t n;

	if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (n = 1; s[n]; n++) {
		char c = s[n];

		if (n > 31)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return true;
}

bool path_is_absolute_canonical(const char *s)
{
	size_t len;

	if (!s || s[0] != '/')
		return false;
	len = strlen(s);
	if (len >= PATH_MAX)
		return false;
	if (len == 1)
		return true;
	if (s[len - 1] == '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	for (const char *c = s + 1;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);

		if (n == 0)
			return false;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!e)
			break;
		c = e + 1;
	}
	return true;
}

bool path_is_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}
