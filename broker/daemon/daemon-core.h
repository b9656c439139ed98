/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's core as a library: the daemon object, its start-up phases and
 * its main loop (daemon-core.c, the top of the daemon layer: it composes
 * every other module). broker/cordond.c is a thin main over this. Tests
 * embed the core in a forked child with a spawner of their own (the only
 * seam; cordond always uses the launcher helper). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon-config.h"
#include "daemon-launcher.h"
#include "daemon.h"
#include "diag.h"

/* Phases up to "bind sockets" (privileged), then drop and serve. Returns 0
 * and writes *ret, or -errno with diag naming the phase. spawner NULL means
 * the launcher helper. */
int cordon_daemon_new(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner,
		      struct cordon_daemon **ret, struct cordon_diag *diag);
/* The same, keeping argv (cordond's flags, argv[0] first) so that a reload
 * (SIGHUP, `cordonctl reload`) parses the configuration again as at
 * start-up: the --config file, then the flags. Its --config file is the one
 * file outside its directories that cordond's sandbox lets it read. */
int cordon_daemon_new_args(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner, int argc,
			   char *const *argv, struct cordon_daemon **ret, struct cordon_diag *diag);

/* Serves until SIGTERM/SIGINT (exit code 0) or a fatal error. */
int cordon_daemon_run(struct cordon_daemon *d);

/* Checkpoints the audit log, closes everything. */
void cordon_daemon_free(struct cordon_daemon *d);
