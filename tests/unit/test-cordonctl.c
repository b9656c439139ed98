/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordonctl against the real operator server in this test process (daemon
 * core = the test stand-in, state = a real database): exit codes, --json,
 * --help, socket selection, the approval flow including critical codes, and
 * `cordonctl mcp` as a pure byte relay that waits for the answers still due
 * when stdin ends. */

#include <grp.h>
#include <regex.h>

#include "operator-socket-test.h"

struct fx {
	struct bt *t;
	struct cordon_daemon *d;
	char *dir, *path;
	int lfd;
	struct cordon_operator *op;
	char ctl[4096];
	char out[1 << 17], err[1 << 14];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	f->d = test_daemon_new(f->t);
	f->dir = cordon_test_mkdtemp("ctl");
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_true(asprintf(&f->path, "%s/operator.sock", f->dir) > 0);
	f->lfd = sock_listen(f->path);
	assert_int_equal(chmod(f->path, 0666), 0);
	assert_int_equal(cordon_operator_start_opts(f->d, f->lfd, getgid(), NULL, &f->op), 0);
	snprintf(f->ctl, sizeof(f->ctl), "%s/cordonctl", cordon_test_env("CORDON_TOOLS_DIR", "build/tools"));
	if (access(f->ctl, X_OK) != 0)
		fail_msg("%s is not built", f->ctl);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	cordon_operator_free(f->op);
	close(f->lfd);
	assert_int_equal(f->d->uncommitted, 0);
	test_daemon_free(f->d);
	bt_free(f->t);
	assert_int_equal(cordon_test_rm_rf(f->dir), 0);
	free(f->dir);
	free(f->path);
	free(f);
	return 0;
}

/* Reads what is available from fd into buf (NUL-terminated); returns false at EOF. */
static bool drain(int fd, char *buf, size_t size, size_t *n)
{
	for (;;) {
		ssize_t k = read(fd, buf + *n, size - 1 - *n);

		if (k > 0) {
			*n += (size_t)k;
			buf[*n] = 0;
			continue;
		}
		return k != 0;
	}
}

/* Runs cordonctl ARGS with --socket (unless no_socket), optionally as uid,
 * pumping the server loop; returns the exit code. */
static int ctl_as(struct fx *f, uid_t uid, bool no_socket, const char *const *args)
{
	const char *argv[32] = { f->ctl };
	int po[2], pe[2], argc = 1, st;
	size_t no = 0, ne = 0;
	bool oo = true, eo = true;
	pid_t pid;

	if (!no_socket) {
		argv[argc++] = "--socket";
		argv[argc++] = f->path;
	}
	for (; *args; args++)
		argv[argc++] = *args;
	argv[argc] = NULL;
	assert_int_equal(pipe2(po, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC | O_NONBLOCK), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		if (uid != (uid_t)-1) {
			CHILD_CHECK(setgroups(0, NULL) == 0);
			CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
			CHILD_CHECK(setresuid(uid, uid, uid) == 0);
		}
		execv(f->ctl, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	f->out[0] = f->err[0] = 0;
	while (oo || eo) {
		if (oo)
			oo = drain(po[0], f->out, sizeof(f->out), &no);
		if (eo)
			eo = drain(pe[0], f->err, sizeof(f->err), &ne);
		assert_true(cordon_loop_run_once(f->d->loop, 5) >= 0);
	}
	close(po[0]);
	close(pe[0]);
	st = pump_until_exit(f->d->loop, pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

#define CTL(f, ...) ctl_as((f), (uid_t)-1, false, (const char *[]){ __VA_ARGS__, NULL })

static void test_help_and_usage(void **state)
{
	struct fx *f = *state;

	assert_int_equal(CTL(f, "--help"), 0);
	assert_non_null(strstr(f->out, "Usage: cordonctl"));
	assert_non_null(strstr(f->out, "Exit codes: 0 ok, 1 refused/failed, 2 usage, 3 cannot connect"));
	assert_int_equal(ctl_as(f, (uid_t)-1, true, (const char *[]){ NULL }), 2);
	assert_non_null(strstr(f->err, "Usage"));
	assert_int_equal(CTL(f, "approvals", "--help"), 0);
	assert_non_null(strstr(f->out, "cordonctl approvals approve ID|CODE [--code CONFIRMATION]"));
	assert_int_equal(CTL(f, "approvals", "approve", "--help"), 0);
	assert_non_null(strstr(f->out, "Critical tier needs --code"));
	assert_int_equal(CTL(f, "mcp", "--help"), 0);
	assert_non_null(strstr(f->out, "\"args\": [\"mcp\"]"));
	/* every command has --help */
	for (const struct cordon_op_spec *op = cordon_op_table; op->name; op++) {
		char word[64], *dot;

		snprintf(word, sizeof(word), "%s", op->name);
		dot = strchr(word, '.');
		if (dot) {
			*dot = 0;
			assert_int_equal(CTL(f, word, dot + 1, "--help"), 0);
		} else
			assert_int_equal(CTL(f, word, "--help"), 0);
		assert_non_null(strstr(f->out, "Usage: cordonctl"));
	}

	assert_int_equal(CTL(f, "frobnicate"), 2);
	assert_non_null(strstr(f->err, "unknown command"));
	assert_int_equal(CTL(f, "status", "--bogus"), 2);
	assert_int_equal(CTL(f, "grants", "add", "fs"), 2);
	assert_non_null(strstr(f->err, "Usage: cordonctl grants add CONNECTOR TOOL"));
	assert_int_equal(CTL(f, "status", "extra"), 2);
	assert_int_equal(CTL(f, "audit", "tail", "--count", "0"), 2);
	assert_int_equal(CTL(f, "revoke-all"), 2);
	assert_non_null(strstr(f->err, "--yes"));
	assert_int_equal(CTL(f, "inventory", "review", "fs", "read_file"), 2);
	assert_non_null(strstr(f->err, "--fingerprint"));
	assert_int_equal(json_array_size(f->d->events), 0);
}

/* Checks that f->err is exactly one JSON object naming code, with the
 * schema version, and that nothing went to stdout. */
static void assert_json_usage_error(struct fx *f, const char *code)
{
	json_error_t e;
	json_t *v = json_loads(f->err, 0, &e);

	if (!v)
		fail_msg("stderr is not one JSON object (%s): %s", e.text, f->err);
	assert_string_equal(f->out, "");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "error"), "code")), code);
	assert_true(json_is_string(json_object_get(json_object_get(v, "error"), "message")));
	assert_int_equal(json_integer_value(json_object_get(v, "schema_version")), 1);
	json_decref(v);
}

