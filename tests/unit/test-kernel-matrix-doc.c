/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* docs/kernel-matrix.md ("Controls") has one row per entry of the
 * control-verdict table (launcher/lib/probe-policy.c), in the table's order,
 * and each row's "refuses" column is the entry's kind: the document cannot
 * name a control the code lacks, miss one, or say a control refuses when
 * the code does not. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "caps-test.h"
#include "probe-util.h"
#include "test-support.h"

struct doc_row {
	char name[64];
	char refuses[32];
};

/* The rows of the table under "## Controls" whose first cell is `name`. */
static size_t doc_rows(struct doc_row *rows, size_t max)
{
	char path[4096], line[8192];
	bool in_section = false;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/docs/kernel-matrix.md", cordon_test_env("CORDON_SOURCE_DIR", "."));
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *name, *end, *cell;

		if (strncmp(line, "## ", 3) == 0) {
			in_section = strcmp(line, "## Controls\n") == 0;
			continue;
		}
		if (!in_section || strncmp(line, "| `", 3) != 0)
			continue;
		name = line + 3;
		end = strchr(name, '`');
		assert_non_null(end);
		*end = '\0';
		/* The second cell: " refuses ". */
		cell = strchr(end + 1, '|');
		assert_non_null(cell);
		cell++;
		cell += strspn(cell, " ");
		end = strchr(cell, '|');
		assert_non_null(end);
		while (end > cell && end[-1] == ' ')
			end--;
		*end = '\0';
		assert_true(n < max);
		snprintf(rows[n].name, sizeof(rows[n].name), "%s", name);
		snprintf(rows[n].refuses, sizeof(rows[n].refuses), "%s", cell);
		n++;
	}
	fclose(f);
	return n;
}

static void test_doc_rows_equal_table(void **state)
{
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	struct doc_row doc[64];
	struct cordon_caps caps;
	size_t n, nd;

	(void)state;
	caps_test_full(&caps, false);
	n = cordon_probe_rows(&caps, rows, CORDON_PROBE_MAX_ROWS);
	nd = doc_rows(doc, 64);
	for (size_t i = 0; i < n || i < nd; i++)
		printf("%-22s %-14s | doc: %-22s %s\n", i < n ? rows[i].control : "-",
		       i < n ? cordon_control_kind_to_string(rows[i].kind) : "-", i < nd ? doc[i].name : "-",
		       i < nd ? doc[i].refuses : "-");
	assert_int_equal(nd, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(doc[i].name, rows[i].control);
		assert_string_equal(doc[i].refuses, cordon_control_kind_to_string(rows[i].kind));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_rows_equal_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
