/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's configuration: the YAML file and the flags (daemon-config.h).
 *
 * The file is read on the strict YAML layer the profile loader uses
 * (launcher/lib/yaml-strict.h): at most 64 KiB, UTF-8 without NULs or
 * control characters, no anchors, aliases, tags or duplicate keys, one
 * document whose top level is a mapping of the keys in the table below.
 * Each key's value is checked by the same typed getter whether it comes
 * from the file or from its flag, so both accept the same values and say
 * the same thing about a bad one. Every allocation is checked; nothing of a
 * bad file is applied. */
#include "daemon-config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cleanup.h"
#include "log.h"
#include "parse-util.h"
#include "webhook-url.h"
#include "yaml-strict.h"

#define CONFIG_MAX_BYTES (64u * 1024)

enum key_kind {
	KIND_PATH,	 /* char *: absolute and canonical in the file; a flag may be relative */
	KIND_NAME,	 /* char *: a user or group name */
	KIND_HTTP,	 /* char *: "127.0.0.1:PORT" */
	KIND_MCP_LISTEN, /* char *: a loopback "IPv4:PORT" or "[IPv6]:PORT" (issue 18) */
	KIND_DURATION,	 /* uint64_t milliseconds, written in s, m or h */
	KIND_SIZE,	 /* uint64_t bytes, with an optional K, M or G */
	KIND_COUNT,	 /* unsigned */
	KIND_LEVEL,	 /* unsigned: a log.h LOG_LEVEL_* from its name */
	KIND_WEBHOOK,	 /* char *: "http://127.x.y.z[:port][/path]" (webhook.h) */
	KIND_HOSTS,	 /* char *: "name[,name...]", the Host names of mcp_http_listen */
};

struct config_key {
	const char *key;  /* in the file */
	const char *flag; /* its flag, with the "--"; NULL: the file only */
	enum key_kind kind;
	uint64_t min, max; /* durations in seconds */
	const char *range; /* min to max, as a message says them */
	size_t offset;	   /* of the field in struct cordon_daemon_config */
};

#define F(field) offsetof(struct cordon_daemon_config, field)

/* clang-format off */
static const struct config_key config_keys[] = {
	{ "profiles",               "--profiles",       KIND_PATH,     0, 0, NULL, F(profiles_dir) },
	{ "state",                  "--state",          KIND_PATH,     0, 0, NULL, F(state_dir) },
	{ "runtime",                "--runtime",        KIND_PATH,     0, 0, NULL, F(runtime_dir) },
	{ "user",                   "--user",           KIND_NAME,     0, 0, NULL, F(user) },
	{ "operator_group",         "--operator-group", KIND_NAME,     0, 0, NULL, F(operator_group) },
	{ "gateway_group",          "--gateway-group",  KIND_NAME,     0, 0, NULL, F(gateway_group) },
	{ "http",                   "--http",           KIND_HTTP,     0, 0, NULL, F(http_listen) },
	{ "mcp_http_listen",        "--mcp-http-listen", KIND_MCP_LISTEN, 0, 0, NULL, F(mcp_http_listen) },
	/* Issue 18: TLS on mcp_http_listen (PEM files, read as root at start)
	 * and the Host names a routable listener answers to. */
	{ "mcp_http_tls_cert",      NULL,               KIND_PATH,     0, 0, NULL, F(mcp_http_tls_cert) },
	{ "mcp_http_tls_key",       NULL,               KIND_PATH,     0, 0, NULL, F(mcp_http_tls_key) },
	{ "mcp_http_hosts",         NULL,               KIND_HOSTS,    0, 0, NULL, F(mcp_http_hosts) },
	{ "approval_wait",          "--approval-wait",  KIND_DURATION, 1, 3600, "1s to 1h", F(approval_wait_ms) },
	{ "result_cap",             "--result-cap",     KIND_SIZE,     1024, 64ull << 20, "1K to 64M", F(result_cap) },
	{ "launcher",               "--launcher",       KIND_PATH,     0, 0, NULL, F(launcher) },
	{ "max_sessions",           "--max-sessions",   KIND_COUNT,    1, 65536, NULL, F(max_sessions) },
	/* Resource shares (issue 11 findings 3 and 6). */
	{ "held_arguments_max",     NULL,               KIND_SIZE,     1ull << 20, 64ull << 30, "1M to 64G", F(held_max) },
	{ "held_arguments_per_uid", NULL,               KIND_SIZE,     1ull << 20, 64ull << 30, "1M to 64G", F(held_per_uid) },
	{ "sessions_per_uid",       NULL,               KIND_COUNT,    1, 65536, NULL, F(sessions_per_uid) },
	{ "initialize_timeout",     NULL,               KIND_DURATION, 1, 3600, "1s to 1h", F(initialize_timeout_ms) },
	/* Audit retention (issue 17): whole ranges up to a signed checkpoint. */
	{ "audit_retain_days",      NULL,               KIND_COUNT,    1, 36500, NULL, F(audit_retain_days) },
	{ "audit_retain_records",   NULL,               KIND_COUNT,    1000, 4000000000u, NULL, F(audit_retain_records) },
	{ "http_session_idle",      NULL,               KIND_DURATION, 1, 86400, "1s to 24h", F(http_session_idle_ms) },
	{ "log_level",              "--log-level",      KIND_LEVEL,    0, 0, NULL, F(log_level) },
	/* Issue 14: the approval webhook (webhook.h). */
	{ "approval_webhook_url",   NULL,               KIND_WEBHOOK,  0, 0, NULL, F(approval_webhook_url) },
	{ "approval_webhook_secret_file", NULL,         KIND_PATH,     0, 0, NULL, F(approval_webhook_secret_file) },
};
/* clang-format on */

