/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lookups every module of cordond's core shares over the daemon's
 * tables (daemon-state.h). The lowest module of the daemon: it uses the
 * broker library and nothing of the daemon above it. */
#include <string.h>

#include "cleanup.h"
#include "connectors.h"
#include "daemon-state.h"

struct dconn *daemon_conn(struct cordon_daemon *d, const char *id)
{
	for (size_t i = 0; i < d->n_conns; i++)
		if (!strcmp(d->conns[i].id, id))
			return &d->conns[i];
	return NULL;
}

bool daemon_conn_installed(struct cordon_daemon *d, const char *id)
{
	uint64_t g;

	return cordon_connector_generation(d->db, id, &g) == 0;
}

void daemon_surface_changed(struct cordon_daemon *d, const char *connector)
{
	for (size_t i = 0; i < d->n_conns; i++)
		if (!connector || !strcmp(d->conns[i].id, connector))
			json_object_clear(d->conns[i].surface_cache);
}

void daemon_spawn_observed(struct cordon_daemon *d, uint64_t ms)
{
	static const uint64_t le[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000 };
	size_t i;

	for (i = 0; i < ELEMENTSOF(le); i++)
		if (ms <= le[i])
			break;
	d->m.spawn_buckets[i]++;
	d->m.spawn_sum_ms += (double)ms;
	d->m.spawn_count++;
}
