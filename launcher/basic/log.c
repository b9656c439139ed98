/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "cordon";
static enum log_level max_level = LOG_LEVEL_INFO;

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

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	int saved = errno;
	int e = error < 0 ? -error : error;

	if (level <= max_level) {
		char buf[1024];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		if (e)
			fprintf(stderr, "%s: %s: %s\n", program, buf, strerror(e));
		else
			fprintf(stderr, "%s: %s\n", program, buf);
	}
	errno = saved;
	return -e;
}
