/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NULL-terminated arrays of malloc'd strings ("strv"), and the two lookups
 * the launcher needs on counted arrays. */

#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"

/* Frees every string and the array. NULL is a no-op. */
void strv_free(char **v);

/* Frees the first n strings and the array (for counted arrays whose slots
 * may be NULL). NULL is a no-op. */
void strv_free_n(char **v, size_t n);

/* Number of strings before the terminating NULL; 0 for NULL. */
size_t strv_length(char *const *v);

/* A deep copy (NULL-terminated; NULL gives an empty array). Returns NULL
 * when out of memory. */
char **strv_dup(char *const *v);

/* True when s is one of the strings. v may be NULL. */
bool strv_contains(char *const *v, const char *s);

/* True when s is one of the first n slots (NULL slots are skipped). */
bool strv_contains_n(char *const *v, size_t n, const char *s);

DEFINE_CLEANUP(strv_freep, char **, strv_free)
#define _cleanup_strv_free_ _cleanup_(strv_freep)
