/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Enforcement report helpers and the SHA-256 used for the policy hash
 * (libsodium's, as seccomp.c's program cache key). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "probe-util.h"
#include "spawn-internal.h"

const char *cordon_control_state_to_string(enum cordon_control_state s)
{
	switch (s) {
	case CORDON_STATE_ENFORCED:
		return "enforced";
	case CORDON_STATE_DEGRADED:
		return "degraded";
	case CORDON_STATE_UNAVAILABLE:
		return "unavailable";
	case CORDON_STATE_DISABLED_BY_POLICY:
		return "disabled_by_policy";
	}
	return "unknown";
}

int spawn_plan_add_missing(struct spawn_plan *plan, const char *control, const char *what, const char *impact)
{
	json_t *o;

	if (!plan->missing) {
		plan->missing = json_array();
		if (!plan->missing)
			return -ENOMEM;
	}
	o = json_pack("{s:s, s:s, s:s}", "control", control, "what", what, "impact", impact);
	if (!o || json_array_append_new(plan->missing, o) < 0)
		return -ENOMEM;
	return 0;
}

void cordon_sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char digest[crypto_hash_sha256_BYTES];

	/* crypto_hash_sha256 needs no sodium_init(). */
	crypto_hash_sha256(digest, buf, len);
	sodium_bin2hex(out, 65, digest, sizeof(digest));
}

int spawn_decide_plan(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_plan *plan,
		      struct cordon_diag *d)
{
	struct cordon_landlock_masks all = cordon_landlock_abi_masks(7);
	bool req_net = p->require & CORDON_CONTROL_NETWORK;
	int r = 0;

	/* A control every launch needs (no_new_privs: without it setuid files
	 * regain privileges in the sandbox; the capabilities that build it) or
	 * a required control the kernel lacks: decided by the control-verdict
	 * table (probe-policy.c), the same verdict `cordon-launch --probe`, the
	 * probe's check of a profile and cordond's /health give. Below, only
	 * what the plan applies and reports; the network alone is checked
	 * again there, against what this launcher could really load (the eBPF
	 * policy), which the caps cannot know. */
	r = cordon_control_refuse(caps, p, "require", NULL, d);
	if (r < 0)
		return r;

