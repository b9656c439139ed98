/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a connector instance leaves in the broker log (worker-log.c): the
 * broker's own lines about it, its protocol warnings (rate-limited) and its
 * stderr (rate-limited, scrubbed). Used by worker.c; calls nothing of the
 * daemon above daemon-state. */

#include <stddef.h>
#include <stdint.h>

#include "daemon-state.h"

/* Logs at level lvl (a log.h LOG_LEVEL_*), prefixed with the connector and
 * instance. */
void worker_log(struct dworker *w, int lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A protocol warning about the connector's output: at most a burst per
 * window per instance, then one "N suppressed" line, so a connector cannot
 * flood the broker log with them. */
void worker_warn(struct dworker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs how many warnings were suppressed and ends the window. */
void worker_warn_flush(struct dworker *w);
/* From the tick: ends a window that is over and had suppressed warnings. */
void worker_warn_tick(struct dworker *w, uint64_t now);

/* At most WORKER_EXCERPT_BYTES of a line from the connector, for a log
 * line: credential values masked (as on stderr), then backslash, quote,
 * control and non-ASCII bytes escaped (\\, \", \xNN), NUL-terminated in
 * out, which holds at least WORKER_EXCERPT_MAX bytes. Never the whole line. */
#define WORKER_EXCERPT_BYTES 64
#define WORKER_EXCERPT_MAX   (WORKER_EXCERPT_BYTES * 4 + 1)
void worker_excerpt(struct dworker *w, const char *s, size_t len, char *out, size_t size);

/* The loop handler of an instance's stderr pipe (userdata: the worker). */
void worker_on_stderr(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata);