/* --json: cordonctl's own usage errors are one JSON object on stderr too,
 * each class with its code; the exit code stays 2 and nothing reaches the
 * daemon. */
static void test_json_usage_errors(void **state)
{
	struct fx *f = *state;

	/* unknown verb, with --json before or after it */
	assert_int_equal(CTL(f, "--json", "frobnicate"), 2);
	assert_json_usage_error(f, "unknown-command");
	assert_int_equal(CTL(f, "grants", "frobnicate", "--json"), 2);
	assert_json_usage_error(f, "unknown-command");
	/* no command, no subcommand */
	assert_int_equal(ctl_as(f, (uid_t)-1, true, (const char *[]){ "--json", NULL }), 2);
	assert_json_usage_error(f, "missing-argument");
	assert_int_equal(CTL(f, "--json", "approvals"), 2);
	assert_json_usage_error(f, "missing-argument");
	/* missing positional, missing option value, missing confirmation */
	assert_int_equal(CTL(f, "--json", "grants", "add", "fs"), 2);
	assert_json_usage_error(f, "missing-argument");
	assert_non_null(strstr(f->err, "\"usage\": \"grants add CONNECTOR TOOL"));
	assert_int_equal(CTL(f, "--json", "audit", "verify", "--key"), 2);
	assert_json_usage_error(f, "missing-argument");
	assert_int_equal(CTL(f, "--json", "revoke-all"), 2);
	assert_json_usage_error(f, "missing-argument");
	assert_int_equal(CTL(f, "--json", "inventory", "review", "fs", "read_file"), 2);
	assert_json_usage_error(f, "missing-argument");
	/* bad option: unknown, before --json on the line; bad value; extra */
	assert_int_equal(CTL(f, "status", "--bogus", "--json"), 2);
	assert_json_usage_error(f, "unknown-option");
	assert_int_equal(CTL(f, "--json", "audit", "tail", "--count", "0"), 2);
	assert_json_usage_error(f, "invalid-argument");
	assert_int_equal(CTL(f, "--json", "status", "extra"), 2);
	assert_json_usage_error(f, "invalid-argument");
	/* the verbs dispatched outside the command table too */
	assert_int_equal(CTL(f, "--json", "audit", "export", "--after-seq", "x"), 2);
	assert_json_usage_error(f, "invalid-argument");
	assert_int_equal(CTL(f, "--json", "approvals", "watch", "extra"), 2);
	assert_json_usage_error(f, "invalid-argument");
	/* without --json the same errors stay plain text */
	assert_int_equal(CTL(f, "status", "--bogus"), 2);
	assert_string_equal(f->err, "cordonctl: unknown option --bogus\n");
	assert_int_equal(json_array_size(f->d->events), 0);
}