#undef F

static bool kind_is_string(enum key_kind k)
{
	return k == KIND_PATH || k == KIND_NAME || k == KIND_HTTP || k == KIND_WEBHOOK || k == KIND_MCP_LISTEN ||
	       k == KIND_HOSTS;
}

static char **field_str(struct cordon_daemon_config *c, const struct config_key *k)
{
	return (char **)((char *)c + k->offset);
}

void cordon_daemon_config_init(struct cordon_daemon_config *c)
{
	*c = (struct cordon_daemon_config){
		.approval_wait_ms = CORDON_DAEMON_APPROVAL_WAIT_DEFAULT * 1000,
		.result_cap = CORDON_DAEMON_RESULT_CAP_DEFAULT,
		.line_max = CORDON_DAEMON_LINE_MAX_DEFAULT,
		.max_sessions = 4096,
		.held_max = CORDON_DAEMON_HELD_MAX_DEFAULT,
		.held_per_uid = CORDON_DAEMON_HELD_PER_UID_DEFAULT,
		.initialize_timeout_ms = CORDON_DAEMON_INITIALIZE_TIMEOUT_DEFAULT * 1000,
		.http_session_idle_ms = 1800 * 1000,
	};
}

unsigned cordon_daemon_config_log_level(const struct cordon_daemon_config *c)
{
	if (c->foreground_log_debug)
		return LOG_LEVEL_DEBUG;
	return c->log_level ? c->log_level : LOG_LEVEL_INFO;
}

void cordon_daemon_config_done(struct cordon_daemon_config *c)
{
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (kind_is_string(config_keys[i].kind))
			free(*field_str(c, &config_keys[i]));
	*c = (struct cordon_daemon_config){};
}

/* A deep copy of src into *ret, so a file can be applied to the copy and
 * dropped whole when any of it is bad. */
static int config_copy(const struct cordon_daemon_config *src, struct cordon_daemon_config *ret)
{
	struct cordon_daemon_config tmp = *src;

	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (kind_is_string(config_keys[i].kind))
			*field_str(&tmp, &config_keys[i]) = NULL;
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++) {
		const struct config_key *k = &config_keys[i];
		const char *s;

		if (!kind_is_string(k->kind))
			continue;
		s = *(char *const *)((const char *)src + k->offset);
		if (!s)
			continue;
		*field_str(&tmp, k) = strdup(s);
		if (!*field_str(&tmp, k)) {
			cordon_daemon_config_done(&tmp);
			return -ENOMEM;
		}
	}
	*ret = tmp;
	return 0;
}

