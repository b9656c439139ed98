/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordonctl: the operator CLI of cordond (operator socket), and `cordonctl
 * mcp`, a stdio <-> gateway socket byte relay for stdio MCP clients (which
 * watches request ids go by, so that when stdin ends it waits for the
 * answers still due).
 *
 * Every command is one request on the operator protocol (operator-proto.h);
 * this program only builds the request and renders the response. Human
 * output by default, --json for the raw result. Exit codes:
 *   0  success
 *   1  the operation was refused or failed (the daemon's error is printed),
 *      or `audit verify` found a problem
 *   2  usage error
 *   3  cannot connect to the socket (missing, refused)
 *   4  permission denied (not root and not in the operator group)
 *   5  protocol error (malformed or missing response) */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "version-flag.h"
#include "cleanup.h"
#include "mcp-track.h"
#include "operator-proto.h"
#include "paths.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_CONNECT = 3,
	EXIT_DENIED = 4,
	EXIT_PROTOCOL = 5,
	/* approvals show/approve/deny (issue 14): why the approval could not
	 * be shown or decided. */
	EXIT_APPROVAL_UNKNOWN = 6,  /* no approval has that id or display code */
	EXIT_APPROVAL_EXPIRED = 7,  /* it expired before a decision */
	EXIT_APPROVAL_FINISHED = 8, /* already used, denied, revoked or approved */
};

/* The exit code of an approvals verb's error code (0: not one of them). */
static int approval_exit_code(const char *op, const char *code)
{
	if (strncmp(op, "approvals.", 10) != 0)
		return 0;
	if (strcmp(code, CORDON_OP_E_NOT_FOUND) == 0)
		return EXIT_APPROVAL_UNKNOWN;
	if (strcmp(code, CORDON_OP_E_EXPIRED) == 0)
		return EXIT_APPROVAL_EXPIRED;
	if (strcmp(code, CORDON_OP_E_USED) == 0 || strcmp(code, CORDON_OP_E_WAS_DENIED) == 0 ||
	    strcmp(code, CORDON_OP_E_REVOKED) == 0 || strcmp(code, CORDON_OP_E_ALREADY) == 0)
		return EXIT_APPROVAL_FINISHED;
	return 0;
}

struct opts {
	const char *socket;
	bool json, help, yes, all, reveal, allow_unknown;
	const char *code, *fingerprint, *key, *connector, *fingerprint_set;
	const char *since, *until, *after_seq; /* audit export: checked by cmd_audit_export() */
	bool follow;
	long count;
	char *pos[8];
	int n_pos;
};

struct command;
typedef int (*build_fn)(const struct command *c, struct opts *o, json_t *args);
typedef void (*render_fn)(const struct opts *o, const json_t *result);

struct command {
	const char *name, *sub;
	const char *op;
	const char *usage;
	const char *help;
	int min_pos, max_pos; /* positionals after the command words */
	bool read;	      /* a read command: --json applies */
	build_fn build;
	render_fn render;
};

/* ---- small rendering helpers ---- */

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static long long num(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* The version of the --json output's shape: every object printed carries
 * it as "schema_version" (list outputs are arrays of records and do not). */
#define JSON_SCHEMA_VERSION 1

/* Prints v as indented JSON; versioned: an object gets "schema_version". */
static void print_json_to(FILE *f, const json_t *v, bool versioned)
{
	_cleanup_(json_decrefp) json_t *copy = NULL;
	char *s;

	if (versioned && json_is_object(v)) {
		copy = json_copy((json_t *)v);
		if (copy && json_object_set_new(copy, "schema_version", json_integer(JSON_SCHEMA_VERSION)) == 0)
			v = copy;
	}
	s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
	if (s) {
		fputs(s, f);
		fputc('\n', f);
		free(s);
	}
}

static void print_json(const json_t *v)
{
	print_json_to(stdout, v, false);
}

/* cordonctl's own usage errors (exit 2). Codes: "unknown-command",
 * "unknown-option", "missing-argument", "invalid-argument". With --json the
 * error is one JSON object on stderr, shaped like the daemon's errors
 * ({"error": {"code", "message"}, "schema_version"}); otherwise one line
 * (and the usage line when there is one). Returns EXIT_USAGE. */
static int usage_error(const struct opts *o, const char *code, const char *usage_line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int usage_error(const struct opts *o, const char *code, const char *usage_line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o->json) {
		_cleanup_(json_decrefp) json_t *e =
			json_pack("{s:{s:s, s:s, s:s?}}", "error", "code", code, "message", msg, "usage", usage_line);

		if (e)
			print_json_to(stderr, e, true);
	} else {
		fprintf(stderr, "cordonctl: %s\n", msg);
		if (usage_line)
			fprintf(stderr, "Usage: cordonctl %s\n", usage_line);
	}
	return EXIT_USAGE;
}

/* The operator socket: --socket, else $CORDON_OPERATOR_SOCKET, else the
 * default path. */
static const char *operator_socket(const struct opts *o)
{
	const char *env = getenv(CORDON_OPERATOR_SOCKET_ENV);

	return o->socket ? o->socket : env ? env : CORDON_OPERATOR_SOCKET_DEFAULT;
}

/* The verbs dispatched outside the command table. */
#define AUDIT_EXPORT_USAGE    "audit export [--since TIME] [--until TIME] [--after-seq N] [--follow]"
#define APPROVALS_WATCH_USAGE "approvals watch [--json] [--connector ID] [--after-seq N]"

/* --json was given: cli_error() prints one JSON object, like usage_error(). */
static bool json_errors;

/* An error of cordonctl itself on the way to or from the daemon (cannot
 * connect, protocol): one line, or with --json one JSON object on stderr
 * shaped like the daemon's errors, so --json output never mixes forms. */
static void cli_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cli_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_errors) {
		_cleanup_(json_decrefp) json_t *e = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);

		if (e)
			print_json_to(stderr, e, true);
	} else
		fprintf(stderr, "cordonctl: %s\n", msg);
}

/* A time from the daemon (RFC 3339 UTC with microseconds) as the operator
 * reads it: UTC, ISO 8601, to the second, with its zone ("...T13:50:00Z"). */
static const char *when(const json_t *o, const char *k, char buf[static 32])
{
	const char *s = json_string_value(json_object_get(o, k));

	if (!s)
		return "-";
	if (strlen(s) > 20 && s[10] == 'T' && s[19] == '.' && s[strlen(s) - 1] == 'Z') {
		snprintf(buf, 32, "%.19sZ", s);
		return buf;
	}
	return s;
}

/* Strings from the daemon are already escaped where they could hide text
 * (definitions, arguments, paths); identifiers are from fixed alphabets. */

static void render_status(const struct opts *o, const json_t *r)
{
	const json_t *a = json_object_get(r, "audit");
	const json_t *bad = json_object_get(r, "profiles_failed"), *b;
	size_t i;

	(void)o;
	printf("health:               %s\n", str(r, "health"));
	/* Profiles cordond could not load: named with the loader's error. */
	json_array_foreach(bad, i, b)
	{
		if (json_object_get(b, "more"))
			printf("profile not loaded:   and %lld more (see the log)\n", num(b, "more"));
		else
			printf("profile not loaded:   %s\n", str(b, "message"));
	}
	printf("connectors:           %lld\n", num(r, "connectors"));
	printf("approvals pending:    %lld\n", num(r, "approvals_pending"));
	printf("delegations pending:  %lld\n", num(r, "delegations_pending"));
	printf("actions unresolved:   %lld\n", num(r, "actions_unresolved"));
	printf("tools to review:      %lld\n", num(r, "inventory_to_review"));
	printf("policy epoch:         %lld\n", num(r, "policy_epoch"));
	printf("audit:                last seq %lld, %lld append failures\n", num(a, "last_seq"),
	       num(a, "append_failures"));
}

static void render_pretty(const struct opts *o, const json_t *r)
{
	(void)o;
	print_json(r);
}

static void render_connectors(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *c;

	(void)o;
	if (json_array_size(r) == 0) {
		puts("no connectors installed");
		return;
	}
	printf("%-24s %-12s %s\n", "CONNECTOR", "STATE", "INSTANCES");
	json_array_foreach(r, i, c)
	{
		const json_t *inst = json_object_get(c, "instances");

		printf("%-24s %-12s %lld\n", str(c, "id"), str(c, "state"),
		       json_is_array(inst) ? (long long)json_array_size(inst) : (long long)json_integer_value(inst));
	}
}

