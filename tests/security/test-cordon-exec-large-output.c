/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A job that writes more than the pipe holds, faster than cordon-exec
 * drains it, runs to completion: cordon-exec makes only its own ends of the
 * job's pipes non-blocking (an inherited non-blocking stdout made a large
 * write fail with EAGAIN — found by this suite, fixed in tools/cordon-exec.c).
 * The output is capped at max_output with stdout_truncated: true and the
 * command exits 0. This is also "a connector that floods stdout gets a clean,
 * bounded result" for cordon-exec's jobs. Layer: the real cordon-exec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcp-client.h"
#include "test-support.h"

static char *dir;
static struct mcp_peer peer;

static int setup(void **state)
{
	(void)state;
	dir = cordon_test_mkdtemp("sec-exec");
	return 0;
}

/* Runs even when the test fails: nothing is left behind. */
static int teardown(void **state)
{
	(void)state;
	if (peer.pid > 0)
		(void)mcp_peer_stop(&peer, 5000);
	free(peer.buf);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
	return 0;
}

static void test_cordon_exec_large_output_capped_not_broken(void **state)
{
	char bin[4096];
	char *argv[] = { bin, dir, NULL };
	json_t *res, *sc, *init;
	char *s;

	(void)state;
	snprintf(bin, sizeof(bin), "%s/cordon-exec", cordon_test_env("CORDON_TOOLS_DIR", "build/tools"));
	assert_int_equal(mcp_peer_start(&peer, argv), 0);
	init = mcp_peer_initialize(&peer, "2025-06-18");
	assert_non_null(init);
	json_decref(init);
	/* 4 MiB of printable text, written by cat in 128 KiB blocks, capped at
	 * 64 KiB; five runs, every one must exit 0 with the cap flagged. */
	{
		char path[4200], line[81];
		FILE *f;

		snprintf(path, sizeof(path), "%s/big.txt", dir);
		f = fopen(path, "we");
		assert_non_null(f);
		memset(line, 'x', 79);
		line[79] = '\n';
		line[80] = '\0';
		for (int i = 0; i < 4 * 1024 * 1024 / 80; i++)
			fputs(line, f);
		assert_int_equal(fclose(f), 0);
		for (int run = 0; run < 5; run++) {
			res = mcp_peer_call(&peer, "run_command",
					    json_pack("{s:[s,s], s:i, s:i}", "argv", "/bin/cat", path, "max_output",
						      65536, "timeout_ms", 60000),
					    90000);
			assert_non_null(res);
			sc = json_object_get(res, "structuredContent");
			s = json_dumps(json_pack("{s:O, s:O, s:O}", "exit_code", json_object_get(sc, "exit_code"),
						 "stdout_truncated", json_object_get(sc, "stdout_truncated"), "stderr",
						 json_object_get(sc, "stderr")),
				       JSON_COMPACT);
			printf("  cat 4 MiB through cordon-exec: %s\n", s);
			free(s);
			assert_int_equal(json_string_length(json_object_get(sc, "stdout")), 65536);
			assert_true(json_is_true(json_object_get(sc, "stdout_truncated")));
			assert_int_equal(json_integer_value(json_object_get(sc, "exit_code")), 0);
			json_decref(res);
		}
	}
	assert_int_equal(mcp_peer_stop(&peer, 5000), 0);
	peer.pid = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cordon_exec_large_output_capped_not_broken, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
