/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fixture for the path requirements: a tree
 *   base/work/{a.txt, sub/b.txt}     the root
 *   base/work-evil/secret            a sibling whose name extends the root's
 *   base/outside/secret              outside
 * and three independent walls to test:
 *   1. the resolver (launcher/lib/resolve.c), once with openat2 and once
 *      with the fallback walk, selected by the injected capability struct;
 *   2. cordon-fs, the real MCP server, with base/work as its root;
 *   3. the kernel sandbox (cordon_spawn + tests/helpers/sandbox-probe). */

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernel/spawn-test.h"
#include "mcp-client.h"
#include "resolve.h"

struct paths {
	char *base;
	char work[4096], evil[4096], outside[4096];
	int root_fd;
	struct cordon_caps caps_openat2, caps_walk;
	struct mcp_peer fs;
};

static inline void paths_put(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static inline struct paths *paths_new(void)
{
	struct paths *p = calloc(1, sizeof(*p));
	char buf[4200], bin[4096];
	json_t *init;

	p->base = cordon_test_mkdtemp("sec-paths");
	snprintf(p->work, sizeof(p->work), "%s/work", p->base);
	snprintf(p->evil, sizeof(p->evil), "%s/work-evil", p->base);
	snprintf(p->outside, sizeof(p->outside), "%s/outside", p->base);
	assert_int_equal(mkdir(p->work, 0755), 0);
	assert_int_equal(mkdir(p->evil, 0755), 0);
	assert_int_equal(mkdir(p->outside, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/sub", p->work);
	assert_int_equal(mkdir(buf, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/a.txt", p->work);
	paths_put(buf, "inside\n");
	snprintf(buf, sizeof(buf), "%s/sub/b.txt", p->work);
	paths_put(buf, "inside-b\n");
	snprintf(buf, sizeof(buf), "%s/secret", p->evil);
	paths_put(buf, "evil-secret\n");
	snprintf(buf, sizeof(buf), "%s/secret", p->outside);
	paths_put(buf, "outside-secret\n");
	p->root_fd = open(p->work, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(p->root_fd >= 0);
	assert_int_equal(cordon_probe(&p->caps_openat2), 0);
	assert_true(p->caps_openat2.openat2_beneath);
	p->caps_walk = p->caps_openat2;
	p->caps_walk.openat2 = false;
	p->caps_walk.openat2_beneath = false;

	snprintf(bin, sizeof(bin), "%s/cordon-fs", cordon_test_env("CORDON_TOOLS_DIR", "build/tools"));
	{
		char *argv[] = { bin, p->work, NULL };

		assert_int_equal(mcp_peer_start(&p->fs, argv), 0);
	}
	init = mcp_peer_initialize(&p->fs, "2025-06-18");
	assert_non_null(init);
	json_decref(init);
	return p;
}

static inline void paths_free(struct paths *p)
{
	assert_int_equal(mcp_peer_stop(&p->fs, 5000), 0);
	free(p->fs.buf);
	close(p->root_fd);
	assert_int_equal(cordon_test_rm_rf(p->base), 0);
	free(p->base);
	free(p);
}

/* Resolves path for reading with both mechanisms; both must give `want`
 * (0 or -errno), and never an fd of a file outside. */
static inline void paths_expect_resolve(struct paths *p, const char *path, unsigned flags, int open_flags, int want)
{
	const struct cordon_caps *caps[] = { &p->caps_openat2, &p->caps_walk };
	static const char *const names[] = { "openat2", "walk" };

	for (size_t i = 0; i < 2; i++) {
		struct cordon_resolve_how how = { .open_flags = open_flags, .mode = 0644, .flags = flags };
		int fd = -1, r = cordon_resolve(p->root_fd, path, &how, caps[i], &fd);

		printf("  resolve[%s] %-40s -> %s\n", names[i], path, r < 0 ? strerror(-r) : "ok");
		assert_int_equal(r, want);
		if (r >= 0)
			close(fd);
	}
}

/* A cordon-fs tool call that must fail with a tool error containing `want`. */
static inline void paths_expect_tool_error(struct paths *p, const char *tool, json_t *args, const char *want)
{
	json_t *res = mcp_peer_call(&p->fs, tool, args, 10000);
	const char *text;

	assert_non_null(res);
	assert_true(json_is_true(json_object_get(res, "isError")));
	text = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
	assert_non_null(text);
	printf("  cordon-fs %s -> %s\n", tool, text);
	if (!strstr(text, want))
		fail_msg("tool error '%s' does not contain '%s'", text, want);
	assert_null(strstr(text, "secret\n"));
	json_decref(res);
}

/* The file outside must be unchanged. */
static inline void paths_expect_untouched(struct paths *p)
{
	char buf[4200], got[64] = "";
	int fd;

	snprintf(buf, sizeof(buf), "%s/secret", p->outside);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(read(fd, got, sizeof(got) - 1) >= 0);
	close(fd);
	assert_string_equal(got, "outside-secret\n");
}