/* "127.0.0.1:PORT" only: the TCP listener serves /health and /metrics to the
 * local host; anything wider must be an explicit reverse proxy. */
static bool http_listen_valid(const char *s)
{
	uint64_t port;

	if (strncmp(s, "127.0.0.1:", 10) != 0)
		return false;
	return parse_u64(s + 10, &port) >= 0 && port > 0 && port < 65536;
}

/* mcp_http_listen: "IPv4:PORT" or "[IPv6]:PORT", an IP literal and a port
 * of at most 5 digits (0: any free port). Returns 0 for a loopback
 * address, -EADDRNOTAVAIL for any other, -EINVAL when it is not an
 * address. (gateway_http_tcp_listen() parses it again to bind.) */
static int mcp_listen_check(const char *s)
{
	char host[64];
	const char *port;
	size_t hl;
	struct in_addr a4;
	struct in6_addr a6;
	uint64_t p;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hl);
		port = end + 2;
	} else {
		const char *colon = strrchr(s, ':');

		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		hl = (size_t)(colon - s);
		memcpy(host, s, hl);
		port = colon + 1;
	}
	host[hl] = 0;
	if (!*port || strlen(port) > 5 || strspn(port, "0123456789") != strlen(port) || parse_u64(port, &p) < 0 ||
	    p > 65535)
		return -EINVAL;
	if (s[0] != '[' && inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127 ? 0 : -EADDRNOTAVAIL;
	if (s[0] == '[' && inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ? 0 : -EADDRNOTAVAIL;
	return -EINVAL;
}

#define HOSTS_MAX     16
#define HOSTS_LEN_MAX 1024

/* One name of mcp_http_hosts: a DNS name (labels of 1 to 63 of a-z A-Z
 * 0-9 -, not starting or ending with -), an IPv4 literal or a bracketed
 * IPv6 literal. */
static bool host_name_valid(const char *s, size_t n)
{
	char buf[64];
	struct in6_addr a6;
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	if (s[0] == '[') {
		if (n < 3 || s[n - 1] != ']' || n - 2 >= sizeof(buf))
			return false;
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = 0;
		return inet_pton(AF_INET6, buf, &a6) == 1;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			   (ch == '-' && label > 0)) {
			if (++label > 63)
				return false;
		} else
			return false;
	}
	return label > 0 && s[n - 1] != '-';
}

/* mcp_http_hosts: "name[,name...]", at most HOSTS_MAX names. */
static bool hosts_valid(const char *s)
{
	unsigned count = 0;

	if (strlen(s) > HOSTS_LEN_MAX)
		return false;
	for (const char *p = s;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (!host_name_valid(p, n) || ++count > HOSTS_MAX)
			return false;
		if (!end)
			return true;
		p = end + 1;
	}
}

static bool name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* Checks the value v of key k (its path pushed by the caller) and stores it
 * in c. A file requires absolute paths (it has no meaningful working
 * directory); a flag may be relative and is made absolute by
 * cordon_daemon_config_finish(). Returns 0 or -errno, the error in y. */
