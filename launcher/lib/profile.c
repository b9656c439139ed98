/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strict connector-profile loader (docs/profiles.md): the public API
 * and the top of the schema.
 *
 * Loading runs in three passes, each of which can only refuse. Passes 1
 * (raw bytes) and 2 (libyaml events -> tree: anchors, aliases, tags and
 * duplicate keys refused, depth and node count bounded) are the strict YAML
 * layer shared with cordond's configuration (yaml-strict.c). Pass 3
 * validates the tree against the schema and converts it into a struct
 * cordon_profile: the top level here, the sections in profile-sandbox.c,
 * profile-network.c and profile-tools.c, written with yaml-schema.c's typed
 * getters and profile-schema.c's item validators. Errors are collected (up
 * to CORDON_PROFILE_MAX_ERRORS) rather than stopping at the first, sorted by
 * position, and the half-built profile is freed: nothing of a bad profile
 * is returned. */
#include "profile.h"
#include "profile-internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cleanup.h"
#include "hex-util.h"
#include "parse-util.h"

static_assert(CORDON_PROFILE_MAX_ERRORS == CORDON_YAML_MAX_ERRORS, "profile errors are the YAML layer's");
static_assert(CORDON_PROFILE_MAX_DEPTH == CORDON_YAML_MAX_DEPTH, "profile nesting is the YAML layer's");

DEFINE_CLEANUP(yaml_node_freep, struct cordon_yaml_node *, cordon_yaml_node_free)

