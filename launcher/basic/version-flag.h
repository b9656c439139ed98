/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `PROGRAM --version` for every installed binary: "NAME VERSION" on stdout,
 * exit 0. VERSION is the build's (tools/cmake/CordonVersion.cmake: the
 * project version, plus the git commit when built from a checkout). Only
 * as the first argument, so it never shadows an operand. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon-version.h"

static inline void cordon_version_flag(int argc, char *const *argv, const char *name)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("%s %s\n", name, CORDON_VERSION);
		exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
	}
}
