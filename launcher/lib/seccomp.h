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

void cordon_seccomp_program_free(struct cordon_seccomp_program *prog);

/* Drops the cache (tests, shutdown). */
void cordon_seccomp_cache_clear(void);

/* True when `name` is a syscall name cordon_seccomp_compile() accepts in
 * seccomp.allow/deny: [a-z0-9_], at most 63 bytes, and known to libseccomp
 * or to cordon's table of syscalls newer than libseccomp (open_tree_attr,
 * mseal, listmount...). For the profile loader's validation. */
bool cordon_seccomp_syscall_name_known(const char *name);