static int config_set(struct cordon_yaml_ctx *y, const struct config_key *k, const struct cordon_yaml_node *v,
		      bool from_file, struct cordon_daemon_config *c)
{
	char *s = NULL;
	uint64_t u;
	int r;

	switch (k->kind) {
	case KIND_PATH:
		if (from_file)
			r = cordon_yaml_get_path(y, v, &s);
		else if (v->len == 0)
			r = cordon_yaml_err(y, v, "must be a path");
		else
			r = cordon_yaml_get_string(y, v, PATH_MAX - 1, &s);
		break;
	case KIND_NAME:
	case KIND_HTTP:
		r = cordon_yaml_expect(y, v, CORDON_YAML_SCALAR);
		if (r >= 0 && k->kind == KIND_NAME && !name_valid(v->value))
			r = cordon_yaml_err(y, v,
					    "not a valid user or group name (1 to 32 of A-Z a-z 0-9 _ - .; got %s)",
					    cordon_yaml_quote(v).s);
		else if (r >= 0 && k->kind == KIND_HTTP && !http_listen_valid(v->value))
			r = cordon_yaml_err(y, v, "must be 127.0.0.1:PORT (got %s)", cordon_yaml_quote(v).s);
		if (r >= 0)
			r = cordon_yaml_get_string(y, v, 64, &s);
		break;
	case KIND_WEBHOOK: {
		struct cordon_webhook_url url;
		char err[200];

		r = cordon_yaml_expect(y, v, CORDON_YAML_SCALAR);
		if (r >= 0 && cordon_webhook_url_parse(v->value, &url, err, sizeof(err)) < 0)
			r = cordon_yaml_err(y, v, "%s", err);
		if (r >= 0)
			r = cordon_yaml_get_string(y, v, CORDON_WEBHOOK_URL_MAX - 1, &s);
		break;
	}
	case KIND_MCP_LISTEN: {
		r = cordon_yaml_expect(y, v, CORDON_YAML_SCALAR);
		if (r < 0)
			break;
		r = mcp_listen_check(v->value);
		/* A routable address is checked against the TLS keys in
		 * cordon_daemon_config_finish(), once the whole file is read. */
		if (r == -EADDRNOTAVAIL)
			r = 0;
		else if (r < 0)
			r = cordon_yaml_err(y, v, "%s: not an address (expected 127.0.0.1:PORT or [::1]:PORT)",
					    cordon_yaml_quote(v).s);
		if (r >= 0)
			r = cordon_yaml_get_string(y, v, 64, &s);
		break;
	}
	case KIND_HOSTS:
		r = cordon_yaml_expect(y, v, CORDON_YAML_SCALAR);
		if (r >= 0 && !hosts_valid(v->value))
			r = cordon_yaml_err(y, v,
					    "%s: expected a comma-separated list of at most %d host names or IP "
					    "addresses (e.g. mcp.example.org,10.0.0.5,[fd00::5]), no ports or spaces",
					    cordon_yaml_quote(v).s, HOSTS_MAX);
		if (r >= 0)
			r = cordon_yaml_get_string(y, v, HOSTS_LEN_MAX, &s);
		break;
	case KIND_DURATION:
		r = cordon_yaml_get_duration(y, v, k->min, k->max, k->range, &u);
		if (r >= 0)
			*(uint64_t *)((char *)c + k->offset) = u * 1000;
		return r;
	case KIND_SIZE:
		r = cordon_yaml_get_size(y, v, k->min, k->max, k->range, &u);
		if (r >= 0)
			*(uint64_t *)((char *)c + k->offset) = u;
		return r;
	case KIND_COUNT:
		r = cordon_yaml_get_uint(y, v, k->min, k->max, &u);
		if (r >= 0)
			*(unsigned *)((char *)c + k->offset) = (unsigned)u;
		return r;
	case KIND_LEVEL: {
		enum log_level l;

		r = cordon_yaml_expect(y, v, CORDON_YAML_SCALAR);
		if (r >= 0 && log_level_from_name(v->value, &l) < 0)
			r = cordon_yaml_err(y, v, "must be error, warning, notice, info or debug (got %s)",
					    cordon_yaml_quote(v).s);
		if (r >= 0)
			*(unsigned *)((char *)c + k->offset) = (unsigned)l;
		return r;
	}
	default:
		return cordon_yaml_err_at(y, EINVAL, 0, 0, "internal error: key kind %d", (int)k->kind);
	}
	if (r < 0)
		return r;
	free(*field_str(c, k));
	*field_str(c, k) = s;
	return 0;
}

/* The first error collected, as the caller's diag; a file's errors are
 * prefixed with its name (at most its last 80 bytes, so the message keeps
 * room for what is wrong). Returns -error. */
static int first_error(const struct cordon_yaml_ctx *y, const char *name, struct cordon_diag *diag)
{
	const struct cordon_diag *e = &y->errs[0];
	size_t n = name ? strlen(name) : 0;

	if (y->n_errs == 0)
		return cordon_diag_set(diag, EINVAL, "config", "%s: invalid configuration", name ? name : "");
	if (!name)
		return cordon_diag_set_at(diag, e->error, "config", e->line, e->column, "%s", e->message);
	return cordon_diag_set_at(diag, e->error, "config", e->line, e->column, "%s%s: %s", n > 80 ? "..." : "",
				  n > 80 ? name + n - 77 : name, e->message);
}