static void test_connect_errors(void **state)
{
	struct fx *f = *state;
	char env[4200];

	assert_int_equal(
		ctl_as(f, (uid_t)-1, true, (const char *[]){ "--socket", "/nonexistent/op.sock", "status", NULL }), 3);
	assert_non_null(strstr(f->err, "cannot connect to /nonexistent/op.sock"));
	/* --json: the same error is one JSON object on stderr, nothing else */
	assert_int_equal(ctl_as(f, (uid_t)-1, true,
				(const char *[]){ "--json", "--socket", "/nonexistent/op.sock", "status", NULL }),
			 3);
	assert_json_usage_error(f, "cannot-connect");
	assert_non_null(strstr(f->err, "cannot connect to /nonexistent/op.sock"));
	/* CORDON_OPERATOR_SOCKET is honoured when --socket is absent */
	snprintf(env, sizeof(env), "%s", f->path);
	setenv("CORDON_OPERATOR_SOCKET", env, 1);
	assert_int_equal(ctl_as(f, (uid_t)-1, true, (const char *[]){ "status", NULL }), 0);
	setenv("CORDON_OPERATOR_SOCKET", "/nonexistent/x.sock", 1);
	assert_int_equal(ctl_as(f, (uid_t)-1, true, (const char *[]){ "status", NULL }), 3);
	unsetenv("CORDON_OPERATOR_SOCKET");
}

static void test_permission_denied(void **state)
{
	struct fx *f = *state;

	if (getuid() != 0) {
		/* as an ordinary user the server was started with our own gid,
		 * so we are an operator; the refusal needs another uid */
		assert_int_equal(CTL(f, "status"), 0);
		return;
	}
	/* uid 65534, gid 65534: not root, not in the operator group (gid 0) */
	assert_int_equal(ctl_as(f, 65534, false, (const char *[]){ "status", NULL }), 4);
	assert_non_null(strstr(f->err, "permission-denied"));
	assert_int_equal(ctl_as(f, 65534, false, (const char *[]){ "revoke-all", "--yes", NULL }), 4);
	assert_int_equal(json_array_size(f->d->events), 0);
}

static void test_status_json(void **state)
{
	struct fx *f = *state;
	json_t *v;
	json_error_t e;

	assert_int_equal(CTL(f, "status"), 0);
	assert_non_null(strstr(f->out, "health:               ok\n"));
	assert_int_equal(CTL(f, "status", "--json"), 0);
	v = json_loads(f->out, 0, &e);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "health")), "ok");
	assert_int_equal(json_integer_value(json_object_get(v, "schema_version")), 1);
	json_decref(v);
	/* --json: an error is one JSON object on stderr, nothing on stdout */
	assert_int_equal(CTL(f, "--json", "connectors", "add", "nope"), 1);
	assert_string_equal(f->out, "");
	v = json_loads(f->err, 0, &e);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "error"), "code")), "not-found");
	assert_int_equal(json_integer_value(json_object_get(v, "schema_version")), 1);
	json_decref(v);
	assert_int_equal(CTL(f, "--json", "capabilities"), 0);
	v = json_loads(f->out, 0, &e);
	assert_true(json_equal(v, f->d->caps));
	json_decref(v);
	assert_int_equal(CTL(f, "connectors", "list"), 0);
	assert_non_null(strstr(f->out, "fs "));
	assert_int_equal(CTL(f, "connectors", "add", "nope"), 1);
	assert_non_null(strstr(f->err, "not-found: connector \"nope\": no profile for connector nope"));
}

static void add_request(struct fx *f, const char *tool, const char *args, struct cordon_approval_info *info)
{
	struct bt_call c;
	json_t *a = NULL;

	bt_call_init(f->t, &c, "s1", tool, args);
	assert_int_equal(cordon_approval_request(f->t->db, f->t->key, NULL, &c.call, info), 0);
	assert_int_equal(cordon_canon_decode(args, strlen(args), NULL, &a, NULL), 0);
	assert_int_equal(json_object_set_new(f->d->args, info->id, a), 0);
	bt_call_done(&c);
}