	/* Landlock: handle every right a current kernel knows, so anything not
	 * granted is denied; keep what this ABI can express. */
	plan->landlock_abi = caps->landlock_abi;
	plan->ll_requested = all;
	plan->ll_effective = cordon_landlock_abi_masks(caps->landlock_abi);
	if (caps->landlock_abi <= 0) {
		plan->landlock = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->landlock_reason, sizeof(plan->landlock_reason), "%s (errno %d)",
			 caps->landlock_errno == EOPNOTSUPP ? "Landlock is disabled at boot (not in lsm=)"
							    : "the kernel has no Landlock",
			 caps->landlock_errno);
		r |= spawn_plan_add_missing(plan, "landlock", "Landlock (all of it)",
					    "filesystem access is limited only by the mount namespace view and file "
					    "permissions; no TCP port rules; no scoping");
	} else if (plan->ll_effective.fs != all.fs || plan->ll_effective.net != all.net ||
		   plan->ll_effective.scoped != all.scoped) {
		plan->landlock = CORDON_STATE_DEGRADED;
		snprintf(plan->landlock_reason, sizeof(plan->landlock_reason), "Landlock ABI %d < 6",
			 caps->landlock_abi);
		if ((plan->ll_effective.fs & all.fs) != all.fs)
			r |= spawn_plan_add_missing(
				plan, "landlock", "filesystem rights of newer ABIs (refer, truncate, ioctl_dev)",
				"those operations are governed only by mount flags and file permissions");
		if (!plan->ll_effective.net)
			r |= spawn_plan_add_missing(plan, "landlock", "TCP bind/connect rules (ABI 4)",
						    p->net_mode == CORDON_NET_NONE
							    ? "the empty network namespace still isolates the network"
							    : "TCP ports are not checked by Landlock");
		if (!plan->ll_effective.scoped)
			r |= spawn_plan_add_missing(plan, "landlock", "abstract unix socket and signal scoping (ABI 6)",
						    "signals are still confined by the pid namespace; abstract unix "
						    "sockets by the network namespace (none in allowlist mode)");
	} else
		plan->landlock = CORDON_STATE_ENFORCED;

	/* Namespaces. */
	plan->ns_requested = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	if (p->net_mode == CORDON_NET_NONE)
		plan->ns_requested |= CLONE_NEWNET;
	plan->ns_effective = plan->ns_requested & caps->namespaces;
	if (plan->ns_effective != plan->ns_requested) {
		unsigned long miss = plan->ns_requested & ~plan->ns_effective;

		snprintf(plan->namespaces_reason, sizeof(plan->namespaces_reason), "kernel cannot create:%s%s%s%s%s%s",
			 miss & CLONE_NEWNS ? " mnt" : "", miss & CLONE_NEWPID ? " pid" : "",
			 miss & CLONE_NEWIPC ? " ipc" : "", miss & CLONE_NEWUTS ? " uts" : "",
			 miss & CLONE_NEWCGROUP ? " cgroup" : "", miss & CLONE_NEWNET ? " net" : "");
		plan->namespaces = CORDON_STATE_DEGRADED;
		if (miss & CLONE_NEWNS)
			r |= spawn_plan_add_missing(
				plan, "namespaces", "mount namespace",
				"the connector sees the host filesystem (Landlock still limits it); no "
				"private /tmp, /proc or /dev");
		if (miss & CLONE_NEWPID)
			r |= spawn_plan_add_missing(plan, "namespaces", "pid namespace",
						    "host processes are visible to the connector's uid checks");
		if (miss & (CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP))
			r |= spawn_plan_add_missing(plan, "namespaces", "ipc/uts/cgroup namespace",
						    "host SysV IPC, hostname or cgroup paths are visible");
	} else
		plan->namespaces = CORDON_STATE_ENFORCED;

	/* Network: never an open network. Layers: the empty network namespace
	 * (mode none), the eBPF egress policy on the instance's cgroup (every
	 * mode), Landlock TCP rules (ABI >= 4). */
	plan->landlock_tcp = plan->landlock != CORDON_STATE_UNAVAILABLE && plan->ll_effective.net;
	if (!plan->ebpf && !*plan->ebpf_reason)
		snprintf(plan->ebpf_reason, sizeof(plan->ebpf_reason), "eBPF egress policy not available");
	if (p->net_mode == CORDON_NET_NONE) {
		if (plan->ns_effective & CLONE_NEWNET) {
			plan->network = CORDON_STATE_ENFORCED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "empty network namespace%s%s",
				 plan->ebpf ? " + eBPF deny-all" : "",
				 plan->landlock_tcp ? " + Landlock TCP deny" : "");
		} else if (plan->ebpf || plan->landlock_tcp) {
			plan->network = plan->ebpf ? CORDON_STATE_ENFORCED : CORDON_STATE_DEGRADED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "no network namespace: %s%s%s",
				 plan->ebpf ? "eBPF deny-all" : "", plan->ebpf && plan->landlock_tcp ? " + " : "",
				 plan->landlock_tcp ? "Landlock TCP deny" : "");
			if (!plan->ebpf)
				r |= spawn_plan_add_missing(
					plan, "network", "network namespace and eBPF egress policy",
					"TCP is denied by Landlock, but UDP and other sockets reach the host network");
		} else
			return cordon_diag_set(d, EOPNOTSUPP,
					       p->require & CORDON_CONTROL_NETWORK ? "require" : "network",
					       "network mode none needs a network namespace, the eBPF egress policy or "
					       "Landlock TCP rules; the kernel has neither");
	} else {
		if (plan->ebpf) {
			plan->network = CORDON_STATE_ENFORCED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "eBPF egress allowlist%s",
				 plan->landlock_tcp ? " + Landlock TCP port rules" : "");
		} else if (plan->landlock_tcp) {
			plan->network = CORDON_STATE_DEGRADED;
			snprintf(plan->network_reason, sizeof(plan->network_reason),
				 "%.120s: Landlock TCP port rules only", plan->ebpf_reason);
			r |= spawn_plan_add_missing(
				plan, "network", "eBPF egress address policy",
				"any address on the allowed TCP ports is reachable; UDP is not restricted");
		} else
			return cordon_diag_set(
				d, EOPNOTSUPP, req_net ? "require" : "network",
				"network mode allowlist needs the eBPF egress policy or Landlock TCP rules "
				"(ABI 4); neither is available (%s)",
				plan->ebpf_reason);
	}
	if (req_net && plan->network != CORDON_STATE_ENFORCED)
		return cordon_diag_set(d, EOPNOTSUPP, "require",
				       "required control 'network' is not fully available: %s", plan->network_reason);

	/* Seccomp. */
	if (!caps->seccomp_filter) {
		plan->seccomp = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->seccomp_reason, sizeof(plan->seccomp_reason), "the kernel has no seccomp filter mode");
		r |= spawn_plan_add_missing(plan, "seccomp", "seccomp filter",
					    "every system call is reachable (namespace, ptrace, bpf, io_uring, ...)");
	} else if (p->seccomp_action == CORDON_SECCOMP_LOG) {
		plan->seccomp = CORDON_STATE_DISABLED_BY_POLICY;
		snprintf(plan->seccomp_reason, sizeof(plan->seccomp_reason),
			 "action: log (violations are logged, not refused; foreign arches still killed)");
	} else
		plan->seccomp = CORDON_STATE_ENFORCED;

	/* Cgroup (controllers are checked by the cgroup module). */
	if (caps->cgroup_layout == CORDON_CGROUP_NONE) {
		plan->cgroup = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->cgroup_reason, sizeof(plan->cgroup_reason), "no cgroup hierarchy is mounted");
		r |= spawn_plan_add_missing(
			plan, "cgroup", "cgroups",
			p->user ? "no memory, pids or CPU limit; no kill-all on teardown; no statistics"
				: "no memory or CPU limit (processes still capped by RLIMIT_NPROC on the "
				  "instance's dynamic uid); no kill-all on teardown; no statistics");
	} else {
		/* A limit the profile struct does not carry (0: only a struct
		 * built by hand; the parser fills defaults) is no limit: the
		 * control must not read "enforced" then. */
		static const char *const unset_names[] = { "memory limit", "pids limit", "CPU limit" };
		const bool unset[] = { !p->mem_bytes, !p->pids_max, !p->cpu_micro };

		plan->cgroup = CORDON_STATE_ENFORCED;
		for (size_t i = 0; i < ELEMENTSOF(unset); i++) {
			if (!unset[i])
				continue;
			plan->cgroup = CORDON_STATE_DEGRADED;
			snprintf(plan->cgroup_reason, sizeof(plan->cgroup_reason), "some limits are not set");
			r |= spawn_plan_add_missing(plan, "cgroup", unset_names[i], "not set: unlimited");
		}
	}

	plan->capabilities = CORDON_STATE_ENFORCED;
	plan->no_new_privs = CORDON_STATE_ENFORCED; /* refused above without it */
	return r < 0 ? -ENOMEM : 0;
}

