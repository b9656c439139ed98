/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a connector instance leaves in the broker log (worker-log.c): the
 * broker's own lines about it, its protocol warnings (rate-limited) and its
 * stderr (rate-limited, scrubbed). Used by worker.c; calls nothing of the
 * daemon above daemon-state. */

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

/* The loop handler of an instance's stderr pipe (userdata: the worker). */
void worker_on_stderr(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata);