static void test_approval_flow(void **state)
{
	struct fx *f = *state;
	struct cordon_approval_info w, crit, got;
	json_t *v;
	json_error_t e;
	char code[16];

	add_request(f, "write_file", "{\"path\":\"/work/x\",\"api_key\":\"sk-live-0123456789abcdef\"}", &w);
	add_request(f, "run_command", "{\"cmd\":\"reboot\"}", &crit);

	assert_int_equal(CTL(f, "approvals", "list"), 0);
	assert_non_null(strstr(f->out, w.display_code));
	assert_non_null(strstr(f->out, crit.display_code));
	/* Times are UTC ISO 8601 with their zone, to the second. */
	{
		const char *p = strstr(f->out, w.display_code);
		regex_t re;

		assert_non_null(p);
		assert_int_equal(
			regcomp(&re, " [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z[ \n]", REG_EXTENDED), 0);
		assert_int_equal(regexec(&re, p, 0, NULL, 0), 0);
		assert_int_equal(CTL(f, "approvals", "show", w.display_code), 0);
		assert_int_equal(regexec(&re, strstr(f->out, "  expires:"), 0, NULL, 0), 0);
		regfree(&re);
	}
	assert_int_equal(CTL(f, "approvals", "list", "--json"), 0);
	v = json_loads(f->out, 0, &e);
	assert_int_equal(json_array_size(v), 2);
	json_decref(v);

	assert_int_equal(CTL(f, "approvals", "show", w.display_code), 0);
	assert_non_null(strstr(f->out, "\"api_key\": <masked: 24 bytes>"));
	assert_null(strstr(f->out, "0123456789abcdef"));
	assert_non_null(strstr(f->out, "\"path\": \"/work/x\""));
	assert_null(strstr(f->out, "CRITICAL"));

	assert_int_equal(CTL(f, "approvals", "approve", w.display_code), 0);
	assert_non_null(strstr(f->out, ": approved"));
	assert_int_equal(cordon_approval_get(f->t->db, w.id, &got), 0);
	assert_int_equal(got.state, CORDON_APPROVAL_APPROVED);
	assert_int_equal(CTL(f, "approvals", "approve", w.id), 8);
	assert_non_null(strstr(f->err, "already-decided"));

	/* critical: refused without the code, the code comes from show */
	assert_int_equal(CTL(f, "approvals", "approve", crit.id), 1);
	assert_non_null(strstr(f->err, "confirmation-code"));
	assert_int_equal(CTL(f, "approvals", "show", crit.id, "--json"), 0);
	v = json_loads(f->out, 0, &e);
	snprintf(code, sizeof(code), "%s", json_string_value(json_object_get(v, "confirmation_code")));
	json_decref(v);
	assert_int_equal(strlen(code), CORDON_CONFIRM_CODE_LEN);
	assert_int_equal(CTL(f, "approvals", "show", crit.id), 0);
	assert_non_null(strstr(f->out, "CRITICAL:   approve with: cordonctl approvals approve"));
	assert_int_equal(CTL(f, "approvals", "approve", crit.id, "--code", "WRONGCOD"), 1);
	assert_int_equal(CTL(f, "approvals", "approve", crit.id, "--code", code), 0);
	assert_int_equal(cordon_approval_get(f->t->db, crit.id, &got), 0);
	assert_int_equal(got.state, CORDON_APPROVAL_APPROVED);
	assert_int_equal(CTL(f, "approvals", "deny", "ap_nope"), 6);
	assert_non_null(strstr(f->err, "not-found"));
}

/* Issue 14: a code that is no longer pending says why, with its own error
 * code and exit status: expired (7); already used, denied or revoked (8);
 * unknown (6). Before, an expired or used code read as not found. */
