/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's core as a library: the daemon object, its start-up phases and
 * its main loop. broker/cordond.c is a thin main over this. Tests embed the
 * core in a forked child with a spawner of their own (the only seam; cordond
 * always uses the launcher helper). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon-config.h"
#include "daemon.h"
#include "diag.h"
#include "serve-proto.h"

struct cordon_profile;

/* How connector instances are started. cordond's spawner is the launcher
 * helper (cordon-launch --serve over a socketpair: every instance sandboxed);
 * tests of the proxy logic may start the fake connector directly. */
struct cordon_worker_io {
	uint32_t instance;
	pid_t pid; /* 0 when unknown (launcher-managed) */
	int stdin_fd, stdout_fd, stderr_fd;
	json_t *report; /* enforcement report, new reference or NULL */
	/* The credential values the spawner injected (read at this spawn, so a
	 * rotated file's new value is here), owned: the daemon wipes and frees
	 * them. Only for scrubbing the instance's stderr; NULL/0 when none. */
	char **secrets;
	size_t n_secrets;
};

struct cordon_spawner {
	/* Starts connector `p` (tag: [a-z0-9-]) with extra roots (active
	 * delegations; the launcher re-checks them against the profile's
	 * ceiling). Returns 0 and fills *ret or -errno with diag. */
	int (*spawn)(void *userdata, const struct cordon_profile *p, const char *tag,
		     const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		     struct cordon_diag *diag);
	/* Kills an instance (idempotent). */
	void (*kill)(void *userdata, uint32_t instance);
	/* Reaps an instance whose stdout hit EOF; returns its wait status or
	 * -1 when unknown (launcher: the exit event reports it). */
	int (*reap)(void *userdata, uint32_t instance);
	/* The kernel capability report (new reference) or NULL. */
	json_t *(*capabilities)(void *userdata);
	/* fd the loop watches for spawner events, or -1; and its handler. */
	int (*event_fd)(void *userdata);
	void (*dispatch)(void *userdata);
	bool (*alive)(void *userdata);
	/* Tells the spawner which daemon gets its events
	 * (cordon_daemon_instance_exited, cordon_daemon_helper_lost). */
	void (*attach)(void *userdata, struct cordon_daemon *d);
	void (*free)(void *userdata);
	void *userdata;
	/* Directories the spawner itself needs inside the broker's own
	 * Landlock domain (NULL-terminated or NULL): the launcher helper
	 * needs none (it was forked before the domain applied); a test
	 * spawner that execs in-process lists its binaries and data. */
	const char *const *sandbox_exec; /* read + execute */
	const char *const *sandbox_rw;	 /* read + write */
};

/* Phases up to "bind sockets" (privileged), then drop and serve. Returns 0
 * and writes *ret, or -errno with diag naming the phase. spawner NULL means
 * the launcher helper. */
int cordon_daemon_new(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner,
		      struct cordon_daemon **ret, struct cordon_diag *diag);

/* Serves until SIGTERM/SIGINT (exit code 0) or a fatal error. */
int cordon_daemon_run(struct cordon_daemon *d);

/* Checkpoints the audit log, closes everything. */
void cordon_daemon_free(struct cordon_daemon *d);

/* Spawner events. */
void cordon_daemon_instance_exited(struct cordon_daemon *d, uint32_t instance, int wait_status, const json_t *report);
void cordon_daemon_helper_lost(struct cordon_daemon *d, const struct cordon_diag *why);

/* The launcher-helper spawner (daemon-launcher.c). Started while privileged. */
int cordon_daemon_launcher_spawner(const char *launch_binary, const char *profiles_dir, struct cordon_spawner *ret,
				   struct cordon_diag *diag);
