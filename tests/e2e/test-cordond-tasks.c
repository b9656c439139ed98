/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tasks (MCP 2025-11-25) through the real cordond (issue 13, "Tasks"): the
 * real binary, the real launcher helper, the fake connector (--tasks) in a
 * real sandbox, sessions on the gateway socket.
 *
 *  - cordon announces `tasks`; tools/list shows a connector's taskSupport,
 *    offers "optional" for the rest to a client that announced `tasks`, and
 *    hides a tool that requires tasks from one that did not, which is
 *    refused -32601 before any approval when it calls it anyway;
 *  - pass-through: a task-augmented call to a tool that supports tasks
 *    becomes a cordon task (cordon's id) whose tasks/get, tasks/result,
 *    tasks/cancel reach the connector; its status notification comes back
 *    with cordon's id, to the owning session only; tasks/list and tasks/get
 *    of another session never show it (the instance is shared, and the
 *    connector's own list holds every session's tasks);
 *  - a call held for approval returns a task at once; approved (after
 *    longer than --approval-wait) its tasks/result gives the result, the
 *    connector ran it exactly once; denied: failed; cancelled: the approval
 *    is withdrawn and nothing runs;
 *  - without task support the progress-and-retry wait is unchanged. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

static int setup(void **state)
{
	(void)state;
	rcd_fake_profile(&C, "fake",
			 &(struct rcd_fake_options){ .arg = "--tasks",
						     .tools = "  risk: {echo: read, append: write, job: read, "
							      "tappend: write}\n"
							      "  grant: [echo, append, job, tappend]\n" });
	/* An approval of `fast` expires after 2 s. */
	rcd_fake_profile(&C, "fast",
			 &(struct rcd_fake_options){ .arg = "--tasks",
						     .ttl = "2s",
						     .tools = "  risk: {append: write}\n  grant: [append]\n" });
	C.approval_wait = "2s";
	rcd_start(&C);
	rcd_install(&C, "fake");
	rcd_install(&C, "fast");
	return 0;
}

/* A session that announces `tasks` (tasks true) or nothing. */
static json_t *session(struct mcp_peer *p, bool tasks)
{
	json_t *caps = tasks ? json_pack("{s:{s:{}, s:{}}}", "tasks", "list", "cancel") : json_object();
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, C.gateway), 0);
	r = mcp_peer_request(p, "initialize",
			     json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion", "2025-11-25", "capabilities",
				       caps, "clientInfo", "name", "tasks-test", "version", "1"),
			     10000);
	assert_non_null(r);
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

	assert_int_equal(mcp_peer_send_raw(p, note, sizeof(note) - 1), 0);
	return r;
}

static json_t *task_call(struct mcp_peer *p, const char *tool, const char *text)
{
	return rcd_req(
		p, "tools/call",
		json_pack("{s:s, s:{s:s}, s:{s:i}}", "name", tool, "arguments", "text", text, "task", "ttl", 60000));
}

static json_t *res(json_t *r)
{
	json_t *x = json_object_get(r, "result");

	if (!x) {
		char *s = json_dumps(r, JSON_COMPACT);

		fail_msg("no result: %s", s);
	}
	return x;
}

/* The Task of a CreateTaskResult r (borrowed). */
static json_t *created(json_t *r)
{
	json_t *t = json_object_get(res(r), "task");

	assert_true(json_is_object(t));
	assert_non_null(json_string_value(json_object_get(t, "taskId")));
	assert_int_equal(strncmp(json_string_value(json_object_get(t, "taskId")), "ct-", 3), 0);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "working");
	assert_non_null(json_string_value(json_object_get(t, "createdAt")));
	assert_non_null(json_string_value(json_object_get(t, "lastUpdatedAt")));
	assert_non_null(json_object_get(t, "ttl"));
	return t;
}

static json_t *by_id(struct mcp_peer *p, const char *method, const char *tid)
{
	return rcd_req(p, method, json_pack("{s:s}", "taskId", tid));
}

static const char *status_of(json_t *r)
{
	return json_string_value(json_object_get(res(r), "status"));
}

static json_t *tool_def(json_t *tools, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(tools, i, t) if (!strcmp(json_string_value(json_object_get(t, "name")), name)) return t;
	return NULL;
}

static const char *task_support(json_t *def)
{
	return json_string_value(json_object_get(json_object_get(def, "execution"), "taskSupport"));
}