static void render_connector_change(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("connector %s %s\n", str(r, "connector"), str(r, "result"));
}

static void render_inventory(const struct opts *o, const json_t *r)
{
	const json_t *tools = json_object_get(r, "tools"), *t;
	size_t i;

	(void)o;
	if (json_array_size(tools) == 0) {
		printf("%s: nothing to review%s\n", str(r, "connector"),
		       json_is_true(json_object_get(r, "all")) ? "" : " (use --all to see every tool)");
		return;
	}
	json_array_foreach(tools, i, t)
	{
		const json_t *notes = json_object_get(t, "notes"), *n;
		size_t j;
		char *claims = json_dumps(json_object_get(t, "claims"), JSON_COMPACT | JSON_SORT_KEYS);

		printf("%s%s/%s  [%s]\n", i ? "\n" : "", str(t, "connector"), str(t, "tool"), str(t, "state"));
		printf("  cordon tier:   %s%s\n", str(t, "tier"),
		       json_is_true(json_object_get(t, "granted")) ? " (granted)" : " (not granted)");
		printf("  claims:        %s  (the connector's annotations: display only, never change the tier)\n",
		       claims ? claims : "{}");
		free(claims);
		json_array_foreach(notes, j, n) printf("  NOTE:          %s\n", json_string_value(n));
		printf("  fingerprint:   %s\n", str(t, "fingerprint"));
		if (json_is_string(json_object_get(t, "pinned_fingerprint")) &&
		    strcmp(str(t, "pinned_fingerprint"), str(t, "fingerprint")) != 0)
			printf("  reviewed was:  %s\n", str(t, "pinned_fingerprint"));
		if (num(t, "escaped") > 0)
			printf("  WARNING:       %lld invisible, bidi or look-alike characters are shown escaped as "
			       "\\u{...}\n",
			       num(t, "escaped"));
		json_array_foreach(json_object_get(t, "warnings"), j, n)
			printf("  WARNING:       %s\n", json_string_value(n));
		if (json_is_string(json_object_get(t, "diff"))) {
			printf("  changes since review (- reviewed, + advertised now):\n");
			for (const char *p = str(t, "diff"); *p;) {
				const char *nl = strchr(p, '\n');
				int len = nl ? (int)(nl - p) : (int)strlen(p);

				printf("    %.*s\n", len, p);
				p += len + (nl ? 1 : 0);
			}
		} else if (json_is_string(json_object_get(t, "definition"))) {
			printf("  definition:\n");
			for (const char *p = str(t, "definition"); *p;) {
				const char *nl = strchr(p, '\n');
				int len = nl ? (int)(nl - p) : (int)strlen(p);

				printf("    %.*s\n", len, p);
				p += len + (nl ? 1 : 0);
			}
		}
		if (strcmp(str(t, "state"), "pending_review") == 0 || strcmp(str(t, "state"), "changed") == 0)
			printf("  review with:   cordonctl inventory review %s %s --fingerprint %s\n",
			       str(t, "connector"), str(t, "tool"), str(t, "fingerprint"));
	}
	/* The bulk form, bound to exactly the tools above that await review. */
	if (json_is_object(json_object_get(r, "review_set"))) {
		const json_t *rs = json_object_get(r, "review_set");

		printf("\n%lld tool%s above await%s review (those marked [pending_review] or [changed]);\n"
		       "review all of them, exactly as shown, with:\n"
		       "  cordonctl inventory review %s --all --fingerprint-set %s\n",
		       num(rs, "tools"), num(rs, "tools") == 1 ? "" : "s", num(rs, "tools") == 1 ? "s" : "",
		       str(r, "connector"), str(rs, "fingerprint_set"));
	}
}

static void render_reviewed_all(const struct opts *o, const json_t *r)
{
	const json_t *tools = json_object_get(r, "reviewed"), *t;
	size_t i;

	(void)o;
	printf("%s: %zu tool%s reviewed (fingerprint set %s; policy epoch now %lld)\n", str(r, "connector"),
	       json_array_size(tools), json_array_size(tools) == 1 ? "" : "s", str(r, "fingerprint_set"),
	       num(r, "policy_epoch"));
	json_array_foreach(tools, i, t)
		printf("  %-32s %-15s fingerprint %s\n", str(t, "tool"), str(t, "was"), str(t, "fingerprint"));
}

static void render_reviewed(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("%s/%s reviewed (fingerprint %s)\n", str(r, "connector"), str(r, "tool"), str(r, "fingerprint"));
}

static void render_grants(const struct opts *o, const json_t *r)
{
	const json_t *g = json_object_get(r, "granted"), *n = json_object_get(r, "not_granted"), *e;
	size_t i;

	(void)o;
	printf("%s: %zu granted\n", str(r, "connector"), json_array_size(g));
	json_array_foreach(g, i, e)
		printf("  + %-32s tier %-12s inventory %s\n", str(e, "tool"), str(e, "tier"), str(e, "inventory"));
	if (json_array_size(n)) {
		printf("not granted:\n");
		json_array_foreach(n, i, e) printf("    %-32s tier %-12s inventory %s\n", str(e, "tool"),
						   str(e, "tier"), str(e, "inventory"));
	}
}

static void render_grant_change(const struct opts *o, const json_t *r)
{
	(void)o;
	if (json_object_get(r, "added")) {
		printf("%s: grant set (%zu added, %zu removed)\n", str(r, "connector"),
		       json_array_size(json_object_get(r, "added")), json_array_size(json_object_get(r, "removed")));
		return;
	}
	printf("%s/%s %s\n", str(r, "connector"), str(r, "tool"),
	       json_is_true(json_object_get(r, "granted")) ? "granted" : "no longer granted");
}

static void render_approvals(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *a;

	(void)o;
	if (json_array_size(r) == 0) {
		puts("no approvals waiting");
		return;
	}
	printf("%-10s %-10s %-12s %-32s %-20s %s\n", "CODE", "STATE", "TIER", "CONNECTOR/TOOL", "EXPIRES", "ID");
	json_array_foreach(r, i, a)
	{
		char ct[160], t[32];

		snprintf(ct, sizeof(ct), "%s/%s", str(a, "connector"), str(a, "tool"));
		printf("%-10s %-10s %-12s %-32s %-20s %s\n", str(a, "display_code"), str(a, "state"), str(a, "tier"),
		       ct, when(a, "expires_at", t), str(a, "id"));
	}
}

static void render_approval(const struct opts *o, const json_t *r)
{
	char t[32];

	(void)o;
	printf("approval %s  (code %s)\n", str(r, "id"), str(r, "display_code"));
	printf("  state:      %s%s\n", str(r, "state"),
	       json_is_true(json_object_get(r, "past_expiry")) ? " (past expiry)" : "");
	printf("  tier:       %s\n", str(r, "tier"));
	printf("  call:       %s/%s\n", str(r, "connector"), str(r, "tool"));
	printf("  session:    %s\n", str(r, "session"));
	printf("  created:    %s\n", when(r, "created_at", t));
	printf("  expires:    %s\n", when(r, "expires_at", t));
	if (json_is_string(json_object_get(r, "arguments"))) {
		const json_t *w = json_object_get(r, "warnings"), *e;
		size_t i;

		printf("  masking:    %s\n", json_is_string(json_object_get(r, "masking")) ? str(r, "masking") : "on");
		printf("  arguments (hidden characters escaped; display only):\n");
		for (const char *p = str(r, "arguments"); *p;) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);

			printf("    %.*s\n", len, p);
			p += len + (nl ? 1 : 0);
		}
		if (json_array_size(json_object_get(r, "masked")))
			printf("  masked:     %zu value(s) (show them with --reveal)\n",
			       json_array_size(json_object_get(r, "masked")));
		json_array_foreach(w, i, e) printf("  WARNING:    %s\n", json_string_value(e));
		if (num(r, "escaped") > 0)
			printf("  WARNING:    %lld invisible, bidi or look-alike characters in the arguments\n",
			       num(r, "escaped"));
	} else if (json_object_get(r, "arguments_note"))
		printf("  arguments:  %s\n", str(r, "arguments_note"));
	if (json_is_string(json_object_get(r, "confirmation_code")))
		printf("  CRITICAL:   approve with: cordonctl approvals approve %s --code %s\n", str(r, "id"),
		       str(r, "confirmation_code"));
}

