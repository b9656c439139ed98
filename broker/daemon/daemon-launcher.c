/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The production spawner: every connector instance is started by the
 * privileged launcher helper (cordon-launch --serve) over the socketpair the
 * launcher client owns. cordond puts its validated profiles in force at the
 * helper (by id and hash; the helper loads and checks them itself) and a
 * spawn then only names a connector and a tag. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-launcher.h"
#include "launcher-client.h"
#include "profile.h"

struct lspawner {
	struct cordon_launcher_client *lc;
	struct cordon_spawner_events ev; /* from attach; unset members: dropped */
};

static void on_exited(void *userdata, uint32_t instance, int wait_status, const json_t *report)
{
	struct lspawner *ls = userdata;

	if (ls->ev.exited)
		ls->ev.exited(ls->ev.userdata, instance, wait_status, report);
}

static void on_net_denied(void *userdata, uint32_t instance, const json_t *event)
{
	struct lspawner *ls = userdata;

	if (ls->ev.net_denied)
		ls->ev.net_denied(ls->ev.userdata, instance, event);
}

static void on_helper_lost(void *userdata, const struct cordon_diag *why)
{
	struct lspawner *ls = userdata;

	if (ls->ev.helper_lost)
		ls->ev.helper_lost(ls->ev.userdata, why);
}

/* Takes the helper's "scrub_values" out of the report (it must never be
 * shown or stored) into an owned array of strings. */
static void take_scrub_values(json_t *report, char ***ret, size_t *ret_n)
{
	json_t *vals = json_object_get(report, "scrub_values"), *v;
	char **out = NULL;
	size_t n = 0, i;

	if (json_is_array(vals) && json_array_size(vals) > 0 && json_array_size(vals) <= 256 &&
	    (out = calloc(json_array_size(vals), sizeof(char *))))
		json_array_foreach(vals, i, v)
		{
			if (json_is_string(v) && (out[n] = strndup(json_string_value(v), json_string_length(v))))
				n++;
			explicit_bzero((char *)json_string_value(v), json_string_length(v));
		}
	json_object_del(report, "scrub_values");
	*ret = out;
	*ret_n = n;
}

static int ls_spawn(void *userdata, const struct cordon_profile *p, const char *tag,
		    const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		    struct cordon_diag *diag)
{
	struct lspawner *ls = userdata;
	struct cordon_launched l = {};
	int r;

	r = cordon_launcher_client_spawn(ls->lc, p->id, tag, roots, n_roots, &l, diag);
	if (r < 0)
		return r;
	*ret = (struct cordon_worker_io){ .instance = l.instance,
					  .pid = 0,
					  .stdin_fd = l.stdin_fd,
					  .stdout_fd = l.stdout_fd,
					  .stderr_fd = l.stderr_fd,
					  .report = l.report };
	take_scrub_values(ret->report, &ret->secrets, &ret->n_secrets);
	return 0;
}

static int ls_profiles(void *userdata, struct cordon_profile *const *ps, size_t n, char ret_failed[static 64],
		       struct cordon_diag *diag)
{
	struct lspawner *ls = userdata;

	return cordon_launcher_client_profiles(ls->lc, ps, n, ret_failed, 64, diag);
}

static int ls_config_read(void *userdata, char **ret, size_t *ret_len, struct cordon_diag *diag)
{
	struct lspawner *ls = userdata;

	return cordon_launcher_client_config_read(ls->lc, ret, ret_len, diag);
}

static void ls_kill(void *userdata, uint32_t instance)
{
	struct lspawner *ls = userdata;

	(void)cordon_launcher_client_kill(ls->lc, instance, NULL);
}

static int ls_reap(void *userdata, uint32_t instance)
{
	(void)userdata;
	(void)instance;
	return -1; /* the helper reaps; the exit arrives as an event */
}

static json_t *ls_caps(void *userdata)
{
	struct lspawner *ls = userdata;
	json_t *caps = NULL;

	if (cordon_launcher_client_probe(ls->lc, &caps, NULL) < 0)
		return NULL;
	return caps;
}

static int ls_fd(void *userdata)
{
	return cordon_launcher_client_fd(((struct lspawner *)userdata)->lc);
}

static void ls_dispatch(void *userdata)
{
	(void)cordon_launcher_client_dispatch(((struct lspawner *)userdata)->lc);
}

static bool ls_alive(void *userdata)
{
	return cordon_launcher_client_alive(((struct lspawner *)userdata)->lc);
}

static void ls_attach(void *userdata, const struct cordon_spawner_events *events)
{
	struct lspawner *ls = userdata;

	ls->ev = events ? *events : (struct cordon_spawner_events){};
}

static void ls_free(void *userdata)
{
	struct lspawner *ls = userdata;

	cordon_launcher_client_free(ls->lc);
	free(ls);
}

int cordon_daemon_launcher_spawner(const char *launch_binary, const char *profiles_dir, const char *config_path,
				   struct cordon_spawner *ret, struct cordon_diag *diag)
{
	struct cordon_launcher_handlers h = { .exited = on_exited,
					      .net_denied = on_net_denied,
					      .helper_lost = on_helper_lost };
	struct lspawner *ls = calloc(1, sizeof(*ls));
	int r;

	if (!ls)
		return cordon_diag_set(diag, ENOMEM, "launcher", "out of memory");
	/* A root process runs no binary it found relative to itself: the
	 * helper is the configured, compiled-in path unless the operator (or a
	 * test) names one. */
	if (!launch_binary)
		launch_binary = CORDON_LIBEXEC_LAUNCH;
	h.userdata = ls;
	r = cordon_launcher_client_start_config(launch_binary, profiles_dir, config_path, &h, &ls->lc, diag);
	if (r < 0) {
		free(ls);
		return r;
	}
	*ret = (struct cordon_spawner){ .spawn = ls_spawn,
					.profiles = ls_profiles,
					.config_read = config_path ? ls_config_read : NULL,
					.kill = ls_kill,
					.reap = ls_reap,
					.capabilities = ls_caps,
					.event_fd = ls_fd,
					.dispatch = ls_dispatch,
					.alive = ls_alive,
					.attach = ls_attach,
					.free = ls_free,
					.userdata = ls };
	return 0;
}
