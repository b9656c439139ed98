/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Loading the profiles directory (at start-up and at every reload) and the
 * reload itself (daemon-reload.c; cordon_daemon_reload() is part of the
 * daemon.h contract). */

#include "daemon-state.h"
#include "diag.h"

/* Start-up: loads every profile of d->cfg.profiles_dir into d->conns (at
 * most DAEMON_CONNECTORS_MAX; a file that fails, or one past the bound, is
 * kept in d->bad_profiles with its error and logged) and reads the
 * credential values to scrub (still privileged). 0, or -errno with diag when
 * the directory cannot be read. */
int daemon_profiles_load(struct cordon_daemon *d, struct cordon_diag *diag);

/* Start-up, once the spawner is attached: puts d->conns in force at the
 * launcher helper (by id and hash; the helper loads and checks each file
 * itself). A profile the helper refuses is dropped from d->conns into
 * d->bad_profiles (logged; health degraded, naming it) and the rest handed
 * over again. 0, or -errno with diag when the helper refuses without naming
 * a profile. A spawner without a profiles operation: 0. */
int daemon_profiles_hand_over(struct cordon_daemon *d, struct cordon_diag *diag);

/* Frees what daemon_profiles_load() and the reloads put in d->conns. */
void daemon_profiles_free(struct cordon_daemon *d);

/* Keeps argv (the flags cordond started with) and finds its --config file,
 * for reloads. 0 or -ENOMEM. */
int daemon_reload_args(struct cordon_daemon *d, int argc, char *const *argv);