/* The display code of the one pending approval. */
static void pending_code(char *buf, size_t size)
{
	json_t *v = rcd_ctl_json(&C, "approvals", "list", NULL);
	json_t *arr = rcd_first_array(v);

	assert_int_equal(json_array_size(arr), 1);
	snprintf(buf, size, "%s", json_string_value(json_object_get(json_array_get(arr, 0), "display_code")));
	json_decref(v);
}

static void test_capability_and_listing(void **state)
{
	struct mcp_peer t, p;
	json_t *it = session(&t, true), *ip = session(&p, false), *r, *tools;

	(void)state;
	assert_non_null(json_object_get(
		json_object_get(
			json_object_get(json_object_get(json_object_get(res(it), "capabilities"), "tasks"), "requests"),
			"tools"),
		"call"));
	assert_non_null(json_object_get(json_object_get(json_object_get(res(ip), "capabilities"), "tasks"), "list"));
	json_decref(it);
	json_decref(ip);

	r = rcd_req(&t, "tools/list", NULL);
	tools = json_object_get(res(r), "tools");
	assert_string_equal(task_support(tool_def(tools, "fake__job")), "required");
	assert_string_equal(task_support(tool_def(tools, "fake__tappend")), "optional");
	/* cordon runs any call as its own task for this client. */
	assert_string_equal(task_support(tool_def(tools, "fake__echo")), "optional");
	json_decref(r);

	/* A client without `tasks` does not see a tool that requires them,
	 * and calling it anyway is refused before any approval. */
	r = rcd_req(&p, "tools/list", NULL);
	tools = json_object_get(res(r), "tools");
	assert_null(tool_def(tools, "fake__job"));
	assert_non_null(tool_def(tools, "fake__echo"));
	assert_null(task_support(tool_def(tools, "fake__echo")));
	json_decref(r);
	r = rcd_req(&p, "tools/call", json_pack("{s:s, s:{s:s}}", "name", "fake__job", "arguments", "text", "x"));
	assert_int_equal(rcd_err_code(r), -32601);
	json_decref(r);
	/* params.task from a client that did not announce `tasks`: a plain call. */
	r = rcd_req(&p, "tools/call",
		    json_pack("{s:s, s:{s:s}, s:{}}", "name", "fake__echo", "arguments", "text", "plain", "task"));
	assert_string_equal(result_text(res(r)), "echo: plain");
	json_decref(r);
	mcp_peer_disconnect(&t);
	mcp_peer_disconnect(&p);
}

static void test_passthrough_and_isolation(void **state)
{
	struct mcp_peer a, b;
	json_t *r, *v, *t;
	char tid[64];
	bool heard = false;
	long id;

	(void)state;
	json_decref(session(&a, true));
	json_decref(session(&b, true));

	/* Without a task a required tool is refused (-32601), not decided. */
	r = rcd_req(&a, "tools/call", json_pack("{s:s, s:{s:s}}", "name", "fake__job", "arguments", "text", "x"));
	assert_int_equal(rcd_err_code(r), -32601);
	json_decref(r);

	r = task_call(&a, "fake__job", "alpha");
	t = created(r);
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(t, "taskId")));
	json_decref(r);

	/* B shares the instance but sees nothing of A's task. */
	r = rcd_req(&b, "tasks/list", NULL);
	assert_int_equal(json_array_size(json_object_get(res(r), "tasks")), 0);
	json_decref(r);
	r = by_id(&b, "tasks/get", tid);
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	r = by_id(&b, "tasks/result", tid);
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);

	r = rcd_req(&a, "tasks/list", NULL);
	assert_int_equal(json_array_size(json_object_get(res(r), "tasks")), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(res(r), "tasks"), 0), "taskId")), tid);
	json_decref(r);

	/* After its second, tasks/get reaches the connector, which first
	 * tells the status change: A hears it under cordon's id. */
	sleep(1);
	id = mcp_peer_send_request(&a, "tasks/get", json_pack("{s:s}", "taskId", tid));
	for (;;) {
		v = mcp_peer_read(&a, 10000);
		assert_non_null(v);
		if (json_is_string(json_object_get(v, "method")) &&
		    !strcmp(json_string_value(json_object_get(v, "method")), "notifications/tasks/status")) {
			assert_string_equal(json_string_value(json_object_get(json_object_get(v, "params"), "taskId")),
					    tid);
			heard = true;
		}
		if (json_integer_value(json_object_get(v, "id")) == id && !json_object_get(v, "method"))
			break;
		json_decref(v);
	}
	assert_true(heard);
	assert_string_equal(status_of(v), "completed");
	assert_string_equal(json_string_value(json_object_get(res(v), "taskId")), tid);
	assert_string_equal(json_string_value(json_object_get(res(v), "statusMessage")), "fake completed");
	json_decref(v);
	r = by_id(&a, "tasks/result", tid);
	assert_string_equal(result_text(res(r)), "job: alpha");
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(res(r), "_meta"),
									      "io.modelcontextprotocol/related-task"),
							      "taskId")),
			    tid);
	json_decref(r);
	/* A finished task cannot be cancelled (-32602, from the connector). */
	r = by_id(&a, "tasks/cancel", tid);
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	/* B heard nothing of it. */
	while ((v = mcp_peer_read(&b, 300))) {
		assert_string_not_equal(json_string_value(json_object_get(v, "method")) ?: "",
					"notifications/tasks/status");
		json_decref(v);
	}

	/* Cancel a running one: the connector cancels it, the id is cordon's. */
	r = task_call(&a, "fake__job", "beta");
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(created(r), "taskId")));
	json_decref(r);
	r = by_id(&a, "tasks/cancel", tid);
	assert_string_equal(status_of(r), "cancelled");
	assert_string_equal(json_string_value(json_object_get(res(r), "taskId")), tid);
	json_decref(r);
	r = rcd_req(&a, "tasks/list", NULL);
	assert_int_equal(json_array_size(json_object_get(res(r), "tasks")), 2);
	json_decref(r);
	r = by_id(&a, "tasks/get", "up-0");
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
}