static json_t *masks_json(const struct cordon_landlock_masks *m)
{
	char fs[24], net[24], sc[24];

	snprintf(fs, sizeof(fs), "0x%llx", (unsigned long long)m->fs);
	snprintf(net, sizeof(net), "0x%llx", (unsigned long long)m->net);
	snprintf(sc, sizeof(sc), "0x%llx", (unsigned long long)m->scoped);
	return json_pack("{s:s, s:s, s:s}", "fs", fs, "net", net, "scoped", sc);
}

static json_t *ns_json(unsigned long ns)
{
	static const struct {
		unsigned long flag;
		const char *name;
	} t[] = { { CLONE_NEWNS, "mnt" },  { CLONE_NEWPID, "pid" },	  { CLONE_NEWIPC, "ipc" },
		  { CLONE_NEWUTS, "uts" }, { CLONE_NEWCGROUP, "cgroup" }, { CLONE_NEWNET, "net" } };
	json_t *a = json_array();

	for (size_t i = 0; a && i < ELEMENTSOF(t); i++)
		if (ns & t[i].flag)
			json_array_append_new(a, json_string(t[i].name));
	return a;
}

static json_t *control_json(enum cordon_control_state s, const char *reason)
{
	return json_pack("{s:s, s:s?}", "state", cordon_control_state_to_string(s), "reason",
			 reason && *reason ? reason : NULL);
}