static void test_approval_lookup_distinguishes_expired_consumed_denied_unknown(void **state)
{
	struct fx *f = *state;
	struct cordon_approval_info ex, used, denied, gone;
	struct bt_call c;

	add_request(f, "write_file", "{\"n\":1}", &ex);
	cordon_virtual_clock_advance(&f->t->clock, 121 * SEC);
	assert_int_equal(CTL(f, "approvals", "approve", ex.display_code), 7);
	assert_non_null(strstr(f->err, "expired: approval"));
	assert_int_equal(CTL(f, "approvals", "show", ex.display_code, "--json"), 0);
	assert_non_null(strstr(f->out, "\"state\": \"expired\""));

	add_request(f, "write_file", "{\"n\":2}", &denied);
	assert_int_equal(CTL(f, "approvals", "deny", denied.display_code), 0);
	assert_int_equal(CTL(f, "approvals", "approve", denied.display_code), 8);
	assert_non_null(strstr(f->err, "already-denied: "));

	add_request(f, "write_file", "{\"n\":3}", &used);
	assert_int_equal(CTL(f, "approvals", "approve", used.display_code), 0);
	bt_call_init(f->t, &c, "s1", "write_file", "{\"n\":3}");
	assert_int_equal(bt_begin(f->t, &c.call, used.id, NULL, NULL), 0);
	bt_call_done(&c);
	assert_int_equal(CTL(f, "approvals", "deny", used.display_code), 8);
	assert_non_null(strstr(f->err, "already-used: "));

	add_request(f, "delete_file", "{\"n\":4}", &gone);
	assert_int_equal(CTL(f, "grants", "remove", "fs", "delete_file"), 0);
	assert_int_equal(CTL(f, "approvals", "approve", gone.display_code), 8);
	assert_non_null(strstr(f->err, "revoked: "));

	assert_int_equal(CTL(f, "approvals", "approve", "ZZZZZZZZ"), 6);
	assert_non_null(strstr(f->err, "not-found: "));
}

static void test_grants_inventory_audit(void **state)
{
	struct fx *f = *state;
	json_t *v;
	json_error_t e;

	assert_int_equal(CTL(f, "grants", "show", "fs"), 0);
	assert_non_null(strstr(f->out, "fs: 5 granted"));
	assert_int_equal(CTL(f, "grants", "remove", "fs", "run_command"), 0);
	assert_non_null(strstr(f->out, "fs/run_command no longer granted"));
	assert_int_equal(CTL(f, "grants", "add", "fs", "bad name!"), 2);
	assert_non_null(strstr(f->err, "invalid-argument"));
	assert_int_equal(CTL(f, "grants", "set", "fs", "read_file,write_file"), 0);
	assert_non_null(strstr(f->out, "grant set (0 added, 2 removed)"));
	assert_int_equal(CTL(f, "grants", "show", "nope"), 1);

	assert_int_equal(CTL(f, "inventory", "show", "fs"), 0);
	assert_non_null(strstr(f->out, "nothing to review"));
	assert_int_equal(CTL(f, "inventory", "show", "fs", "read_file"), 0);
	assert_non_null(strstr(f->out, "cordon tier:   read (granted)"));
	assert_non_null(strstr(f->out, "claims:        {\"readOnlyHint\":true}"));
	assert_int_equal(CTL(f, "inventory", "show", "fs", "write_file"), 0);
	assert_non_null(strstr(f->out, "NOTE:          the connector claims readOnlyHint, cordon's tier is write"));
	assert_int_equal(CTL(f, "inventory", "review", "fs", "read_file", "--fingerprint", bt_fp(f->t, "read_file")),
			 1);
	assert_non_null(strstr(f->err, "already-decided"));

	assert_int_equal(CTL(f, "audit", "tail", "--count", "2", "--json"), 0);
	v = json_loads(f->out, 0, &e);
	assert_int_equal(json_array_size(v), 2);
	json_decref(v);
	assert_int_equal(cordon_audit_checkpoint(f->t->db), 1);
	assert_int_equal(CTL(f, "audit", "verify"), 0);
	assert_non_null(strstr(f->out, "PASS"));
	assert_int_equal(CTL(f, "audit", "verify", "--key", "garbage"), 2);
	assert_int_equal(CTL(f, "actions", "list"), 0);
	assert_non_null(strstr(f->out, "no unresolved actions"));
	assert_int_equal(CTL(f, "delegations", "list"), 0);
	assert_non_null(strstr(f->out, "no delegations"));

	assert_int_equal(CTL(f, "revoke-all", "--yes"), 0);
	assert_non_null(strstr(f->out, "revoked: 2 grants, 0 approvals, 0 delegations; ended 3 connector instances\n"));
	assert_true(test_daemon_saw(f->d, "revoked_all"));
}

/* Bulk review: `inventory show` prints every tool awaiting review and the
 * fingerprint set over them; `inventory review CONNECTOR --all
 * --fingerprint-set H` reviews exactly those, and a set that no longer
 * matches (a tool changed between show and review) changes nothing. */