static int parse_root(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *root, struct cordon_profile *p)
{
	static const char *const keys[] = { "version",	 "connector", "sandbox",	 "tools",
					    "resources", "prompts",   "client_requests", "approval" };
	static const char *const none_read[] = { "none", "read" };
	static const char *const requests[] = { "sampling", "elicitation" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)], *workdir = NULL;
	unsigned u;
	int r, acc;

	if (root->type != CORDON_YAML_MAP)
		return cordon_yaml_err(c, root, "the top level must be a mapping (got %s)",
				       cordon_yaml_describe(root).s);
	acc = cordon_yaml_map_fields(c, root, keys, ELEMENTSOF(keys), v);

	if (!v[0])
		acc = cordon_yaml_missing(c, root, "version");
	else {
		size_t m = cordon_yaml_push_key(c, "version");
		uint64_t ver;

		if (cordon_yaml_expect(c, v[0], CORDON_YAML_SCALAR) < 0)
			acc = -EINVAL;
		else if (!v[0]->plain || cordon_yaml_leading_zero(v[0]->value) || parse_u64(v[0]->value, &ver) < 0)
			acc = cordon_yaml_err(c, v[0], "must be the integer 1 (got %s)", cordon_yaml_quote(v[0]).s);
		else if (ver != 1)
			acc = cordon_yaml_err(c, v[0], "unsupported version %llu (this cordon reads version 1)",
					      (unsigned long long)ver);
		cordon_yaml_pop(c, m);
	}
	if (!v[1])
		acc = cordon_yaml_missing(c, root, "connector");
	else
		CORDON_YAML_WITH_KEY(c, "connector", &acc, profile_parse_connector(c, v[1], p, &workdir));
	if (!v[2])
		acc = cordon_yaml_missing(c, root, "sandbox");
	else
		CORDON_YAML_WITH_KEY(c, "sandbox", &acc, profile_parse_sandbox(c, v[2], p));
	if (!v[3])
		acc = cordon_yaml_missing(c, root, "tools");
	else
		CORDON_YAML_WITH_KEY(c, "tools", &acc, profile_parse_tools(c, v[3], p));
	if (v[4]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "resources", &r, cordon_yaml_get_enum(c, v[4], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->resources_read = u == 1;
	}
	if (v[5]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "prompts", &r, cordon_yaml_get_enum(c, v[5], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->prompts_read = u == 1;
	}
	if (v[6]) {
		size_t m = cordon_yaml_push_key(c, "client_requests");

		if (cordon_yaml_expect(c, v[6], CORDON_YAML_SEQ) < 0)
			acc = -EINVAL;
		else {
			for (size_t i = 0; i < v[6]->n_items; i++) {
				const struct cordon_yaml_node *e = v[6]->items[i];
				size_t mi = cordon_yaml_push_index(c, i);

				if (e->type == CORDON_YAML_SCALAR &&
				    (strcmp(e->value, "roots") == 0 || strcmp(e->value, "roots/list") == 0))
					acc = cordon_yaml_err(
						c, e,
						"roots/list is always answered by the broker from the instance's "
						"roots; do not list it");
				else if (cordon_yaml_get_enum(c, e, requests, ELEMENTSOF(requests), &u) < 0)
					acc = -EINVAL;
				else
					p->client_requests |= 1u << u;
				cordon_yaml_pop(c, mi);
			}
			r = cordon_yaml_check_unique(c, v[6], 1);
			if (r < 0)
				acc = r;
		}
		cordon_yaml_pop(c, m);
	}
	p->approval_ttl_sec = TTL_DEFAULT;
	if (v[7]) {
		static const char *const akeys[] = { "ttl" };
		const struct cordon_yaml_node *av[1];
		size_t m = cordon_yaml_push_key(c, "approval");

		if (cordon_yaml_expect(c, v[7], CORDON_YAML_MAP) < 0)
			acc = -EINVAL;
		else {
			if (cordon_yaml_map_fields(c, v[7], akeys, 1, av) < 0)
				acc = -EINVAL;
			if (av[0])
				CORDON_YAML_WITH_KEY(c, "ttl", &acc,
						     cordon_yaml_get_duration(c, av[0], TTL_MIN, TTL_MAX, "1s to 24h",
									      &p->approval_ttl_sec));
		}
		cordon_yaml_pop(c, m);
	}

	/* The working directory must exist inside the sandbox: beneath the
	 * private /tmp or beneath a place a root is mounted. */
	if (workdir && p->workdir) {
		bool ok = path_is_beneath(p->workdir, "/tmp");

		for (size_t i = 0; !ok && i < p->n_fs_roots; i++)
			ok = p->fs_roots[i].at && path_is_beneath(p->workdir, p->fs_roots[i].at);
		if (!ok) {
			size_t m = cordon_yaml_push_key(c, "connector.workdir");

			acc = cordon_yaml_err(c, workdir,
					      "must lie beneath /tmp or a sandbox.filesystem.roots[].at path (got %s)",
					      cordon_yaml_quote(workdir).s);
			cordon_yaml_pop(c, m);
		}
	}
	return acc;
}

/* ---- public API ---------------------------------------------------------------- */

void cordon_profile_free(struct cordon_profile *p)
{
	if (!p)
		return;
	free(p->id);
	free(p->path);
	free(p->description);
	strv_free_n(p->command, p->n_command);
	free(p->workdir);
	strv_free_n(p->env_pass, p->n_env_pass);
	for (size_t i = 0; p->env_set && i < p->n_env_set; i++) {
		free(p->env_set[i].name);
		free(p->env_set[i].value);
	}
	free(p->env_set);
	for (size_t i = 0; p->credentials && i < p->n_credentials; i++) {
		free(p->credentials[i].env);
		free(p->credentials[i].file);
	}
	free(p->credentials);
	free(p->user);
	for (size_t i = 0; p->fs_system && i < p->n_fs_system; i++) {
		free(p->fs_system[i].path);
		free(p->fs_system[i].at);
	}
	free(p->fs_system);
	for (size_t i = 0; p->fs_roots && i < p->n_fs_roots; i++) {
		free(p->fs_roots[i].path);
		free(p->fs_roots[i].at);
	}
	free(p->fs_roots);
	strv_free_n(p->ceiling, p->n_ceiling);
	for (size_t i = 0; p->net_allow && i < p->n_net_allow; i++)
		free(p->net_allow[i].ports);
	free(p->net_allow);
	strv_free_n(p->seccomp_allow, p->n_seccomp_allow);
	strv_free_n(p->seccomp_deny, p->n_seccomp_deny);
	for (size_t i = 0; p->risk && i < p->n_risk; i++)
		free(p->risk[i].tool);
	free(p->risk);
	for (size_t i = 0; p->replay && i < p->n_replay; i++)
		free(p->replay[i].tool);
	free(p->replay);
	strv_free_n(p->grant, p->n_grant);
	free(p);
}

static int finish(struct cordon_yaml_ctx *c, int r, struct cordon_diag *diags, size_t max_diags, size_t *ret_n_diags)
{
	size_t n = c->n_errs < max_diags ? c->n_errs : max_diags;

	if (diags && n > 0)
		memcpy(diags, c->errs, n * sizeof(*diags));
	if (ret_n_diags)
		*ret_n_diags = diags ? n : 0;
	if (r >= 0)
		r = -EINVAL;
	return c->n_errs > 0 ? -c->errs[0].error : r;
}

int cordon_profile_parse_diags(const char *id, const char *name, const char *buf, size_t len,
			       struct cordon_profile **ret, struct cordon_diag *diags, size_t max_diags,
			       size_t *ret_n_diags)
{
	_cleanup_(cordon_profile_freep) struct cordon_profile *p = NULL;
	_cleanup_(yaml_node_freep) struct cordon_yaml_node *root = NULL;
	_cleanup_free_ struct cordon_yaml_ctx *c = NULL;
	int r;

	if (ret_n_diags)
		*ret_n_diags = 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->step = "profile";

	if (!id || !connector_id_is_valid(id)) {
		cordon_yaml_err_at(
			c, EINVAL, 0, 0,
			"file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%.64s\")",
			id ? id : "");
		return finish(c, -EINVAL, diags, max_diags, ret_n_diags);
	}
	r = cordon_yaml_parse(c, buf, len, CORDON_PROFILE_MAX_BYTES, &root);
	if (r < 0)
		return finish(c, r, diags, max_diags, ret_n_diags);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = parse_root(c, root, p);
	if (r < 0 || c->n_errs > 0)
		return finish(c, r, diags, max_diags, ret_n_diags);

	p->id = strdup(id);
	p->path = strdup(name ? name : id);
	if (!p->id || !p->path)
		return -ENOMEM;
	{
		unsigned char digest[crypto_hash_sha256_BYTES];

		/* crypto_hash_sha256 needs no sodium_init(). */
		crypto_hash_sha256(digest, (const unsigned char *)buf, len);
		hex_encode(digest, sizeof(digest), p->sha256);
	}
	if (ret_n_diags)
		*ret_n_diags = 0;
	*ret = TAKE_PTR(p);
	return 0;
}

int cordon_profile_parse(const char *id, const char *name, const char *buf, size_t len, struct cordon_profile **ret,
			 struct cordon_diag *reterr_diag)
{
	return cordon_profile_parse_diags(id, name, buf, len, ret, reterr_diag, reterr_diag ? 1 : 0, NULL);
}

/* The connector id is the file name without ".yaml"; anything else (another
 * suffix, an invalid id) is refused before the file is opened. */
static int id_from_path(const char *path, char ret[static CORDON_CONNECTOR_ID_MAX + 1])
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= 5 || strcmp(base + n - 5, ".yaml") != 0 || n - 5 > CORDON_CONNECTOR_ID_MAX)
		return -EINVAL;
	memcpy(ret, base, n - 5);
	ret[n - 5] = '\0';
	return connector_id_is_valid(ret) ? 0 : -EINVAL;
}

