/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The privilege phases of cordond's start-up (daemon-privs.c,
 * daemon-seccomp.c), which daemon-core.c runs in order. They work on the
 * daemon object (daemon-state.h) and call nothing else of the daemon. */

#include <jansson.h>
#include <sys/types.h>

#include "daemon-state.h"
#include "diag.h"

/* daemon-privs.c */
int privs_resolve(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_prepare_dirs(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_drop(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_sandbox_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag);
int sd_notify_open(void);
void sd_notify_send(int fd, const char *state);
int unix_listen(const char *path, mode_t mode, uid_t uid, gid_t gid, int *ret_fd, struct cordon_diag *diag);

/* daemon-seccomp.c */
int privs_seccomp_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag);