static void test_inventory_review_all(void **state)
{
	struct fx *f = *state;
	char set[80], cmd[256];
	json_t *v;
	json_error_t e;

	bt_tool_json(f->t, "zz_new_one", "First new tool");
	bt_tool_json(f->t, "zz_new_two", "Second new tool");
	bt_sync(f->t);
	assert_int_equal(CTL(f, "inventory", "show", "fs", "--json"), 0);
	v = json_loads(f->out, 0, &e);
	assert_non_null(v);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "review_set"), "tools")), 2);
	snprintf(set, sizeof(set), "%s",
		 json_string_value(json_object_get(json_object_get(v, "review_set"), "fingerprint_set")));
	json_decref(v);
	assert_int_equal(strlen(set), 64);
	/* The human form names every tool with its fingerprint and tier,
	 * then the one command bound to them. */
	assert_int_equal(CTL(f, "inventory", "show", "fs"), 0);
	assert_non_null(strstr(f->out, "fs/zz_new_one  [pending_review]"));
	assert_non_null(strstr(f->out, "fs/zz_new_two  [pending_review]"));
	assert_non_null(strstr(f->out, bt_fp(f->t, "zz_new_two")));
	assert_non_null(strstr(f->out, "2 tools above await review"));
	snprintf(cmd, sizeof(cmd), "cordonctl inventory review fs --all --fingerprint-set %s\n", set);
	assert_non_null(strstr(f->out, cmd));

	/* usage: the set is required, and a tool name does not go with --all */
	assert_int_equal(CTL(f, "inventory", "review", "fs", "--all"), 2);
	assert_non_null(strstr(f->err, "--fingerprint-set"));
	assert_int_equal(CTL(f, "inventory", "review", "fs", "zz_new_one", "--all", "--fingerprint-set", set), 2);
	assert_int_equal(CTL(f, "inventory", "review-all", "fs", "--fingerprint-set", "XYZ"), 2);
	assert_non_null(strstr(f->err, "invalid-argument"));

	/* The definition changes after the show: the set is stale, nothing is
	 * reviewed. */
	bt_tool_json(f->t, "zz_new_three", "Arrived after the show");
	bt_sync(f->t);
	assert_int_equal(CTL(f, "inventory", "review", "fs", "--all", "--fingerprint-set", set), 1);
	assert_non_null(strstr(f->err, "stale"));
	assert_false(test_daemon_saw(f->d, "policy_changed:fs"));
	assert_int_equal(CTL(f, "inventory", "show", "fs", "--json"), 0);
	v = json_loads(f->out, 0, &e);
	assert_int_equal(json_array_size(json_object_get(v, "tools")), 3);
	snprintf(set, sizeof(set), "%s",
		 json_string_value(json_object_get(json_object_get(v, "review_set"), "fingerprint_set")));
	json_decref(v);
	assert_int_equal(CTL(f, "inventory", "review", "fs", "--all", "--fingerprint-set", set), 0);
	assert_non_null(strstr(f->out, "fs: 3 tools reviewed"));
	assert_non_null(strstr(f->out, "zz_new_three"));
	assert_int_equal(CTL(f, "inventory", "show", "fs"), 0);
	assert_non_null(strstr(f->out, "nothing to review"));
	assert_int_equal(CTL(f, "--json", "inventory", "review-all", "fs", "--fingerprint-set", set), 1);
	assert_non_null(strstr(f->err, "already-decided"));
}

/* A writer on its own connection (another process) appending audit records
 * until stop is readable. Exits 0, or 1 when an append failed. */
static pid_t start_writer(const char *db_path, int stop_fd)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct cordon_db_options o = { .busy_timeout_ms = 5000 };
		struct cordon_db *db = NULL;
		struct cordon_diag d = {};
		struct cordon_actor sys = cordon_actor_system();
		struct pollfd p = { .fd = stop_fd, .events = POLLIN };
		unsigned n = 0;

		CHILD_CHECK(cordon_db_open(db_path, &o, &db, &d) == 0);
		while (poll(&p, 1, 0) == 0) {
			struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR,
							 .actor = &sys, .connector = "fs",
							 .reason = "concurrent-writer" };

			CHILD_CHECK(cordon_audit_append(db, &ev) == 0);
			n++;
			/* Between commits the server's connection (its busy
			 * timeout is the fixture's 200 ms) gets its turn. */
			(void)usleep(2000);
		}
		cordon_db_close(db);
		_exit(n > 0 ? 0 : 1);
	}
	return pid;
}