static void render_decided(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("approval %s (%s/%s): %s\n", str(r, "display_code"), str(r, "connector"), str(r, "tool"),
	       str(r, "state"));
}

static void render_delegations(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *d;

	(void)o;
	if (json_array_size(r) == 0) {
		puts("no delegations");
		return;
	}
	printf("%-36s %-9s %-10s %-16s %s\n", "ID", "STATE", "ACCESS", "CONNECTOR", "PATH");
	json_array_foreach(r, i, d) printf("%-36s %-9s %-10s %-16s %s\n", str(d, "id"), str(d, "state"),
					   str(d, "access"), str(d, "connector"), str(d, "path"));
}

static void render_delegation(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("delegation %s (%s %s on %s): %s\n", str(r, "id"), str(r, "access"), str(r, "path"), str(r, "connector"),
	       str(r, "state"));
}

static void render_actions(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *a;

	(void)o;
	if (json_array_size(r) == 0) {
		puts("no unresolved actions");
		return;
	}
	printf("%-36s %-16s %-10s %-32s %s\n", "ID", "STATE", "TIER", "CONNECTOR/TOOL", "CREATED");
	json_array_foreach(r, i, a)
	{
		char ct[160], t[32];

		snprintf(ct, sizeof(ct), "%s/%s", str(a, "connector"), str(a, "tool"));
		printf("%-36s %-16s %-10s %-32s %s\n", str(a, "id"), str(a, "state"), str(a, "tier"), ct,
		       when(a, "created_at", t));
	}
}

static void render_resolved(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("action %s: %s\n", str(r, "id"), str(r, "state"));
}

static void render_audit_tail(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *rec;

	(void)o;
	json_array_foreach(r, i, rec)
	{
		char *s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		if (s) {
			puts(s);
			free(s);
		}
	}
}

static void render_audit_key(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("%s\n", str(r, "key"));
}

static void render_verify(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("%s\n", str(r, "report"));
	printf("(checkpoint key: %s)\n", str(r, "key"));
}

static void render_agents(const struct opts *o, const json_t *r)
{
	size_t i;
	const json_t *a;

	(void)o;
	if (json_array_size(r) == 0) {
		puts("no agents");
		return;
	}
	printf("%-20s %-24s %-24s %s\n", "NAME", "CREATED", "REVOKED", "CREATED BY");
	json_array_foreach(r, i, a) printf(
		"%-20s %-24s %-24s %s\n", str(a, "name"), str(a, "created_at"),
		json_is_string(json_object_get(a, "revoked_at")) ? str(a, "revoked_at") : "-", str(a, "created_by"));
}

/* The token is printed this once: cordond keeps only its hash. */
static void render_agent_added(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("agent %s added. Its bearer token (shown only now; cordond keeps only its hash):\n%s\n", str(r, "name"),
	       str(r, "token"));
}

static void render_agent_revoked(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("agent %s revoked: its token is refused; %lld session%s ended\n", str(r, "name"),
	       num(r, "sessions_ended"), num(r, "sessions_ended") == 1 ? "" : "s");
}

static void render_revoke_all(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("revoked: %lld grants, %lld approvals, %lld delegations; ended %lld connector instance%s\n",
	       num(r, "grants"), num(r, "approvals"), num(r, "delegations"), num(r, "instances"),
	       num(r, "instances") == 1 ? "" : "s");
}

/* "WHAT: a, b" when the array at key is not empty. */
static void print_ids(const json_t *r, const char *key, const char *what)
{
	const json_t *a = json_object_get(r, key);
	size_t i;
	json_t *v;

	if (!json_array_size(a))
		return;
	printf("%s:", what);
	json_array_foreach(a, i, v) printf("%s %s", i ? "," : "", json_string_value(v));
	putchar('\n');
}

static void render_reload(const struct opts *o, const json_t *r)
{
	(void)o;
	printf("reloaded: %lld profile%s in force\n", num(r, "profiles"), num(r, "profiles") == 1 ? "" : "s");
	print_ids(r, "added", "new connectors (install with `connectors add`)");
	print_ids(r, "removed", "forgotten (never installed)");
	print_ids(r, "instances_ended", "instances ended (instances mode changed)");
	print_ids(r, "ignored", "changed but need a restart of cordond (ignored)");
}

static void render_backup(const struct opts *o, const json_t *r)
{
	printf("backup written to %s: %lld bytes, audit log through seq %lld\n", o->pos[0], num(r, "bytes"),
	       num(r, "audit_last_seq"));
}

/* ---- request builders ---- */

static int build_none(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	(void)o;
	(void)args;
	return 0;
}

static int build_connector(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return json_object_set_new(args, "connector", json_string(o->pos[0]));
}

static int build_connector_tool(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	if (json_object_set_new(args, "connector", json_string(o->pos[0])) < 0)
		return -1;
	if (o->n_pos > 1)
		return json_object_set_new(args, "tool", json_string(o->pos[1]));
	return 0;
}

static int build_review_all(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	if (json_object_set_new(args, "connector", json_string(o->pos[0])) < 0)
		return -1;
	return json_object_set_new(args, "fingerprint_set", json_string(o->fingerprint_set));
}

static int build_grant_add(const struct command *c, struct opts *o, json_t *args)
{
	if (build_connector_tool(c, o, args) < 0)
		return -1;
	return o->allow_unknown ? json_object_set_new(args, "allow_unknown", json_true()) : 0;
}

static int build_inventory_show(const struct command *c, struct opts *o, json_t *args)
{
	if (build_connector_tool(c, o, args) < 0)
		return -1;
	return o->all ? json_object_set_new(args, "all", json_true()) : 0;
}

static int build_grants_set(const struct command *c, struct opts *o, json_t *args)
{
	json_t *tools = json_array();

	(void)c;
	/* "cordonctl grants set fs read_file,list_directory" or "" for none */
	if (!tools)
		return -1;
	if (o->n_pos > 1) {
		_cleanup_free_ char *copy = strdup(o->pos[1]);
		char *save = NULL;

		if (!copy) {
			json_decref(tools);
			return -1;
		}
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			(void)json_array_append_new(tools, json_string(t));
	}
	if (json_object_set_new(args, "connector", json_string(o->pos[0])) < 0 ||
	    (o->allow_unknown && json_object_set_new(args, "allow_unknown", json_true()) < 0))
		return -1;
	return json_object_set_new(args, "tools", tools);
}

static int build_id(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return json_object_set_new(args, "id", json_string(o->pos[0]));
}

static int build_show_approval(const struct command *c, struct opts *o, json_t *args)
{
	if (build_id(c, o, args) < 0)
		return -1;
	return o->reveal ? json_object_set_new(args, "reveal", json_true()) : 0;
}

static int build_approve(const struct command *c, struct opts *o, json_t *args)
{
	if (build_id(c, o, args) < 0)
		return -1;
	return o->code ? json_object_set_new(args, "code", json_string(o->code)) : 0;
}

static int build_approvals_list(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	if (o->all && json_object_set_new(args, "all", json_true()) < 0)
		return -1;
	return o->connector ? json_object_set_new(args, "connector", json_string(o->connector)) : 0;
}

static int build_name(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return json_object_set_new(args, "name", json_string(o->pos[0]));
}

static int build_all(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return o->all ? json_object_set_new(args, "all", json_true()) : 0;
}

static int build_resolve(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	if (json_object_set_new(args, "id", json_string(o->pos[0])) < 0)
		return -1;
	return json_object_set_new(args, "outcome", json_string(o->pos[1]));
}

static int build_tail(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return o->count >= 0 ? json_object_set_new(args, "count", json_integer(o->count)) : 0;
}

static int build_verify(const struct command *c, struct opts *o, json_t *args)
{
	(void)c;
	return o->key ? json_object_set_new(args, "key", json_string(o->key)) : 0;
}

