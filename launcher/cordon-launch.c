/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch: a thin CLI over libcordon. Each verb lives in cli/verb-*.c. */
#include <stdio.h>
#include <string.h>

#include "version-flag.h"
#include "cli/verbs.h"
#include "log.h"

static void usage(FILE *f)
{
	fputs("Usage:\n"
	      "  cordon-launch --probe [--human]            report what the kernel offers\n"
	      "  cordon-launch --check PROFILE...           validate profiles\n"
	      "  cordon-launch --profile FILE [--root HOST:SANDBOX:ACCESS]... [--report FILE] [-- CMD ARGS...]\n"
	      "                                             run a connector in its sandbox\n"
	      "  cordon-launch --serve FD --profiles DIR [--config FILE]\n"
	      "                                             launcher helper for cordond (docs/privsep.md)\n",
	      f);
}

int main(int argc, char **argv)
{
	cordon_version_flag(argc, argv, "cordon-launch");
	log_set_program(argv[0]);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--probe") == 0)
		return verb_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "--check") == 0)
		return verb_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "--profile") == 0)
		return verb_run(argc, argv);
	if (strcmp(argv[1], "--serve") == 0)
		return verb_serve(argc - 1, argv + 1);
	log_error("unknown option '%s' (see --help)", argv[1]);
	return 2;
}
