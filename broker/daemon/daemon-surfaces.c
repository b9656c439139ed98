/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starts the operator surfaces (operator socket for cordonctl; HTTP /health,
 * /health/detail, /metrics) on the sockets the core bound in the privileged
 * phase (operator.sock and http.sock, 0660, operator group). */
#include "daemon-private.h"

int daemon_surfaces_start(struct cordon_daemon *d, struct cordon_diag *diag)
{
	int r;

	r = cordon_operator_start(d, d->operator_fd, d->operator_gid, &d->op);
	if (r < 0)
		return cordon_diag_set(diag, -r, "operator", "cannot serve the operator socket");
	return cordon_http_start(d, d->http_fd, d->cfg.http_listen, &d->http, diag);
}

void daemon_surfaces_stop(struct cordon_daemon *d)
{
	if (d->http)
		cordon_http_free(d->http);
	if (d->op)
		cordon_operator_free(d->op);
	d->http = NULL;
	d->op = NULL;
}
