/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strict YAML layer itself (launcher/lib/yaml-strict.h): the tree it
 * builds, what it refuses (the profile and cordond config tests cover the
 * refusals through their loaders), the key path in its messages, the error
 * list, the bounded file read and the typed getters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "test-support.h"
#include "yaml-strict.h"

static struct cordon_yaml_ctx *new_ctx(void)
{
	struct cordon_yaml_ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->step = "test";
	return c;
}

static struct cordon_yaml_node *parse_ok(struct cordon_yaml_ctx *c, const char *text)
{
	struct cordon_yaml_node *root = NULL;
	int r = cordon_yaml_parse(c, text, strlen(text), 4096, &root);

	if (r < 0)
		print_message("%u:%u: %s\n", c->errs[0].line, c->errs[0].column, c->errs[0].message);
	assert_int_equal(r, 0);
	assert_int_equal(c->n_errs, 0);
	assert_non_null(root);
	return root;
}

static void assert_err(const struct cordon_yaml_ctx *c, size_t i, int error, unsigned line, unsigned column,
		       const char *message)
{
	assert_true(i < c->n_errs);
	assert_int_equal(c->errs[i].error, error);
	assert_string_equal(c->errs[i].step, "test");
	assert_string_equal(c->errs[i].message, message);
	assert_int_equal(c->errs[i].line, line);
	assert_int_equal(c->errs[i].column, column);
}

static void test_tree(void **state)
{
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
	struct cordon_yaml_node *root, *list, *m;

	(void)state;
	root = parse_ok(c, "a: [1, 'two', {b: c}]\nd: |\n  x\n~: \"null\"\n");
	assert_int_equal(root->type, CORDON_YAML_MAP);
	assert_int_equal(cordon_yaml_map_size(root), 3);
	assert_string_equal(root->items[0]->value, "a");
	list = root->items[1];
	assert_int_equal(list->type, CORDON_YAML_SEQ);
	assert_int_equal(list->n_items, 3);
	assert_int_equal(list->line, 1);
	assert_int_equal(list->column, 4);
	assert_true(list->items[0]->plain);
	assert_string_equal(list->items[0]->value, "1");
	assert_false(list->items[1]->plain);
	assert_string_equal(list->items[1]->value, "two");
	assert_int_equal(list->items[1]->column, 8);
	m = list->items[2];
	assert_int_equal(m->type, CORDON_YAML_MAP);
	assert_string_equal(cordon_yaml_map_get(m, "b")->value, "c");
	/* The mapping itself when the key is absent (for positions). */
	assert_ptr_equal(cordon_yaml_map_get(m, "z"), m);
	/* A block scalar is not plain. */
	assert_false(root->items[3]->plain);
	assert_string_equal(root->items[3]->value, "x\n");
	/* Plain ~ is null; a quoted "null" is a string. */
	assert_true(cordon_yaml_is_null(root->items[4]));
	assert_false(cordon_yaml_is_null(root->items[5]));
	assert_string_equal(cordon_yaml_describe(root->items[4]).s, "an empty value");
	assert_string_equal(cordon_yaml_describe(root->items[5]).s, "\"null\"");
	assert_string_equal(cordon_yaml_describe(list).s, "a list");
	assert_string_equal(cordon_yaml_describe(m).s, "a mapping");
	cordon_yaml_node_free(root);
}

/* Every mapping's keys are unique, wherever it is; each duplicate is named
 * by its key path, and all of them are reported. */
