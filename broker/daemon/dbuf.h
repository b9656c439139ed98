/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A byte buffer with a hard bound (sessions' and workers' I/O buffers). */

#include <stddef.h>

struct dbuf {
	char *p;
	size_t len, cap;
};

/* Appends n bytes: 0, or -ENOBUFS (the buffer would exceed limit) or
 * -ENOMEM, and then nothing was appended. */
int dbuf_append(struct dbuf *b, const void *p, size_t n, size_t limit);
/* Drops the first n bytes (all when n >= len). */
void dbuf_consume(struct dbuf *b, size_t n);
void dbuf_free(struct dbuf *b);
