/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "strv.h"

#include <stdlib.h>
#include <string.h>

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void strv_free_n(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **strv_dup(char *const *v)
{
	size_t n = strv_length(v);
	char **c = calloc(n + 1, sizeof(char *));

	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		c[i] = strdup(v[i]);
		if (!c[i]) {
			strv_free(c);
			return NULL;
		}
	}
	return c;
}

bool strv_contains(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

bool strv_contains_n(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; v && i < n; i++)
		if (v[i] && strcmp(v[i], s) == 0)
			return true;
	return false;
}