/* clang-format off */
static const struct command commands[] = {
	{ "status", NULL, "status", "status",
	  "Health and counts: pending approvals and delegations, unresolved actions, tools to review.",
	  0, 0, true, build_none, render_status },
	{ "capabilities", NULL, "capabilities", "capabilities",
	  "The launcher's kernel capability report (the same JSON as `cordon-launch --probe`).",
	  0, 0, true, build_none, render_pretty },
	{ "connectors", "list", "connectors.list", "connectors list",
	  "Installed connectors, their state and running instances.",
	  0, 0, true, build_none, render_connectors },
	{ "connectors", "add", "connectors.add", "connectors add CONNECTOR",
	  "Installs the connector from its profile: seeds its grant from the profile's tools.grant and\n"
	  "takes its tool inventory (every tool starts pending_review).",
	  1, 1, false, build_connector, render_connector_change },
	{ "connectors", "remove", "connectors.remove", "connectors remove CONNECTOR",
	  "Uninstalls the connector (its instances are stopped).", 1, 1, false, build_connector, render_connector_change },
	{ "connectors", "restart", "connectors.restart", "connectors restart CONNECTOR",
	  "Relaunches the connector's instances (approvals bound to the old launch are revoked).",
	  1, 1, false, build_connector, render_connector_change },
	{ "inventory", "show", "inventory.show", "inventory show CONNECTOR [TOOL] [--all]",
	  "Tools waiting for review (new or changed), with the definition or a diff against the reviewed\n"
	  "one, cordon's tier next to the connector's claims. --all: every tool. Hidden characters in\n"
	  "definitions are shown escaped.",
	  1, 2, true, build_inventory_show, render_inventory },
	{ "inventory", "review", "inventory.review", "inventory review CONNECTOR TOOL --fingerprint FP",
	  "Marks the tool reviewed, pinning the fingerprint you were shown (refused as stale if the\n"
	  "connector now advertises something else).\n"
	  "`inventory review CONNECTOR --all --fingerprint-set H` is `inventory review-all`.",
	  1, 2, false, build_connector_tool, render_reviewed },
	{ "inventory", "review-all", "inventory.review-all",
	  "inventory review-all CONNECTOR --fingerprint-set H",
	  "Reviews every tool awaiting review (pending_review or changed), in one transaction with one\n"
	  "policy epoch bump, if they are exactly the tools and fingerprints `inventory show CONNECTOR`\n"
	  "listed: H is the fingerprint set it printed. A tool added, changed or reviewed since makes\n"
	  "the set differ: then nothing is reviewed (stale). Prints every tool it reviewed.",
	  1, 1, false, build_review_all, render_reviewed_all },
	{ "grants", "show", "grants.show", "grants show CONNECTOR",
	  "The tools granted on the connector and those that are not.", 1, 1, true, build_connector, render_grants },
	{ "grants", "set", "grants.set", "grants set CONNECTOR TOOL[,TOOL...] [--allow-unknown]",
	  "Replaces the grant with exactly these tools (\"\" for none). Removals are applied first. A tool\n"
	  "the connector does not advertise (see `inventory show CONNECTOR --all`) is refused and nothing\n"
	  "changes, unless --allow-unknown.",
	  1, 2, false, build_grants_set, render_grant_change },
	{ "grants", "add", "grants.add", "grants add CONNECTOR TOOL [--allow-unknown]",
	  "Grants one tool. A tool the connector does not advertise (see `inventory show CONNECTOR --all`)\n"
	  "is refused and nothing changes, unless --allow-unknown.",
	  2, 2, false, build_grant_add, render_grant_change },
	{ "grants", "remove", "grants.remove", "grants remove CONNECTOR TOOL",
	  "Removes one tool from the grant.", 2, 2, false, build_connector_tool, render_grant_change },
	{ "approvals", "list", "approvals.list", "approvals list [--all] [--connector ID]",
	  "Approvals waiting for a decision (or approved and not yet used). --all: the latest 200 of any state.",
	  0, 0, true, build_approvals_list, render_approvals },
	{ "approvals", "show", "approvals.show", "approvals show ID|CODE [--reveal]",
	  "One approval with the call's canonical arguments, invisible and bidi characters escaped and\n"
	  "text mixing look-alike scripts flagged. Likely secrets are masked, except for a critical call,\n"
	  "which is always shown in full. --reveal: show the masked values too (the daemon audits who\n"
	  "revealed which approval; values are never logged). For a critical approval, also its\n"
	  "confirmation code.",
	  1, 1, true, build_show_approval, render_approval },
	{ "approvals", "approve", "approvals.approve", "approvals approve ID|CODE [--code CONFIRMATION]",
	  "Approves one call (one use, bound to its exact arguments). Critical tier needs --code with\n"
	  "the confirmation code that `approvals show` prints.",
	  1, 1, false, build_approve, render_decided },
	{ "approvals", "deny", "approvals.deny", "approvals deny ID|CODE",
	  "Denies one call.", 1, 1, false, build_id, render_decided },
	{ "delegations", "list", "delegations.list", "delegations list [--all]",
	  "Pending and active delegated roots. --all: the latest 200 of any state.",
	  0, 0, true, build_all, render_delegations },
	{ "delegations", "approve", "delegations.approve", "delegations approve ID",
	  "Activates a requested root (only beneath the connector's ceiling; the worker is relaunched).",
	  1, 1, false, build_id, render_delegation },
	{ "delegations", "deny", "delegations.deny", "delegations deny ID",
	  "Refuses a pending request.", 1, 1, false, build_id, render_delegation },
	{ "delegations", "revoke", "delegations.revoke", "delegations revoke ID",
	  "Ends a delegation.", 1, 1, false, build_id, render_delegation },
	{ "actions", "list", "actions.list", "actions list [--all]",
	  "Actions whose outcome is unknown (dispatched before a crash) or abandoned. --all: the latest 200.",
	  0, 0, true, build_all, render_actions },
	{ "actions", "resolve", "actions.resolve", "actions resolve ID succeeded|failed",
	  "Records what you found out about an outcome_unknown action. Nothing is retried.",
	  2, 2, false, build_resolve, render_resolved },
	{ "audit", "tail", "audit.tail", "audit tail [--count N]",
	  "The last N audit records (default 20, at most 1000).", 0, 0, true, build_tail, render_audit_tail },
	{ "audit", "verify", "audit.verify", "audit verify [--key VERIFIER-KEY]",
	  "Verifies the audit chain and signed checkpoints (exit 1 unless PASS). --key: the checkpoint\n"
	  "verifier key to trust (\"name+id+base64\"); default: the daemon's own.",
	  0, 0, true, build_verify, render_verify },
	{ "audit", "key", "audit.key", "audit key",
	  "Prints the daemon's checkpoint verifier key (\"name+id+base64\"), exactly what `audit verify\n"
	  "--key` and `cordon-audit-verify DATABASE KEY` take: copy it off the host to check the log later.",
	  0, 0, true, build_none, render_audit_key },
	{ "agents", "list", "agents.list", "agents list [--all]",
	  "MCP clients that connect over TCP with a bearer token. --all: revoked ones too.",
	  0, 0, true, build_all, render_agents },
	{ "agents", "add", "agents.add", "agents add NAME",
	  "Adds an agent and prints its bearer token once (cordond keeps only a hash). NAME: 1-20 of\n"
	  "a-z 0-9 - _. The agent is a subject of its own: its sessions, caps, budgets and audit identity.",
	  1, 1, false, build_name, render_agent_added },
	{ "agents", "revoke", "agents.revoke", "agents revoke NAME",
	  "Revokes an agent's token; its sessions end at once.", 1, 1, false, build_name, render_agent_revoked },
	{ "revoke-all", NULL, "revoke-all", "revoke-all --yes",
	  "Empties every grant, revokes every pending approval and ends every delegation, in one transaction;\n"
	  "then ends every running connector instance (shared and per-session, with every process in its cgroup).",
	  0, 0, false, build_none, render_revoke_all },
	{ "reload", NULL, "reload", "reload",
	  "Re-reads cordond's config file and profiles directory, all or nothing: any profile that does\n"
	  "not load refuses the reload with its error and the previous profiles stay in force (as on\n"
	  "SIGHUP). Changed profiles apply to instances started from now on.",
	  0, 0, false, build_none, render_reload },
	{ "backup", NULL, "backup", "backup PATH",
	  "An online, consistent copy of cordond's database (SQLite's backup API, as of one commit,\n"
	  "while calls go on) written to PATH: a new file (never overwritten), created 0600 by you and\n"
	  "passed to cordond over the socket. Audited (broker.backup). Check it with\n"
	  "`cordon-audit-verify PATH VERIFIER-KEY`; see the operator guide, \"Backup\".",
	  1, 1, false, build_none, render_backup },
	{ NULL, NULL, NULL, NULL, NULL, 0, 0, false, NULL, NULL },
};
/* clang-format on */

