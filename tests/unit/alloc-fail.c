/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wrapped allocators of alloc-fail.h. */
#include "alloc-fail.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

long alloc_fail_countdown = -1;
unsigned long alloc_fail_count;

static bool fail_now(void)
{
	if (alloc_fail_countdown < 0)
		return false;
	if (alloc_fail_countdown-- > 0)
		return false;
	alloc_fail_count++;
	return true;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

#define FAIL_OR(call)                                                                                                  \
	do {                                                                                                           \
		if (fail_now()) {                                                                                      \
			errno = ENOMEM;                                                                                \
			return NULL;                                                                                   \
		}                                                                                                      \
		return call;                                                                                           \
	} while (0)

void *__wrap_malloc(size_t n)
{
	FAIL_OR(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t size)
{
	FAIL_OR(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t n)
{
	FAIL_OR(__real_realloc(p, n));
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	FAIL_OR(__real_reallocarray(p, n, size));
}

char *__wrap_strdup(const char *s)
{
	FAIL_OR(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
	FAIL_OR(__real_strndup(s, n));
}
