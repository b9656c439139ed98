/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch --check PROFILE...: validates each profile with the same
 * loader the launcher and broker use. Prints "ok <id>" per good profile on
 * stdout and every error of a bad one on stderr, one per line as
 * "<file>:<line>:<column>: <key path>: <message>". Exit 0 when all are good,
 * 1 when any is bad, 2 on a usage error. Warnings (a good profile that
 * gives up a protection) go to stderr as "<file>: warning: <message>" and do
 * not change the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "log.h"
#include "profile.h"
#include "verbs.h"

static void print_diag(const char *file, const struct cordon_diag *d)
{
	if (d->line > 0)
		fprintf(stderr, "%s:%u:%u: %s\n", file, d->line, d->column, d->message);
	else
		fprintf(stderr, "%s: %s\n", file, d->message);
}

/* Read-write roots and uid 0 (issue 11): the opt-in is worth a warning
 * every time it is used, and a root that is owned by uid 0 today without it
 * will be refused at launch. */
static void warn_uid0_roots(const char *file, const struct cordon_profile *p)
{
	for (size_t i = 0; i < p->n_fs_roots; i++) {
		const struct cordon_fs_entry *e = &p->fs_roots[i];
		struct stat st;

		if (e->access != CORDON_ACCESS_READ_WRITE)
			continue;
		if (e->allow_uid0_owner)
			fprintf(stderr,
				"%s: warning: sandbox.filesystem.roots[%zu] (%s) sets allow_uid0_owner: if uid 0 owns "
				"it, the connector acts as uid 0 for the files in it\n",
				file, i, e->path);
		else if (stat(e->path, &st) == 0 && st.st_uid == 0)
			fprintf(stderr,
				"%s: warning: sandbox.filesystem.roots[%zu] (%s) is read-write and owned by uid 0 now: "
				"the launch will be refused (give it an unprivileged owner, or set allow_uid0_owner: "
				"true)\n",
				file, i, e->path);
	}
}

int verb_check(int argc, char **argv)
{
	_cleanup_free_ struct cordon_diag *diags = NULL;
	int status = 0;

	if (argc < 2) {
		log_error("--check needs at least one profile file");
		return 2;
	}
	diags = calloc(CORDON_PROFILE_MAX_ERRORS, sizeof(*diags));
	if (!diags) {
		log_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		_cleanup_(cordon_profile_freep) struct cordon_profile *p = NULL;
		size_t n = 0;
		int r;

		r = cordon_profile_load_diags(argv[i], &p, diags, CORDON_PROFILE_MAX_ERRORS, &n);
		if (r >= 0) {
			printf("ok %s\n", p->id);
			warn_uid0_roots(argv[i], p);
			continue;
		}
		status = 1;
		if (n == 0)
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
		for (size_t j = 0; j < n; j++)
			print_diag(argv[i], &diags[j]);
	}
	fflush(stdout);
	return status;
}