/* cordonctl backup PATH: a consistent copy while another connection keeps
 * writing; the copy opens with the current code and its audit chain
 * verifies; the file is the operator's, 0600, never overwritten. */
static void test_backup_under_concurrent_writes(void **state)
{
	struct fx *f = *state;
	char path[4200];
	struct cordon_db *b = NULL;
	struct cordon_diag d = {};
	struct cordon_audit_report rep;
	struct stat st;
	json_t *v;
	json_error_t e;
	int stop[2], status;
	pid_t w;

	snprintf(path, sizeof(path), "%s/backup.db", f->dir);
	assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
	w = start_writer(f->t->path, stop[0]);
	for (int i = 0; i < 3; i++) {
		char p[4300];

		snprintf(p, sizeof(p), "%s.%d", path, i);
		if (CTL(f, "--json", "backup", p) != 0)
			fail_msg("backup: %s", f->err);
		v = json_loads(f->out, 0, &e);
		assert_non_null(v);
		assert_true(json_integer_value(json_object_get(v, "bytes")) > 0);
		json_decref(v);
	}
	assert_int_equal(write(stop[1], "x", 1), 1);
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(stop[0]);
	close(stop[1]);
	for (int i = 0; i < 3; i++) {
		char p[4300];

		snprintf(p, sizeof(p), "%s.%d", path, i);
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(st.st_uid, getuid());
		assert_int_equal(cordon_db_open(p, NULL, &b, &d), 0);
		assert_int_equal(cordon_audit_verify(b, &f->t->verifier, &rep), 0);
		assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
		assert_true(rep.last > 0);
		cordon_db_close(b);
	}
	/* No scratch file is left in the state directory. */
	{
		char tmp[4300];

		snprintf(tmp, sizeof(tmp), "%s-backup", f->t->path);
		assert_int_equal(access(tmp, F_OK), -1);
	}
	/* Never overwrites; without a passed file the daemon refuses. */
	snprintf(path, sizeof(path), "%s/backup.db.0", f->dir);
	assert_int_equal(CTL(f, "backup", path), 1);
	assert_non_null(strstr(f->err, "never overwrites"));
	assert_int_equal(CTL(f, "--json", "backup"), 2);
	assert_json_usage_error(f, "missing-argument");
}

static void test_audit_verify_failure_exit(void **state)
{
	struct fx *f = *state;

	f->d->have_verifier = false;
	assert_int_equal(cordon_audit_checkpoint(f->t->db), 1);
	assert_int_equal(CTL(f, "audit", "verify"), 1);
	assert_non_null(strstr(f->out, "BAD-SIG"));
}

/* Starts `cordonctl mcp` with its stdin and stdout on pipes, naming the
 * gateway socket by the environment or by --socket. Leaves the test's
 * ends open: pin[1] (its stdin) and pout[0] (its stdout). */
