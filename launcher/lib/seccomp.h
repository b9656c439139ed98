/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The connector's seccomp policy. It is compiled once per policy in the
 * parent with libseccomp (compiling ~300 rules costs ~2 ms) and only loaded in
 * the child (~0.1-0.3 ms). docs/seccomp.md explains every rule. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../basic/diag.h"
#include "probe.h"
#include "profile.h"

struct sock_filter;

struct cordon_seccomp_program {
	struct sock_filter *insns; /* classic BPF, ready for SECCOMP_SET_MODE_FILTER */
	size_t n_insns;
	char policy_hash[65];  /* hex SHA-256 of the policy inputs (cache key) */
	char program_hash[65]; /* hex SHA-256 of the compiled instructions */
};

/* What the spawn plan adds to a profile's policy for one sandbox (part of
 * the policy hash; 0 for none):
 *  - OPENAT2_ENOSYS: the sandbox has a read-write root (or no mount
 *    namespace, so the host's writable places are its own). openat2 passes its
 *    flags and mode in a struct seccomp cannot read, so it could create a
 *    setuid file unseen: it answers ENOSYS (libc and cordon's resolver then
 *    use openat, whose mode the filter does see).
 *  - NO_FASTOPEN: Landlock is the only layer that checks TCP destinations.
 *    A TCP Fast Open connect (sendto/sendmsg/sendmmsg with MSG_FASTOPEN)
 *    does not pass through Landlock's connect hook: it answers EOPNOTSUPP,
 *    as on a kernel whose net.ipv4.tcp_fastopen has no client bit. */
enum {
	CORDON_SECCOMP_OPENAT2_ENOSYS = 1u << 0,
	CORDON_SECCOMP_NO_FASTOPEN = 1u << 1,
	CORDON_SECCOMP_OPTS_ALL = (1u << 2) - 1,
};

/* Compiles the filter for the profile's seccomp section (base, allow, deny,
 * action) on this kernel. Unknown syscall names in allow/deny are an error
 * naming the name. Returns 0 and writes *ret, or -errno with a diag. */
int cordon_seccomp_compile(const struct cordon_profile *p, const struct cordon_caps *caps,
			   struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag);

/* Like compile, but returns a shared program from a per-process cache keyed
 * by policy_hash. The returned program is owned by the cache (do not free). */
int cordon_seccomp_compile_cached(const struct cordon_profile *p, const struct cordon_caps *caps,
				  const struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag);

/* Loads the program into the calling thread (child side, after
 * no_new_privs). Async-signal-safe: one seccomp(2) call, no allocation.
 * Returns 0 or -errno. */
int cordon_seccomp_load(const struct cordon_seccomp_program *prog);

/* The same two with the plan's additions (CORDON_SECCOMP_* above; unknown
 * bits are -EINVAL). */
int cordon_seccomp_compile_opts(const struct cordon_profile *p, const struct cordon_caps *caps, unsigned opts,
				struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag);
int cordon_seccomp_compile_cached_opts(const struct cordon_profile *p, const struct cordon_caps *caps, unsigned opts,
				       const struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag);

void cordon_seccomp_program_free(struct cordon_seccomp_program *prog);

/* Drops the cache (tests, shutdown). */
void cordon_seccomp_cache_clear(void);

/* True when `name` is a syscall name cordon_seccomp_compile() accepts in
 * seccomp.allow/deny: [a-z0-9_], at most 63 bytes, and known to libseccomp
 * or to cordon's table of syscalls newer than libseccomp (open_tree_attr,
 * mseal, listmount...). For the profile loader's validation. */
bool cordon_seccomp_syscall_name_known(const char *name);