DEFINE_CLEANUP(yaml_node_freep, struct cordon_yaml_node *, cordon_yaml_node_free)

int cordon_daemon_config_load_buffer(struct cordon_daemon_config *c, const char *name, const char *buf, size_t len,
				     struct cordon_diag *diag)
{
	_cleanup_(yaml_node_freep) struct cordon_yaml_node *root = NULL;
	_cleanup_free_ struct cordon_yaml_ctx *y = NULL;
	const struct cordon_yaml_node *vals[ELEMENTSOF(config_keys)];
	const char *names[ELEMENTSOF(config_keys)];
	struct cordon_daemon_config tmp;
	int r;

	y = calloc(1, sizeof(*y));
	if (!y)
		return cordon_diag_set(diag, ENOMEM, "config", "%s: out of memory", name);
	y->step = "config";
	r = cordon_yaml_parse(y, buf, len, CONFIG_MAX_BYTES, &root);
	if (r < 0)
		return first_error(y, name, diag);
	if (root->type != CORDON_YAML_MAP) {
		cordon_yaml_err(y, root, "the top level must be a mapping (got %s)", cordon_yaml_describe(root).s);
		return first_error(y, name, diag);
	}
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		names[i] = config_keys[i].key;
	/* Unknown keys, keys that are not strings and duplicates: reported,
	 * and the known keys' values are still checked, so that every error
	 * of the file is collected before the first is reported. */
	(void)cordon_yaml_map_fields(y, root, names, ELEMENTSOF(config_keys), vals);

	/* Applied to a copy, so that nothing of a bad file is applied. */
	r = config_copy(c, &tmp);
	if (r < 0)
		return cordon_diag_set(diag, ENOMEM, "config", "%s: out of memory", name);
	for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
		if (vals[i])
			CORDON_YAML_WITH_KEY(y, config_keys[i].key, &r,
					     config_set(y, &config_keys[i], vals[i], true, &tmp));
	if (r < 0 || y->n_errs > 0) {
		cordon_daemon_config_done(&tmp);
		return first_error(y, name, diag);
	}
	cordon_daemon_config_done(c);
	*c = tmp;
	return 0;
}

int cordon_daemon_config_load(struct cordon_daemon_config *c, const char *path, struct cordon_diag *diag)
{
	_cleanup_free_ char *buf = NULL;
	struct cordon_diag d;
	size_t len;
	int r;

	r = cordon_yaml_read_file(path, CONFIG_MAX_BYTES, "config", &buf, &len, &d);
	if (r < 0) {
		size_t n = strlen(path);

		return cordon_diag_set(diag, d.error, "config", "%s%s: %s", n > 80 ? "..." : "",
				       n > 80 ? path + n - 77 : path, d.message);
	}
	return cordon_daemon_config_load_buffer(c, path, buf, len, diag);
}

/* One flag's value, checked as the file's value would be: a scalar node of
 * its own, plain for numbers (so "30s" reads as the file's 30s does) and
 * quoted for strings (so "null" is a name, not an empty value). */
static int config_flag(struct cordon_daemon_config *c, const char *key, char *value, struct cordon_diag *diag)
{
	_cleanup_free_ struct cordon_yaml_ctx *y = NULL;
	const struct config_key *k = NULL;
	struct cordon_yaml_node v;
	int r = 0;

	for (size_t i = 0; i < ELEMENTSOF(config_keys) && !k; i++)
		if (config_keys[i].flag && strcmp(config_keys[i].key, key) == 0)
			k = &config_keys[i];
	if (!k)
		return cordon_diag_set(diag, EINVAL, "config", "no flag for '%s'", key);
	y = calloc(1, sizeof(*y));
	if (!y)
		return cordon_diag_set(diag, ENOMEM, "config", "%s: out of memory", k->flag);
	y->step = "config";
	v = (struct cordon_yaml_node){
		.type = CORDON_YAML_SCALAR,
		.plain = !kind_is_string(k->kind),
		.value = value,
		.len = strlen(value),
	};
	CORDON_YAML_WITH_KEY(y, k->flag, &r, config_set(y, k, &v, false, c));
	if (r < 0)
		return first_error(y, NULL, diag);
	return 0;
}

