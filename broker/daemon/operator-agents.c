/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agents.list, agents.add, agents.revoke (operator-agents.h). */
#include "operator-agents.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "agents.h"
#include "clock.h"
#include "log.h"

static int db_error(struct cordon_daemon *d, struct cordon_op_error *err, int r, const char *what, const char *name)
{
	if (r == -EEXIST)
		return cordon_op_error_set(err, EEXIST, CORDON_OP_E_EXISTS,
					   "agent %s exists (revoke it first to issue a new token)", name);
	if (r == -ENOENT)
		return cordon_op_error_set(err, ENOENT, CORDON_OP_E_NOT_FOUND, "no agent %s that is not revoked", name);
	if (r == -EINVAL)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
					   "agent name \"%.40s\": 1-%u characters of a-z 0-9 - _, starting with a "
					   "letter or digit",
					   name, CORDON_AGENT_NAME_MAX);
	return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED, "%s agent %s: %s", what, name,
				   cordon_db_last_error(cordon_daemon_db(d)));
}

/* created_at/revoked_at from microseconds to the operator's time text. */
static int times_to_text(json_t *o)
{
	static const char *const keys[] = { "created_at", "revoked_at" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(o, keys[i]);
		char buf[CORDON_TIME_STRING_MAX];

		if (json_is_integer(v) &&
		    json_object_set_new(
			    o, keys[i],
			    json_string(cordon_time_format((uint64_t)json_integer_value(v), buf, sizeof(buf)))) < 0)
			return -ENOMEM;
	}
	return 0;
}

int operator_agents_execute(struct cordon_daemon *d, const struct cordon_actor *actor,
			    const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	const char *op = req->op->name, *name = cordon_op_arg_string(req, "name");
	int r;

	if (!strcmp(op, "agents.list")) {
		json_t *arr = NULL, *o;
		size_t i;

		r = cordon_agents_list(db, cordon_op_arg_bool(req, "all", false), &arr);
		if (r < 0)
			return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED, "listing agents: %s",
						   cordon_db_last_error(db));
		json_array_foreach(arr, i, o) if (times_to_text(o) < 0)
		{
			json_decref(arr);
			return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
		}
		*ret = arr;
		return 0;
	}
	if (!strcmp(op, "agents.add")) {
		char token[CORDON_AGENT_TOKEN_LEN + 1];
		struct cordon_agent_info info;

		r = cordon_agent_add(db, actor, name, token, &info);
		if (r < 0)
			return db_error(d, err, r, "adding", name);
		*ret = json_pack("{s:s, s:I, s:s}", "name", info.name, "id", (json_int_t)info.id, "token", token);
		sodium_memzero(token, sizeof(token));
		log_info("agent %s added by operator uid %u", info.name, (unsigned)actor->uid);
		return *ret ? 0 : cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
	}
	if (!strcmp(op, "agents.revoke")) {
		int64_t id = 0;
		unsigned ended;

		r = cordon_agent_revoke(db, actor, name, &id);
		if (r < 0)
			return db_error(d, err, r, "revoking", name);
		/* Its token is refused from now on; what it has open ends now. */
		ended = cordon_daemon_agent_revoked(d, id);
		log_info("agent %s revoked by operator uid %u; %u session(s) ended", name, (unsigned)actor->uid, ended);
		*ret = json_pack("{s:s, s:I}", "name", name, "sessions_ended", (json_int_t)ended);
		return *ret ? 0 : cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
	}
	return cordon_op_error_set(err, ENOSYS, CORDON_OP_E_UNKNOWN_OP, "op %s has no handler", op);
}