static void test_duplicate_keys_anywhere(void **state)
{
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
	struct cordon_yaml_node *root = NULL;
	static const char text[] = "a:\n"
				   "  - {b: 1}\n"
				   "  - {b: {c: 1, c: 2}}\n"
				   "? {k: 1, k: 2}\n"
				   ": v\n"
				   "a: again\n";

	(void)state;
	assert_int_equal(cordon_yaml_parse(c, text, strlen(text), 4096, &root), -EINVAL);
	assert_null(root);
	assert_int_equal(c->n_errs, 3);
	assert_err(c, 0, EINVAL, 3, 16, "a[1].b.c: duplicate key (first at line 3)");
	assert_err(c, 1, EINVAL, 4, 10, "?.k: duplicate key (first at line 4)");
	assert_err(c, 2, EINVAL, 6, 1, "a: duplicate key (first at line 1)");
	/* The path is back to empty once parsing is over. */
	assert_int_equal(c->path_len, 0);

	/* Lists may repeat. */
	c->n_errs = 0;
	root = parse_ok(c, "[a, a, {x: 1}, {x: 1}]\n");
	cordon_yaml_node_free(root);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *text;
		unsigned line, column;
		const char *message;
	} cases[] = {
		{ "x: &a 1\n", 1, 4, "YAML anchors (&a) are not allowed: cordon refuses anchors and aliases" },
		{ "x: *a\n", 1, 4, "YAML aliases (*a) are not allowed: cordon refuses anchors and aliases" },
		{ "x: !t 1\n", 1, 4, "YAML tags (!t) are not allowed" },
		{ "x: \xc3\x28\n", 1, 4, "invalid UTF-8 (byte 0xc3; not a text file?)" },
		{ "x: a\n---\nx: b\n", 2, 1, "only one YAML document is allowed" },
		{ "x: \"a\\0b\"\n", 1, 4, "strings must not contain NUL characters" },
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
		struct cordon_yaml_node *root = NULL;

		assert_int_equal(cordon_yaml_parse(c, cases[i].text, strlen(cases[i].text), 4096, &root), -EINVAL);
		assert_null(root);
		assert_int_equal(c->n_errs, 1);
		assert_err(c, 0, EINVAL, cases[i].line, cases[i].column, cases[i].message);
	}
}

static void test_bounds(void **state)
{
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
	struct cordon_yaml_node *root = NULL;
	size_t n = CORDON_YAML_MAX_NODES, o = 0;
	_cleanup_free_ char *big = malloc(2 * n + 8);

	(void)state;
	/* The size bound as a message says it. */
	assert_int_equal(cordon_yaml_parse(c, "x: 1\n", 5, 4, &root), -EFBIG);
	assert_err(c, 0, EFBIG, 0, 0, "file is larger than 4 bytes (5 bytes)");
	c->n_errs = 0;
	assert_int_equal(cordon_yaml_parse(c, "x: 1\n", 5, 5, &root), 0);
	cordon_yaml_node_free(root);
	root = NULL;

	/* A list of CORDON_YAML_MAX_NODES items is one node too many. */
	assert_non_null(big);
	big[o++] = '[';
	for (size_t i = 0; i < n; i++) {
		if (i)
			big[o++] = ',';
		big[o++] = '0';
	}
	big[o++] = ']';
	assert_int_equal(cordon_yaml_parse(c, big, o, o, &root), -EINVAL);
	assert_null(root);
	assert_err(c, 0, EINVAL, 1, 2 * n, "more than 65536 YAML nodes");
}

/* The list is kept sorted by position and capped: an earlier error evicts
 * the last, a later one is dropped. */
static void test_error_list(void **state)
{
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();

	(void)state;
	for (unsigned i = 0; i < CORDON_YAML_MAX_ERRORS + 6; i++)
		assert_int_equal(cordon_yaml_err_at(c, EINVAL, 100 - i, 1, "e%u", 100 - i), -EINVAL);
	assert_int_equal(c->n_errs, CORDON_YAML_MAX_ERRORS);
	assert_err(c, 0, EINVAL, 100 - CORDON_YAML_MAX_ERRORS - 5, 1, "e31");
	for (size_t i = 1; i < c->n_errs; i++)
		assert_true(c->errs[i - 1].line < c->errs[i].line);
	assert_int_equal(cordon_yaml_err_at(c, ENOMEM, 200, 1, "late"), -ENOMEM);
	assert_string_not_equal(c->errs[CORDON_YAML_MAX_ERRORS - 1].message, "late");

	/* No step given: "yaml". */
	c->step = NULL;
	c->n_errs = 0;
	cordon_yaml_err_at(c, EINVAL, 1, 1, "x");
	assert_string_equal(c->errs[0].step, "yaml");
}