static pid_t start_mcp(const struct fx *f, const char *gw, bool by_env, int pin[2], int pout[2])
{
	pid_t pid;

	assert_int_equal(pipe2(pin, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pout, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pin[0], STDIN_FILENO);
		dup2(pout[1], STDOUT_FILENO);
		if (by_env) {
			setenv("CORDON_GATEWAY_SOCKET", gw, 1);
			execl(f->ctl, f->ctl, "mcp", NULL);
		} else
			execl(f->ctl, f->ctl, "mcp", "--socket", gw, NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	return pid;
}

/* cordonctl mcp: bytes in == bytes out, both ways; exits when the gateway
 * closes. The "gateway" is a plain socket in this process. */
static void test_mcp_relay(void **state)
{
	struct fx *f = *state;
	char gw[4200], buf[65536];
	const char in[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n\xff\x00 raw\r\n";
	const char reply[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\x01\x02";
	int gfd, cfd, pin[2], pout[2], st;
	size_t n = 0;
	pid_t pid;

	snprintf(gw, sizeof(gw), "%s/gateway.sock", f->dir);
	gfd = sock_listen(gw);
	pid = start_mcp(f, gw, true, pin, pout);
	cfd = accept4(gfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(cfd >= 0);
	assert_int_equal(write(pin[1], in, sizeof(in) - 1), (ssize_t)(sizeof(in) - 1));
	while (n < sizeof(in) - 1) {
		ssize_t k = read(cfd, buf + n, sizeof(buf) - n);

		assert_true(k > 0);
		n += (size_t)k;
	}
	assert_int_equal(n, sizeof(in) - 1);
	assert_memory_equal(buf, in, n);
	assert_int_equal(write(cfd, reply, sizeof(reply) - 1), (ssize_t)(sizeof(reply) - 1));
	close(cfd); /* the gateway ends the session: cordonctl exits */
	n = 0;
	for (;;) {
		ssize_t k = read(pout[0], buf + n, sizeof(buf) - n);

		assert_true(k >= 0);
		if (k == 0)
			break;
		n += (size_t)k;
	}
	assert_int_equal(n, sizeof(reply) - 1);
	assert_memory_equal(buf, reply, n);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);

	/* stdin EOF: the gateway sees EOF on its side too */
	pid = fork();
	assert_true(pid >= 0);
	close(pin[1]);
	close(pout[0]);
	assert_int_equal(pipe2(pin, O_CLOEXEC), 0);
	if (pid == 0) {
		dup2(pin[0], STDIN_FILENO);
		execl(f->ctl, f->ctl, "mcp", "--socket", gw, NULL);
		_exit(127);
	}
	close(pin[0]);
	cfd = accept4(gfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(cfd >= 0);
	close(pin[1]);
	assert_int_equal(read(cfd, buf, sizeof(buf)), 0);
	close(cfd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(gfd);

	/* no gateway: exit 3 */
	assert_int_equal(
		ctl_as(f, (uid_t)-1, true, (const char *[]){ "mcp", "--socket", "/nonexistent/gw.sock", NULL }), 3);
}

/* Whether fd has nothing to read (no byte, no EOF) for ms milliseconds. */
static bool quiet_for(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

/* cordonctl mcp, stdin ending with requests in flight (issue 13): the write
 * side stays open until every request sent is answered or cancelled (the
 * daemon ends a session at its client's EOF), the answers are printed, then
 * the gateway sees EOF and cordonctl exits 0. The "gateway" answers like
 * cordond and closes at EOF. */
static void test_mcp_stdin_eof_waits_for_answers(void **state)
{
	struct fx *f = *state;
	char gw[4200], buf[65536];
	const char in[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{}}\n"
			  "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":\"x\"}\n"
			  "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\"}\n"
			  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
			  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":8}}\n";
	/* Answers interleaved with a server notification and a request. */
	const char a7[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n"
			  "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n";
	const char ax[] = "{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\"}\n"
			  "{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":\"\\u0078\"}\n";
	int gfd, cfd, pin[2], pout[2], st;
	size_t n = 0;
	pid_t pid;

	snprintf(gw, sizeof(gw), "%s/gateway.sock", f->dir);
	gfd = sock_listen(gw);
	pid = start_mcp(f, gw, false, pin, pout);
	cfd = accept4(gfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(cfd >= 0);
	assert_int_equal(write(pin[1], in, sizeof(in) - 1), (ssize_t)(sizeof(in) - 1));
	close(pin[1]); /* the client is done sending */
	while (n < sizeof(in) - 1) {
		ssize_t k = read(cfd, buf + n, sizeof(buf) - n);

		assert_true(k > 0);
		n += (size_t)k;
	}
	assert_memory_equal(buf, in, n);
	/* Two answers due (8 was cancelled): no EOF while the "connector"
	 * takes a second. */
	assert_true(quiet_for(cfd, 1000));
	assert_int_equal(write(cfd, a7, sizeof(a7) - 1), (ssize_t)(sizeof(a7) - 1));
	assert_true(quiet_for(cfd, 300)); /* "x" is still due */
	assert_int_equal(write(cfd, ax, sizeof(ax) - 1), (ssize_t)(sizeof(ax) - 1));
	assert_int_equal(read(cfd, buf, sizeof(buf)), 0); /* now the end */
	close(cfd);
	n = 0;
	for (;;) {
		ssize_t k = read(pout[0], buf + n, sizeof(buf) - n);

		assert_true(k >= 0);
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(pout[0]);
	assert_int_equal(n, sizeof(a7) - 1 + sizeof(ax) - 1);
	assert_memory_equal(buf, a7, sizeof(a7) - 1);
	assert_memory_equal(buf + sizeof(a7) - 1, ax, sizeof(ax) - 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(gfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_help_and_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_usage_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approval_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approval_lookup_distinguishes_expired_consumed_denied_unknown,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants_inventory_audit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inventory_review_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backup_under_concurrent_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_failure_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mcp_relay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mcp_stdin_eof_waits_for_answers, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
