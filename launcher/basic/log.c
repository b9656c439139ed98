/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse-util.h"

static const char *program = "cordon";
static enum log_level max_level = LOG_LEVEL_INFO;
static bool journal, show_level;

void log_set_program(const char *name)
{
	const char *slash = name ? strrchr(name, '/') : NULL;

	if (name)
		program = slash ? slash + 1 : name;
}

void log_set_max_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_max_level(void)
{
	return max_level;
}

/* clang-format off */
static const char *const level_names[] = {
	[LOG_LEVEL_CRIT]    = "crit",
	[LOG_LEVEL_ERROR]   = "error",
	[LOG_LEVEL_WARNING] = "warning",
	[LOG_LEVEL_NOTICE]  = "notice",
	[LOG_LEVEL_INFO]    = "info",
	[LOG_LEVEL_DEBUG]   = "debug",
};
/* clang-format on */

const char *log_level_name(enum log_level level)
{
	if ((unsigned)level >= sizeof(level_names) / sizeof(level_names[0]) || !level_names[level])
		return "?";
	return level_names[level];
}

int log_level_from_name(const char *name, enum log_level *ret)
{
	/* crit is cordond's own (a fatal signal), not a threshold to set. */
	for (enum log_level l = LOG_LEVEL_ERROR; name && l <= LOG_LEVEL_DEBUG; l++)
		if (strcmp(name, level_names[l]) == 0) {
			*ret = l;
			return 0;
		}
	return -EINVAL;
}

bool log_journal_stream_matches(const char *env, int fd)
{
	const char *colon = env ? strchr(env, ':') : NULL;
	char dev_s[24];
	uint64_t dev, ino;
	struct stat st;

	if (!colon || (size_t)(colon - env) >= sizeof(dev_s))
		return false;
	memcpy(dev_s, env, (size_t)(colon - env));
	dev_s[colon - env] = '\0';
	if (parse_u64(dev_s, &dev) < 0 || parse_u64(colon + 1, &ino) < 0)
		return false;
	if (fstat(fd, &st) < 0)
		return false;
	return (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

bool log_open_stderr(void)
{
	journal = log_journal_stream_matches(getenv("JOURNAL_STREAM"), STDERR_FILENO);
	show_level = true;
	return journal;
}

bool log_get_journal(void)
{
	return journal;
}

size_t log_format_line(char *buf, size_t size, const char *prog, enum log_level level, bool in_journal, bool with_level,
		       const char *msg)
{
	static const char cut[] = "...\n";
	size_t n;
	int h;

	if (size < 64) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	if (in_journal)
		h = snprintf(buf, size, "<%d>%s: ", (int)level, prog);
	else if (with_level)
		h = snprintf(buf, size, "%s: %s: ", prog, log_level_name(level));
	else
		h = snprintf(buf, size, "%s: ", prog);
	n = h < 0 ? 0 : (size_t)h < size - sizeof(cut) ? (size_t)h : size - sizeof(cut);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		bool esc = (*p < 0x20 && *p != '\t') || *p == 0x7f;

		/* Room for this byte (4 when escaped), then the "...\n" ending. */
		if (n + (esc ? 4 : 1) + sizeof(cut) > size) {
			memcpy(buf + n, cut, sizeof(cut));
			return n + sizeof(cut) - 1;
		}
		if (esc)
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *p);
		else
			buf[n++] = (char)*p;
	}
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	int saved = errno;
	int e = error < 0 ? -error : error;

	if (level <= max_level) {
		char msg[1024], line[2048];
		size_t n;
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		if (e) {
			size_t m = strlen(msg);

			snprintf(msg + m, sizeof(msg) - m, ": %s", strerror(e));
		}
		/* One write(2) per line: a helper process sharing the stream (the
		 * launcher helper under cordond) cannot split it. */
		n = log_format_line(line, sizeof(line), program, level, journal, show_level, msg);
		(void)!write(STDERR_FILENO, line, n);
	}
	errno = saved;
	return -e;
}