static void usage(FILE *f)
{
	fputs("Usage: cordonctl [--socket PATH] [--json] COMMAND [ARGS]\n"
	      "       cordonctl mcp [--connector ID] [--socket PATH]\n"
	      "       cordonctl COMMAND --help\n\nCommands:\n",
	      f);
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %s\n", c->usage);
	fputs("  audit export [--since TIME] [--until TIME] [--after-seq N] [--follow]\n", f);
	fputs("  approvals watch [--json] [--connector ID] [--after-seq N]\n", f);
	fputs("  mcp [--connector ID]     bridge stdio to the gateway socket (for stdio MCP clients);\n"
	      "                           --connector: that connector alone, under its own names\n\n"
	      "Options:\n"
	      "  --socket PATH   operator socket (default $" CORDON_OPERATOR_SOCKET_ENV
	      " or " CORDON_OPERATOR_SOCKET_DEFAULT ");\n"
	      "                  for mcp the gateway socket ($" CORDON_GATEWAY_SOCKET_ENV
	      " or " CORDON_GATEWAY_SOCKET_DEFAULT ")\n"
	      "  --json          print the JSON result (objects carry \"schema_version\"); an error is\n"
	      "                  then one JSON object {\"error\": {\"code\", \"message\"}} on stderr\n"
	      "  --help          help for a command\n\n"
	      "Exit codes: 0 ok, 1 refused/failed, 2 usage, 3 cannot connect, 4 permission denied,\n"
	      "            5 protocol error; approvals show/approve/deny: 6 no such approval,\n"
	      "            7 it expired, 8 already used, denied, revoked or approved.\n",
	      f);
}

/* Returns 0, or EXIT_USAGE after printing the error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	o->count = -1;
	/* --json first, wherever it stands: it decides how every usage error
	 * below is printed, even one met before it (a value that is literally
	 * "--json" is no meaningful value of any option either). */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0)
			o->json = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **val = NULL;

		if (strcmp(a, "--json") == 0)
			o->json = true;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			o->help = true;
		else if (strcmp(a, "--yes") == 0)
			o->yes = true;
		else if (strcmp(a, "--all") == 0)
			o->all = true;
		else if (strcmp(a, "--reveal") == 0)
			o->reveal = true;
		else if (strcmp(a, "--allow-unknown") == 0)
			o->allow_unknown = true;
		else if (strcmp(a, "--socket") == 0)
			val = &o->socket;
		else if (strcmp(a, "--code") == 0)
			val = &o->code;
		else if (strcmp(a, "--fingerprint") == 0)
			val = &o->fingerprint;
		else if (strcmp(a, "--fingerprint-set") == 0)
			val = &o->fingerprint_set;
		else if (strcmp(a, "--key") == 0)
			val = &o->key;
		else if (strcmp(a, "--connector") == 0)
			val = &o->connector;
		else if (strcmp(a, "--since") == 0)
			val = &o->since;
		else if (strcmp(a, "--until") == 0)
			val = &o->until;
		else if (strcmp(a, "--after-seq") == 0)
			val = &o->after_seq;
		else if (strcmp(a, "--follow") == 0)
			o->follow = true;
		else if (strcmp(a, "--count") == 0) {
			char *end;

			if (++i >= argc)
				return usage_error(o, "missing-argument", NULL, "--count needs a value");
			errno = 0;
			o->count = strtol(argv[i], &end, 10);
			if (errno || *end || end == argv[i] || o->count < 1 || o->count > 1000)
				return usage_error(o, "invalid-argument", NULL, "--count must be 1..1000");
		} else if (strncmp(a, "--", 2) == 0 && a[2]) {
			return usage_error(o, "unknown-option", NULL, "unknown option %s", a);
		} else {
			if (o->n_pos >= (int)ELEMENTSOF(o->pos))
				return usage_error(o, "invalid-argument", NULL, "too many arguments");
			o->pos[o->n_pos++] = argv[i];
			continue;
		}
		if (val) {
			if (++i >= argc)
				return usage_error(o, "missing-argument", NULL, "%s needs a value", a);
			*val = argv[i];
		}
	}
	return 0;
}

static int connect_unix(const char *path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		cli_error("invalid-argument", "socket path too long: %s", path);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			cli_error("permission-denied",
				  "cannot connect to %s: %s (the operator socket is for root and the operator group)",
				  path, strerror(e));
		else
			cli_error("cannot-connect", "cannot connect to %s: %s", path, strerror(e));
		return (e == EACCES || e == EPERM) ? EXIT_DENIED : EXIT_CONNECT;
	}
	*ret_fd = TAKE_FD(fd);
	return EXIT_OK;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sends the request line with fd attached (SCM_RIGHTS) to its first byte. */
static int send_with_fd(int sock, const char *p, size_t n, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = {};
	struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	ssize_t w;

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(fd));
	do
		w = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return write_all(sock, p + w, n - (size_t)w);
}

/* One request on an open connection (id counts up), one response line. A
 * response line is at most CORDON_OP_MAX_RESPONSE bytes. pass_fd, unless it
 * is -1, goes with the request (SCM_RIGHTS). Returns EXIT_OK
 * with *ret_result or *ret_error set, or an exit code. */
static int call_on(int fd, uint64_t id, const char *op, const json_t *args, int pass_fd, json_t **ret_result,
		   json_t **ret_error)
{
	_cleanup_free_ char *line = NULL, *buf = NULL;
	size_t len, cap = 0, n = 0;
	struct cordon_op_error e = {};
	json_t *v = NULL;
	bool ok;

	if (cordon_op_request_encode(id, op, args, &line, &len) < 0) {
		cli_error("protocol", "cannot encode the request");
		return EXIT_PROTOCOL;
	}
	if ((pass_fd >= 0 ? send_with_fd(fd, line, len, pass_fd) : write_all(fd, line, len)) < 0) {
		cli_error("cannot-connect", "sending to the daemon: %s", strerror(errno));
		return EXIT_CONNECT;
	}
	for (;;) {
		ssize_t k;
		char *nl;

		if (cap - n < 65536) {
			char *t;

			if (cap > CORDON_OP_MAX_RESPONSE) {
				cli_error("protocol", "response too large");
				return EXIT_PROTOCOL;
			}
			cap = cap ? cap * 2 : 131072;
			t = realloc(buf, cap);
			if (!t)
				return EXIT_FAILED;
			buf = t;
		}
		k = recv(fd, buf + n, cap - n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			cli_error("protocol", "the daemon closed the connection without an answer");
			return EXIT_PROTOCOL;
		}
		nl = memchr(buf + n, '\n', (size_t)k);
		n += (size_t)k;
		if (nl) {
			n = (size_t)(nl - buf);
			break;
		}
	}
	if (cordon_op_response_decode(buf, n, id, &ok, &v, &e) < 0) {
		cli_error("protocol", "%s", e.message);
		return EXIT_PROTOCOL;
	}
	if (ok)
		*ret_result = v;
	else
		*ret_error = v;
	return EXIT_OK;
}

/* Connects to socket_path and sends one request (with pass_fd attached
 * unless it is -1): call_on() on a fresh connection. */
static int call(const char *socket_path, const char *op, json_t *args, int pass_fd, json_t **ret_result,
		json_t **ret_error)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	r = connect_unix(socket_path, &fd);
	if (r != EXIT_OK)
		return r;
	return call_on(fd, 1, op, args, pass_fd, ret_result, ret_error);
}

/* ---- cordonctl mcp: byte relay ---- */

/* After stdin ends, how long the relay waits for the answers to requests
 * it already passed on (the daemon ends a session when its client's side
 * ends, so the write side stays open until they are in). */
#define MCP_EOF_GRACE_MS 30000