static void test_own_task_for_plain_tool(void **state)
{
	struct mcp_peer a;
	json_t *r;
	char tid[64];

	(void)state;
	json_decref(session(&a, true));
	r = task_call(&a, "fake__echo", "own");
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(created(r), "taskId")));
	json_decref(r);
	r = by_id(&a, "tasks/result", tid);
	assert_string_equal(result_text(res(r)), "echo: own");
	json_decref(r);
	r = by_id(&a, "tasks/get", tid);
	assert_string_equal(status_of(r), "completed");
	json_decref(r);
	mcp_peer_disconnect(&a);
}

/* A write held for approval as a task, approved after longer than
 * --approval-wait: tasks/result (asked while it was held) gives the
 * result; the connector ran it exactly once. upstream: tappend, which the
 * connector runs as its own task once approved. */
static void held_approved(const char *tool, const char *text)
{
	struct mcp_peer a;
	json_t *r, *t;
	char tid[64], code[32];
	int base = rcd_out_lines(&C);
	long id;

	json_decref(session(&a, true));
	r = task_call(&a, tool, text);
	t = created(r);
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(t, "taskId")));
	pending_code(code, sizeof(code));
	assert_non_null(strstr(json_string_value(json_object_get(t, "statusMessage")), code));
	assert_non_null(json_string_value(
		json_object_get(json_object_get(res(r), "_meta"), "io.modelcontextprotocol/model-immediate-response")));
	json_decref(r);
	id = mcp_peer_send_request(&a, "tasks/result", json_pack("{s:s}", "taskId", tid));
	sleep(3); /* beyond --approval-wait (2 s): a task is not timed out */
	r = by_id(&a, "tasks/get", tid);
	assert_string_equal(status_of(r), "working");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", code, (char *)NULL), 0);
	r = mcp_peer_wait(&a, id, 20000);
	assert_non_null(r);
	assert_string_equal(result_text(res(r)), "appended");
	assert_false(json_is_true(json_object_get(res(r), "isError")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(res(r), "_meta"),
									      "io.modelcontextprotocol/related-task"),
							      "taskId")),
			    tid);
	json_decref(r);
	r = by_id(&a, "tasks/get", tid);
	assert_string_equal(status_of(r), "completed");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base + 1);
	/* Fetched again: the same result, nothing runs again. */
	r = by_id(&a, "tasks/result", tid);
	assert_string_equal(result_text(res(r)), "appended");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base + 1);
	mcp_peer_disconnect(&a);
}

static void test_held_approved(void **state)
{
	(void)state;
	held_approved("fake__append", "held-own");
}

static void test_held_approved_upstream(void **state)
{
	(void)state;
	held_approved("fake__tappend", "held-upstream");
}

