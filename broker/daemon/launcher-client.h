/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's side of the launcher helper protocol (launcher/lib/serve-proto.h).
 *
 * cordond calls cordon_launcher_client_start() while it is still privileged:
 * it creates a SOCK_SEQPACKET socketpair and starts `cordon-launch --serve FD`
 * (the helper keeps the privileges needed to sandbox; it loads the profiles
 * cordond puts in force, cordon_launcher_client_profiles(), from its own
 * root-owned directory and re-checks every request). Afterwards
 * cordond drops its own privileges and talks to the helper only through this
 * API. If the helper dies, every connector dies with it (the helper's
 * instances are tied to it) and cordon_launcher_client_alive() turns false;
 * if cordond dies, the helper sees EOF, kills every connector and exits.
 *
 * Requests are synchronous (request id matched to reply); unsolicited events
 * (an instance exited, a network denial) that arrive meanwhile are queued and
 * delivered through the handlers by cordon_launcher_client_dispatch(), which
 * the event loop calls when cordon_launcher_client_fd() is readable. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "diag.h"
#include "profile.h"
#include "serve-proto.h"

struct cordon_launcher_client;

struct cordon_launcher_handlers {
	/* An instance ended: wait status as waitpid() encodes it; report is the
	 * final enforcement report with cgroup statistics (borrowed). */
	void (*exited)(void *userdata, uint32_t instance, int wait_status, const json_t *report);
	/* A network denial event (borrowed JSON object, docs/network.md). */
	void (*net_denied)(void *userdata, uint32_t instance, const json_t *event);
	/* The helper went away (EOF or protocol error): every instance is gone. */
	void (*helper_lost)(void *userdata, const struct cordon_diag *why);
	void *userdata;
};

/* Starts the helper: argv0 is the cordon-launch binary, profiles_dir the
 * directory the helper loads profiles from. Returns 0 and writes *ret, or
 * -errno with a diag. */
int cordon_launcher_client_start(const char *launch_binary, const char *profiles_dir,
				 const struct cordon_launcher_handlers *handlers, struct cordon_launcher_client **ret,
				 struct cordon_diag *reterr_diag);

/* The same, and the helper is given config_path (absolute; NULL: none) as
 * the one file cordon_launcher_client_config_read() returns, for the
 * helper's whole life: no later request can name another file. */
int cordon_launcher_client_start_config(const char *launch_binary, const char *profiles_dir, const char *config_path,
					const struct cordon_launcher_handlers *handlers,
					struct cordon_launcher_client **ret, struct cordon_diag *reterr_diag);

/* Closes the socket (the helper kills every instance and exits), reaps the
 * helper, frees. */
void cordon_launcher_client_free(struct cordon_launcher_client *lc);

int cordon_launcher_client_fd(const struct cordon_launcher_client *lc);
pid_t cordon_launcher_client_pid(const struct cordon_launcher_client *lc);
bool cordon_launcher_client_alive(const struct cordon_launcher_client *lc);

/* Reads and delivers pending events without blocking. Returns 0 or -errno
 * (the helper is lost: handlers->helper_lost has been called). */
int cordon_launcher_client_dispatch(struct cordon_launcher_client *lc);

/* The kernel capability report the helper probed (new reference). */
int cordon_launcher_client_probe(struct cordon_launcher_client *lc, json_t **ret_caps, struct cordon_diag *d);

/* Puts in force at the helper exactly the profiles of ps[0..n) (by id and
 * the SHA-256 of the bytes cordond parsed, p->sha256): the helper reads and
 * parses each file itself and keeps the set only when every one loads and
 * hashes to that value; spawns then use its copies. All or nothing: on
 * failure the previous set stays in force, the return is -errno with the
 * helper's diag, and ret_failed (size bytes) names the profile it refused
 * ("" when the refusal names none). Returns 0 on success. */
int cordon_launcher_client_profiles(struct cordon_launcher_client *lc, struct cordon_profile *const *ps, size_t n,
				    char *ret_failed, size_t size, struct cordon_diag *reterr_diag);

/* The bytes of the configuration file the helper was started with, read
 * by the helper (root) with its checks: no symlink, a regular file, file
 * and directory writable only by root, at most CORDON_SERVE_MAX_CONFIG
 * bytes, no NUL. Returns 0 and writes *ret (malloc'd, NUL-terminated) and
 * *ret_len, or -errno with the helper's diag naming the file and the rule
 * (-ENOENT when the helper has no configuration file). */
int cordon_launcher_client_config_read(struct cordon_launcher_client *lc, char **ret, size_t *ret_len,
				       struct cordon_diag *reterr_diag);

struct cordon_launched {
	uint32_t instance;
	int stdin_fd;	/* write to the connector */
	int stdout_fd;	/* read from the connector */
	int stderr_fd;	/* read its log */
	json_t *report; /* enforcement report (new reference) */
};

/* Asks the helper to start connector `connector` (a profile id) with extra
 * roots (delegations; the helper re-checks them against the profile's
 * ceiling). tag names the instance ([a-z0-9-], at most 63 bytes). Returns 0
 * and fills *ret (the caller owns the fds and the report), or -errno with the
 * helper's diag (e.g. step "require": a required control is missing). */
int cordon_launcher_client_spawn(struct cordon_launcher_client *lc, const char *connector, const char *tag,
				 const struct cordon_serve_root *roots, size_t n_roots, struct cordon_launched *ret,
				 struct cordon_diag *reterr_diag);

/* Kills an instance (its whole cgroup). The exit arrives as an event.
 * Returns 0, -ENOENT for an unknown instance, or -errno. */
int cordon_launcher_client_kill(struct cordon_launcher_client *lc, uint32_t instance, struct cordon_diag *d);