static int parse_args(struct cordon_daemon_config *c, int argc, char **argv, const char *config_buf, size_t config_len,
		      struct cordon_diag *diag)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "profiles", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "user", required_argument, NULL, 'u' },
		{ "operator-group", required_argument, NULL, 'O' },
		{ "gateway-group", required_argument, NULL, 'G' },
		{ "http", required_argument, NULL, 'H' },
		{ "mcp-http-listen", required_argument, NULL, 'M' },
		{ "approval-wait", required_argument, NULL, 'w' },
		{ "result-cap", required_argument, NULL, 'R' },
		{ "launcher", required_argument, NULL, 'L' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "debug", no_argument, NULL, 'd' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *config = NULL;
	int o, r;

	/* The config file first, flags override it: scan once for --config. */
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		if (o == 'c')
			config = optarg;
		else if (o == 'h')
			return 1;
		else if (o == '?')
			return cordon_diag_set(diag, EINVAL, "config", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
	}
	if (optind < argc)
		return cordon_diag_set(diag, EINVAL, "config", "unexpected argument '%s'", argv[optind]);
	if (config) {
		r = config_buf ? cordon_daemon_config_load_buffer(c, config, config_buf, config_len, diag)
			       : cordon_daemon_config_load(c, config, diag);
		if (r < 0)
			return r;
	}
	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		const char *key = NULL;

		switch (o) {
		case 'p':
			key = "profiles";
			break;
		case 's':
			key = "state";
			break;
		case 'r':
			key = "runtime";
			break;
		case 'u':
			key = "user";
			break;
		case 'O':
			key = "operator_group";
			break;
		case 'G':
			key = "gateway_group";
			break;
		case 'H':
			key = "http";
			break;
		case 'M':
			key = "mcp_http_listen";
			break;
		case 'w':
			key = "approval_wait";
			break;
		case 'R':
			key = "result_cap";
			break;
		case 'L':
			key = "launcher";
			break;
		case 'S':
			key = "max_sessions";
			break;
		case 'l':
			key = "log_level";
			break;
		case 'd':
			c->foreground_log_debug = true;
			break;
		default:
			break;
		}
		if (!key)
			continue;
		r = config_flag(c, key, optarg, diag);
		if (r < 0)
			return r;
	}
	return 0;
}

int cordon_daemon_config_parse_args(struct cordon_daemon_config *c, int argc, char **argv, struct cordon_diag *diag)
{
	return parse_args(c, argc, argv, NULL, 0, diag);
}

int cordon_daemon_config_parse_args_buffer(struct cordon_daemon_config *c, int argc, char **argv, const char *buf,
					   size_t len, struct cordon_diag *diag)
{
	return parse_args(c, argc, argv, buf, len, diag);
}

/* Makes a flag path absolute and canonical: an existing path is resolved
 * (realpath), a new one is joined to the working directory with "." and
 * empty components dropped; ".." in a path that does not exist yet is
 * refused rather than guessed. */
