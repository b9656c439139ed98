/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "bpf-capture.h"
#include "cleanup.h"

static char captured[160];
static bool captured_keep_first;

_printf_(2, 0) static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[sizeof(captured)];

	if (level == LIBBPF_DEBUG)
		return 0;
	if (vsnprintf(line, sizeof(line), fmt, ap) < 0)
		return 0;
	line[strcspn(line, "\n")] = 0;
	if (line[0] && !(captured_keep_first && captured[0]))
		memcpy(captured, line, sizeof(line));
	return 0;
}

libbpf_print_fn_t cordon_bpf_capture_begin(bool keep_first)
{
	captured[0] = 0;
	captured_keep_first = keep_first;
	return libbpf_set_print(capture_print);
}

void cordon_bpf_capture_end(libbpf_print_fn_t old)
{
	(void)libbpf_set_print(old);
}

const char *cordon_bpf_captured(void)
{
	return captured;
}
