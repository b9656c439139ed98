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
 * the denials held back by the rate limit are audited now. Its
 * cordon.instance.exited line (why, crashed) is logged when its exit is
 * known: now, or with the helper's wait status when it reports it (without
 * one when none will come). */
void denials_worker_ended(struct dworker *w, bool exit_reported, const char *why, bool crashed);

/* The helper reported the exit of an instance no worker holds (status:
 * its wait status): audits what the rate limit held back, logs its
 * cordon.instance.exited line and forgets the instance. */
void denials_instance_exited(struct cordon_daemon *d, uint32_t instance, int status);

/* No exit will be reported any more (shutdown, helper lost): audits what is
 * held back for every remembered instance and forgets them. */
void denials_forget_all(struct cordon_daemon *d);
