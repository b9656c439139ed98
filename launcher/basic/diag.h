/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A fixed-size error report. A function that can fail returns >= 0 or -errno
 * and, when the caller passes a diag, fills it with what a user needs to fix
 * the problem. It holds no pointers, so a post-clone child can fill it without
 * malloc and send it to the parent over the sync socket as plain bytes. */

#include <stdarg.h>

struct cordon_diag {
	int error;	       /* positive errno */
	unsigned line, column; /* 0 when not applicable */
	char step[32];	       /* "landlock", "seccomp", "profile", ... */
	char message[200];
};

/* Fills *d (if d is non-NULL) and returns -error, so a caller can write
 * `return cordon_diag_set(d, EINVAL, "profile", "...")`. */
int cordon_diag_set(struct cordon_diag *d, int error, const char *step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Like cordon_diag_set() with a line and column. */
int cordon_diag_set_at(struct cordon_diag *d, int error, const char *step, unsigned line, unsigned column,
		       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

int cordon_diag_setv(struct cordon_diag *d, int error, const char *step, unsigned line, unsigned column,
		     const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
