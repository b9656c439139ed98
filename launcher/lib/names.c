/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String tables for the enums shared by the profile, probe and report code. */
#include <errno.h>
#include <string.h>

#include "probe.h"
#include "profile.h"

/* The only table of tier names: the profile loader parses with it, the
 * broker binds approvals to and audits with these words. */
const char *const cordon_risk_names[CORDON_RISK_COUNT] = {
	[CORDON_RISK_READ] = "read", [CORDON_RISK_WRITE] = "write",	  [CORDON_RISK_DESTRUCTIVE] = "destructive",
	[CORDON_RISK_HIGH] = "high", [CORDON_RISK_CRITICAL] = "critical",
};

const char *cordon_risk_to_string(enum cordon_risk r)
{
	if ((unsigned)r >= CORDON_RISK_COUNT)
		return NULL;
	return cordon_risk_names[r];
}

int cordon_risk_from_string(const char *s, enum cordon_risk *ret)
{
	for (unsigned i = 0; i < CORDON_RISK_COUNT; i++)
		if (s && strcmp(s, cordon_risk_names[i]) == 0) {
			*ret = (enum cordon_risk)i;
			return 0;
		}
	return -EINVAL;
}

const char *const cordon_replay_names[CORDON_REPLAY_COUNT] = {
	[CORDON_REPLAY_UNSAFE] = "unsafe",
	[CORDON_REPLAY_SAFE] = "safe",
};

const char *cordon_replay_to_string(enum cordon_replay r)
{
	if ((unsigned)r >= CORDON_REPLAY_COUNT)
		return NULL;
	return cordon_replay_names[r];
}

const char *cordon_access_to_string(enum cordon_fs_access a)
{
	switch (a) {
	case CORDON_ACCESS_READ:
		return "read";
	case CORDON_ACCESS_READ_EXEC:
		return "read-exec";
	case CORDON_ACCESS_READ_WRITE:
		return "read-write";
	}
	return NULL;
}

const char *cordon_control_to_string(enum cordon_control c)
{
	switch (c) {
	case CORDON_CONTROL_LANDLOCK:
		return "landlock";
	case CORDON_CONTROL_SECCOMP:
		return "seccomp";
	case CORDON_CONTROL_CGROUP:
		return "cgroup";
	case CORDON_CONTROL_NAMESPACES:
		return "namespaces";
	case CORDON_CONTROL_NETWORK:
		return "network";
	case CORDON_CONTROL_ROOT_GUARD:
		return "root_guard";
	}
	return NULL;
}

const char *cordon_cgroup_ctrl_name(enum cordon_cgroup_ctrl c)
{
	static const char *const names[] = {
		[CORDON_CTRL_MEMORY] = "memory", [CORDON_CTRL_PIDS] = "pids", [CORDON_CTRL_CPU] = "cpu",
		[CORDON_CTRL_CPUSET] = "cpuset", [CORDON_CTRL_IO] = "io",
	};

	if ((unsigned)c >= _CORDON_CTRL_MAX)
		return NULL;
	return names[c];
}