/* Moves what is readable on in to out; feeds the bytes to the tracker.
 * Sets *eof at the end of in. Returns 0 or -errno. */
static int relay(int in, int out, char *buf, size_t size, bool *eof, struct mcp_track *t, enum mcp_track_dir dir)
{
	ssize_t n = read(in, buf, size);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0) {
		*eof = true;
		return 0;
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(out, buf + off, (size_t)(n - off));

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += w;
	}
	/* Out of memory only costs the count (mcp_track_lost). */
	(void)mcp_track_feed(t, dir, buf, (size_t)n);
	return 0;
}

/* Binds the gateway session to one connector before the client's first
 * byte: sends cordon/bind and reads its answer, which is the first line the
 * gateway writes (nothing of the client has been sent yet). Bytes after it
 * (none are expected) go to stdout. */
static int bind_session(int fd, const char *connector)
{
	_cleanup_(json_decrefp) json_t *req = NULL, *msg = NULL;
	_cleanup_free_ char *line = NULL;
	static char buf[65536];
	size_t n = 0;
	char *nl = NULL;
	json_t *err;

	req = json_pack("{s:s, s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "id", "cordonctl-bind", "method", "cordon/bind",
			"params", "connector", connector);
	line = req ? json_dumps(req, JSON_COMPACT) : NULL;
	if (!line)
		return EXIT_FAILED;
	if (write_all(fd, line, strlen(line)) < 0 || write_all(fd, "\n", 1) < 0) {
		fprintf(stderr, "cordonctl: sending to the gateway: %s\n", strerror(errno));
		return EXIT_CONNECT;
	}
	while (!nl) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;
		int r = poll(&p, 1, 30000);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || n == sizeof(buf)) {
			fprintf(stderr, "cordonctl: the gateway did not answer cordon/bind\n");
			return EXIT_PROTOCOL;
		}
		k = recv(fd, buf + n, sizeof(buf) - n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "cordonctl: the gateway closed the connection without an answer\n");
			return EXIT_PROTOCOL;
		}
		nl = memchr(buf + n, '\n', (size_t)k);
		n += (size_t)k;
	}
	msg = json_loadb(buf, (size_t)(nl - buf), JSON_REJECT_DUPLICATES, NULL);
	err = json_object_get(msg, "error");
	if (err) {
		/* A refused binding, or a gateway with no session for us (busy). */
		fprintf(stderr, "cordonctl: mcp --connector %s: %s\n", connector,
			json_string_value(json_object_get(err, "message")) ?: "refused");
		return EXIT_FAILED;
	}
	if (!json_is_object(json_object_get(msg, "result")) ||
	    !json_equal(json_object_get(msg, "id"), json_object_get(req, "id"))) {
		fprintf(stderr, "cordonctl: unexpected answer to cordon/bind\n");
		return EXIT_PROTOCOL;
	}
	for (char *p = nl + 1; p < buf + n;) {
		ssize_t w = write(STDOUT_FILENO, p, (size_t)(buf + n - p));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return EXIT_FAILED;
		p += w;
	}
	return EXIT_OK;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int cmd_mcp(const struct opts *o)
{
	const char *path = o->socket ? o->socket : getenv(CORDON_GATEWAY_SOCKET_ENV);
	_cleanup_close_ int fd = -EBADF;
	_cleanup_(mcp_track_done) struct mcp_track track = {};
	static char buf[65536];
	bool in_eof = false, sock_eof = false, shut = false;
	uint64_t in_eof_at = 0;
	int r;

	if (o->help) {
		printf("Usage: cordonctl mcp [--connector ID] [--socket PATH]\n"
		       "Relays bytes between stdin/stdout and the gateway socket (default $" CORDON_GATEWAY_SOCKET_ENV
		       " or " CORDON_GATEWAY_SOCKET_DEFAULT ")\n"
		       "so any stdio MCP client can talk to cordond: {\"command\": \"cordonctl\", \"args\": "
		       "[\"mcp\"]}.\n"
		       "Without --connector the session sees every connector, tools and prompts named\n"
		       "<connector>__<name>. With --connector ID it sees that connector alone, under its own\n"
		       "names (one client config entry per connector): cordonctl binds the session first\n"
		       "(cordon/bind) and exits 1 naming the connector when cordond refuses it.\n"
		       "The relay never changes a byte of the client's; it only watches request ids go by.\n"
		       "cordond identifies the session by the socket peer's credentials. Exits 0 when the daemon\n"
		       "closes the connection. When stdin ends, it waits up to %d s for the answers to requests\n"
		       "already sent (a notifications/cancelled withdraws one), printing them, then shuts its\n"
		       "write side so the daemon ends the session, and exits 0; if answers are still missing\n"
		       "after %d s it exits 1.\n",
		       MCP_EOF_GRACE_MS / 1000, MCP_EOF_GRACE_MS / 1000);
		return EXIT_OK;
	}
	if (o->n_pos != 1) {
		fprintf(stderr, "cordonctl: mcp takes no arguments\n");
		return EXIT_USAGE;
	}
	if (!path)
		path = CORDON_GATEWAY_SOCKET_DEFAULT;
	r = connect_unix(path, &fd);
	if (r != EXIT_OK)
		return r;
	if (o->connector) {
		r = bind_session(fd, o->connector);
		if (r != EXIT_OK)
			return r;
	}
	while (!sock_eof) {
		struct pollfd p[2] = { { .fd = in_eof ? -1 : STDIN_FILENO, .events = POLLIN },
				       { .fd = fd, .events = POLLIN } };
		int timeout = -1;

		if (in_eof) {
			uint64_t now = now_ms();

			/* Every answer is in (and none can be missed): let the
			 * daemon see the end; it closes, which ends the loop. */
			if (!shut && mcp_track_pending(&track) == 0 && !mcp_track_lost(&track)) {
				(void)shutdown(fd, SHUT_WR);
				shut = true;
			}
			if (now - in_eof_at >= MCP_EOF_GRACE_MS) {
				if (shut)
					break;
				fprintf(stderr,
					"cordonctl: mcp: stdin ended; %zu answer(s)%s still outstanding after %d s\n",
					mcp_track_pending(&track), mcp_track_lost(&track) ? " (or more)" : "",
					MCP_EOF_GRACE_MS / 1000);
				return EXIT_FAILED;
			}
			timeout = (int)(MCP_EOF_GRACE_MS - (now - in_eof_at));
		}
		if (poll(p, 2, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return EXIT_FAILED;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (relay(STDIN_FILENO, fd, buf, sizeof(buf), &in_eof, &track, MCP_TRACK_FROM_CLIENT) < 0)
				return EXIT_FAILED;
			if (in_eof)
				in_eof_at = now_ms();
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			if (relay(fd, STDOUT_FILENO, buf, sizeof(buf), &sock_eof, &track, MCP_TRACK_FROM_SERVER) < 0)
				return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* ---- cordonctl audit export ---- */

/* How often --follow asks for new records when it has read them all. */
#define FOLLOW_POLL_MS 1000

/* Strict decimal seq for --after-seq: digits only, no sign, no leading
 * zero, at most 2^53 - 1 (what the protocol carries). */
static int parse_seq(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > ((UINT64_C(1) << 53) - 1 - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	return 0;
}

/* Records as JSON lines on stdout, paged (no limit on the total), resumable
 * with --after-seq; --follow keeps the connection and asks again every
 * second for what was appended since. The daemon keeps no follow state and
 * never buffers more than one page for a slow reader: if the connection
 * ends (daemon restart, idle limit), cordonctl says where it stopped
 * ("resume with --after-seq N") and exits 1. */
static int cmd_audit_export(const struct opts *o)
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t after = 0, id = 1;
	int r;

	if (o->help) {
		printf("Usage: cordonctl audit export [--since TIME] [--until TIME] [--after-seq N] [--follow]\n\n"
		       "Audit records as JSON lines, oldest first, one object per line: seq, time (UTC, ISO 8601\n"
		       "with Z), event, actor, fields (every other member of the record), prev and hash (the\n"
		       "record's RFC 6962 leaf hash, hex; the next record's prev). TIME is YYYY-MM-DD or\n"
		       "YYYY-MM-DDTHH:MM:SS[.ffffff]Z. --after-seq N: start after record N (to resume).\n"
		       "--follow: after the last record, keep the connection and print new records as they\n"
		       "are appended (asking every %d ms); if the connection ends, the last seq printed is\n"
		       "named on stderr so that --after-seq resumes there. Exit 1 when it ends that way.\n",
		       FOLLOW_POLL_MS);
		return EXIT_OK;
	}
	if (o->n_pos != 2)
		return usage_error(o, "invalid-argument", AUDIT_EXPORT_USAGE, "too many arguments");
	if (o->after_seq && parse_seq(o->after_seq, &after) < 0)
		return usage_error(o, "invalid-argument", AUDIT_EXPORT_USAGE,
				   "--after-seq \"%s\" is not a record number (0 to 2^53-1, decimal)", o->after_seq);
	if (o->follow && o->until)
		return usage_error(o, "invalid-argument", AUDIT_EXPORT_USAGE,
				   "--follow and --until exclude each other");
	r = connect_unix(operator_socket(o), &fd);
	if (r != EXIT_OK)
		return r;
	for (;;) {
		_cleanup_(json_decrefp) json_t *args = NULL, *result = NULL, *error = NULL;
		const json_t *recs, *rec;
		size_t i;

		args = json_pack("{s:I}", "after_seq", (json_int_t)after);
		if (!args || (o->since && json_object_set_new(args, "since", json_string(o->since)) < 0) ||
		    (o->until && json_object_set_new(args, "until", json_string(o->until)) < 0))
			return EXIT_FAILED;
		r = call_on(fd, id++, "audit.export", args, -1, &result, &error);
		if (r != EXIT_OK) {
			if (o->follow)
				fprintf(stderr, "cordonctl: audit export stopped; resume with --after-seq %llu\n",
					(unsigned long long)after);
			return r == EXIT_PROTOCOL && o->follow ? EXIT_FAILED : r;
		}
		if (error) {
			const char *code = json_string_value(json_object_get(error, "code"));

			fprintf(stderr, "cordonctl: %s: %s\n", code,
				json_string_value(json_object_get(error, "message")));
			return strcmp(code, CORDON_OP_E_DENIED) == 0	? EXIT_DENIED
			       : strcmp(code, CORDON_OP_E_BAD_ARG) == 0 ? EXIT_USAGE
									: EXIT_FAILED;
		}
		recs = json_object_get(result, "records");
		json_array_foreach(recs, i, rec)
		{
			char *line = json_dumps(rec, JSON_COMPACT | JSON_ENCODE_ANY);

			if (!line)
				return EXIT_FAILED;
			puts(line);
			free(line);
		}
		if (fflush(stdout) != 0)
			return EXIT_FAILED; /* the reader went away */
		{
			uint64_t next = (uint64_t)json_integer_value(json_object_get(result, "next_seq"));
			bool advanced = next > after;

			after = next;
			if (json_is_true(json_object_get(result, "end")))
				return EXIT_OK;
			if (advanced && after < (uint64_t)json_integer_value(json_object_get(result, "last_seq")))
				continue; /* more to page through */
		}
		if (!o->follow)
			return EXIT_OK;
		(void)poll(NULL, 0, FOLLOW_POLL_MS);
	}
}

/* ---- cordonctl approvals watch ---- */

/* One event line: JSON (the daemon's object as is) or a human line. Never
 * an argument value: the daemon's events carry none. */
static int print_event(const struct opts *o, const json_t *ev)
{
	const char *conn = str(ev, "connector");

	if (o->connector && strcmp(conn, o->connector) != 0)
		return 0;
	if (o->json) {
		char *line = json_dumps(ev, JSON_COMPACT);

		if (!line)
			return -ENOMEM;
		puts(line);
		free(line);
		return 0;
	}
	printf("%s  %-9s %-9s %s/%s  %s", str(ev, "time"), str(ev, "event"), str(ev, "display_code"), conn,
	       str(ev, "tool"), str(ev, "tier"));
	if (json_is_integer(json_object_get(ev, "session_uid")))
		printf("  uid %lld", num(ev, "session_uid"));
	if (!strcmp(str(ev, "event"), "requested") || !strcmp(str(ev, "event"), "pending"))
		printf("  expires %s", str(ev, "expires_at"));
	if (json_is_integer(json_object_get(ev, "decided_by_uid")))
		printf("  by uid %lld", num(ev, "decided_by_uid"));
	if (json_is_string(json_object_get(ev, "reason")))
		printf("  (%s)", str(ev, "reason"));
	putchar('\n');
	return 0;
}

/* Approval events as they happen, one line each, starting with the
 * outstanding approvals. It polls approvals.watch every FOLLOW_POLL_MS on
 * one connection with the audit seq it has read up to (like audit export
 * --follow: the daemon keeps no watcher state, and the audit log is the
 * source, so --after-seq resumes without losing an event). */
static int cmd_approvals_watch(const struct opts *o)
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t after = 0, id = 1;
	bool have_cursor = false;
	int r;

	if (o->help) {
		printf("Usage: cordonctl approvals watch [--json] [--connector ID] [--after-seq N]\n\n"
		       "Follows approvals: first the outstanding ones (event \"pending\"), then one line per\n"
		       "event as it happens: requested, approved, denied, expired, revoked, consumed. Each\n"
		       "line: time, event, display code, connector/tool, tier, the session's uid, expiry (for\n"
		       "requested and pending), the deciding operator's uid, a reason. --json: one JSON object\n"
		       "per line {event, seq, time, approval_id, display_code, connector, tool, tier, session,\n"
		       "session_uid, expires_at (UTC, Z), state, reason, decided_by_uid, console_hint}. Never\n"
		       "an argument value: `approvals show CODE` shows the call. It asks the daemon every %d ms;\n"
		       "if the connection ends it names on stderr the seq to resume from (--after-seq N: the\n"
		       "events after audit record N, without the outstanding list) and exits 1.\n",
		       FOLLOW_POLL_MS);
		return EXIT_OK;
	}
	if (o->n_pos != 2)
		return usage_error(o, "invalid-argument", APPROVALS_WATCH_USAGE, "too many arguments");
	if (o->after_seq) {
		if (parse_seq(o->after_seq, &after) < 0)
			return usage_error(o, "invalid-argument", APPROVALS_WATCH_USAGE,
					   "--after-seq \"%s\" is not a record number (0 to 2^53-1, decimal)",
					   o->after_seq);
		have_cursor = true;
	}
	r = connect_unix(operator_socket(o), &fd);
	if (r != EXIT_OK)
		return r;
	for (;;) {
		_cleanup_(json_decrefp) json_t *args = NULL, *result = NULL, *error = NULL;
		const json_t *list, *ev;
		uint64_t next;
		size_t i;

		args = have_cursor ? json_pack("{s:I}", "after_seq", (json_int_t)after) : json_object();
		if (!args)
			return EXIT_FAILED;
		r = call_on(fd, id++, "approvals.watch", args, -1, &result, &error);
		if (r != EXIT_OK) {
			if (have_cursor)
				fprintf(stderr, "cordonctl: approvals watch stopped; resume with --after-seq %llu\n",
					(unsigned long long)after);
			return r == EXIT_PROTOCOL ? EXIT_FAILED : r;
		}
		if (error) {
			const char *code = json_string_value(json_object_get(error, "code"));

			fprintf(stderr, "cordonctl: %s: %s\n", code,
				json_string_value(json_object_get(error, "message")));
			return strcmp(code, CORDON_OP_E_DENIED) == 0 ? EXIT_DENIED : EXIT_FAILED;
		}
		list = json_object_get(result, have_cursor ? "events" : "pending");
		json_array_foreach(list, i, ev) if (print_event(o, ev) < 0) return EXIT_FAILED;
		if (fflush(stdout) != 0)
			return EXIT_FAILED; /* the reader went away */
		next = (uint64_t)json_integer_value(json_object_get(result, "next_seq"));
		if (!have_cursor || next > after) {
			bool more = next < (uint64_t)json_integer_value(json_object_get(result, "last_seq"));

			after = next;
			have_cursor = true;
			if (more)
				continue; /* more to page through */
		}
		(void)poll(NULL, 0, FOLLOW_POLL_MS);
	}
}

static const struct command *find_command(const struct opts *o, int *ret_consumed)
{
	if (o->n_pos == 0)
		return NULL;
	for (const struct command *c = commands; c->name; c++) {
		if (strcmp(c->name, o->pos[0]) != 0)
			continue;
		if (!c->sub) {
			*ret_consumed = 1;
			return c;
		}
		if (o->n_pos >= 2 && strcmp(c->sub, o->pos[1]) == 0) {
			*ret_consumed = 2;
			return c;
		}
	}
	return NULL;
}

static void command_help(const char *name)
{
	printf("Usage:\n");
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			printf("  cordonctl %s%s\n      %s\n", c->usage, c->read ? " [--json]" : "", c->help);
}

int main(int argc, char **argv)
{
	struct opts o = {};
	const struct command *c;
	_cleanup_(json_decrefp) json_t *args = NULL;
	json_t *result = NULL, *error = NULL;
	_cleanup_close_ int backup_fd = -EBADF;
	int consumed = 0, r;

	cordon_version_flag(argc, argv, "cordonctl");
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv, &o) != 0)
		return EXIT_USAGE;
	json_errors = o.json;
	if (o.n_pos == 0 && o.json && !o.help)
		return usage_error(&o, "missing-argument", NULL, "no command (see cordonctl --help)");
	if (o.n_pos == 0) {
		usage(o.help ? stdout : stderr);
		return o.help ? EXIT_OK : EXIT_USAGE;
	}
	if (strcmp(o.pos[0], "mcp") == 0)
		return cmd_mcp(&o);
	if (strcmp(o.pos[0], "audit") == 0 && o.n_pos >= 2 && strcmp(o.pos[1], "export") == 0)
		return cmd_audit_export(&o);
	if (strcmp(o.pos[0], "approvals") == 0 && o.n_pos >= 2 && strcmp(o.pos[1], "watch") == 0)
		return cmd_approvals_watch(&o);
	if (strcmp(o.pos[0], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	c = find_command(&o, &consumed);
	if (!c) {
		bool known = false;

		for (const struct command *k = commands; k->name; k++)
			known |= strcmp(k->name, o.pos[0]) == 0;
		if (known && o.json && !o.help && o.n_pos == 1)
			return usage_error(&o, "missing-argument", NULL,
					   "%s needs a subcommand (see cordonctl %s --help)", o.pos[0], o.pos[0]);
		if (known && (o.help || o.n_pos == 1)) {
			command_help(o.pos[0]);
			return o.help ? EXIT_OK : EXIT_USAGE;
		}
		return usage_error(&o, "unknown-command", NULL, "unknown command \"%s%s%s\" (see cordonctl --help)",
				   o.pos[0], o.n_pos > 1 ? " " : "", o.n_pos > 1 ? o.pos[1] : "");
	}
	if (o.help) {
		printf("Usage: cordonctl %s%s\n\n%s\n", c->usage, c->read ? " [--json]" : "", c->help);
		return EXIT_OK;
	}
	/* Shift the command words off the positionals. */
	memmove(o.pos, o.pos + consumed, sizeof(o.pos[0]) * (size_t)(o.n_pos - consumed));
	o.n_pos -= consumed;
	if (o.n_pos < c->min_pos || o.n_pos > c->max_pos)
		return usage_error(&o, o.n_pos < c->min_pos ? "missing-argument" : "invalid-argument", c->usage,
				   "%s arguments for %s %s", o.n_pos < c->min_pos ? "missing" : "too many", c->name,
				   c->sub ? c->sub : "");
	if (strcmp(c->op, "revoke-all") == 0 && !o.yes)
		return usage_error(&o, "missing-argument", c->usage,
				   "revoke-all empties every grant, ends every approval and delegation and\n"
				   "           stops every connector instance;\n"
				   "           run it again with --yes to confirm");
	/* `inventory review CONNECTOR --all --fingerprint-set H`: the bulk form. */
	if (strcmp(c->op, "inventory.review") == 0 && (o.all || o.fingerprint_set)) {
		if (!o.all || !o.fingerprint_set || o.fingerprint || o.n_pos != 1)
			return usage_error(&o, o.fingerprint_set && o.all ? "invalid-argument" : "missing-argument",
					   "inventory review CONNECTOR --all --fingerprint-set H",
					   "inventory review --all takes the connector alone and --fingerprint-set H "
					   "(the fingerprint set `cordonctl inventory show CONNECTOR` printed)");
		for (const struct command *k = commands; k->name; k++)
			if (k->op && strcmp(k->op, "inventory.review-all") == 0)
				c = k;
	}
	if (strcmp(c->op, "inventory.review-all") == 0 && !o.fingerprint_set)
		return usage_error(&o, "missing-argument", c->usage,
				   "inventory review-all needs --fingerprint-set H: the fingerprint set `cordonctl "
				   "inventory show CONNECTOR` printed for the tools you reviewed");
	if (strcmp(c->op, "inventory.review") == 0 && o.n_pos != 2)
		return usage_error(&o, "missing-argument", c->usage, "missing arguments for inventory review");
	if (strcmp(c->op, "inventory.review") == 0 && !o.fingerprint)
		return usage_error(&o, "missing-argument", c->usage,
				   "inventory review needs --fingerprint FP: the fingerprint `cordonctl inventory\n"
				   "           show` printed for what you reviewed (so a definition that changed since "
				   "is refused)");
	args = json_object();
	if (!args || c->build(c, &o, args) < 0 ||
	    (o.fingerprint && strcmp(c->op, "inventory.review") == 0 &&
	     json_object_set_new(args, "fingerprint", json_string(o.fingerprint)) < 0))
		return usage_error(&o, "invalid-argument", c->usage, "invalid arguments");
	o.socket = operator_socket(&o);

	/* backup PATH: cordonctl creates the file, as the operator running it,
	 * new (O_EXCL) and 0600, and passes it to cordond, which writes the
	 * copy into it (cordond itself can write only in its state
	 * directory). A failed backup leaves no file behind. */
	if (strcmp(c->op, "backup") == 0) {
		backup_fd = open(o.pos[0], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (backup_fd < 0) {
			int e = errno;

			if (o.json) {
				_cleanup_(json_decrefp) json_t *j = json_pack(
					"{s:{s:s, s:s++}}", "error", "code", "failed", "message", "cannot create ",
					o.pos[0], e == EEXIST ? ": it exists (a backup never overwrites a file)" : "");

				if (j)
					print_json_to(stderr, j, true);
			} else
				fprintf(stderr, "cordonctl: cannot create %s: %s%s\n", o.pos[0], strerror(e),
					e == EEXIST ? " (a backup never overwrites a file)" : "");
			return EXIT_FAILED;
		}
		(void)fchmod(backup_fd, 0600); /* whatever the umask */
	}
	r = call(o.socket, c->op, args, backup_fd, &result, &error);
	if (backup_fd >= 0 && (r != EXIT_OK || error))
		(void)unlink(o.pos[0]);
	if (r != EXIT_OK)
		return r;
	if (error) {
		const char *code = json_string_value(json_object_get(error, "code"));

		/* One error on one stream: with --json, the error object alone,
		 * on stderr. */
		if (o.json) {
			json_t *e = json_pack("{s:O}", "error", error);

			if (e)
				print_json_to(stderr, e, true);
			json_decref(e);
		} else
			fprintf(stderr, "cordonctl: %s: %s\n", code,
				json_string_value(json_object_get(error, "message")));
		r = approval_exit_code(c->op, code)	    ? approval_exit_code(c->op, code)
		    : strcmp(code, CORDON_OP_E_DENIED) == 0 ? EXIT_DENIED
		    : (strcmp(code, CORDON_OP_E_UNKNOWN_ARG) == 0 || strcmp(code, CORDON_OP_E_MISSING_ARG) == 0 ||
		       strcmp(code, CORDON_OP_E_BAD_ARG) == 0)
			    ? EXIT_USAGE
			    : EXIT_FAILED;
		json_decref(error);
		return r;
	}
	/* capabilities is the launcher's own report, printed as it is. */
	if (o.json)
		print_json_to(stdout, result, strcmp(c->op, "capabilities") != 0);
	else
		c->render(&o, result);
	if (strcmp(c->op, "audit.verify") == 0 && strcmp(str(result, "verdict"), "PASS") != 0)
		r = EXIT_FAILED;
	json_decref(result);
	return r;
}
