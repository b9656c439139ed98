/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging for binaries. Libraries (launcher/lib, broker/lib) never log above
 * debug: they return -errno and a diag, and the binary at the edge logs once. */

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

void log_set_program(const char *name);
void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);

/* Writes one line "<program>: <message>[: <strerror>]" to stderr when level is
 * at or below the maximum. Returns -|error| (or 0 when error is 0) so that an
 * edge can `return log_error_errno(r, ...)`. */
int log_internal(enum log_level level, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error_errno(e, ...)	  log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error(...)		  (void)log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...)	  (void)log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_notice(...)		  (void)log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_info(...)		  (void)log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)		  (void)log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
