/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Allocation-failure injection for a test linked with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray,--wrap=strdup,--wrap=strndup
 * (the LIBS of its .cmake registration) and alloc-fail.c among its sources.
 * Only code linked into the test is wrapped: shared libraries (libyaml,
 * libc itself) allocate as usual. */

/* Allocations to let through before the one that fails (with ENOMEM); -1:
 * none fails. Counts down; each failure adds one to alloc_fail_count. */
extern long alloc_fail_countdown;
extern unsigned long alloc_fail_count;
