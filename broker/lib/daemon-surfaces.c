/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator surfaces (operator socket for cordonctl, HTTP /health and
 * /metrics) are built on branch `operator`. Their sockets are bound by the
 * core in the privileged phase (operator.sock and http.sock, 0660, operator
 * group); these two functions are the only place that starts them. After
 * `git merge operator`, replace the bodies with:
 *	r = cordon_operator_start(d, d->operator_fd, d->operator_gid, &d->op);
 *	r = cordon_http_start(d, d->http_fd, d->cfg.http_listen, &d->http, diag);
 * and the frees in daemon_surfaces_stop(). Until then the sockets accept
 * nothing (connections wait in the backlog) and no operator operation is
 * reachable at all. */
#include "daemon-private.h"

int daemon_surfaces_start(struct cordon_daemon *d, struct cordon_diag *diag)
{
	(void)d;
	(void)diag;
	return 0;
}

void daemon_surfaces_stop(struct cordon_daemon *d)
{
	(void)d;
}
