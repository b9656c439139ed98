/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* libbpf reports through a process-wide print callback. A library must not
 * print, so while it loads or attaches programs, netpolicy.c and
 * rootguard.c route libbpf's warnings here and keep one line for their
 * diagnostics instead (bpf-capture.c). Single-threaded, like the callers. */

#include <bpf/libbpf.h>
#include <stdbool.h>

/* Starts capturing with an empty line: keep_first keeps the first warning
 * (which program failed, and how; the lines after it only repeat the
 * failure upward), otherwise the last one (usually the verifier's reason).
 * Returns the callback to give back to cordon_bpf_capture_end(). */
libbpf_print_fn_t cordon_bpf_capture_begin(bool keep_first);
void cordon_bpf_capture_end(libbpf_print_fn_t old);
/* The line kept since the last begin; "" when there is none. */
const char *cordon_bpf_captured(void);
