/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between spawn.c (building and running the sandbox) and
 * spawn-report.c (the enforcement report). Not a public API. */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "landlock.h"
#include "probe.h"
#include "profile.h"

enum cordon_control_state {
	CORDON_STATE_ENFORCED,
	CORDON_STATE_DEGRADED,
	CORDON_STATE_UNAVAILABLE,
	CORDON_STATE_DISABLED_BY_POLICY,
};

const char *cordon_control_state_to_string(enum cordon_control_state s);

/* The plan: which controls are applied and how, decided in the parent from
 * the profile and the capability struct before anything is created. */
struct spawn_plan {
	enum cordon_control_state landlock, seccomp, cgroup, namespaces, network, capabilities, no_new_privs;
	char landlock_reason[128], seccomp_reason[128], cgroup_reason[128], namespaces_reason[128], network_reason[200];
	struct cordon_landlock_masks ll_requested, ll_effective;
	int landlock_abi;
	unsigned long ns_requested, ns_effective; /* CLONE_NEW* */
	bool landlock_tcp;			  /* Landlock TCP rules are part of the network control */
	bool ebpf;				  /* the eBPF egress policy will be attached */
	char ebpf_reason[160];			  /* why not, when it is not */
	unsigned cgroup_missing;		  /* CORDON_CTRL_* bits the cgroup module could not apply */
	json_t *missing;			  /* array of {control, what, impact} */
};

/* Appends one entry to plan->missing. Returns 0 or -ENOMEM. */
int spawn_plan_add_missing(struct spawn_plan *plan, const char *control, const char *what, const char *impact);

/* Hex SHA-256 (65 bytes with NUL) of buf. */
void cordon_sha256_hex(const void *buf, size_t len, char out[65]);
