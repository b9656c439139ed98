/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: path traversal is denied.
 *
 * Three walls, each asserted on its own:
 *  1. resolver, openat2 and the fallback walk (injected capability struct):
 *     "..", "sub/../../x", "/../x", "//..//x", "./../work-evil/secret" and
 *     creation through ".." all fail with EXDEV; "sub/../a.txt" (a ".."
 *     that stays inside) works; an absolute host path is taken relative to
 *     the root (ENOENT, not the host file);
 *  2. cordon-fs (the real MCP server): read_file/write_file/list_directory
 *     with traversal paths -> tool error "leaves its root" / "is not beneath
 *     any root", the sibling /work-evil (a string-prefix trap) included;
 *  3. the kernel sandbox: a connector that itself walks "/data/../.." sees
 *     only the sandbox's view (ENOENT for the host file, EACCES listing
 *     the sandbox root).
 * The outside file is unchanged afterwards. */
#include "sec-paths.h"

static void test_path_traversal_denied_resolver_and_cordon_fs(void **state)
{
	struct paths *p = paths_new();
	char abs_evil[4200];

	(void)state;
	paths_expect_resolve(p, "..", 0, O_PATH | O_DIRECTORY, -EXDEV);
	paths_expect_resolve(p, "../outside/secret", 0, O_RDONLY, -EXDEV);
	paths_expect_resolve(p, "sub/../../outside/secret", 0, O_RDONLY, -EXDEV);
	paths_expect_resolve(p, "/../outside/secret", 0, O_RDONLY, -EXDEV);
	paths_expect_resolve(p, "//..//outside//secret", 0, O_RDONLY, -EXDEV);
	paths_expect_resolve(p, "./../work-evil/secret", 0, O_RDONLY, -EXDEV);
	paths_expect_resolve(p, "sub/../../outside/new", 0, O_WRONLY | O_CREAT | O_EXCL, -EXDEV);
	paths_expect_resolve(p, "sub/../a.txt", 0, O_RDONLY, 0);
	/* Absolute = relative to the root: the host file is not reached. */
	snprintf(abs_evil, sizeof(abs_evil), "%s/secret", p->outside);
	paths_expect_resolve(p, abs_evil, 0, O_RDONLY, -ENOENT);

	paths_expect_tool_error(p, "read_file", json_pack("{s:s}", "path", "../outside/secret"), "leaves its root");
	paths_expect_tool_error(p, "read_file", json_pack("{s:s}", "path", "../work-evil/secret"), "leaves its root");
	paths_expect_tool_error(p, "read_file", json_pack("{s:s}", "path", "sub/../../outside/secret"),
				"leaves its root");
	snprintf(abs_evil, sizeof(abs_evil), "%s/secret", p->evil);
	paths_expect_tool_error(p, "read_file", json_pack("{s:s}", "path", abs_evil), "is not beneath any root");
	paths_expect_tool_error(p, "write_file",
				json_pack("{s:s, s:s}", "path", "../outside/secret", "content", "pwned"),
				"leaves its root");
	paths_expect_tool_error(p, "list_directory", json_pack("{s:s}", "path", ".."), "leaves its root");
	paths_expect_untouched(p);
	paths_free(p);
}

static void test_path_traversal_denied_in_sandbox(void **state)
{
	struct sbx *s = sbx_new("sec-trav");
	struct cordon_profile *prof = sbx_profile(s, NULL);

	char inside[4200];

	(void)state;
	snprintf(inside, sizeof(inside), "%s/inside", s->root);
	sbx_write_file(inside, "inside\n");
	assert_exited(sbx_probe_with(prof, &s->caps, "read", "/data/../../../etc/shadow", NULL), ENOENT);
	assert_exited(sbx_probe_with(prof, &s->caps, "read", "/data/../outside/secret", NULL), ENOENT);
	assert_exited(sbx_probe_with(prof, &s->caps, "listdir", "/data/..", NULL), EACCES);
	assert_exited(sbx_probe_with(prof, &s->caps, "write", "/data/../escape", NULL), EROFS);
	assert_exited(sbx_probe_with(prof, &s->caps, "read", "/data/../data/inside", NULL), 0);
	cordon_profile_free(prof);
	sbx_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_traversal_denied_resolver_and_cordon_fs),
		cmocka_unit_test(test_path_traversal_denied_in_sandbox),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
