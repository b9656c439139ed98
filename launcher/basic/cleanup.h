/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Scope-bound cleanup helpers in the style of systemd's src/basic. Every
 * resource a function acquires is released on every return path; ownership
 * is handed on with TAKE_PTR()/TAKE_FD(). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)	     __attribute__((cleanup(f)))
#define _unused_	     __attribute__((unused))
#define _noreturn_	     __attribute__((noreturn))
#define _printf_(a, b)	     __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))

static inline void freep(void *p)
{
	free(*(void **)p);
}

/* closep() preserves errno so that a cleanup on an error path never clobbers
 * the value the caller is about to return. */
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;
		(void)fclose(*f);
		errno = saved;
	}
}

#define _cleanup_free_	 _cleanup_(freep)
#define _cleanup_close_	 _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_PTR(p)                                                                                                    \
	({                                                                                                             \
		__typeof__(p) _tp = (p);                                                                               \
		(p) = NULL;                                                                                            \
		_tp;                                                                                                   \
	})

#define TAKE_FD(fd)                                                                                                    \
	({                                                                                                             \
		int _tf = (fd);                                                                                        \
		(fd) = -EBADF;                                                                                         \
		_tf;                                                                                                   \
	})

/* DEFINE_CLEANUP(name, type, func) defines `static void name(type *p)` that
 * calls func(*p) when *p is non-NULL. The name is ours, never in the library's
 * namespace: DEFINE_CLEANUP(stmt_finalizep, sqlite3_stmt *, sqlite3_finalize). */
#define DEFINE_CLEANUP(name, type, func)                                                                               \
	static inline void name(type *p)                                                                               \
	{                                                                                                              \
		if (*p) {                                                                                              \
			int _saved = errno;                                                                            \
			(void)func(*p);                                                                                \
			errno = _saved;                                                                                \
		}                                                                                                      \
	}

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Negative errno from the current errno, never 0 (defensive against callers
 * that forgot to set errno). */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}