static void test_held_denied_and_cancelled(void **state)
{
	struct mcp_peer a;
	json_t *r, *v;
	char tid[64], code[32];
	int base = rcd_out_lines(&C);

	(void)state;
	json_decref(session(&a, true));
	r = task_call(&a, "fake__append", "denied");
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(created(r), "taskId")));
	json_decref(r);
	pending_code(code, sizeof(code));
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "deny", code, (char *)NULL), 0);
	for (int i = 0; i < 50; i++) {
		r = by_id(&a, "tasks/get", tid);
		if (strcmp(status_of(r), "working") != 0)
			break;
		json_decref(r);
		usleep(100 * 1000);
	}
	assert_string_equal(status_of(r), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(res(r), "statusMessage")), "denied"));
	json_decref(r);
	r = by_id(&a, "tasks/result", tid);
	assert_true(json_is_true(json_object_get(res(r), "isError")));
	assert_non_null(strstr(result_text(res(r)), "denied"));
	json_decref(r);

	/* Cancelled while held: the approval is withdrawn, nothing runs. */
	r = task_call(&a, "fake__append", "cancelled");
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(created(r), "taskId")));
	json_decref(r);
	pending_code(code, sizeof(code));
	r = by_id(&a, "tasks/cancel", tid);
	assert_string_equal(status_of(r), "cancelled");
	json_decref(r);
	v = rcd_ctl_json(&C, "approvals", "list", NULL);
	assert_int_equal(json_array_size(rcd_first_array(v)), 0);
	json_decref(v);
	r = by_id(&a, "tasks/cancel", tid);
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base);
	mcp_peer_disconnect(&a);
}

/* A held approval that expires: the task fails, naming it; nothing ran. */
static void test_held_expired(void **state)
{
	struct mcp_peer a;
	json_t *r = NULL;
	char tid[64];
	int base = rcd_out_lines(&C);

	(void)state;
	json_decref(session(&a, true));
	r = task_call(&a, "fast__append", "expires");
	snprintf(tid, sizeof(tid), "%s", json_string_value(json_object_get(created(r), "taskId")));
	json_decref(r);
	for (int i = 0; i < 200; i++) {
		r = by_id(&a, "tasks/get", tid);
		if (strcmp(status_of(r), "working") != 0)
			break;
		json_decref(r);
		r = NULL;
		usleep(100 * 1000);
	}
	assert_non_null(r);
	assert_string_equal(status_of(r), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(res(r), "statusMessage")), "expired"));
	json_decref(r);
	r = by_id(&a, "tasks/result", tid);
	assert_true(json_is_true(json_object_get(res(r), "isError")));
	assert_non_null(strstr(result_text(res(r)), "expired"));
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base);
	mcp_peer_disconnect(&a);
}

/* No task support: the wait of --approval-wait, then an isError result
 * naming the code; the identical call after approval runs. */
static void test_without_tasks_unchanged(void **state)
{
	struct mcp_peer p;
	json_t *r;
	char code[32];
	int base = rcd_out_lines(&C);

	(void)state;
	json_decref(session(&p, false));
	r = rcd_req(&p, "tools/call",
		    json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "plain"));
	assert_true(json_is_true(json_object_get(res(r), "isError")));
	pending_code(code, sizeof(code));
	assert_non_null(strstr(result_text(res(r)), code));
	json_decref(r);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", code, (char *)NULL), 0);
	r = rcd_req(&p, "tools/call",
		    json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "plain"));
	assert_string_equal(result_text(res(r)), "appended");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base + 1);
	mcp_peer_disconnect(&p);
}

/* Last: cordond exits cleanly with tasks of every kind behind it (0 after
 * SIGTERM; under a sanitizer, no report). */
static void test_clean_exit(void **state)
{
	struct mcp_peer a;
	json_t *r;

	(void)state;
	json_decref(session(&a, true));
	/* One held, one passed through, left open. */
	json_decref(task_call(&a, "fake__append", "left held"));
	json_decref(task_call(&a, "fake__job", "left running"));
	r = rcd_req(&a, "tasks/list", NULL);
	assert_int_equal(json_array_size(json_object_get(res(r), "tasks")), 2);
	json_decref(r);
	rcd_stop_clean(&C);
	mcp_peer_disconnect(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capability_and_listing),
		cmocka_unit_test(test_passthrough_and_isolation),
		cmocka_unit_test(test_own_task_for_plain_tool),
		cmocka_unit_test(test_held_approved),
		cmocka_unit_test(test_held_approved_upstream),
		cmocka_unit_test(test_held_denied_and_cancelled),
		cmocka_unit_test(test_without_tasks_unchanged),
		cmocka_unit_test(test_held_expired),
		cmocka_unit_test(test_clean_exit),
	};

	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "cordond-tasks");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
