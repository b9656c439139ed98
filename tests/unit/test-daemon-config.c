/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's configuration: the strict YAML file (on the shared strict YAML
 * layer, launcher/lib/yaml-strict.h) and the flags. Every refusal is
 * asserted with its exact message, errno, line and column. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-config.h"
#include "log.h"
#include "test-support.h"

static char *dir;
static char cfg_path[600];

static const char *write_cfg_len(const char *text, size_t len)
{
	FILE *f;

	snprintf(cfg_path, sizeof(cfg_path), "%s/cordond.yaml", dir);
	f = fopen(cfg_path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return cfg_path;
}

static const char *write_cfg(const char *text)
{
	return write_cfg_len(text, strlen(text));
}

static int load(const char *text, struct cordon_daemon_config *c, struct cordon_diag *d)
{
	cordon_daemon_config_init(c);
	return cordon_daemon_config_load(c, write_cfg(text), d);
}

/* Asserts the load fails with exactly "<file>: <message>" at line:column,
 * and that nothing of the file was applied to a config that had values. */
static void expect_bad_len(const char *text, size_t len, int error, unsigned line, unsigned column, const char *message)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char want[400];
	int r;

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load(&c, write_cfg("state: /old\nmax_sessions: 7\n"), &d), 0);
	r = cordon_daemon_config_load(&c, write_cfg_len(text, len), &d);
	snprintf(want, sizeof(want), "%s: %s", cfg_path, message);
	if (r != -error || d.line != line || d.column != column || strcmp(d.message, want) != 0)
		print_message("got r=%d %u:%u: %s\n", r, d.line, d.column, d.message);
	assert_int_equal(r, -error);
	assert_int_equal(d.error, error);
	assert_string_equal(d.step, "config");
	assert_string_equal(d.message, want);
	assert_int_equal(d.line, line);
	assert_int_equal(d.column, column);
	/* Nothing of a bad file is applied. */
	assert_string_equal(c.state_dir, "/old");
	assert_int_equal(c.max_sessions, 7);
	assert_null(c.runtime_dir);
	cordon_daemon_config_done(&c);
}

static void expect_bad(const char *text, unsigned line, unsigned column, const char *message)
{
	expect_bad_len(text, strlen(text), EINVAL, line, column, message);
}

/* Every key of docs/cordond.md, each value different from its default. */
static void test_valid_full_config(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(load("# cordond.yaml\n"
			      "profiles: /etc/cordon/profiles\n"
			      "state: /var/lib/cordon\n"
			      "runtime: /run/cordon\n"
			      "user: cordon\n"
			      "operator_group: adm\n"
			      "gateway_group: 'agents'\n"
			      "http: 127.0.0.1:9464\n"
			      "approval_wait: 45s\n"
			      "result_cap: 2M\n"
			      "launcher: \"/usr/libexec/cordon/cordon-launch\"\n"
			      "max_sessions: 100\n"
			      "held_arguments_max: 1G\n"
			      "held_arguments_per_uid: 128M\n"
			      "sessions_per_uid: 32\n"
			      "initialize_timeout: 2m\n",
			      &c, &d),
			 0);
	assert_string_equal(c.profiles_dir, "/etc/cordon/profiles");
	assert_string_equal(c.state_dir, "/var/lib/cordon");
	assert_string_equal(c.runtime_dir, "/run/cordon");
	assert_string_equal(c.user, "cordon");
	assert_string_equal(c.operator_group, "adm");
	assert_string_equal(c.gateway_group, "agents");
	assert_string_equal(c.http_listen, "127.0.0.1:9464");
	assert_int_equal(c.approval_wait_ms, 45000);
	assert_int_equal(c.result_cap, 2 * 1024 * 1024);
	assert_string_equal(c.launcher, "/usr/libexec/cordon/cordon-launch");
	assert_int_equal(c.max_sessions, 100);
	assert_int_equal(c.held_max, 1024ull * 1024 * 1024);
	assert_int_equal(c.held_per_uid, 128ull * 1024 * 1024);
	assert_int_equal(c.sessions_per_uid, 32);
	assert_int_equal(c.initialize_timeout_ms, 120000);
	/* Defaults of what a file cannot set. */
	assert_int_equal(c.line_max, CORDON_DAEMON_LINE_MAX_DEFAULT);
	cordon_daemon_config_done(&c);

	/* A file over a file: set keys replace, others stay. */
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load(&c, write_cfg("state: /a\nuser: u1\n"), &d), 0);
	assert_int_equal(cordon_daemon_config_load(&c, write_cfg("user: u2\n"), &d), 0);
	assert_string_equal(c.state_dir, "/a");
	assert_string_equal(c.user, "u2");
	cordon_daemon_config_done(&c);

	/* An empty mapping sets nothing; comments alone are no document. */
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load(&c, write_cfg("{}\n"), &d), 0);
	assert_null(c.state_dir);
	cordon_daemon_config_done(&c);
	expect_bad("# nothing\n", 0, 0, "file contains no YAML document (only comments or blank lines)");
}

