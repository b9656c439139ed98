/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch --probe [--human]: what the running kernel offers to cordon,
 * as JSON (keys in docs/kernel-matrix.md) or as an aligned table. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "probe.h"
#include "verbs.h"

int verb_probe(int argc, char **argv)
{
	struct cordon_caps caps;
	bool human = false;
	int r;

	/* argv[0] is "--probe". */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--human") == 0)
			human = true;
		else {
			log_error("--probe: unknown argument '%s' (only --human is accepted)", argv[i]);
			return 2;
		}
	}

	r = cordon_probe(&caps);
	if (r < 0) {
		log_error_errno(r, "probing the kernel failed");
		return 1;
	}
	r = human ? cordon_probe_write_human(&caps, stdout) : cordon_probe_write_json(&caps, stdout);
	if (r < 0) {
		log_error_errno(r, "writing the probe report failed");
		return 1;
	}
	return 0;
}