int cordon_profile_load_diags(const char *path, struct cordon_profile **ret, struct cordon_diag *diags,
			      size_t max_diags, size_t *ret_n_diags)
{
	char id[CORDON_CONNECTOR_ID_MAX + 1];
	_cleanup_free_ char *buf = NULL;
	struct cordon_diag d;
	size_t len;
	int r;

	if (ret_n_diags)
		*ret_n_diags = 0;
	if (!path)
		r = cordon_diag_set(&d, EINVAL, "profile", "no profile path given");
	else if (id_from_path(path, id) < 0) {
		const char *base = strrchr(path, '/');

		r = cordon_diag_set(
			&d, EINVAL, "profile",
			"file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%.64s\")",
			base ? base + 1 : path);
	} else
		r = cordon_yaml_read_file(path, CORDON_PROFILE_MAX_BYTES, "profile", &buf, &len, &d);
	if (r < 0) {
		if (diags && max_diags > 0) {
			diags[0] = d;
			if (ret_n_diags)
				*ret_n_diags = 1;
		}
		return r;
	}
	return cordon_profile_parse_diags(id, path, buf, len, ret, diags, max_diags, ret_n_diags);
}

int cordon_profile_load(const char *path, struct cordon_profile **ret, struct cordon_diag *reterr_diag)
{
	return cordon_profile_load_diags(path, ret, reterr_diag, reterr_diag ? 1 : 0, NULL);
}