/* The example shipped for /etc/cordon/cordond.yaml loads. */
static void test_shipped_example(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char path[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/tools/systemd/cordond.yaml", cordon_test_env("CORDON_SOURCE_DIR", "."));
	cordon_daemon_config_init(&c);
	if (cordon_daemon_config_load(&c, path, &d) < 0)
		fail_msg("%s (line %u, column %u)", d.message, d.line, d.column);
	assert_string_equal(c.profiles_dir, "/etc/cordon/profiles");
	assert_string_equal(c.operator_group, "cordon-operators");
	assert_int_equal(c.approval_wait_ms, 30000);
	cordon_daemon_config_done(&c);
}

static void test_anchor_refused(void **state)
{
	(void)state;
	expect_bad("state: &s /a\n", 1, 8, "YAML anchors (&s) are not allowed: cordon refuses anchors and aliases");
	/* The billion-laughs shape stops at its first anchor. */
	expect_bad("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n", 1, 4,
		   "YAML anchors (&a) are not allowed: cordon refuses anchors and aliases");
}

static void test_alias_refused(void **state)
{
	(void)state;
	expect_bad("state: /a\nruntime: *s\n", 2, 10,
		   "YAML aliases (*s) are not allowed: cordon refuses anchors and aliases");
}

static void test_tag_refused(void **state)
{
	(void)state;
	expect_bad("max_sessions: !!int 100\n", 1, 15, "YAML tags (tag:yaml.org,2002:int) are not allowed");
	expect_bad("%TAG !c! tag:cordon:\n---\nstate: /a\n", 1, 1, "YAML %TAG directives are not allowed");
}

static void test_duplicate_key(void **state)
{
	(void)state;
	expect_bad("state: /a\nuser: u\nstate: /b\n", 3, 1, "state: duplicate key (first at line 1)");
	/* Quoting does not make it another key. */
	expect_bad("user: u\n'user': v\n", 2, 1, "user: duplicate key (first at line 1)");
}

static void test_unknown_key(void **state)
{
	(void)state;
	expect_bad("state: /a\nstat: /b\n", 2, 1, "stat: unknown key (not one of the 25 keys accepted here)");
	/* A flag's spelling is not a key. */
	expect_bad("max-sessions: 8\n", 1, 1, "max-sessions: unknown key (not one of the 25 keys accepted here)");
	expect_bad("[a]: 1\n", 1, 1, "mapping keys must be strings, got a list");
}

static void test_wrong_type(void **state)
{
	(void)state;
	expect_bad("state: [/a]\n", 1, 8, "state: expected a string, got a list");
	expect_bad("user: {name: x}\n", 1, 7, "user: expected a string, got a mapping");
	expect_bad("runtime:\nuser: u\n", 1, 9, "runtime: expected a string, got an empty value");
	expect_bad("http: ~\n", 1, 7, "http: expected a string, got an empty value");
	/* A quoted number is a string. */
	expect_bad("max_sessions: \"100\"\n", 1, 15, "max_sessions: must be an integer from 1 to 65536 (got \"100\")");
	expect_bad("max_sessions: 0100\n", 1, 15, "max_sessions: must be an integer from 1 to 65536 (got \"0100\")");
	expect_bad("- state\n", 1, 1, "the top level must be a mapping (got a list)");
	expect_bad("just a string\n", 1, 1, "the top level must be a mapping (got \"just a string\")");
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_bad("state: relative/dir\n", 1, 8, "state: must be an absolute canonical path (got \"relative/dir\")");
	expect_bad("state: /a/../b\n", 1, 8, "state: must be an absolute canonical path (got \"/a/../b\")");
	expect_bad("http: 0.0.0.0:80\n", 1, 7, "http: must be 127.0.0.1:PORT (got \"0.0.0.0:80\")");
	expect_bad("http: 127.0.0.1:70000\n", 1, 7, "http: must be 127.0.0.1:PORT (got \"127.0.0.1:70000\")");
	expect_bad("approval_wait: 30\n", 1, 16,
		   "approval_wait: must be a duration from 1s to 1h with an s, m or h suffix (got \"30\")");
	expect_bad("approval_wait: 2h\n", 1, 16,
		   "approval_wait: must be a duration from 1s to 1h with an s, m or h suffix (got \"2h\")");
	expect_bad("result_cap: 1\n", 1, 13,
		   "result_cap: must be a size from 1K to 64M (K, M, G are powers of 1024; got \"1\")");
	expect_bad("user: 'a b'\n", 1, 7,
		   "user: not a valid user or group name (1 to 32 of A-Z a-z 0-9 _ - .; got \"a b\")");
	/* Every bad value and key is found; the first in the file is reported. */
	expect_bad("result_cap: 1\nstate: rel\n", 1, 13,
		   "result_cap: must be a size from 1K to 64M (K, M, G are powers of 1024; got \"1\")");
	expect_bad("state: rel\nstat: /b\n", 1, 8, "state: must be an absolute canonical path (got \"rel\")");
	expect_bad("log_level: warn\n", 1, 12,
		   "log_level: must be error, warning, notice, info or debug (got \"warn\")");
	expect_bad("log_level: crit\n", 1, 12,
		   "log_level: must be error, warning, notice, info or debug (got \"crit\")");
	expect_bad("log_level: [info]\n", 1, 12, "log_level: expected a string, got a list");
}

static void expect_flag_bad(char *flag, char *value, const char *message);

/* log_level from the file, --log-level over it, --debug over both; info
 * when neither says. */
static void test_log_level(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	const char *path = write_cfg("log_level: warning\n");
	char *a1[] = { "cordond", "--config", (char *)path, NULL };
	char *a2[] = { "cordond", "--config", (char *)path, "--log-level", "notice", NULL };
	char *a3[] = { "cordond", "--log-level", "error", "--debug", NULL };

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_log_level(&c), LOG_LEVEL_INFO);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 3, a1, &d), 0);
	assert_int_equal(cordon_daemon_config_log_level(&c), LOG_LEVEL_WARNING);
	cordon_daemon_config_done(&c);
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 5, a2, &d), 0);
	assert_int_equal(cordon_daemon_config_log_level(&c), LOG_LEVEL_NOTICE);
	cordon_daemon_config_done(&c);
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 4, a3, &d), 0);
	assert_int_equal(cordon_daemon_config_log_level(&c), LOG_LEVEL_DEBUG);
	cordon_daemon_config_done(&c);
	expect_flag_bad("--log-level", "verbose",
			"--log-level: must be error, warning, notice, info or debug (got \"verbose\")");
}

