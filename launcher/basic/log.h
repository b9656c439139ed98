/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging for binaries. Libraries (launcher/lib, broker/lib) never log above
 * debug: they return -errno and a diag, and the binary at the edge logs once. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The syslog priorities, as journald takes them in a "<N>" prefix. */
enum log_level {
	LOG_LEVEL_CRIT = 2,
	LOG_LEVEL_ERROR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

void log_set_program(const char *name);
void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);

/* The level's name ("crit", "error", "warning", "notice", "info", "debug");
 * "?" for anything else. */
const char *log_level_name(enum log_level level);
/* Parses one of the five names an operator may set ("error", "warning",
 * "notice", "info", "debug"). Returns 0 and writes *ret, or -EINVAL. */
int log_level_from_name(const char *name, enum log_level *ret);

/* Whether JOURNAL_STREAM's value ("DEV:INO", as systemd sets it for a
 * service whose stdout/stderr is connected to the journal) names the file fd
 * refers to: the systemd convention for "my stderr is the journal", which a
 * redirected or inherited stderr does not meet. */
bool log_journal_stream_matches(const char *env, int fd);

/* Sets up stderr logging for a daemon: journal mode (each line starts with
 * the "<N>" priority prefix journald reads) when JOURNAL_STREAM names
 * stderr, and the level's name after the program's otherwise
 * ("cordond: warning: ..."). Returns whether journal mode is on. */
bool log_open_stderr(void);
/* Whether journal mode is on. */
bool log_get_journal(void);

/* Formats one log line into buf (at most size bytes, NUL-terminated,
 * always ending with '\n'): "<N>program: msg" in journal mode, else
 * "program: level: msg" when show_level, else "program: msg". Control bytes
 * of msg (all below 0x20 but tab, and 0x7f) are written as \xNN so that no
 * value inside a message can start a line of its own or drive a terminal;
 * a message too long for buf is cut and ends in "...". Returns the length
 * written (without the NUL). */
size_t log_format_line(char *buf, size_t size, const char *program, enum log_level level, bool journal, bool show_level,
		       const char *msg);

/* Writes one line "<program>: <message>[: <strerror>]" to stderr when level
 * is at or below the maximum, formatted by log_format_line() with the
 * mode log_open_stderr() chose, in one write(2). Returns -|error| (or 0
 * when error is 0) so that an edge can `return log_error_errno(r, ...)`. */
int log_internal(enum log_level level, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error_errno(e, ...)	  log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error(...)		  (void)log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...)	  (void)log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_notice(...)		  (void)log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_info(...)		  (void)log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)		  (void)log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
