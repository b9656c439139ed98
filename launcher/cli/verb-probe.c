/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "verbs.h"
#include "log.h"

int verb_probe(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	log_error("--probe is not available in this build");
	return 2;
}