/* mcp_http_listen (issue 18): loopback IPv4 or IPv6 literals and a port;
 * a routable address is refused with the reason, anything else as not an
 * address. */
static void test_mcp_http_listen(void **state)
{
	static const char *const good[] = { "127.0.0.1:8765", "127.0.0.2:0", "[::1]:65535" };
	static const char *const not_loopback[] = { "0.0.0.0:8765", "192.168.1.2:80", "[::]:80", "[2001:db8::1]:1" };
	static const char *const not_address[] = { "localhost:80",  "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
						   "127.0.0.1:12a", "[::1]80",	 "::1:80",     "127.0.0.1:123456" };
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char text[128];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "mcp_http_listen: '%s'\n", good[i]);
		assert_int_equal(load(text, &c, &d), 0);
		assert_string_equal(c.mcp_http_listen, good[i]);
		cordon_daemon_config_done(&c);
	}
	/* A routable address: read, then refused as a whole config without
	 * the TLS keys, accepted with them (issue 18). */
	for (size_t i = 0; i < sizeof(not_loopback) / sizeof(not_loopback[0]); i++) {
		char tls[400];

		snprintf(text, sizeof(text), "state: /s\nprofiles: /p\nmcp_http_listen: '%s'\n", not_loopback[i]);
		assert_int_equal(load(text, &c, &d), 0);
		assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
		assert_non_null(strstr(d.message,
				       "not a loopback address; serving MCP on a routable address needs TLS: "
				       "set mcp_http_tls_cert and mcp_http_tls_key"));
		cordon_daemon_config_done(&c);
		snprintf(tls, sizeof(tls),
			 "%smcp_http_tls_cert: /etc/c.pem\nmcp_http_tls_key: /etc/k.pem\nmcp_http_hosts: "
			 "mcp.example.org,10.0.0.5,[fd00::5]\n",
			 text);
		assert_int_equal(load(tls, &c, &d), 0);
		assert_int_equal(cordon_daemon_config_finish(&c, &d), 0);
		assert_string_equal(c.mcp_http_hosts, "mcp.example.org,10.0.0.5,[fd00::5]");
		cordon_daemon_config_done(&c);
	}
	/* The keys go together, and only with a listener. */
	assert_int_equal(load("state: /s\nprofiles: /p\nmcp_http_listen: 0.0.0.0:1\nmcp_http_tls_cert: /c\n", &c, &d),
			 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_non_null(strstr(d.message, "go together"));
	cordon_daemon_config_done(&c);
	assert_int_equal(load("state: /s\nprofiles: /p\nmcp_http_tls_cert: /c\nmcp_http_tls_key: /k\n", &c, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_non_null(strstr(d.message, "need mcp_http_listen"));
	cordon_daemon_config_done(&c);
	/* mcp_http_hosts: names, IPv4 and bracketed IPv6 literals, no ports,
	 * spaces, empty entries or bad labels. */
	{
		static const char *const bad_hosts[] = { "a.example,", ",a",   "a b",  "a:443", "-a.example",
							 "a-.example", "a..b", "[::1", "[zz]",	"a,,b" };

		for (size_t i = 0; i < sizeof(bad_hosts) / sizeof(bad_hosts[0]); i++) {
			snprintf(text, sizeof(text), "mcp_http_hosts: '%s'\n", bad_hosts[i]);
			assert_int_equal(load(text, &c, &d), -EINVAL);
			assert_non_null(strstr(d.message, "comma-separated list"));
			cordon_daemon_config_done(&c);
		}
	}
	for (size_t i = 0; i < sizeof(not_address) / sizeof(not_address[0]); i++) {
		snprintf(text, sizeof(text), "mcp_http_listen: '%s'\n", not_address[i]);
		assert_int_equal(load(text, &c, &d), -EINVAL);
		assert_non_null(strstr(d.message, "not an address (expected 127.0.0.1:PORT or [::1]:PORT)"));
		cordon_daemon_config_done(&c);
	}
}

/* Audit retention keys: off by default, counts in range, the bad value
 * named. */
static void test_audit_retention_keys(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(c.audit_retain_days, 0);
	assert_int_equal(c.audit_retain_records, 0);
	cordon_daemon_config_done(&c);
	assert_int_equal(load("audit_retain_days: 365\naudit_retain_records: 1000000\n", &c, &d), 0);
	assert_int_equal(c.audit_retain_days, 365);
	assert_int_equal(c.audit_retain_records, 1000000);
	cordon_daemon_config_done(&c);
	for (size_t i = 0; i < 4; i++) {
		static const char *const bad[] = { "audit_retain_days: 0\n", "audit_retain_days: 36501\n",
						   "audit_retain_records: 999\n", "audit_retain_days: 1y\n" };

		assert_int_equal(load(bad[i], &c, &d), -EINVAL);
		assert_non_null(strstr(d.message,
				       bad[i][7] == 'r' && bad[i][13] == 'd' ? "audit_retain_days" : "audit_retain_"));
		cordon_daemon_config_done(&c);
	}
}

/* The approval webhook (issue 14): http:// on the loopback with its
 * secret file; https, a remote host and a URL alone are refused, each
 * naming why. */
static void test_approval_webhook_keys(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(load("approval_webhook_url: http://127.0.0.1:8787/cordon\n"
			      "approval_webhook_secret_file: /etc/cordon/webhook.secret\n",
			      &c, &d),
			 0);
	assert_string_equal(c.approval_webhook_url, "http://127.0.0.1:8787/cordon");
	assert_string_equal(c.approval_webhook_secret_file, "/etc/cordon/webhook.secret");
	cordon_daemon_config_done(&c);
	expect_bad("approval_webhook_url: https://127.0.0.1/x\n", 1, 23,
		   "approval_webhook_url: https is not supported (cordond has no TLS client): use a local relay's "
		   "http://127.0.0.1 URL");
	expect_bad("approval_webhook_url: http://192.0.2.1/x\n", 1, 23,
		   "approval_webhook_url: host 192.0.2.1 is not on the loopback (127.0.0.0/8): a remote endpoint "
		   "needs a local relay");
	/* A URL without a secret: the file loads, finishing refuses. */
	assert_int_equal(load("state: /s\nprofiles: /p\napproval_webhook_url: http://127.0.0.1/x\n", &c, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_non_null(strstr(d.message, "go together"));
	cordon_daemon_config_done(&c);
}

static void test_not_yaml_we_read(void **state)
{
	(void)state;
	expect_bad("state: /a\n  bad: indent\n", 2, 6,
		   "YAML syntax error: mapping values are not allowed in this context");
	expect_bad("state: /a\n---\nstate: /b\n", 2, 1, "only one YAML document is allowed");
	expect_bad("state: /\xff\n", 1, 9, "invalid UTF-8 (byte 0xff; not a text file?)");
	expect_bad_len("state: /a\n\0", 11, EINVAL, 2, 1, "file contains a NUL byte (not a text file?)");
	expect_bad("state:\t/a\x1b\n", 1, 10, "control character 0x1b is not allowed");
	expect_bad_len("", 0, EINVAL, 0, 0, "file is empty");
}

/* 64 KiB is the bound: exactly that is read, one byte more is refused, and
 * a large (sparse) file is refused on its size before being read. */
static void test_oversize_file(void **state)
{
	const size_t max = 64 * 1024;
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char *buf = malloc(max + 1);

	(void)state;
	assert_non_null(buf);
	memset(buf, '#', max + 1);
	memcpy(buf, "state: /a\n", 10);
	buf[max - 1] = '\n';
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load(&c, write_cfg_len(buf, max), &d), 0);
	assert_string_equal(c.state_dir, "/a");
	cordon_daemon_config_done(&c);

	buf[max] = '\n';
	expect_bad_len(buf, max + 1, EFBIG, 0, 0, "file is larger than 64 KiB (65537 bytes)");
	free(buf);

	assert_int_equal(truncate(write_cfg("state: /a\n"), 10 * 1024 * 1024), 0);
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load(&c, cfg_path, &d), -EFBIG);
	assert_int_equal(d.error, EFBIG);
	assert_int_equal(d.line, 0);
	assert_non_null(strstr(d.message, "/cordond.yaml: file is larger than 64 KiB (10485760 bytes)"));
	assert_null(c.state_dir);
	cordon_daemon_config_done(&c);

	/* The buffer entry point has the same bound. */
	buf = calloc(1, max + 2);
	assert_non_null(buf);
	memset(buf, '#', max + 1);
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_load_buffer(&c, "b.yaml", buf, max + 1, &d), -EFBIG);
	assert_string_equal(d.message, "b.yaml: file is larger than 64 KiB (65537 bytes)");
	cordon_daemon_config_done(&c);
	free(buf);
}

static void test_not_a_file(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char path[700], want[800];

	(void)state;
	cordon_daemon_config_init(&c);
	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	assert_int_equal(cordon_daemon_config_load(&c, path, &d), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(d.message, want);

	/* A FIFO is refused without blocking. */
	snprintf(path, sizeof(path), "%s/fifo.yaml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(cordon_daemon_config_load(&c, path, &d), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	assert_string_equal(d.message, want);
	assert_int_equal(unlink(path), 0);
	assert_null(c.state_dir);
	cordon_daemon_config_done(&c);
}

/* Issue 11 findings 3 and 6: the held-argument budgets and session shares,
 * their documented defaults, bounds and the per-uid <= global check. */
static void test_resource_shares(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(c.held_max, 256ull * 1024 * 1024);
	assert_int_equal(c.held_per_uid, 64ull * 1024 * 1024);
	assert_int_equal(c.sessions_per_uid, 0); /* max_sessions / 4 */
	assert_int_equal(c.initialize_timeout_ms, 10000);
	assert_int_equal(c.http_session_idle_ms, 1800000);
	assert_int_equal(c.approval_wait_ms, 30000);
	assert_int_equal(c.result_cap, 1024 * 1024);
	assert_int_equal(c.max_sessions, 4096);
	cordon_daemon_config_done(&c);

	assert_int_equal(load("held_arguments_max: 1G\nheld_arguments_per_uid: 128M\nsessions_per_uid: 32\n"
			      "initialize_timeout: 3s\nhttp_session_idle: 20s\n",
			      &c, &d),
			 0);
	assert_int_equal(c.http_session_idle_ms, 20000);
	assert_int_equal(c.held_max, 1024ull * 1024 * 1024);
	assert_int_equal(c.held_per_uid, 128ull * 1024 * 1024);
	assert_int_equal(c.sessions_per_uid, 32);
	assert_int_equal(c.initialize_timeout_ms, 3000);
	cordon_daemon_config_done(&c);

	expect_bad("held_arguments_max: 512K\n", 1, 21,
		   "held_arguments_max: must be a size from 1M to 64G (K, M, G are powers of 1024; got \"512K\")");
	expect_bad("held_arguments_per_uid: 65G\n", 1, 25,
		   "held_arguments_per_uid: must be a size from 1M to 64G (K, M, G are powers of 1024; got \"65G\")");
	expect_bad("sessions_per_uid: 0\n", 1, 19, "sessions_per_uid: must be an integer from 1 to 65536 (got \"0\")");
	expect_bad("initialize_timeout: 0s\n", 1, 21,
		   "initialize_timeout: must be a duration from 1s to 1h with an s, m or h suffix (got \"0s\")");
	expect_bad("initialize_timeout: 2h\n", 1, 21,
		   "initialize_timeout: must be a duration from 1s to 1h with an s, m or h suffix (got \"2h\")");
	expect_bad("http_session_idle: 25h\n", 1, 20,
		   "http_session_idle: must be a duration from 1s to 24h with an s, m or h suffix (got \"25h\")");

	/* A per-uid budget above the global one is a contradiction. */
	assert_int_equal(load("state: /var/lib/cordon\nprofiles: /etc/p\nheld_arguments_max: 16M\n"
			      "held_arguments_per_uid: 32M\n",
			      &c, &d),
			 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_string_equal(d.message,
			    "held_arguments_per_uid (33554432 bytes) exceeds held_arguments_max (16777216 bytes)");
	cordon_daemon_config_done(&c);
}

static void test_flags_override_file(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	const char *path = write_cfg("state: /var/lib/cordon\nprofiles: /etc/p\napproval_wait: 10s\n");
	char *argv[] = { "cordond", "--config", (char *)path, "--state", "./st", "--approval-wait", "5s", NULL };

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 7, argv, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), 0);
	assert_int_equal(c.approval_wait_ms, 5000);
	assert_string_equal(c.profiles_dir, "/etc/p");
	/* Relative flag paths are taken from the working directory. */
	assert_true(c.state_dir[0] == '/');
	assert_non_null(strstr(c.state_dir, "/st"));
	assert_null(strstr(c.state_dir, "/./"));
	/* Runtime defaults to STATE/run. */
	assert_non_null(strstr(c.runtime_dir, "/st/run"));
	/* As root without --user, cordond drops to its private id (resolved
	 * at start-up), never to a shared account. */
	assert_null(c.user);
	cordon_daemon_config_done(&c);
}

/* A flag's value is checked as the file's would be, and named by the flag. */
static void expect_flag_bad(char *flag, char *value, const char *message)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char *argv[] = { "cordond", flag, value, NULL };

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 3, argv, &d), -EINVAL);
	assert_int_equal(d.error, EINVAL);
	assert_int_equal(d.line, 0);
	assert_string_equal(d.message, message);
	cordon_daemon_config_done(&c);
}

