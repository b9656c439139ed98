/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Egress denials of connector instances in the audit log
 * (worker-denials.c). Used by worker.c and, for the spawner's events,
 * daemon-core.c; calls nothing of the daemon above daemon-state. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon-state.h"

/* One denial by the egress policy (the launcher helper's event). */
void worker_network_denied(struct cordon_daemon *d, uint32_t instance, const json_t *event);

/* The worker is going away. When its exit is still to be reported by the
 * launcher helper (exit_reported false, a spawner that reaps
 * asynchronously), the instance is remembered until then, so denials the
 * helper forwards before the exit are still audited against it; otherwise
 * the denials held back by the rate limit are audited now. */
void denials_worker_ended(struct dworker *w, bool exit_reported);

/* The helper reported the exit of an instance no worker holds: audits what
 * the rate limit held back and forgets the instance. */
void denials_instance_exited(struct cordon_daemon *d, uint32_t instance);

/* No exit will be reported any more (shutdown, helper lost): audits what is
 * held back for every remembered instance and forgets them. */
void denials_forget_all(struct cordon_daemon *d);
