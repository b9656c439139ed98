/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the probe's /proc/self/mountinfo parser, then the JSON
 * and human reports over whatever it produced. Invariants: no crash, every
 * path it records is absolute and NUL-terminated within PATH_MAX, and the
 * layout agrees with what was found. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe-util.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cordon_caps c;
	char *text, *json;
	FILE *devnull;

	if (size > 1 << 16)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&c, 0, sizeof(c));
	(void)cordon_probe_parse_mountinfo(text, &c);
	free(text);

	if (memchr(c.cgroup2_mount, '\0', sizeof(c.cgroup2_mount)) == NULL)
		abort();
	if (c.cgroup2_mount[0] && c.cgroup2_mount[0] != '/')
		abort();
	if ((c.cgroup_layout == CORDON_CGROUP_V2 || c.cgroup_layout == CORDON_CGROUP_HYBRID) != !!c.cgroup2_mount[0])
		abort();
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		if (memchr(c.ctrl[i].path, '\0', sizeof(c.ctrl[i].path)) == NULL)
			abort();
		if (c.ctrl[i].available && (c.ctrl[i].path[0] != '/' || c.ctrl[i].v2))
			abort();
		/* A v1 controller hierarchy means layout v1 or hybrid. */
		if (c.ctrl[i].available && c.cgroup_layout != CORDON_CGROUP_V1 &&
		    c.cgroup_layout != CORDON_CGROUP_HYBRID)
			abort();
	}

	json = cordon_probe_to_json(&c);
	free(json);
	devnull = fopen("/dev/null", "w");
	if (devnull) {
		(void)cordon_probe_write_human(&c, devnull);
		fclose(devnull);
	}
	return 0;
}
