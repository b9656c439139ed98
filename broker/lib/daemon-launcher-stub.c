/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TEMPORARY: the launcher client (broker/lib/launcher-client.c) is built on
 * branch `serve`. Until `git merge serve`, cordond links against these
 * stand-ins, which refuse to start the helper, so cordond fails closed with a
 * clear message instead of ever running a connector unsandboxed. Delete this
 * file in the merge commit. */
#include <errno.h>

#include "launcher-client.h"

int cordon_launcher_client_start(const char *launch_binary, const char *profiles_dir,
				 const struct cordon_launcher_handlers *handlers, struct cordon_launcher_client **ret,
				 struct cordon_diag *reterr_diag)
{
	(void)launch_binary;
	(void)profiles_dir;
	(void)handlers;
	(void)ret;
	return cordon_diag_set(reterr_diag, ENOSYS, "launcher",
			       "this build has no launcher helper client (branch serve not merged)");
}

void cordon_launcher_client_free(struct cordon_launcher_client *lc)
{
	(void)lc;
}

int cordon_launcher_client_fd(const struct cordon_launcher_client *lc)
{
	(void)lc;
	return -1;
}

bool cordon_launcher_client_alive(const struct cordon_launcher_client *lc)
{
	(void)lc;
	return false;
}

int cordon_launcher_client_dispatch(struct cordon_launcher_client *lc)
{
	(void)lc;
	return -ENOSYS;
}

int cordon_launcher_client_probe(struct cordon_launcher_client *lc, json_t **ret_caps, struct cordon_diag *d)
{
	(void)lc;
	(void)ret_caps;
	return cordon_diag_set(d, ENOSYS, "launcher", "no launcher client");
}

int cordon_launcher_client_spawn(struct cordon_launcher_client *lc, const char *connector, const char *tag,
				 const struct cordon_serve_root *roots, size_t n_roots, struct cordon_launched *ret,
				 struct cordon_diag *reterr_diag)
{
	(void)lc;
	(void)connector;
	(void)tag;
	(void)roots;
	(void)n_roots;
	(void)ret;
	return cordon_diag_set(reterr_diag, ENOSYS, "launcher", "no launcher client");
}

int cordon_launcher_client_kill(struct cordon_launcher_client *lc, uint32_t instance, struct cordon_diag *d)
{
	(void)lc;
	(void)instance;
	(void)d;
	return -ENOSYS;
}
