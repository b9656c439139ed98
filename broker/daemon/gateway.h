/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The gateway socket (gateway.c): one MCP session per connection. The top
 * of the gateway: it dispatches to gateway-call.c, gateway-pass.c and
 * gateway-relay.c, and registers the worker_events through which instances
 * reach the sessions. Used by daemon-core.c. */

#include "daemon-state.h"

/* Serves d->gateway_fd and registers the gateway's worker_events. */
int gateway_start(struct cordon_daemon *d);
/* Closes every session and unregisters the worker_events. */
void gateway_stop(struct cordon_daemon *d);
/* Approval waits and their progress, idle and closing sessions, memory
 * trim. */
void gateway_tick(struct cordon_daemon *d);
