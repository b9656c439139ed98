/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Tasks (MCP 2025-11-25, issue 13; gateway-task.c): task-augmented
 * tools/call passed through to connectors that support them, cordon's own
 * tasks for calls it holds for an operator's approval (or runs for a
 * client that asked for a task on a tool whose connector has none), and
 * tasks/get, tasks/result, tasks/list, tasks/cancel. Every task a client
 * sees has a cordon-issued id, private to its session. Above gateway-call.c
 * (it uses the call object) and worker.c; used by gateway-call.c (hooks on
 * a call's way) and gateway.c. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "approvals.h"
#include "daemon-state.h"

/* Tasks a session may hold (live or finished, not yet expired). */
#define SESSION_TASKS_MAX 64u
/* The ttl of a task when the client asks for none, and the most it gets. */
#define TASK_TTL_DEFAULT_MS (10u * 60u * 1000u)
#define TASK_TTL_MAX_MS	    (24u * 60u * 60u * 1000u)
/* What a finished own task is kept for at least, after an approval that
 * could take until its expiry. */
#define TASK_KEEP_MS (5u * 60u * 1000u)
/* The pollInterval cordon suggests for its own tasks. */
#define TASK_POLL_MS 1000u
/* tasks/result requests waiting on one task. */
#define TASK_WAITERS_MAX 8u

/* The table gateway_start registers as d->task_hooks (the members are
 * the task_call_* functions and task_tool_listed below). */
extern const struct dtask_hooks gateway_task_hooks;

/* The `tasks` capability cordon announces in initialize (new reference). */
json_t *task_capability(void);
/* tools/list: def (one tool, owned by the caller) as session s sees it.
 * A tool whose connector requires tasks is left out (false) for a client
 * that did not announce `tasks`; for one that did, a tool without task
 * support is offered as "optional" (cordon runs such a call as its own
 * task). */
bool task_tool_listed(const struct dsession *s, json_t *def);
/* call_start: admits params.task (an object, optional integer ttl >= 0) of
 * a tools/call. *ret_task: NULL (no task asked, or the client did not
 * announce `tasks`: the call is a plain one) or a new {"ttl": N}. Returns
 * 0, or -EINVAL / -EDQUOT with the error sent to the client. */
int task_call_admit(struct dsession *s, const json_t *id, const json_t *params, json_t **ret_task);
/* call_worker_ready, before the decision: a tool whose connector requires
 * tasks called without one is refused (-32601, before any approval); a
 * task call to a tool that supports tasks goes to the connector as a task.
 * false: the call was answered and freed. */
bool task_call_ready(struct dcall *c);
/* The call now waits for approval info: a task call gets its task
 * (status working, the approval code in statusMessage) at once, and waits
 * until the approval expires rather than cfg.approval_wait. */
void task_call_held(struct dcall *c, const struct cordon_approval_info *info);
/* call_dispatch, before anything is sent: a task call that is not passed
 * to the connector as a task becomes cordon's own task now (if it is not
 * one already); its answer goes to the task. */
void task_call_dispatching(struct dcall *c);
/* cordon answers a task call itself before (or instead of) running it
 * (denied, a stored result, ...): it becomes its own task now, so a client
 * that asked for a task always gets one (message: its statusMessage). */
void task_call_own(struct dcall *c, const char *message);
/* The answer to a call that has a task (c->task): {"result": R} or
 * {"error": E} (stolen). The task becomes completed (failed when R is an
 * isError result, or an error), waiting tasks/result requests are
 * answered, and the session hears notifications/tasks/status. */
void task_call_finish(struct dcall *c, json_t *answer);
/* call_worker_result, first: the connector's answer to a call passed as a
 * task. true: it was a CreateTaskResult, now a cordon task (answered to
 * the client, or bound to the task the call already had); the caller
 * completes the action and frees the call. */
bool task_upstream_created(struct dcall *c, const json_t *result);
/* call_free: the call's task no longer points at it. */
void task_call_released(struct dcall *c);
/* tasks/get, tasks/result, tasks/list, tasks/cancel; false: not one. */
bool task_request(struct dsession *s, const char *method, const json_t *id, const json_t *params);
/* The session ends: its tasks go (their calls are freed by session_close). */
void task_session_closed(struct dsession *s);
/* An instance died: the tasks passed to it fail. */
void task_worker_gone(struct dworker *w);
/* notifications/tasks/status from an instance: to the owning session only. */
void task_upstream_status(struct dworker *w, const json_t *params);
/* Forgets finished tasks past their ttl. */
void tasks_tick(struct cordon_daemon *d, uint64_t now_ms);