/* Per limit, what the instance really got: "enforced" (set, its
 * controller works), "degraded" (set, but its controller is missing here),
 * "unavailable" (no cgroup hierarchy at all) or "unset" (no such limit).
 * nofile is an rlimit, applied in the child whatever the cgroups. */
static json_t *limit_states_json(const struct cordon_profile *p, const struct spawn_plan *pl)
{
	const struct {
		const char *name;
		bool set;
		int ctrl;
	} lims[] = {
		{ "memory", p->mem_bytes > 0, CORDON_CTRL_MEMORY },
		{ "pids", p->pids_max > 0, CORDON_CTRL_PIDS },
		{ "cpu", p->cpu_micro > 0, CORDON_CTRL_CPU },
	};
	json_t *o = json_object();

	for (size_t i = 0; o && i < ELEMENTSOF(lims); i++) {
		const char *st = !lims[i].set				     ? "unset"
				 : pl->cgroup == CORDON_STATE_UNAVAILABLE    ? "unavailable"
				 : pl->cgroup_missing & (1u << lims[i].ctrl) ? "degraded"
									     : "enforced";

		json_object_set_new(o, lims[i].name, json_string(st));
	}
	if (o)
		json_object_set_new(o, "nofile", json_string(p->nofile ? "enforced" : "unset"));
	return o;
}

/* The limits the profile did not set, which got their documented default. */
static json_t *limit_defaults_json(const struct cordon_profile *p)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{ CORDON_LIMIT_MEMORY, "memory" },
		{ CORDON_LIMIT_PIDS, "pids" },
		{ CORDON_LIMIT_CPU, "cpu" },
		{ CORDON_LIMIT_NOFILE, "nofile" },
	};
	json_t *a = json_array();

	for (size_t i = 0; a && i < ELEMENTSOF(names); i++)
		if (p->limits_defaulted & names[i].bit)
			json_array_append_new(a, json_string(names[i].name));
	return a;
}

