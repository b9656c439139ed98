/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How connector instances are started: the spawner interface the daemon
 * core uses, and the production spawner (daemon-launcher.c) over the
 * launcher helper. A spawner knows nothing of the daemon: it reports its
 * events through the struct cordon_spawner_events it is given at attach. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* What a spawner reports, asynchronously, from its dispatch (JSON
 * borrowed). */
struct cordon_spawner_events {
	/* An instance ended: its wait status and final enforcement report
	 * (with cgroup statistics). */
	void (*exited)(void *userdata, uint32_t instance, int wait_status, const json_t *report);
	/* The egress policy refused a connection of an instance. */
	void (*net_denied)(void *userdata, uint32_t instance, const json_t *event);
	/* The spawner's helper is gone: every instance is gone with it. */
	void (*helper_lost)(void *userdata, const struct cordon_diag *why);
	void *userdata;
};

struct cordon_spawner {
	/* Starts connector `p` (tag: [a-z0-9-]) with extra roots (active
	 * delegations; the launcher re-checks them against the profile's
	 * ceiling). Returns 0 and fills *ret or -errno with diag. */
	int (*spawn)(void *userdata, const struct cordon_profile *p, const char *tag,
		     const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		     struct cordon_diag *diag);
	/* Puts exactly ps[0..n) in force for the spawns that follow (the
	 * launcher helper loads and checks each itself, all or nothing;
	 * cordon_launcher_client_profiles()). 0, or -errno with diag and the
	 * refused profile's id in ret_failed (64 bytes; "" when none). NULL
	 * for a spawner that starts from the profile spawn() is given. */
	int (*profiles)(void *userdata, struct cordon_profile *const *ps, size_t n, char ret_failed[static 64],
			struct cordon_diag *diag);
	/* The bytes of cordond's --config file, read by the launcher helper
	 * (root) at the path it was started with, with its owner, mode,
	 * no-symlink and size checks (cordon_launcher_client_config_read()):
	 * a reload sees a file replaced by rename, which cordond's own
	 * sandbox would not let it open. 0 and *ret (malloc'd, NUL-terminated)
	 * and *ret_len, or -errno with diag. NULL when the spawner was given
	 * no configuration file: cordond then reads the file itself. */
	int (*config_read)(void *userdata, char **ret, size_t *ret_len, struct cordon_diag *diag);
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
	/* Tells the spawner where its events go (copied; NULL: none). May be
	 * NULL for a spawner that has no events. */
	void (*attach)(void *userdata, const struct cordon_spawner_events *events);
	void (*free)(void *userdata);
	void *userdata;
	/* Directories the spawner itself needs inside the broker's own
	 * Landlock domain (NULL-terminated or NULL): the launcher helper
	 * needs none (it was forked before the domain applied); a test
	 * spawner that execs in-process lists its binaries and data. */
	const char *const *sandbox_exec; /* read + execute */
	const char *const *sandbox_rw;	 /* read + write */
};

/* The launcher-helper spawner (daemon-launcher.c). Started while privileged.
 * config_path (absolute, or NULL) is the configuration file the helper
 * returns to config_read (left NULL in *ret when config_path is). */
int cordon_daemon_launcher_spawner(const char *launch_binary, const char *profiles_dir, const char *config_path,
				   struct cordon_spawner *ret, struct cordon_diag *diag);