static int make_absolute(char **p, struct cordon_diag *diag, const char *what)
{
	char cwd[PATH_MAX], *n = NULL, *out, *save = NULL;
	size_t len = 0;

	if (!*p)
		return 0;
	n = realpath(*p, NULL);
	if (!n) {
		if ((*p)[0] == '/')
			snprintf(cwd, sizeof(cwd), "%s", "");
		else if (!getcwd(cwd, sizeof(cwd)))
			return cordon_diag_set(diag, errno, "config", "cannot get the working directory");
		if (asprintf(&n, "%s/%s", cwd, *p) < 0)
			return cordon_diag_set(diag, ENOMEM, "config", "out of memory");
		out = calloc(1, strlen(n) + 2);
		if (!out) {
			free(n);
			return cordon_diag_set(diag, ENOMEM, "config", "out of memory");
		}
		for (char *tok = strtok_r(n, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
			if (!strcmp(tok, "."))
				continue;
			if (!strcmp(tok, "..")) {
				free(out);
				free(n);
				return cordon_diag_set(diag, EINVAL, "config",
						       "%s: '..' in a path that does not exist yet", what);
			}
			out[len++] = '/';
			memcpy(out + len, tok, strlen(tok));
			len += strlen(tok);
		}
		if (!len)
			out[len++] = '/';
		free(n);
		n = out;
	}
	if (strlen(n) >= PATH_MAX || !path_is_absolute_canonical(n)) {
		free(n);
		return cordon_diag_set(diag, ENAMETOOLONG, "config", "%s: not a usable path", what);
	}
	free(*p);
	*p = n;
	return 0;
}

int cordon_daemon_config_finish(struct cordon_daemon_config *c, struct cordon_diag *diag)
{
	int r;

	if (!c->state_dir)
		return cordon_diag_set(diag, EINVAL, "config", "no state directory: give --state DIR or 'state:'");
	if (!c->profiles_dir)
		return cordon_diag_set(diag, EINVAL, "config",
				       "no profiles directory: give --profiles DIR or 'profiles:'");
	if ((r = make_absolute(&c->state_dir, diag, "state")) < 0 ||
	    (r = make_absolute(&c->profiles_dir, diag, "profiles")) < 0 ||
	    (r = make_absolute(&c->runtime_dir, diag, "runtime")) < 0 ||
	    (r = make_absolute(&c->launcher, diag, "launcher")) < 0)
		return r;
	if (!c->runtime_dir && asprintf(&c->runtime_dir, "%s/run", c->state_dir) < 0) {
		c->runtime_dir = NULL;
		return cordon_diag_set(diag, ENOMEM, "config", "out of memory");
	}
	/* sun_path holds 108 bytes including the NUL; "/operator.sock" is the
	 * longest name the daemon binds. */
	if (strlen(c->runtime_dir) + strlen("/operator.sock") >= 108)
		return cordon_diag_set(diag, ENAMETOOLONG, "config",
				       "runtime directory '%s' is too long for a Unix socket path; give --runtime",
				       c->runtime_dir);
	if (c->held_per_uid > c->held_max)
		return cordon_diag_set(diag, EINVAL, "config",
				       "held_arguments_per_uid (%llu bytes) exceeds held_arguments_max (%llu bytes)",
				       (unsigned long long)c->held_per_uid, (unsigned long long)c->held_max);
	/* The webhook signs every body: a URL without a secret (or a secret
	 * without a URL) is a mistake, not a choice. */
	if (!c->approval_webhook_url != !c->approval_webhook_secret_file)
		return cordon_diag_set(diag, EINVAL, "config",
				       "approval_webhook_url and approval_webhook_secret_file go together: give both "
				       "or neither");
	/* MCP carries the agent's token and every call's arguments: on a
	 * routable address only over TLS. Refused at start and at reload
	 * alike. */
	if (!c->mcp_http_tls_cert != !c->mcp_http_tls_key)
		return cordon_diag_set(diag, EINVAL, "config",
				       "mcp_http_tls_cert and mcp_http_tls_key go together: give both or neither");
	if (c->mcp_http_tls_cert && !c->mcp_http_listen)
		return cordon_diag_set(diag, EINVAL, "config",
				       "mcp_http_tls_cert and mcp_http_tls_key need mcp_http_listen");
	if (c->mcp_http_listen && mcp_listen_check(c->mcp_http_listen) == -EADDRNOTAVAIL && !c->mcp_http_tls_cert)
		return cordon_diag_set(
			diag, EINVAL, "config",
			"mcp_http_listen '%s': not a loopback address; serving MCP on a routable address needs TLS: "
			"set mcp_http_tls_cert and mcp_http_tls_key (or use 127.0.0.1 or [::1])",
			c->mcp_http_listen);
	/* No --user as root: cordond drops to its private id
	 * (CORDON_BROKER_PRIVATE_ID, resolved in privs_resolve()), never to a
	 * shared account such as nobody. */
	return 0;
}
