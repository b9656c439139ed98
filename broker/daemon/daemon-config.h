/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's configuration: one strict YAML file (--config) and/or flags
 * (flags override the file). The file is read on the strict YAML layer of
 * launcher/lib/yaml-strict.h: at most 64 KiB of UTF-8; anchors, aliases,
 * tags, duplicate keys, unknown keys, wrong types, relative paths and
 * out-of-range values are errors naming the file, line, column and key;
 * nothing of a bad file is applied.
 *
 *   profiles: /etc/cordon/profiles      # connector profiles (root-owned)
 *   state: /var/lib/cordon              # SQLite database, audit signing key (0700)
 *   runtime: /run/cordon                # gateway.sock, operator.sock, http.sock
 *   user: cordon                        # user to drop to (root: default cordond's private id)
 *   operator_group: cordon-operators    # may use operator.sock (besides root)
 *   gateway_group: agents               # absent: gateway.sock is 0666
 *   http: 127.0.0.1:9464                # optional TCP listener (/health, /metrics)
 *   approval_wait: 30s                  # how long a tools/call is held for an approval
 *   result_cap: 1M                      # largest tool result relayed
 *   launcher: /usr/libexec/cordon/cordon-launch  # the launcher helper (default: CORDON_LIBEXEC_LAUNCH)
 *   held_arguments_max: 256M            # argument bytes all calls together may hold
 *   held_arguments_per_uid: 64M         # argument bytes one uid's calls may hold
 *   sessions_per_uid: 1024              # gateway sessions one uid may hold (default max_sessions/4)
 *   initialize_timeout: 10s             # a connection that sends no initialize is closed
 *   audit_retain_days: 365              # audit records older than this are deleted (absent: kept)
 *   audit_retain_records: 10000000      # only the newest N audit records are kept (absent: all)
 *   log_level: info                     # error, warning, notice, info or debug
 *   approval_webhook_url: http://127.0.0.1:8787/cordon  # POST per approval event (webhook.h)
 *   approval_webhook_secret_file: /etc/cordon/webhook.secret  # HMAC key (root-owned, 0600)
 *   mcp_http_listen: 0.0.0.0:8443       # MCP over TCP; a routable address only with TLS:
 *   mcp_http_tls_cert: /etc/cordon/mcp-tls.crt  # PEM chain
 *   mcp_http_tls_key: /etc/cordon/mcp-tls.key   # PEM key (root-owned, 0600)
 *   mcp_http_hosts: mcp.example.org,10.0.0.5    # Host names admitted besides loopback
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "diag.h"

#define CORDON_DAEMON_LINE_MAX_DEFAULT	    (4u * 1024 * 1024)
#define CORDON_DAEMON_RESULT_CAP_DEFAULT    (1u * 1024 * 1024)
#define CORDON_DAEMON_APPROVAL_WAIT_DEFAULT 30u
/* Canonical (JCS) argument bytes held by calls between admission and their
 * end (queued for an instance, waiting for an approval, in flight). */
#define CORDON_DAEMON_HELD_MAX_DEFAULT		 (256ull * 1024 * 1024)
#define CORDON_DAEMON_HELD_PER_UID_DEFAULT	 (64ull * 1024 * 1024)
#define CORDON_DAEMON_INITIALIZE_TIMEOUT_DEFAULT 10u

struct cordon_daemon_config {
	char *profiles_dir; /* absolute */
	char *state_dir;    /* absolute */
	char *runtime_dir;  /* absolute; default <state>/run */
	char *user;	    /* NULL: no drop when unprivileged; as root the private id
			     * CORDON_BROKER_PRIVATE_ID (paths.h); "nobody" is refused */
	char *operator_group;
	char *gateway_group;
	char *http_listen;	 /* "127.0.0.1:PORT" or NULL */
	char *mcp_http_listen;	 /* MCP over TCP: "IPv4:PORT", "[IPv6]:PORT" or NULL; routable only with TLS */
	char *mcp_http_tls_cert; /* PEM certificate chain of mcp_http_listen, or NULL */
	char *mcp_http_tls_key;	 /* its PEM private key (root- or run-user-owned, 0600), or NULL */
	char *mcp_http_hosts;	 /* "name[,name...]": Host names it answers besides loopback, or NULL */
	char *launcher;		 /* cordon-launch binary */
	uint64_t approval_wait_ms;
	uint64_t result_cap;
	uint64_t line_max; /* gateway and worker line bound */
	unsigned max_sessions;
	/* Resource shares (issue 11): no local user can take the broker's
	 * memory or every session slot for itself. */
	uint64_t held_max;	   /* argument bytes held by all calls */
	uint64_t held_per_uid;	   /* argument bytes held by one uid's calls */
	unsigned sessions_per_uid; /* 0: max_sessions / 4, at least 1 */
	uint64_t initialize_timeout_ms;
	/* Audit retention (cordon_audit_prune()); 0: that limit is off. */
	unsigned audit_retain_days;
	unsigned audit_retain_records;
	/* An MCP-over-HTTP session with no request and no open stream for
	 * this long is ended (gateway-http.c): HTTP clients often leave
	 * without DELETE. */
	uint64_t http_session_idle_ms;
	unsigned log_level; /* a log.h LOG_LEVEL_*; 0: not set (info) */
	/* The approval webhook (webhook.h); both NULL: off. */
	char *approval_webhook_url;
	char *approval_webhook_secret_file;
	bool foreground_log_debug;
};

/* The log level c asks for: debug with --debug, else log_level, else info. */
unsigned cordon_daemon_config_log_level(const struct cordon_daemon_config *c);

void cordon_daemon_config_init(struct cordon_daemon_config *c);
void cordon_daemon_config_done(struct cordon_daemon_config *c);

/* Loads a YAML config file over c (set keys replace the current values).
 * Returns 0 or -errno with diag (line/column, message naming the file and
 * the key); c is unchanged on error. */
int cordon_daemon_config_load(struct cordon_daemon_config *c, const char *path, struct cordon_diag *diag);

/* The same for len bytes at buf (a file's contents; name is what messages
 * call it). */
int cordon_daemon_config_load_buffer(struct cordon_daemon_config *c, const char *name, const char *buf, size_t len,
				     struct cordon_diag *diag);

/* Parses argv flags (after the program name). Returns 0, 1 when --help was
 * asked for (the caller prints usage), or -errno with diag. */
int cordon_daemon_config_parse_args(struct cordon_daemon_config *c, int argc, char **argv, struct cordon_diag *diag);

/* The same, but the --config file's contents are the len bytes at buf (read
 * by the launcher helper at a reload) instead of the file read here; the
 * messages still name the file. Without --config in argv, buf is unused. */
int cordon_daemon_config_parse_args_buffer(struct cordon_daemon_config *c, int argc, char **argv, const char *buf,
					   size_t len, struct cordon_diag *diag);

/* Fills defaults and makes paths absolute (relative flag values are taken
 * relative to the working directory, which is what a newcomer typing
 * `cordond --state ./state` means). Returns 0 or -errno with diag. */
int cordon_daemon_config_finish(struct cordon_daemon_config *c, struct cordon_diag *diag);
