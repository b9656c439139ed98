/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon-config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"

#define CONFIG_MAX_BYTES (64u * 1024)

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
	};
}

void cordon_daemon_config_done(struct cordon_daemon_config *c)
{
	free(c->profiles_dir);
	free(c->state_dir);
	free(c->runtime_dir);
	free(c->user);
	free(c->operator_group);
	free(c->gateway_group);
	free(c->http_listen);
	free(c->launcher);
	*c = (struct cordon_daemon_config){};
}

static int set_str(char **field, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
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

/* One key=value setting, shared by the YAML loader and the flags. from_file
 * requires absolute paths (a config file has no meaningful working
 * directory); flags may be relative and are made absolute later. */
static int apply(struct cordon_daemon_config *c, const char *key, const char *v, bool from_file, char *err,
		 size_t errsz)
{
	uint64_t u;

	if (!strcmp(key, "profiles") || !strcmp(key, "state") || !strcmp(key, "runtime") || !strcmp(key, "launcher")) {
		char **f = !strcmp(key, "profiles")  ? &c->profiles_dir
			   : !strcmp(key, "state")   ? &c->state_dir
			   : !strcmp(key, "runtime") ? &c->runtime_dir
						     : &c->launcher;
		if (!*v || strlen(v) >= PATH_MAX || (from_file && !path_is_absolute_canonical(v))) {
			snprintf(err, errsz, "%s: must be an absolute, canonical path", key);
			return -EINVAL;
		}
		return set_str(f, v);
	}
	if (!strcmp(key, "user") || !strcmp(key, "operator_group") || !strcmp(key, "gateway_group")) {
		char **f = !strcmp(key, "user")		    ? &c->user
			   : !strcmp(key, "operator_group") ? &c->operator_group
							    : &c->gateway_group;
		if (!name_valid(v)) {
			snprintf(err, errsz, "%s: not a valid user or group name", key);
			return -EINVAL;
		}
		return set_str(f, v);
	}
	if (!strcmp(key, "http")) {
		if (!http_listen_valid(v)) {
			snprintf(err, errsz, "http: must be 127.0.0.1:PORT");
			return -EINVAL;
		}
		return set_str(&c->http_listen, v);
	}
	if (!strcmp(key, "approval_wait")) {
		if (parse_duration_sec(v, &u) < 0 || u == 0 || u > 3600) {
			snprintf(err, errsz, "approval_wait: must be a duration between 1s and 1h");
			return -EINVAL;
		}
		c->approval_wait_ms = u * 1000;
		return 0;
	}
	if (!strcmp(key, "result_cap")) {
		if (parse_size(v, &u) < 0 || u < 1024 || u > 64u * 1024 * 1024) {
			snprintf(err, errsz, "result_cap: must be a size between 1K and 64M");
			return -EINVAL;
		}
		c->result_cap = u;
		return 0;
	}
	if (!strcmp(key, "max_sessions")) {
		if (parse_u64(v, &u) < 0 || u == 0 || u > 65536) {
			snprintf(err, errsz, "max_sessions: must be between 1 and 65536");
			return -EINVAL;
		}
		c->max_sessions = (unsigned)u;
		return 0;
	}
	/* Resource shares (issue 11 findings 3 and 6). */
	if (!strcmp(key, "held_arguments_max") || !strcmp(key, "held_arguments_per_uid")) {
		if (parse_size(v, &u) < 0 || u < 1024 * 1024 || u > 64ull * 1024 * 1024 * 1024) {
			snprintf(err, errsz, "%s: must be a size between 1M and 64G", key);
			return -EINVAL;
		}
		if (!strcmp(key, "held_arguments_max"))
			c->held_max = u;
		else
			c->held_per_uid = u;
		return 0;
	}
	if (!strcmp(key, "sessions_per_uid")) {
		if (parse_u64(v, &u) < 0 || u == 0 || u > 65536) {
			snprintf(err, errsz, "sessions_per_uid: must be between 1 and 65536");
			return -EINVAL;
		}
		c->sessions_per_uid = (unsigned)u;
		return 0;
	}
	if (!strcmp(key, "initialize_timeout")) {
		if (parse_duration_sec(v, &u) < 0 || u == 0 || u > 3600) {
			snprintf(err, errsz, "initialize_timeout: must be a duration between 1s and 1h");
			return -EINVAL;
		}
		c->initialize_timeout_ms = u * 1000;
		return 0;
	}
	snprintf(err, errsz, "unknown key '%s'", key);
	return -ENOKEY;
}

int cordon_daemon_config_load(struct cordon_daemon_config *c, const char *path, struct cordon_diag *diag)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct cordon_daemon_config tmp;
	char err[160];
	int r;

	r = read_file_bounded(AT_FDCWD, path, CONFIG_MAX_BYTES, &buf, &len);
	if (r < 0)
		return cordon_diag_set(diag, -r, "config", "%s: cannot read (at most %u bytes)", path,
				       CONFIG_MAX_BYTES);
	if (!yaml_parser_initialize(&parser))
		return cordon_diag_set(diag, ENOMEM, "config", "%s: out of memory", path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = cordon_diag_set_at(diag, EINVAL, "config", (unsigned)parser.problem_mark.line + 1,
				       (unsigned)parser.problem_mark.column + 1, "%s: %s", path,
				       parser.problem ? parser.problem : "YAML syntax error");
		yaml_parser_delete(&parser);
		return r;
	}
	yaml_parser_delete(&parser);

	/* Work on a copy so that nothing of a bad file is applied. */
	tmp = *c;
	tmp.profiles_dir = c->profiles_dir ? strdup(c->profiles_dir) : NULL;
	tmp.state_dir = c->state_dir ? strdup(c->state_dir) : NULL;
	tmp.runtime_dir = c->runtime_dir ? strdup(c->runtime_dir) : NULL;
	tmp.user = c->user ? strdup(c->user) : NULL;
	tmp.operator_group = c->operator_group ? strdup(c->operator_group) : NULL;
	tmp.gateway_group = c->gateway_group ? strdup(c->gateway_group) : NULL;
	tmp.http_listen = c->http_listen ? strdup(c->http_listen) : NULL;
	tmp.launcher = c->launcher ? strdup(c->launcher) : NULL;

	root = yaml_document_get_root_node(&doc);
	if (!root) {
		r = cordon_diag_set(diag, EINVAL, "config", "%s: empty document", path);
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		r = cordon_diag_set_at(diag, EINVAL, "config", (unsigned)root->start_mark.line + 1,
				       (unsigned)root->start_mark.column + 1, "%s: top level must be a mapping", path);
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key), *v = yaml_document_get_node(&doc, p->value);
		const char *ks;

		if (!k || k->type != YAML_SCALAR_NODE) {
			r = cordon_diag_set_at(diag, EINVAL, "config", k ? (unsigned)k->start_mark.line + 1 : 0,
					       k ? (unsigned)k->start_mark.column + 1 : 0, "%s: keys must be scalars",
					       path);
			goto out;
		}
		ks = (const char *)k->data.scalar.value;
		/* Duplicate keys: libyaml accepts them; a config where the second
		 * value silently wins is a trap, so refuse. */
		for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *kq = yaml_document_get_node(&doc, q->key);

			if (kq && kq->type == YAML_SCALAR_NODE && !strcmp((const char *)kq->data.scalar.value, ks)) {
				r = cordon_diag_set_at(diag, EINVAL, "config", (unsigned)k->start_mark.line + 1,
						       (unsigned)k->start_mark.column + 1, "%s: duplicate key '%s'",
						       path, ks);
				goto out;
			}
		}
		if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0 ||
		    strlen((const char *)v->data.scalar.value) != v->data.scalar.length) {
			r = cordon_diag_set_at(diag, EINVAL, "config", (unsigned)(v ? v : k)->start_mark.line + 1,
					       (unsigned)(v ? v : k)->start_mark.column + 1,
					       "%s: %s: must be a non-empty scalar", path, ks);
			goto out;
		}
		r = apply(&tmp, ks, (const char *)v->data.scalar.value, true, err, sizeof(err));
		if (r < 0) {
			r = cordon_diag_set_at(diag, -r, "config", (unsigned)k->start_mark.line + 1,
					       (unsigned)k->start_mark.column + 1, "%s: %s", path, err);
			goto out;
		}
	}
	cordon_daemon_config_done(c);
	*c = tmp;
	tmp = (struct cordon_daemon_config){};
	r = 0;
out:
	cordon_daemon_config_done(&tmp);
	yaml_document_delete(&doc);
	return r;
}

int cordon_daemon_config_parse_args(struct cordon_daemon_config *c, int argc, char **argv, struct cordon_diag *diag)
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
		{ "approval-wait", required_argument, NULL, 'w' },
		{ "result-cap", required_argument, NULL, 'R' },
		{ "launcher", required_argument, NULL, 'L' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char err[160];
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
		r = cordon_daemon_config_load(c, config, diag);
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
		case 'd':
			c->foreground_log_debug = true;
			break;
		default:
			break;
		}
		if (!key)
			continue;
		r = apply(c, key, optarg, false, err, sizeof(err));
		if (r < 0)
			return cordon_diag_set(diag, -r, "config", "--%s", err);
	}
	return 0;
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
	/* No --user as root: cordond drops to its private id
	 * (CORDON_BROKER_PRIVATE_ID, resolved in privs_resolve()), never to a
	 * shared account such as nobody. */
	return 0;
}