json_t *spawn_build_report(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			   char *const *argv)
{
	const struct cordon_profile *p = pol->profile;
	const struct spawn_plan *pl = &c->plan;
	json_t *rep, *controls, *fs, *policy, *jargv, *envnames, *nets;
	char *dump;
	bool degraded;

	controls = json_object();
	fs = json_array();
	jargv = json_array();
	envnames = json_array();
	nets = json_array();
	if (!controls || !fs || !jargv || !envnames || !nets)
		goto oom;

	json_object_set_new(
		controls, "landlock",
		json_pack("{s:s, s:i, s:o, s:o, s:s?}", "state", cordon_control_state_to_string(pl->landlock), "abi",
			  pl->landlock_abi, "requested", masks_json(&pl->ll_requested), "effective",
			  masks_json(&pl->ll_effective), "reason", *pl->landlock_reason ? pl->landlock_reason : NULL));
	json_object_set_new(
		controls, "seccomp",
		json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:[s*s*]}", "state",
			  cordon_control_state_to_string(pl->seccomp), "base",
			  p->seccomp_base == CORDON_SECCOMP_STRICT ? "strict" : "default", "action",
			  p->seccomp_action == CORDON_SECCOMP_KILL  ? "kill"
			  : p->seccomp_action == CORDON_SECCOMP_LOG ? "log"
								    : "errno",
			  "policy_hash", c->seccomp ? c->seccomp->policy_hash : NULL, "program_hash",
			  c->seccomp ? c->seccomp->program_hash : NULL, "reason",
			  *pl->seccomp_reason ? pl->seccomp_reason : NULL, "plan_rules",
			  c->seccomp && (c->seccomp_opts & CORDON_SECCOMP_OPENAT2_ENOSYS) ? "openat2-enosys" : NULL,
			  c->seccomp && (c->seccomp_opts & CORDON_SECCOMP_NO_FASTOPEN) ? "no-fastopen" : NULL));
	{
		json_t *cg = control_json(pl->cgroup, pl->cgroup_reason), *miss = json_array();

		for (int i = 0; miss && i < _CORDON_CTRL_MAX; i++)
			if (pl->cgroup_missing & (1u << i))
				json_array_append_new(miss,
						      json_string(cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)i)));
		json_object_set_new(cg, "path",
				    c->cg && cordon_cgroup_v2_path(c->cg) ? json_string(cordon_cgroup_v2_path(c->cg))
									  : json_null());
		json_object_set_new(cg, "missing_controllers", miss);
		json_object_set_new(cg, "limits",
				    json_pack("{s:I, s:I, s:I, s:I}", "memory_bytes", (json_int_t)p->mem_bytes, "pids",
					      (json_int_t)p->pids_max, "cpu_micro", (json_int_t)p->cpu_micro, "nofile",
					      (json_int_t)p->nofile));
		json_object_set_new(cg, "limit_states", limit_states_json(p, pl));
		json_object_set_new(cg, "defaults", limit_defaults_json(p));
		json_object_set_new(controls, "cgroup", cg);
	}
	json_object_set_new(controls, "namespaces",
			    json_pack("{s:s, s:o, s:o, s:s?}", "state", cordon_control_state_to_string(pl->namespaces),
				      "requested", ns_json(pl->ns_requested), "effective", ns_json(pl->ns_effective),
				      "reason", *pl->namespaces_reason ? pl->namespaces_reason : NULL));
	json_object_set_new(controls, "network",
			    json_pack("{s:s, s:s, s:b, s:b, s:b, s:s?}", "state",
				      cordon_control_state_to_string(pl->network), "mode",
				      p->net_mode == CORDON_NET_NONE ? "none" : "allowlist", "netns",
				      (pl->ns_effective & CLONE_NEWNET) != 0, "landlock_tcp", pl->landlock_tcp, "ebpf",
				      pl->ebpf, "reason", *pl->network_reason ? pl->network_reason : NULL));
	/* Where the eBPF programs are attached: the launcher's group (once for
	 * all its instances) or the instance's own cgroup2 directory. */
	if (pl->ebpf)
		json_object_set_new(json_object_get(controls, "network"), "ebpf_attached",
				    json_string(c->group ? "group" : "instance"));
	/* The root guard, and where its programs are attached: the group
	 * (once for all its instances) or the instance's own directory. */
	json_object_set_new(controls, "root_guard",
			    json_pack("{s:s, s:s?, s:s*}", "state", cordon_control_state_to_string(pl->root_guard),
				      "reason", *pl->root_guard_reason ? pl->root_guard_reason : NULL, "attached",
				      c->rg_notify ? "seccomp-notify"
				      : !c->rg	   ? NULL
				      : c->rg_att  ? "instance"
						   : "group"));
	json_object_set_new(controls, "capabilities",
			    control_json(pl->capabilities, "all sets cleared, securebits locked"));
	json_object_set_new(controls, "no_new_privs", control_json(pl->no_new_privs, NULL));

	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct mount_item *m = &c->mounts[i];
		json_t *e = json_pack("{s:s, s:s, s:s}", "host", m->host, "at", m->at, "access",
				      m->symlink ? "symlink" : cordon_access_to_string(m->access));

		if (e && m->idmapped)
			json_object_set_new(e, "idmap_owner_uid", json_integer(m->owner_uid));
		if (e && m->symlink)
			json_object_set_new(e, "target", json_string(m->symlink));
		json_array_append_new(fs, e);
	}
	for (char *const *a = argv; *a; a++)
		json_array_append_new(jargv, json_string(*a));
	for (size_t i = 0; i < c->n_env; i++) {
		const char *eq = strchr(c->envp[i], '=');

		json_array_append_new(envnames, json_stringn(c->envp[i], eq ? (size_t)(eq - c->envp[i]) : 0));
	}
	for (size_t i = 0; i < p->n_net_allow; i++) {
		json_t *ports = json_array();

		for (size_t j = 0; ports && j < p->net_allow[i].n_ports; j++)
			json_array_append_new(ports, json_integer(p->net_allow[i].ports[j]));
		json_array_append_new(nets, json_pack("{s:i, s:i, s:o}", "family", p->net_allow[i].family, "prefix_len",
						      p->net_allow[i].prefix_len, "ports", ports));
	}

	/* The effective policy, hashed: what this instance runs under. Env
	 * values are left out (credentials); names are in. */
	policy =
		json_pack("{s:s, s:O, s:O, s:s, s:O, s:I, s:O, s:I, s:I, s:I, s:I, s:s?, s:O, s:I}", "connector", p->id,
			  "argv", jargv, "env", envnames, "user", p->user ? p->user : "dynamic", "filesystem", fs,
			  "tmp_bytes", (json_int_t)p->tmp_bytes, "network", nets, "memory", (json_int_t)p->mem_bytes,
			  "pids", (json_int_t)p->pids_max, "cpu_micro", (json_int_t)p->cpu_micro, "nofile",
			  (json_int_t)p->nofile, "seccomp_policy", c->seccomp ? c->seccomp->policy_hash : NULL,
			  "controls", controls, "require", (json_int_t)p->require);
	if (!policy)
		goto oom;
	dump = json_dumps(policy, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(policy);
	if (!dump)
		goto oom;
	cordon_sha256_hex(dump, strlen(dump), c->policy_hash);
	free(dump);

	degraded = c->plan.missing && json_array_size(c->plan.missing) > 0;
	rep = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:o, s:s, s:s?, s:o, s:o, s:o, s:o, s:s}", "version",
			1, "connector", p->id, "profile", p->path ? p->path : "", "instance", c->instance_name, "pid",
			(int)c->pid, "uid", (int)c->uid, "gid", (int)c->gid, "degraded", degraded, "missing",
			c->plan.missing ? json_incref(c->plan.missing) : json_array(), "policy_hash", c->policy_hash,
			"seccomp_program_hash", c->seccomp ? c->seccomp->program_hash : NULL, "controls", controls,
			"filesystem", fs, "argv", jargv, "env_names", envnames, "kernel", caps->kernel_release);
	/* Where the time went (spawn latency for the broker's metrics). The
	 * child's phases are consecutive differences of its own timestamps;
	 * "start" is from the parent's clone to the child's first instruction,
	 * "go_wait" the time the finished child waited for the parent. */
	if (rep) {
		static const char *const names[_CT_MAX] = { "start",	"net",	   "mounts",  "hygiene", "privileges",
							    "landlock", "go_wait", "seccomp", "verify",	 "exec" };
		json_t *child = json_object();

		for (int i = 0; child && i < _CT_MAX; i++) {
			uint64_t prev = i == 0 ? c->t[2] : c->ct[i - 1];

			json_object_set_new(child, names[i],
					    json_integer(c->ct[i] >= prev ? (json_int_t)(c->ct[i] - prev) : 0));
		}
		json_object_set_new(rep, "spawn_usec",
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o*}", "prepare",
					      (json_int_t)(c->t[1] - c->t[0]), "cgroup",
					      (json_int_t)(c->t[2] - c->t[1]), "clone_to_ebpf",
					      (json_int_t)(c->t[3] - c->t[2]), "v1_cgroup", (json_int_t)c->v1_usec,
					      "ebpf", (json_int_t)(c->t[4] - c->t[3]), "total",
					      (json_int_t)(c->t[5] - c->t[0]), "child", child));
	}
	json_decref(nets);
	return rep;
oom:
	json_decref(controls);
	json_decref(fs);
	json_decref(jargv);
	json_decref(envnames);
	json_decref(nets);
	return NULL;
}
