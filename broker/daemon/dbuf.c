/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A byte buffer with a hard bound (sessions' and workers' I/O buffers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbuf.h"

int dbuf_append(struct dbuf *b, const void *p, size_t n, size_t limit)
{
	if (b->len + n > limit)
		return -ENOBUFS;
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		char *np;

		while (nc < b->len + n)
			nc *= 2;
		if (nc > limit + 1)
			nc = limit + 1;
		np = realloc(b->p, nc);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

void dbuf_consume(struct dbuf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		/* Give large buffers back: an idle session or worker keeps at
		 * most 64 KiB. */
		if (b->cap > 65536) {
			free(b->p);
			b->p = NULL;
			b->cap = 0;
		}
		return;
	}
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
}

void dbuf_free(struct dbuf *b)
{
	free(b->p);
	*b = (struct dbuf){};
}