static void test_getters(void **state)
{
	static const char *const keys[] = { "num", "size", "dur", "list", "name" };
	static const char *const colours[] = { "red", "green" };
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	struct cordon_yaml_node *root;
	char **list = NULL;
	size_t n_list = 0;
	uint64_t u;
	unsigned e;

	(void)state;
	root = parse_ok(c, "num: 0443\nsize: 2M\ndur: 90s\nlist: [a, b, a]\nname: blue\nzzz: 1\n");
	assert_int_equal(cordon_yaml_map_fields(c, root, keys, ELEMENTSOF(keys), v), -EINVAL);
	assert_err(c, 0, EINVAL, 6, 1, "zzz: unknown key (expected one of: num, size, dur, list, name)");
	c->n_errs = 0;
	assert_int_equal(cordon_yaml_get_uint(c, v[0], 1, 65535, &u), -EINVAL);
	assert_err(c, 0, EINVAL, 1, 6, "must be an integer from 1 to 65535 (got \"0443\")");
	c->n_errs = 0;
	assert_int_equal(cordon_yaml_get_size(c, v[1], 1, 1ull << 30, "1 to 1G", &u), 0);
	assert_int_equal(u, 2 * 1024 * 1024);
	assert_int_equal(cordon_yaml_get_duration(c, v[2], 1, 3600, "1s to 1h", &u), 0);
	assert_int_equal(u, 90);
	assert_int_equal(c->n_errs, 0);
	assert_int_equal(cordon_yaml_get_enum(c, v[4], colours, ELEMENTSOF(colours), &e), -EINVAL);
	assert_err(c, 0, EINVAL, 5, 7, "must be one of red, green (got \"blue\")");
	c->n_errs = 0;
	cordon_yaml_push_key(c, "list");
	assert_int_equal(cordon_yaml_get_string_list(c, v[3], 0, 8, NULL, true, &list, &n_list), -EINVAL);
	cordon_yaml_pop(c, 0);
	assert_int_equal(c->n_errs, 1);
	assert_err(c, 0, EINVAL, 4, 14, "list[2]: \"a\" is listed twice (first at line 4)");
	assert_int_equal(n_list, 3);
	assert_string_equal(list[2], "a");
	assert_null(list[3]);
	for (size_t i = 0; i < n_list; i++)
		free(list[i]);
	free(list);
	cordon_yaml_node_free(root);

	/* A list of keys too long for a message is counted, not cut. */
	{
		static const char *const many[] = { "aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb",
						    "cccccccccccccccccccc", "dddddddddddddddddddd",
						    "eeeeeeeeeeeeeeeeeeee", "ffffffffffffffffffff",
						    "gggggggggggggggggggg", "hhhhhhhhhhhhhhhhhhhh" };
		const struct cordon_yaml_node *mv[ELEMENTSOF(many)];

		c->n_errs = 0;
		root = parse_ok(c, "x: 1\n");
		assert_int_equal(cordon_yaml_map_fields(c, root, many, ELEMENTSOF(many), mv), -EINVAL);
		assert_err(c, 0, EINVAL, 1, 1, "x: unknown key (not one of the 8 keys accepted here)");
		cordon_yaml_node_free(root);
	}
}

static void test_quote(void **state)
{
	_cleanup_free_ struct cordon_yaml_ctx *c = new_ctx();
	struct cordon_yaml_node *root;

	(void)state;
	root = parse_ok(c, "- \"0123456789012345678901234567890123456789012345678901234567890\"\n"
			   "- \"a\\tb\\\"c\"\n");
	assert_string_equal(cordon_yaml_quote(root->items[0]).s,
			    "\"012345678901234567890123456789012345678901234567...\"");
	assert_string_equal(cordon_yaml_quote(root->items[1]).s, "\"a\\x09b\\\"c\"");
	cordon_yaml_node_free(root);
}

static void test_read_file(void **state)
{
	_cleanup_free_ char *dir = cordon_test_mkdtemp("yaml-strict");
	char path[600];
	char *buf = NULL;
	struct cordon_diag d = {};
	size_t len = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/f.yaml", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("x: 1\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(cordon_yaml_read_file(path, 5, "t", &buf, &len, &d), 0);
	assert_int_equal(len, 5);
	assert_string_equal(buf, "x: 1\n");
	free(buf);
	buf = NULL;
	assert_int_equal(cordon_yaml_read_file(path, 4, "t", &buf, &len, &d), -EFBIG);
	assert_null(buf);
	assert_string_equal(d.step, "t");
	assert_string_equal(d.message, "file is larger than 4 bytes (5 bytes)");
	assert_int_equal(cordon_yaml_read_file(path, 2048, "t", &buf, &len, &d), 0);
	free(buf);
	buf = NULL;

	assert_int_equal(cordon_yaml_read_file(dir, 2048, "t", &buf, &len, &d), -EINVAL);
	assert_string_equal(d.message, "not a regular file");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(cordon_yaml_read_file(path, 2048, "t", &buf, &len, &d), -EINVAL);
	assert_string_equal(d.message, "not a regular file");
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(cordon_yaml_read_file(path, 2048, "t", &buf, &len, &d), -ENOENT);
	assert_string_equal(d.message, "cannot open: No such file or directory");
	assert_null(buf);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),	   cmocka_unit_test(test_duplicate_keys_anywhere),
		cmocka_unit_test(test_refusals),   cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_error_list), cmocka_unit_test(test_getters),
		cmocka_unit_test(test_quote),	   cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
