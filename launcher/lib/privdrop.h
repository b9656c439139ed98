/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Dropping a process's privileges for good: the one sequence both the
 * sandbox's child (spawn-child.c, after clone3) and cordond
 * (broker/daemon/daemon-privs.c) use. The order is the only one that works:
 *  1. the capability bounding set (dropping from it needs CAP_SETPCAP,
 *     which step 3 takes away);
 *  2. locked securebits: no way back to root semantics for this process
 *     tree (no root-gets-all-caps on exec, no keep-caps, no ambient raise);
 *     the setuid fixup stays on, and locked, so step 3 really clears the
 *     permitted set;
 *  3. supplementary groups, then gid and uid, each real, effective and
 *     saved (no saved id can regain the old one);
 *  4. the effective, permitted and inheritable sets (libcap-ng), then the
 *     ambient set.
 * Steps 2 and 3 and a failing step 1 are for a process that changes its ids
 * (struct cordon_privdrop.ids: it needs CAP_SETPCAP, CAP_SETGID and
 * CAP_SETUID); one that keeps its ids clears the bounding set only where it
 * may (CAP_SETPCAP) and always does step 4. no_new_privs is the caller's
 * next step. */

#include <stdbool.h>
#include <sys/types.h>

struct cordon_privdrop {
	uid_t uid;
	gid_t gid;
	int cap_last; /* cordon_cap_last() */
	bool ids;     /* steps 1-3 as well (root) */
};

/* The highest capability number this kernel knows
 * (/proc/sys/kernel/cap_last_cap), read once per process; 63 when it cannot
 * be read (PR_CAPBSET_DROP answers EINVAL above the last one). The first
 * call reads a file: make it before clone. */
int cordon_cap_last(void);

/* Drops privileges as above. Async-signal-safe once libcap-ng's per-thread
 * state is initialised in this process (capng_clear() called before, e.g.
 * before clone). Returns 0, or -errno with *ret_step ("capabilities" or
 * "user") and *ret_what (what failed) pointing to static strings. */
int cordon_privdrop(const struct cordon_privdrop *p, const char **ret_step, const char **ret_what);
