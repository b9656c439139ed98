/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Security-suite fixture for the authorization layer: the broker unit
 * fixture (tests/unit/broker-test.h: a real SQLite database in a temp dir,
 * a virtual clock, a fixed audit signer and process key, connector "fs"
 * installed and reviewed), plus a REAL connector process
 * (tests/helpers/evil-connector) driven over stdio exactly in the order the
 * daemon's tools/call path uses (broker/lib/broker.h):
 *   decide -> approval -> cordon_action_begin -> cordon_action_dispatched ->
 *   send the canonical arguments -> read the result -> cordon_action_complete
 * so a test can count the connector's external effect (lines appended to a
 * file) instead of trusting the ledger's own word.
 *
 * Layer: this exercises libcordon-broker and a real connector process. The
 * daemon (cordond) glues exactly these calls to MCP sessions; until it lands
 * the gateway-level variants of these tests are listed as gaps in
 * docs/security-tests.md. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>

#include "../unit/broker-test.h"
#include "mcp-client.h"

static inline char *sec_helper(const char *name)
{
	char *p;
	const char *dirs[] = { cordon_test_env("CORDON_HELPERS_DIR", "build/tests/helpers"), NULL };
	char alt[4096];

	snprintf(alt, sizeof(alt), "%s/tests", cordon_test_env("CORDON_BUILD_DIR", "build"));
	dirs[1] = alt;
	for (size_t i = 0; i < 2; i++) {
		if (asprintf(&p, "%s/%s", dirs[i], name) < 0)
			abort();
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	cordon_test_skip("helper %s not built", name);
}

/* Starts evil-connector MODE [ARG] as a plain child process and initializes it. */
static inline void sec_connector_start(struct mcp_peer *peer, const char *mode, const char *arg)
{
	char *bin = sec_helper("evil-connector");
	char *argv[] = { bin, (char *)mode, (char *)arg, NULL };
	json_t *init;

	assert_int_equal(mcp_peer_start(peer, argv), 0);
	init = mcp_peer_initialize(peer, "2025-06-18");
	assert_non_null(init);
	json_decref(init);
	free(bin);
}

static inline void sec_connector_stop(struct mcp_peer *peer)
{
	int st = mcp_peer_stop(peer, 5000);

	assert_true(st >= 0);
	free(peer->buf);
	peer->buf = NULL;
}

/* Lines in a file (the connector's effect count); 0 when absent. */
static inline int sec_count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		if (c == '\n')
			n++;
	fclose(f);
	return n;
}

enum sec_dispatch_outcome {
	SEC_EXECUTED = 1, /* sent to the connector, result relayed */
	SEC_STORED = 2,	  /* answered from the idempotency store, nothing sent */
};

/* One tools/call through the broker core to the connector. Returns
 * SEC_EXECUTED / SEC_STORED, or begin's -errno (nothing sent). *ret_result
 * (may be NULL) gets the relayed result text (malloc'd). */
static inline int sec_dispatch(struct bt *t, struct mcp_peer *peer, const struct cordon_call *call,
			       const char *approval_id, const char *idem, char **ret_result)
{
	struct cordon_action_begin b = { .call = *call, .approval_id = approval_id, .idempotency_key = idem };
	struct cordon_action_begin_result res = {};
	json_t *args, *result;
	char *text;
	int r;

	r = cordon_action_begin(t->db, t->key, &b, &res);
	if (r < 0)
		return r;
	if (res.outcome == CORDON_BEGIN_STORED_RESULT) {
		if (ret_result)
			*ret_result = strndup(res.result, res.result_len);
		cordon_action_begin_result_done(&res);
		return SEC_STORED;
	}
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	/* The broker forwards the canonical bytes it decoded, never client text. */
	args = json_loadb(call->arguments_jcs, call->arguments_jcs_len, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(args);
	result = mcp_peer_call(peer, call->tool, args, 10000);
	assert_non_null(result);
	text = json_dumps(result, JSON_COMPACT);
	json_decref(result);
	assert_non_null(text);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, text, strlen(text)), 0);
	if (ret_result)
		*ret_result = text;
	else
		free(text);
	cordon_action_begin_result_done(&res);
	return SEC_EXECUTED;
}

/* Verifies the audit chain and returns the verdict. */
static inline enum cordon_audit_verdict sec_verify(struct bt *t)
{
	struct cordon_audit_report rep;
	char buf[512];

	assert_int_equal(cordon_audit_verify(t->db, &t->verifier, &rep), 0);
	cordon_audit_report_format(&rep, buf, sizeof(buf));
	printf("  audit verify: %s\n", buf);
	return rep.verdict;
}

/* Counts open fds of this process (for the no-leak checks). */
static inline int sec_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}