static void test_flag_errors(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char *a1[] = { "cordond", "--bogus", NULL };
	char *a2[] = { "cordond", "--state", "/s", NULL };
	char *a4[] = { "cordond", "--help", NULL };
	char *a5[] = { "cordond", "--user", "null", "--max-sessions", "9", "--result-cap", "4K", NULL };

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 2, a1, &d), -EINVAL);
	assert_string_equal(d.message, "unknown or incomplete option '--bogus'");
	cordon_daemon_config_done(&c);

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 3, a2, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_string_equal(d.message, "no profiles directory: give --profiles DIR or 'profiles:'");
	cordon_daemon_config_done(&c);

	expect_flag_bad("--http", "10.0.0.1:80", "--http: must be 127.0.0.1:PORT (got \"10.0.0.1:80\")");
	expect_flag_bad("--max-sessions", "0", "--max-sessions: must be an integer from 1 to 65536 (got \"0\")");
	expect_flag_bad("--approval-wait", "2h",
			"--approval-wait: must be a duration from 1s to 1h with an s, m or h suffix (got \"2h\")");
	expect_flag_bad("--state", "", "--state: must be a path");
	expect_flag_bad("--user", "a b",
			"--user: not a valid user or group name (1 to 32 of A-Z a-z 0-9 _ - .; got \"a b\")");

	/* Strings are taken as written ("null" is a name), numbers as the file
	 * reads them. */
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 7, a5, &d), 0);
	assert_string_equal(c.user, "null");
	assert_int_equal(c.max_sessions, 9);
	assert_int_equal(c.result_cap, 4096);
	cordon_daemon_config_done(&c);

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 2, a4, &d), 1);
	cordon_daemon_config_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_full_config),    cmocka_unit_test(test_shipped_example),
		cmocka_unit_test(test_anchor_refused),	     cmocka_unit_test(test_alias_refused),
		cmocka_unit_test(test_tag_refused),	     cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_unknown_key),	     cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_bad_values),	     cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_not_yaml_we_read),     cmocka_unit_test(test_oversize_file),
		cmocka_unit_test(test_not_a_file),	     cmocka_unit_test(test_resource_shares),
		cmocka_unit_test(test_flags_override_file),  cmocka_unit_test(test_flag_errors),
		cmocka_unit_test(test_audit_retention_keys), cmocka_unit_test(test_approval_webhook_keys),
		cmocka_unit_test(test_mcp_http_listen),
	};
	int r;

	dir = cordon_test_mkdtemp("daemon-config");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	cordon_test_rm_rf(dir);
	free(dir);
	return r;
}
