/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for cordond's configuration file (on the strict YAML
 * layer): any bytes must either load or give an error with a message, never
 * a crash or a leak, and a refused file must leave the configuration it was
 * loaded over unchanged. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-config.h"

/* Not assert(): release builds define NDEBUG, and the fuzzer must check. */
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			abort();                                                                                       \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char base[] = "state: /old\nmax_sessions: 7\n";
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	int r;

	cordon_daemon_config_init(&c);
	CHECK(cordon_daemon_config_load_buffer(&c, "base.yaml", base, strlen(base), &d) == 0);
	r = cordon_daemon_config_load_buffer(&c, "fuzz.yaml", (const char *)data, size, &d);
	if (r < 0) {
		CHECK(d.error == -r);
		CHECK(strncmp(d.message, "fuzz.yaml: ", 11) == 0 && d.message[11] != '\0');
		CHECK(memchr(d.message, 0, sizeof(d.message)));
		/* Nothing of a bad file is applied. */
		CHECK(c.state_dir && strcmp(c.state_dir, "/old") == 0);
		CHECK(c.max_sessions == 7 && !c.runtime_dir && !c.user);
	} else {
		/* Whatever was accepted is in range. */
		CHECK(c.max_sessions >= 1 && c.max_sessions <= 65536);
		CHECK(c.approval_wait_ms >= 1000 && c.approval_wait_ms <= 3600 * 1000);
		CHECK(c.result_cap >= 1024 && c.result_cap <= 64u * 1024 * 1024);
		CHECK(!c.state_dir || c.state_dir[0] == '/');
	}
	cordon_daemon_config_done(&c);
	return 0;
}
