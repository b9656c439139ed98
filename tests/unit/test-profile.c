/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strict profile loader: every rule of docs/profiles.md, every bad input
 * with its exact message and position, and every parsed value of a full
 * profile. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "profile.h"
#include "test-support.h"

/* The smallest valid profile: lines 1 to 8. */
#define HEAD	"version: 1\nconnector:\n  command: [/bin/true]\n"
#define SANDBOX "sandbox:\n  filesystem:\n    system: []\n"
#define TOOLS	"tools:\n  risk: {}\n"
#define MINIMAL HEAD SANDBOX TOOLS
/* MINIMAL without its first line. */
#define REST "connector:\n  command: [/bin/true]\n" SANDBOX TOOLS

static int parse(const char *id, const char *yaml, size_t len, struct cordon_profile **ret, struct cordon_diag *d)
{
	return cordon_profile_parse(id, "t.yaml", yaml, len, ret, d);
}

/* Asserts that yaml is refused with exactly this first error. */
static void check_error_len(const char *yaml, size_t len, int error, unsigned line, unsigned column,
			    const char *message)
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};
	int r;

	r = parse("t", yaml, len, &p, &d);
	if (r != -error || d.line != line || d.column != column || strcmp(d.message, message) != 0)
		print_message("got r=%d %u:%u: %s\n", r, d.line, d.column, d.message);

	assert_int_equal(r, -error);
	assert_null(p);
	assert_int_equal(d.error, error);
	assert_string_equal(d.step, "profile");
	assert_string_equal(d.message, message);
	assert_int_equal(d.line, line);
	assert_int_equal(d.column, column);
}

static void check_error(const char *yaml, unsigned line, unsigned column, const char *message)
{
	check_error_len(yaml, strlen(yaml), EINVAL, line, column, message);
}

static struct cordon_profile *parse_ok(const char *yaml)
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};
	int r;

	r = parse("t", yaml, strlen(yaml), &p, &d);
	if (r < 0)
		print_message("unexpected error %u:%u: %s\n", d.line, d.column, d.message);
	assert_int_equal(r, 0);
	assert_non_null(p);
	return p;
}

/* ---- bad input ---------------------------------------------------------------- */

/* allow_uid0_owner (issue 11): read-write roots only, true or false, off by
 * default; unknown to system entries. */
static void test_allow_uid0_owner(void **state)
{
	struct cordon_profile *p;

	(void)state;
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n"
			 "    roots: [{path: /srv, access: read, allow_uid0_owner: true}]\n" TOOLS,
		    7, 58,
		    "sandbox.filesystem.roots[0].allow_uid0_owner: only a read-write root can be owned by uid 0 by "
		    "permission");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n"
			 "    roots: [{path: /srv, access: read-write, allow_uid0_owner: yes}]\n" TOOLS,
		    7, 64, "sandbox.filesystem.roots[0].allow_uid0_owner: must be one of false, true (got \"yes\")");
	check_error(HEAD
		    "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read, allow_uid0_owner: true}]\n" TOOLS,
		    6, 41,
		    "sandbox.filesystem.system[0].allow_uid0_owner: unknown key (expected one of: path, access)");
	p = parse_ok(HEAD "sandbox:\n  filesystem:\n    system: []\n"
			  "    roots: [{path: /srv/a, access: read-write, allow_uid0_owner: true},\n"
			  "            {path: /srv/b, access: read-write},\n"
			  "            {path: /srv/c, access: read, allow_uid0_owner: false}]\n" TOOLS);
	assert_int_equal(p->n_fs_roots, 3);
	assert_true(p->fs_roots[0].allow_uid0_owner);
	assert_false(p->fs_roots[1].allow_uid0_owner);
	assert_false(p->fs_roots[2].allow_uid0_owner);
	cordon_profile_free(p);
}

static void test_empty_file(void **state)
{
	check_error_len("", 0, EINVAL, 0, 0, "file is empty");
}

static void test_only_comments(void **state)
{
	check_error("# nothing here\n\n   # still nothing\n", 0, 0,
		    "file contains no YAML document (only comments or blank lines)");
}

static void test_binary_nul(void **state)
{
	static const char elf[] = "\x7f"
				  "ELF\x02\x01\x01\x00\x00\x00";

	/* The 0x7f DEL of an ELF header is the first thing refused. */
	check_error_len(elf, sizeof(elf) - 1, EINVAL, 1, 1, "control character 0x7f is not allowed");
	check_error_len("version: 1\n\x00\x01\x02", 14, EINVAL, 2, 1, "file contains a NUL byte (not a text file?)");
}

static void test_binary_invalid_utf8(void **state)
{
	check_error("\xff\xfe\xfd garbage", 1, 1, "invalid UTF-8 (byte 0xff; not a text file?)");
	/* an overlong encoding of '/' and a UTF-16 surrogate are invalid too */
	check_error("version: 1\nx: \xc0\xaf\n", 2, 4, "invalid UTF-8 (byte 0xc0; not a text file?)");
	check_error("x: \xed\xa0\x80\n", 1, 4, "invalid UTF-8 (byte 0xed; not a text file?)");
	/* truncated sequence at the end */
	check_error("x: \xe2\x82", 1, 4, "invalid UTF-8 (byte 0xe2; not a text file?)");
}

static void test_control_character(void **state)
{
	check_error("version: 1\x1b[31m\n", 1, 11, "control character 0x1b is not allowed");
}

static void test_too_large_buffer(void **state)
{
	size_t len = 10 * 1024 * 1024;
	char *buf = malloc(len);

	assert_non_null(buf);
	memset(buf, '#', len);
	check_error_len(buf, len, EFBIG, 0, 0, "file is larger than 1 MiB (10485760 bytes)");
	free(buf);
}

/* Exactly 1 MiB is accepted, one byte more is not. */
static void test_size_boundary(void **state)
{
	size_t len = CORDON_PROFILE_MAX_BYTES;
	char *buf = malloc(len + 1);
	struct cordon_profile *p = NULL;

	assert_non_null(buf);
	memset(buf, ' ', len + 1);
	memcpy(buf, MINIMAL "#", strlen(MINIMAL) + 1);
	buf[len - 1] = '\n';
	assert_int_equal(parse("t", buf, len, &p, NULL), 0);
	cordon_profile_free(p);
	p = NULL;
	buf[len] = '\n';
	check_error_len(buf, len + 1, EFBIG, 0, 0, "file is larger than 1 MiB (1048577 bytes)");
	free(buf);
}

static void test_nesting_too_deep(void **state)
{
	char buf[256];
	size_t o;

	/* The root mapping is level 1; "[" number k is level k + 1, so the
	 * 32nd "[" (column 4 + 31) would be level 33. */
	o = (size_t)snprintf(buf, sizeof(buf), "x: ");
	for (int i = 0; i < 40; i++)
		buf[o++] = '[';
	buf[o] = '\0';
	check_error(buf, 1, 35, "nesting deeper than 32 levels");

	/* 32 levels are still YAML we read (and then refuse by schema). */
	o = (size_t)snprintf(buf, sizeof(buf), "x: ");
	for (int i = 0; i < 31; i++)
		buf[o++] = '[';
	for (int i = 0; i < 31; i++)
		buf[o++] = ']';
	buf[o] = '\0';
	check_error(buf, 1, 1,
		    "x: unknown key (expected one of: version, connector, sandbox, tools, resources, prompts, "
		    "client_requests, approval)");
}

static void test_anchor_refused(void **state)
{
	check_error("version: &v 1\n", 1, 10, "YAML anchors (&v) are not allowed: cordon refuses anchors and aliases");
	/* The billion-laughs shape is refused at its first anchor, before any
	 * alias could be expanded. */
	check_error("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
		    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
		    1, 4, "YAML anchors (&a) are not allowed: cordon refuses anchors and aliases");
	check_error(HEAD "sandbox: &s\n  filesystem: {system: []}\n" TOOLS, 4, 10,
		    "YAML anchors (&s) are not allowed: cordon refuses anchors and aliases");
}

static void test_alias_refused(void **state)
{
	check_error("version: 1\nconnector: *c\n", 2, 12,
		    "YAML aliases (*c) are not allowed: cordon refuses anchors and aliases");
}

static void test_tag_refused(void **state)
{
	check_error("version: !!int 1\n", 1, 10, "YAML tags (tag:yaml.org,2002:int) are not allowed");
}

static void test_two_documents(void **state)
{
	check_error(MINIMAL "---\n" MINIMAL, 9, 1, "only one YAML document is allowed");
}

static void test_syntax_error(void **state)
{
	check_error("version: 1\nconnector: [a\n", 3, 1,
		    "YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence (line 2)");
	check_error("version: 1\n  bad: indent\n", 2, 6,
		    "YAML syntax error: mapping values are not allowed in this context");
}

static void test_duplicate_key(void **state)
{
	check_error(MINIMAL "version: 1\n", 9, 1, "version: duplicate key (first at line 1)");
	check_error(HEAD SANDBOX "tools:\n  risk:\n    a: read\n    b: read\n    a: write\n", 11, 5,
		    "tools.risk.a: duplicate key (first at line 9)");
	check_error(HEAD "  env:\n    set: {A: x, A: y}\n" SANDBOX TOOLS, 5, 17,
		    "connector.env.set.A: duplicate key (first at line 5)");
}

static void test_tabs(void **state)
{
	check_error("version: 1\nconnector:\n\tcommand: [/bin/true]\n", 3, 1,
		    "tab character in indentation (YAML indents with spaces only)");
	check_error("version: 1\nconnector:\n  \tcommand: [/bin/true]\n", 3, 3,
		    "tab character in indentation (YAML indents with spaces only)");
	/* a tab libyaml itself trips over, after the indentation */
	check_error("? a\n:\tb\n", 2, 2, "tab character is not allowed here (YAML indents with spaces only)");
	/* an error after non-ASCII text still finds the tab (marks count characters) */
	check_error("\xc3\xa9\xc3\xa9: x\n? a\n:\tb\n", 3, 2,
		    "tab character is not allowed here (YAML indents with spaces only)");
}

static void test_wrong_types(void **state)
{
	check_error("- version\n- 1\n", 1, 1, "the top level must be a mapping (got a list)");
	check_error("version: 1\nconnector:\n  command: /bin/true\n" SANDBOX TOOLS, 3, 12,
		    "connector.command: expected a list, got \"/bin/true\"");
	check_error(HEAD "sandbox: [filesystem]\n" TOOLS, 4, 10, "sandbox: expected a mapping, got a list");
	check_error(HEAD "sandbox:\n  filesystem:\n    system:\n" TOOLS, 6, 12,
		    "sandbox.filesystem.system: expected a list, got an empty value");
	check_error("version: {a: 1}\n" REST, 1, 10, "version: expected a string, got a mapping");
	check_error(HEAD SANDBOX "tools:\n  risk: [a, b]\n", 8, 9, "tools.risk: expected a mapping, got a list");
	check_error(HEAD SANDBOX TOOLS "approval:\n  ttl: [1s]\n", 10, 8,
		    "approval.ttl: expected a string, got a list");
	check_error(MINIMAL "? [a, b]\n: c\n", 9, 3, "mapping keys must be strings, got a list");
}

static void test_unknown_keys(void **state)
{
	check_error(MINIMAL "extra: 1\n", 9, 1,
		    "extra: unknown key (expected one of: version, connector, sandbox, tools, resources, prompts, "
		    "client_requests, approval)");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n    rootz: []\n" TOOLS, 7, 5,
		    "sandbox.filesystem.rootz: unknown key (expected one of: system, roots, ceiling, tmp)");
	/* `at` belongs to roots only */
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read, at: /x}]\n" TOOLS, 6, 41,
		    "sandbox.filesystem.system[0].at: unknown key (expected one of: path, access)");
}

static void test_missing_required(void **state)
{
	check_error("connector:\n  command: [/bin/true]\n" SANDBOX TOOLS, 1, 1, "version: missing required key");
	check_error("version: 1\n" SANDBOX TOOLS, 1, 1, "connector: missing required key");
	check_error("version: 1\nconnector:\n  workdir: /tmp\n" SANDBOX TOOLS, 3, 3,
		    "connector.command: missing required key");
	check_error(HEAD TOOLS, 1, 1, "sandbox: missing required key");
	check_error(HEAD "sandbox:\n  user: dynamic\n" TOOLS, 5, 3, "sandbox.filesystem: missing required key");
	check_error(HEAD "sandbox:\n  filesystem:\n    tmp: 1M\n" TOOLS, 6, 5,
		    "sandbox.filesystem.system: missing required key");
	check_error(HEAD SANDBOX, 1, 1, "tools: missing required key");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{access: read}]\n" TOOLS, 6, 14,
		    "sandbox.filesystem.system[0].path: missing required key");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr}]\n" TOOLS, 6, 14,
		    "sandbox.filesystem.system[0].access: missing required key");
}

static void test_version(void **state)
{
	check_error("version: 2\n" REST, 1, 10, "version: unsupported version 2 (this cordon reads version 1)");
	check_error("version: \"1\"\n" REST, 1, 10, "version: must be the integer 1 (got \"1\")");
	check_error("version: 1.0\n" REST, 1, 10, "version: must be the integer 1 (got \"1.0\")");
	check_error("version:\n" REST, 1, 9, "version: expected a string, got an empty value");
	check_error("version: 01\n" REST, 1, 10, "version: must be the integer 1 (got \"01\")");
}

static void test_file_name_not_an_id(void **state)
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};

	assert_int_equal(parse("GitHub", MINIMAL, strlen(MINIMAL), &p, &d), -EINVAL);
	assert_null(p);
	assert_string_equal(d.message,
			    "file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"GitHub\")");
	assert_int_equal(d.line, 0);
	assert_int_equal(parse("", MINIMAL, strlen(MINIMAL), &p, &d), -EINVAL);
	assert_int_equal(parse(NULL, MINIMAL, strlen(MINIMAL), &p, &d), -EINVAL);
	assert_null(p);
}

static void test_relative_path(void **state)
{
	check_error("version: 1\nconnector:\n  command: [bin/true]\n" SANDBOX TOOLS, 3, 13,
		    "connector.command[0]: must be an absolute canonical path (got \"bin/true\")");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n    roots: [{path: ../x, access: read}]\n" TOOLS, 7,
		    20, "sandbox.filesystem.roots[0].path: must be an absolute canonical path (got \"../x\")");
	check_error(HEAD "  workdir: work\n" SANDBOX TOOLS, 4, 12,
		    "connector.workdir: must be an absolute canonical path (got \"work\")");
}

static void test_dotdot_path(void **state)
{
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr/../etc, access: read}]\n" TOOLS, 6, 21,
		    "sandbox.filesystem.system[0].path: must be an absolute canonical path (got \"/usr/../etc\")");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n    ceiling: [/srv/./x]\n" TOOLS, 7, 15,
		    "sandbox.filesystem.ceiling[0]: must be an absolute canonical path (got \"/srv/./x\")");
	check_error(
		HEAD
		"sandbox:\n  filesystem:\n    system: []\n    roots: [{path: /srv, access: read, at: /w//x}]\n" TOOLS,
		7, 44, "sandbox.filesystem.roots[0].at: must be an absolute canonical path (got \"/w//x\")");
	check_error(HEAD "  credentials: [{env: T, file: /etc/x/}]\n" SANDBOX TOOLS, 4, 32,
		    "connector.credentials[0].file: must be an absolute canonical path (got \"/etc/x/\")");
}

static void test_filesystem_rules(void **state)
{
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read-write}]\n" TOOLS, 6, 35,
		    "sandbox.filesystem.system[0].access: system entries are read or read-exec (the runtime's files "
		    "are never writable)");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: write}]\n" TOOLS, 6, 35,
		    "sandbox.filesystem.system[0].access: must be one of read, read-exec, read-write (got \"write\")");
	check_error(HEAD
		    "sandbox:\n  filesystem:\n    system: []\n    roots: [{path: /srv, access: read, at: /}]\n" TOOLS,
		    7, 44, "sandbox.filesystem.roots[0].at: a root cannot replace the sandbox's \"/\"");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n    ceiling: [/]\n" TOOLS, 7, 15,
		    "sandbox.filesystem.ceiling[0]: \"/\" cannot be a ceiling (it would allow delegating every path)");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: []\n    ceiling: [/srv, /srv]\n" TOOLS, 7, 21,
		    "sandbox.filesystem.ceiling[1]: \"/srv\" is listed twice (first at line 7)");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read}]\n"
			 "    roots: [{path: /a, access: read, at: /w}, {path: /b, access: read, at: /w}]\n" TOOLS,
		    7, 47, "sandbox.filesystem.roots[1]: sandbox path /w is already used by another roots entry");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read}]\n"
			 "    roots: [{path: /srv/usr, access: read, at: /usr}]\n" TOOLS,
		    7, 13, "sandbox.filesystem.roots[0]: sandbox path /usr is already used by a system entry");
	check_error(HEAD "sandbox:\n  filesystem:\n    system: [{path: /usr, access: read}, {path: /usr, access: "
			 "read-exec}]\n" TOOLS,
		    6, 42, "sandbox.filesystem.system[1]: /usr is listed twice (first at line 6)");
}

static void test_sizes_and_ranges(void **state)
{
	struct cordon_profile *p;

	check_error(HEAD "sandbox:\n  filesystem: {system: [], tmp: 17G}\n" TOOLS, 5, 33,
		    "sandbox.filesystem.tmp: must be a size from 1M to 16G (K, M, G are powers of 1024; got \"17G\")");
	check_error(HEAD "sandbox:\n  filesystem: {system: [], tmp: 64X}\n" TOOLS, 5, 33,
		    "sandbox.filesystem.tmp: must be a size from 1M to 16G (K, M, G are powers of 1024; got \"64X\")");
	check_error(
		HEAD "sandbox:\n  filesystem: {system: [], tmp: 1023K}\n" TOOLS, 5, 33,
		"sandbox.filesystem.tmp: must be a size from 1M to 16G (K, M, G are powers of 1024; got \"1023K\")");
	check_error(HEAD SANDBOX "  limits: {memory: 3M}\n" TOOLS, 7, 20,
		    "sandbox.limits.memory: must be a size from 4M to 1024G (K, M, G are powers of 1024; got \"3M\")");
	check_error(
		HEAD SANDBOX "  limits: {memory: 1025G}\n" TOOLS, 7, 20,
		"sandbox.limits.memory: must be a size from 4M to 1024G (K, M, G are powers of 1024; got \"1025G\")");
	check_error(HEAD SANDBOX "  limits: {pids: 0}\n" TOOLS, 7, 18,
		    "sandbox.limits.pids: must be an integer from 1 to 1048576 (got \"0\")");
	check_error(HEAD SANDBOX "  limits: {pids: 1048577}\n" TOOLS, 7, 18,
		    "sandbox.limits.pids: must be an integer from 1 to 1048576 (got \"1048577\")");
	/* leading zeros: octal to a YAML 1.1 reader, so refused */
	check_error(HEAD SANDBOX "  limits: {pids: 010}\n" TOOLS, 7, 18,
		    "sandbox.limits.pids: must be an integer from 1 to 1048576 (got \"010\")");
	check_error(HEAD "sandbox:\n  filesystem: {system: [], tmp: 064M}\n" TOOLS, 5, 33,
		    "sandbox.filesystem.tmp: must be a size from 1M to 16G (K, M, G are powers of 1024; got \"064M\")");
	check_error(MINIMAL "approval: {ttl: 01m}\n", 9, 17,
		    "approval.ttl: must be a duration from 1s to 24h with an s, m or h suffix (got \"01m\")");
	check_error(
		HEAD SANDBOX "  limits: {cpu: 00.5}\n" TOOLS, 7, 17,
		"sandbox.limits.cpu: must be a number of CPUs from 0.01 to 1024, at most 6 decimals (got \"00.5\")");
	check_error(HEAD SANDBOX "  limits: {pids: \"64\"}\n" TOOLS, 7, 18,
		    "sandbox.limits.pids: must be an integer from 1 to 1048576 (got \"64\")");
	check_error(
		HEAD SANDBOX "  limits: {cpu: 0.009}\n" TOOLS, 7, 17,
		"sandbox.limits.cpu: must be a number of CPUs from 0.01 to 1024, at most 6 decimals (got \"0.009\")");
	check_error(
		HEAD SANDBOX "  limits: {cpu: 1024.5}\n" TOOLS, 7, 17,
		"sandbox.limits.cpu: must be a number of CPUs from 0.01 to 1024, at most 6 decimals (got \"1024.5\")");
	check_error(HEAD SANDBOX "  limits: {nofile: 15}\n" TOOLS, 7, 20,
		    "sandbox.limits.nofile: must be an integer from 16 to 1048576 (got \"15\")");
	check_error(HEAD SANDBOX "  limits: {nofile: 1048577}\n" TOOLS, 7, 20,
		    "sandbox.limits.nofile: must be an integer from 16 to 1048576 (got \"1048577\")");
	check_error(MINIMAL "approval: {ttl: 0s}\n", 9, 17,
		    "approval.ttl: must be a duration from 1s to 24h with an s, m or h suffix (got \"0s\")");
	check_error(MINIMAL "approval: {ttl: 86401s}\n", 9, 17,
		    "approval.ttl: must be a duration from 1s to 24h with an s, m or h suffix (got \"86401s\")");
	check_error(MINIMAL "approval: {ttl: 120}\n", 9, 17,
		    "approval.ttl: must be a duration from 1s to 24h with an s, m or h suffix (got \"120\")");

	/* the bounds themselves are accepted */
	p = parse_ok(HEAD "sandbox:\n  filesystem: {system: [], tmp: 16G}\n"
			  "  limits: {memory: 1024G, pids: 1048576, cpu: 1024, nofile: 1048576}\n" TOOLS
			  "approval: {ttl: 24h}\n");
	assert_true(p->tmp_bytes == 16ULL << 30);
	assert_true(p->mem_bytes == 1ULL << 40);
	assert_int_equal(p->pids_max, 1048576);
	assert_true(p->cpu_micro == 1024000000ULL);
	assert_int_equal(p->nofile, 1048576);
	assert_int_equal(p->approval_ttl_sec, 86400);
	cordon_profile_free(p);
	p = parse_ok(HEAD "sandbox:\n  filesystem: {system: [], tmp: 1M}\n"
			  "  limits: {memory: 4M, pids: 1, cpu: 0.01, nofile: 16}\n" TOOLS "approval: {ttl: 1s}\n");
	assert_int_equal(p->tmp_bytes, 1 << 20);
	assert_int_equal(p->mem_bytes, 4 << 20);
	assert_int_equal(p->pids_max, 1);
	assert_int_equal(p->cpu_micro, 10000);
	assert_int_equal(p->nofile, 16);
	assert_int_equal(p->approval_ttl_sec, 1);
	assert_int_equal(p->limits_defaulted, 0);
	cordon_profile_free(p);

	/* Limits the profile leaves out get their default; the ones it sets
	 * stay as set (issue 11, finding 10). */
	p = parse_ok(HEAD "sandbox:\n  filesystem: {system: []}\n  limits: {memory: 64M, nofile: 64}\n" TOOLS);
	assert_int_equal(p->mem_bytes, 64 << 20);
	assert_int_equal(p->nofile, 64);
	assert_int_equal(p->pids_max, CORDON_LIMIT_DEFAULT_PIDS);
	assert_true(p->cpu_micro == CORDON_LIMIT_DEFAULT_CPU_MICRO);
	assert_int_equal(p->limits_defaulted, CORDON_LIMIT_PIDS | CORDON_LIMIT_CPU);
	cordon_profile_free(p);
	p = parse_ok(HEAD "sandbox:\n  filesystem: {system: []}\n  limits: {}\n" TOOLS);
	assert_int_equal(p->limits_defaulted,
			 CORDON_LIMIT_MEMORY | CORDON_LIMIT_PIDS | CORDON_LIMIT_CPU | CORDON_LIMIT_NOFILE);
	cordon_profile_free(p);
}

static void test_network_rules(void **state)
{
	struct cordon_profile *p;

	check_error(HEAD SANDBOX "  network: {mode: unrestricted}\n" TOOLS, 7, 19,
		    "sandbox.network.mode: \"unrestricted\" does not exist: use none, or allowlist with the "
		    "destinations the connector needs");
	check_error(HEAD SANDBOX "  network: {mode: open}\n" TOOLS, 7, 19,
		    "sandbox.network.mode: must be one of none, allowlist (got \"open\")");
	check_error(HEAD SANDBOX "  network:\n    mode: none\n    allow: [{cidr: 10.0.0.0/8, ports: [443]}]\n" TOOLS, 9,
		    12,
		    "sandbox.network.allow: mode none allows no destinations (set mode: allowlist or remove allow)");
	/* mode defaults to none */
	check_error(HEAD SANDBOX "  network:\n    allow: [{cidr: 10.0.0.0/8, ports: [443]}]\n" TOOLS, 8, 12,
		    "sandbox.network.allow: mode none allows no destinations (set mode: allowlist or remove allow)");
	check_error(
		HEAD SANDBOX "  network: {mode: allowlist}\n" TOOLS, 7, 19,
		"sandbox.network.mode: an allowlist needs at least one allow entry (use mode: none for no network)");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 140.82.112.1/20, ports: [443]}]}\n" TOOLS,
		    7, 45,
		    "sandbox.network.allow[0].cidr: host bits are set in \"140.82.112.1/20\" (the network is "
		    "140.82.112.0/20)");
	check_error(HEAD SANDBOX
		    "  network: {mode: allowlist, allow: [{cidr: \"2001:db8::1/32\", ports: [443]}]}\n" TOOLS,
		    7, 45,
		    "sandbox.network.allow[0].cidr: host bits are set in \"2001:db8::1/32\" (the network is "
		    "2001:db8::/32)");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0, ports: [443]}]}\n" TOOLS, 7, 45,
		    "sandbox.network.allow[0].cidr: must be an IPv4 or IPv6 network with a prefix length, like "
		    "192.0.2.0/24 or 2001:db8::/32 (got \"10.0.0.0\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/33, ports: [443]}]}\n" TOOLS, 7,
		    45,
		    "sandbox.network.allow[0].cidr: must be an IPv4 or IPv6 network with a prefix length, like "
		    "192.0.2.0/24 or 2001:db8::/32 (got \"10.0.0.0/33\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/08, ports: [443]}]}\n" TOOLS, 7,
		    45,
		    "sandbox.network.allow[0].cidr: must be an IPv4 or IPv6 network with a prefix length, like "
		    "192.0.2.0/24 or 2001:db8::/32 (got \"10.0.0.0/08\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 010.0.0.0/8, ports: [443]}]}\n" TOOLS, 7,
		    45,
		    "sandbox.network.allow[0].cidr: must be an IPv4 or IPv6 network with a prefix length, like "
		    "192.0.2.0/24 or 2001:db8::/32 (got \"010.0.0.0/8\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/8, ports: [0]}]}\n" TOOLS, 7, 65,
		    "sandbox.network.allow[0].ports[0]: must be an integer from 1 to 65535 (got \"0\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/8, ports: [65536]}]}\n" TOOLS, 7,
		    65, "sandbox.network.allow[0].ports[0]: must be an integer from 1 to 65535 (got \"65536\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/8, ports: []}]}\n" TOOLS, 7, 64,
		    "sandbox.network.allow[0].ports: must list at least 1 port");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/8, ports: [53, 53]}]}\n" TOOLS,
		    7, 69, "sandbox.network.allow[0].ports[1]: \"53\" is listed twice (first at line 7)");
	check_error(HEAD SANDBOX
		    "  network: {mode: allowlist, allow: [{cidr: 10.0.0.0/8, ports: [53], protocol: icmp}]}\n" TOOLS,
		    7, 80, "sandbox.network.allow[0].protocol: must be one of tcp, udp, any (got \"icmp\")");
	check_error(HEAD SANDBOX "  network: {mode: allowlist, allow: [{ports: [53]}]}\n" TOOLS, 7, 38,
		    "sandbox.network.allow[0].cidr: missing required key");

	p = parse_ok(HEAD SANDBOX "  network:\n    mode: allowlist\n    allow:\n"
				  "      - {cidr: 0.0.0.0/0, ports: [443]}\n"
				  "      - {cidr: \"::/0\", ports: [443, 80]}\n"
				  "      - {cidr: 192.0.2.7/32, ports: [53], protocol: udp}\n"
				  "      - {cidr: \"2001:db8::/128\", ports: [53], protocol: any}\n" TOOLS);
	assert_int_equal(p->net_mode, CORDON_NET_ALLOWLIST);
	assert_int_equal(p->n_net_allow, 4);
	assert_int_equal(p->net_allow[0].family, AF_INET);
	assert_int_equal(p->net_allow[0].prefix_len, 0);
	assert_int_equal(p->net_allow[0].protocols, CORDON_PROTO_TCP);
	assert_int_equal(p->net_allow[1].family, AF_INET6);
	assert_int_equal(p->net_allow[1].prefix_len, 0);
	assert_int_equal(p->net_allow[1].n_ports, 2);
	assert_int_equal(p->net_allow[1].ports[1], 80);
	assert_int_equal(p->net_allow[2].protocols, CORDON_PROTO_UDP);
	assert_memory_equal(p->net_allow[2].addr, ((uint8_t[]){ 192, 0, 2, 7 }), 4);
	assert_int_equal(p->net_allow[2].prefix_len, 32);
	assert_int_equal(p->net_allow[3].protocols, CORDON_PROTO_ANY);
	assert_int_equal(p->net_allow[3].prefix_len, 128);
	assert_memory_equal(p->net_allow[3].addr,
			    ((uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }), 16);
	cordon_profile_free(p);
}

static void test_tools_rules(void **state)
{
	struct cordon_profile *p;

	/* no risk table: every tool gets default_risk */
	p = parse_ok(HEAD SANDBOX "tools:\n  default_risk: write\n");
	assert_int_equal(p->n_risk, 0);
	assert_int_equal(cordon_profile_tool_risk(p, "anything"), CORDON_RISK_WRITE);
	cordon_profile_free(p);
	check_error(HEAD SANDBOX "tools:\n  grant: [a]\n", 8, 11,
		    "tools.grant[0]: tool \"a\" is not named in tools.risk");

	check_error(HEAD SANDBOX "tools:\n  risk: {read_file: medium}\n", 8, 21,
		    "tools.risk.read_file: must be one of read, write, destructive, high, critical (got \"medium\")");
	check_error(HEAD SANDBOX "tools:\n  default_risk: low\n  risk: {}\n", 8, 17,
		    "tools.default_risk: must be one of read, write, destructive, high, critical (got \"low\")");
	check_error(HEAD SANDBOX "tools:\n  risk: {a: read}\n  replay: {a: maybe}\n", 9, 15,
		    "tools.replay.a: must be one of unsafe, safe (got \"maybe\")");
	check_error(HEAD SANDBOX "tools:\n  risk: {a: read}\n  replay: {b: safe}\n", 9, 12,
		    "tools.replay.b: tool \"b\" is not named in tools.risk");
	check_error(HEAD SANDBOX "tools:\n  risk: {a: read}\n  grant: [a, b]\n", 9, 14,
		    "tools.grant[1]: tool \"b\" is not named in tools.risk");
	check_error(HEAD SANDBOX "tools:\n  risk: {a: read}\n  grant: [a, a]\n", 9, 14,
		    "tools.grant[1]: \"a\" is listed twice (first at line 9)");
	check_error(HEAD SANDBOX "tools:\n  risk: {\"bad tool\": read}\n", 8, 10,
		    "tools.risk.bad tool: tool names are 1 to 128 characters of A-Z a-z 0-9 _ - . (got \"bad tool\")");

	p = parse_ok(HEAD SANDBOX "tools:\n  default_risk: critical\n  risk: {a: read, b.c-D_9: destructive}\n"
				  "  replay: {a: safe, b.c-D_9: unsafe}\n");
	assert_int_equal(cordon_profile_tool_risk(p, "a"), CORDON_RISK_READ);
	assert_int_equal(cordon_profile_tool_risk(p, "b.c-D_9"), CORDON_RISK_DESTRUCTIVE);
	assert_int_equal(cordon_profile_tool_risk(p, "unknown"), CORDON_RISK_CRITICAL);
	assert_int_equal(cordon_profile_tool_risk(p, NULL), CORDON_RISK_CRITICAL);
	assert_int_equal(cordon_profile_tool_replay(p, "a"), CORDON_REPLAY_SAFE);
	assert_int_equal(cordon_profile_tool_replay(p, "b.c-D_9"), CORDON_REPLAY_UNSAFE);
	assert_int_equal(cordon_profile_tool_replay(p, "unknown"), CORDON_REPLAY_UNSAFE);
	assert_true(cordon_profile_tool_risk_named(p, "a"));
	assert_false(cordon_profile_tool_risk_named(p, "A"));
	cordon_profile_free(p);
}

static void test_connector_rules(void **state)
{
	check_error(HEAD "  env:\n    pass: [LANG, 1BAD]\n" SANDBOX TOOLS, 5, 18,
		    "connector.env.pass[1]: environment variable names are [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes "
		    "(got \"1BAD\")");
	check_error(HEAD "  env:\n    pass: [A]\n    set: {A: x}\n" SANDBOX TOOLS, 6, 10,
		    "connector.env.set.A: A is both passed (env.pass) and set (env.set)");
	check_error(HEAD "  env:\n    set: {T: x}\n  credentials: [{env: T, file: /c}]\n" SANDBOX TOOLS, 6, 23,
		    "connector.credentials[0].env: T is already set by connector.env or another credential");
	check_error(HEAD "  credentials: [{env: T, file: /a}, {env: T, file: /b}]\n" SANDBOX TOOLS, 4, 43,
		    "connector.credentials[1].env: T is already set by connector.env or another credential");
	check_error(HEAD "  instances: many\n" SANDBOX TOOLS, 4, 14,
		    "connector.instances: must be one of per-session, shared (got \"many\")");
	check_error("version: 1\nconnector:\n  command: []\n" SANDBOX TOOLS, 3, 12,
		    "connector.command: must list at least 1 entry");
	check_error(HEAD "  workdir: /etc\n" SANDBOX TOOLS, 4, 12,
		    "connector.workdir: must lie beneath /tmp or a sandbox.filesystem.roots[].at path (got \"/etc\")");
	check_error(HEAD "  description: \"a\\0b\"\n" SANDBOX TOOLS, 4, 16, "strings must not contain NUL characters");
}

static void test_sandbox_rules(void **state)
{
	struct cordon_profile *p;

	check_error(HEAD SANDBOX "  user: root\n" TOOLS, 7, 9, "sandbox.user: a connector never runs as root");
	check_error(
		HEAD SANDBOX "  user: Bad.User\n" TOOLS, 7, 9,
		"sandbox.user: must be dynamic or a user name ([a-z_][a-z0-9_-]*, at most 32 bytes; got \"Bad.User\")");
	check_error(HEAD SANDBOX "  seccomp: {allow: [no_such_call]}\n" TOOLS, 7, 21,
		    "sandbox.seccomp.allow[0]: unknown system call \"no_such_call\"");
	check_error(HEAD SANDBOX "  seccomp: {allow: [io_uring_enter]}\n" TOOLS, 7, 21,
		    "sandbox.seccomp.allow[0]: io_uring_enter cannot be allowed: io_uring operations (open, mkdir, "
		    "setxattr) would bypass the setuid/setgid and xattr rules");
	check_error(HEAD SANDBOX "  seccomp: {allow: [ptrace], deny: [ptrace]}\n" TOOLS, 7, 37,
		    "sandbox.seccomp.deny[0]: ptrace is in both allow and deny");
	check_error(HEAD SANDBOX "  seccomp: {action: trap}\n" TOOLS, 7, 21,
		    "sandbox.seccomp.action: must be one of errno, kill, log (got \"trap\")");
	check_error(HEAD SANDBOX "  seccomp: {base: loose}\n" TOOLS, 7, 19,
		    "sandbox.seccomp.base: must be one of default, strict (got \"loose\")");
	check_error(HEAD SANDBOX "  require: [landlock, apparmor]\n" TOOLS, 7, 23,
		    "sandbox.require[1]: must be one of landlock, seccomp, cgroup, namespaces, network, root_guard "
		    "(got \"apparmor\")");
	check_error(HEAD SANDBOX "  require: [landlock, landlock]\n" TOOLS, 7, 23,
		    "sandbox.require[1]: \"landlock\" is listed twice (first at line 7)");

	p = parse_ok(HEAD SANDBOX "  user: cordon-svc\n  require: []\n  seccomp: {base: strict, action: kill}\n" TOOLS);
	assert_string_equal(p->user, "cordon-svc");
	assert_int_equal(p->require, 0);
	assert_int_equal(p->seccomp_base, CORDON_SECCOMP_STRICT);
	assert_int_equal(p->seccomp_action, CORDON_SECCOMP_KILL);
	cordon_profile_free(p);

	/* The root guard is opt-in: never in the default list. */
	p = parse_ok(HEAD SANDBOX "  require: [landlock, root_guard]\n" TOOLS);
	assert_int_equal(p->require, CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_ROOT_GUARD);
	assert_string_equal(cordon_control_to_string(CORDON_CONTROL_ROOT_GUARD), "root_guard");
	cordon_profile_free(p);
}

static void test_client_requests_and_surfaces(void **state)
{
	struct cordon_profile *p;

	check_error(MINIMAL "client_requests: [roots/list]\n", 9, 19,
		    "client_requests[0]: roots/list is always answered by the broker from the instance's roots; do not "
		    "list it");
	check_error(MINIMAL "client_requests: [sampling, sampling]\n", 9, 29,
		    "client_requests[1]: \"sampling\" is listed twice (first at line 9)");
	check_error(MINIMAL "resources: all\n", 9, 12, "resources: must be one of none, read (got \"all\")");
	check_error(MINIMAL "prompts: yes\n", 9, 10, "prompts: must be one of none, read (got \"yes\")");

	p = parse_ok(MINIMAL "client_requests: [elicitation]\nresources: read\nprompts: none\n");
	assert_int_equal(p->client_requests, CORDON_CLIENT_ELICITATION);
	assert_true(p->resources_read);
	assert_false(p->prompts_read);
	cordon_profile_free(p);
}

/* Values quoted in messages are escaped and cut to fit (a fuzzer found the
 * first version overflowing its buffer with escapes). */
static void test_quoted_values_bounded(void **state)
{
	char yaml[1024], want[200];
	size_t o;

	o = (size_t)snprintf(yaml, sizeof(yaml), "%s", MINIMAL "resources: \"");
	for (int i = 0; i < 60; i++)
		o += (size_t)snprintf(yaml + o, sizeof(yaml) - o, "\\x01");
	snprintf(yaml + o, sizeof(yaml) - o, "\"\n");
	o = (size_t)snprintf(want, sizeof(want), "resources: must be one of none, read (got \"");
	for (int i = 0; i < 18; i++)
		o += (size_t)snprintf(want + o, sizeof(want) - o, "\\x01");
	snprintf(want + o, sizeof(want) - o, "...\")");
	check_error(yaml, 9, 12, want);

	/* 60 two-byte characters: cut after 48 whole characters, never inside one */
	o = (size_t)snprintf(yaml, sizeof(yaml), "%s", MINIMAL "resources: ");
	for (int i = 0; i < 60; i++)
		o += (size_t)snprintf(yaml + o, sizeof(yaml) - o, "\xc3\xa9");
	snprintf(yaml + o, sizeof(yaml) - o, "\n");
	o = (size_t)snprintf(want, sizeof(want), "resources: must be one of none, read (got \"");
	for (int i = 0; i < 37; i++)
		o += (size_t)snprintf(want + o, sizeof(want) - o, "\xc3\xa9");
	snprintf(want + o, sizeof(want) - o, "...\")");
	check_error(yaml, 9, 12, want);
}

/* Every error of a file is collected, in file order, whatever order the
 * checks ran in. */
static void test_all_errors_collected(void **state)
{
	static const char yaml[] = "version: 2\n"
				   "connector:\n"
				   "  command: [node]\n"
				   "sandbox:\n"
				   "  filesystem: {system: [], tmp: 0}\n"
				   "  network: {mode: unrestricted}\n"
				   "tools:\n"
				   "  risk: {a: sometimes}\n"
				   "bogus: 1\n";
	struct cordon_diag d[CORDON_PROFILE_MAX_ERRORS];
	struct cordon_profile *p = NULL;
	size_t n = 99;

	assert_int_equal(cordon_profile_parse_diags("t", "t.yaml", yaml, strlen(yaml), &p, d, ELEMENTSOF(d), &n),
			 -EINVAL);
	assert_null(p);
	assert_int_equal(n, 6);
	assert_int_equal(d[0].line, 1);
	assert_int_equal(d[1].line, 3);
	assert_string_equal(d[1].message, "connector.command[0]: must be an absolute canonical path (got \"node\")");
	assert_int_equal(d[2].line, 5);
	assert_int_equal(d[3].line, 6);
	assert_int_equal(d[4].line, 8);
	assert_int_equal(d[5].line, 9);
	assert_int_equal(d[5].column, 1);

	/* max_diags bounds what is written */
	n = 99;
	assert_int_equal(cordon_profile_parse_diags("t", "t.yaml", yaml, strlen(yaml), &p, d, 2, &n), -EINVAL);
	assert_int_equal(n, 2);
}

/* ---- good input ------------------------------------------------------------------ */

static void test_minimal_defaults(void **state)
{
	struct cordon_profile *p = parse_ok(MINIMAL);

	assert_string_equal(p->id, "t");
	assert_string_equal(p->path, "t.yaml");
	assert_null(p->description);
	assert_int_equal(p->n_command, 1);
	assert_string_equal(p->command[0], "/bin/true");
	assert_null(p->command[1]);
	assert_null(p->workdir);
	assert_int_equal(p->n_env_pass, 0);
	assert_int_equal(p->n_env_set, 0);
	assert_int_equal(p->n_credentials, 0);
	assert_int_equal(p->instances, CORDON_INSTANCES_PER_SESSION);
	assert_null(p->user);
	assert_int_equal(p->n_fs_system, 0);
	assert_int_equal(p->n_fs_roots, 0);
	assert_int_equal(p->n_ceiling, 0);
	assert_int_equal(p->tmp_bytes, 64 << 20);
	assert_int_equal(p->net_mode, CORDON_NET_NONE);
	assert_int_equal(p->n_net_allow, 0);
	/* No limits section: the documented defaults, all marked as such. */
	assert_true(p->mem_bytes == CORDON_LIMIT_DEFAULT_MEMORY);
	assert_int_equal(p->pids_max, CORDON_LIMIT_DEFAULT_PIDS);
	assert_true(p->cpu_micro == CORDON_LIMIT_DEFAULT_CPU_MICRO);
	assert_int_equal(p->nofile, CORDON_LIMIT_DEFAULT_NOFILE);
	assert_int_equal(p->limits_defaulted,
			 CORDON_LIMIT_MEMORY | CORDON_LIMIT_PIDS | CORDON_LIMIT_CPU | CORDON_LIMIT_NOFILE);
	assert_int_equal(p->seccomp_base, CORDON_SECCOMP_DEFAULT);
	assert_int_equal(p->seccomp_action, CORDON_SECCOMP_ERRNO);
	assert_int_equal(p->n_seccomp_allow, 0);
	assert_int_equal(p->n_seccomp_deny, 0);
	assert_int_equal(p->require, CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_SECCOMP | CORDON_CONTROL_CGROUP |
					     CORDON_CONTROL_NAMESPACES);
	assert_int_equal(p->default_risk, CORDON_RISK_HIGH);
	assert_int_equal(p->n_risk, 0);
	assert_int_equal(p->n_replay, 0);
	assert_int_equal(p->n_grant, 0);
	assert_false(p->resources_read);
	assert_false(p->prompts_read);
	assert_int_equal(p->client_requests, 0);
	assert_int_equal(p->approval_ttl_sec, 120);
	cordon_profile_free(p);
}

/* The example of the format of record, every key given, every value checked. */
static const char full_profile[] =
	"version: 1\n"
	"connector:\n"
	"  description: Read and write files in the project folder\n"
	"  command: [/usr/bin/node, /opt/mcp/server-filesystem/dist/index.js, /work]  # argv\n"
	"  workdir: /work\n"
	"  env:\n"
	"    pass: [LANG, TZ]\n"
	"    set: {NODE_OPTIONS: \"--max-old-space-size=128\"}\n"
	"  credentials:\n"
	"    - {env: GITHUB_TOKEN, file: /etc/cordon/credentials/github-token}\n"
	"  instances: shared\n"
	"\n"
	"sandbox:\n"
	"  user: nobody\n"
	"  filesystem:\n"
	"    system:\n"
	"      - {path: /usr, access: read-exec}\n"
	"      - {path: /etc/ssl/certs, access: read}\n"
	"    roots:\n"
	"      - {path: /srv/projects/demo, access: read-write, at: /work}\n"
	"      - {path: /srv/shared, access: read}\n"
	"    ceiling: [/srv/projects, /srv/other]\n"
	"    tmp: 32M\n"
	"  network:\n"
	"    mode: allowlist\n"
	"    allow:\n"
	"      - {cidr: 140.82.112.0/20, ports: [443]}\n"
	"      - {cidr: 192.0.2.53/32, ports: [53], protocol: udp}\n"
	"  limits: {memory: 256M, pids: 64, cpu: 0.5, nofile: 256}\n"
	"  seccomp:\n"
	"    base: strict\n"
	"    allow: [ptrace]\n"
	"    deny: [mount, umount2]\n"
	"    action: log\n"
	"  require: [landlock, seccomp, network]\n"
	"\n"
	"tools:\n"
	"  default_risk: destructive\n"
	"  risk:\n"
	"    read_file: read\n"
	"    list_directory: read\n"
	"    write_file: write\n"
	"    move_file: write\n"
	"    delete_file: destructive\n"
	"    run: critical\n"
	"    other: high\n"
	"  replay: {write_file: safe, move_file: unsafe}\n"
	"  grant: [read_file, list_directory]\n"
	"resources: read\n"
	"prompts: read\n"
	"client_requests: [sampling, elicitation]\n"
	"approval:\n"
	"  ttl: 5m\n";

static void test_full_profile(void **state)
{
	struct cordon_profile *p = parse_ok(full_profile);

	assert_string_equal(p->id, "t");
	assert_string_equal(p->description, "Read and write files in the project folder");
	assert_int_equal(p->n_command, 3);
	assert_string_equal(p->command[0], "/usr/bin/node");
	assert_string_equal(p->command[1], "/opt/mcp/server-filesystem/dist/index.js");
	assert_string_equal(p->command[2], "/work");
	assert_null(p->command[3]);
	assert_string_equal(p->workdir, "/work");
	assert_int_equal(p->n_env_pass, 2);
	assert_string_equal(p->env_pass[0], "LANG");
	assert_string_equal(p->env_pass[1], "TZ");
	assert_int_equal(p->n_env_set, 1);
	assert_string_equal(p->env_set[0].name, "NODE_OPTIONS");
	assert_string_equal(p->env_set[0].value, "--max-old-space-size=128");
	assert_int_equal(p->n_credentials, 1);
	assert_string_equal(p->credentials[0].env, "GITHUB_TOKEN");
	assert_string_equal(p->credentials[0].file, "/etc/cordon/credentials/github-token");
	assert_int_equal(p->instances, CORDON_INSTANCES_SHARED);

	assert_string_equal(p->user, "nobody");
	assert_int_equal(p->n_fs_system, 2);
	assert_string_equal(p->fs_system[0].path, "/usr");
	assert_string_equal(p->fs_system[0].at, "/usr");
	assert_int_equal(p->fs_system[0].access, CORDON_ACCESS_READ_EXEC);
	assert_string_equal(p->fs_system[1].path, "/etc/ssl/certs");
	assert_int_equal(p->fs_system[1].access, CORDON_ACCESS_READ);
	assert_int_equal(p->n_fs_roots, 2);
	assert_string_equal(p->fs_roots[0].path, "/srv/projects/demo");
	assert_string_equal(p->fs_roots[0].at, "/work");
	assert_int_equal(p->fs_roots[0].access, CORDON_ACCESS_READ_WRITE);
	assert_string_equal(p->fs_roots[1].path, "/srv/shared");
	assert_string_equal(p->fs_roots[1].at, "/srv/shared"); /* at defaults to path */
	assert_int_equal(p->fs_roots[1].access, CORDON_ACCESS_READ);
	assert_int_equal(p->n_ceiling, 2);
	assert_string_equal(p->ceiling[0], "/srv/projects");
	assert_string_equal(p->ceiling[1], "/srv/other");
	assert_int_equal(p->tmp_bytes, 32 << 20);

	assert_int_equal(p->net_mode, CORDON_NET_ALLOWLIST);
	assert_int_equal(p->n_net_allow, 2);
	assert_int_equal(p->net_allow[0].family, AF_INET);
	assert_memory_equal(p->net_allow[0].addr, ((uint8_t[]){ 140, 82, 112, 0 }), 4);
	assert_int_equal(p->net_allow[0].prefix_len, 20);
	assert_int_equal(p->net_allow[0].protocols, CORDON_PROTO_TCP);
	assert_int_equal(p->net_allow[0].n_ports, 1);
	assert_int_equal(p->net_allow[0].ports[0], 443);
	assert_memory_equal(p->net_allow[1].addr, ((uint8_t[]){ 192, 0, 2, 53 }), 4);
	assert_int_equal(p->net_allow[1].prefix_len, 32);
	assert_int_equal(p->net_allow[1].protocols, CORDON_PROTO_UDP);
	assert_int_equal(p->net_allow[1].ports[0], 53);

	assert_int_equal(p->mem_bytes, 256 << 20);
	assert_int_equal(p->pids_max, 64);
	assert_int_equal(p->cpu_micro, 500000);
	assert_int_equal(p->nofile, 256);
	assert_int_equal(p->seccomp_base, CORDON_SECCOMP_STRICT);
	assert_int_equal(p->n_seccomp_allow, 1);
	assert_string_equal(p->seccomp_allow[0], "ptrace");
	assert_int_equal(p->n_seccomp_deny, 2);
	assert_string_equal(p->seccomp_deny[0], "mount");
	assert_string_equal(p->seccomp_deny[1], "umount2");
	assert_int_equal(p->seccomp_action, CORDON_SECCOMP_LOG);
	assert_int_equal(p->require, CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_SECCOMP | CORDON_CONTROL_NETWORK);

	assert_int_equal(p->default_risk, CORDON_RISK_DESTRUCTIVE);
	assert_int_equal(p->n_risk, 7);
	assert_string_equal(p->risk[0].tool, "read_file");
	assert_int_equal(p->risk[0].risk, CORDON_RISK_READ);
	assert_string_equal(p->risk[2].tool, "write_file");
	assert_int_equal(p->risk[2].risk, CORDON_RISK_WRITE);
	assert_int_equal(cordon_profile_tool_risk(p, "list_directory"), CORDON_RISK_READ);
	assert_int_equal(cordon_profile_tool_risk(p, "move_file"), CORDON_RISK_WRITE);
	assert_int_equal(cordon_profile_tool_risk(p, "delete_file"), CORDON_RISK_DESTRUCTIVE);
	assert_int_equal(cordon_profile_tool_risk(p, "run"), CORDON_RISK_CRITICAL);
	assert_int_equal(cordon_profile_tool_risk(p, "other"), CORDON_RISK_HIGH);
	assert_int_equal(cordon_profile_tool_risk(p, "new_tool"), CORDON_RISK_DESTRUCTIVE);
	assert_int_equal(p->n_replay, 2);
	assert_string_equal(p->replay[0].tool, "write_file");
	assert_int_equal(p->replay[0].replay, CORDON_REPLAY_SAFE);
	assert_int_equal(cordon_profile_tool_replay(p, "move_file"), CORDON_REPLAY_UNSAFE);
	assert_int_equal(p->n_grant, 2);
	assert_string_equal(p->grant[0], "read_file");
	assert_string_equal(p->grant[1], "list_directory");
	assert_true(p->resources_read);
	assert_true(p->prompts_read);
	assert_int_equal(p->client_requests, CORDON_CLIENT_SAMPLING | CORDON_CLIENT_ELICITATION);
	assert_int_equal(p->approval_ttl_sec, 300);
	cordon_profile_free(p);
}

/* Quoted, block and flow styles all give the same strings. */
static void test_string_styles(void **state)
{
	struct cordon_profile *p = parse_ok("version: 1\n"
					    "connector:\n"
					    "  description: >-\n"
					    "    folded\n"
					    "    text\n"
					    "  command:\n"
					    "    - \"/bin/true\"\n"
					    "    - '--flag=a b'\n"
					    "    - |-\n"
					    "      two\n"
					    "      lines\n"
					    "  env: {set: {EMPTY: \"\", N: 12}}\n" SANDBOX TOOLS);

	assert_string_equal(p->description, "folded text");
	assert_string_equal(p->command[0], "/bin/true");
	assert_string_equal(p->command[1], "--flag=a b");
	assert_string_equal(p->command[2], "two\nlines");
	assert_string_equal(p->env_set[0].name, "EMPTY");
	assert_string_equal(p->env_set[0].value, "");
	assert_string_equal(p->env_set[1].value, "12");
	cordon_profile_free(p);
}

/* Windows line endings and a UTF-8 byte-order mark are plain text too. */
static void test_crlf_and_bom(void **state)
{
	struct cordon_profile *p;

	p = parse_ok("\xef\xbb\xbfversion: 1\r\nconnector:\r\n  command: [/bin/true]\r\n"
		     "sandbox:\r\n  filesystem:\r\n    system: []\r\ntools:\r\n  risk: {a: read}\r\n");
	assert_string_equal(p->command[0], "/bin/true");
	assert_string_equal(p->risk[0].tool, "a");
	cordon_profile_free(p);
}

/* ---- files ---------------------------------------------------------------------- */

static char *write_temp(const char *dir, const char *name, const char *content, size_t len)
{
	char *path;
	int fd;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_load_file(void **state)
{
	char *dir = cordon_test_mkdtemp("profile");
	char *path = write_temp(dir, "my-conn.yaml", MINIMAL, strlen(MINIMAL));
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};

	assert_int_equal(cordon_profile_load(path, &p, &d), 0);
	assert_string_equal(p->id, "my-conn");
	assert_string_equal(p->path, path);
	cordon_profile_free(p);
	free(path);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
}

static void test_load_bad_file_names(void **state)
{
	static const char *const names[] = { "Bad_Name.yaml", "github.yml", ".yaml",
					     "-x.yaml",	      "github",	    "abcdefghijklmnopqrstuvwxyz0123456.yaml" };
	char *dir = cordon_test_mkdtemp("profile");

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		char *path = write_temp(dir, names[i], MINIMAL, strlen(MINIMAL));
		struct cordon_profile *p = NULL;
		struct cordon_diag d = {};
		char want[200];

		snprintf(want, sizeof(want),
			 "file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%s\")",
			 names[i]);
		assert_int_equal(cordon_profile_load(path, &p, &d), -EINVAL);
		assert_null(p);
		assert_string_equal(d.message, want);
		assert_int_equal(d.line, 0);
		free(path);
	}
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
}

static void test_load_ten_mib_file(void **state)
{
	char *dir = cordon_test_mkdtemp("profile");
	char *path = write_temp(dir, "big.yaml", MINIMAL, strlen(MINIMAL));
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};

	/* Sparse: the size is what is refused, before any read. */
	assert_int_equal(truncate(path, 10 * 1024 * 1024), 0);
	assert_int_equal(cordon_profile_load(path, &p, &d), -EFBIG);
	assert_null(p);
	assert_int_equal(d.error, EFBIG);
	assert_string_equal(d.message, "file is larger than 1 MiB (10485760 bytes)");
	free(path);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
}

static void test_load_not_regular(void **state)
{
	char *dir = cordon_test_mkdtemp("profile");
	char *path, *fifo;
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};

	assert_true(asprintf(&path, "%s/missing.yaml", dir) > 0);
	assert_int_equal(cordon_profile_load(path, &p, &d), -ENOENT);
	assert_string_equal(d.message, "cannot open: No such file or directory");
	assert_true(asprintf(&fifo, "%s/fifo.yaml", dir) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(cordon_profile_load(fifo, &p, &d), -EINVAL);
	assert_string_equal(d.message, "not a regular file");
	assert_null(p);
	free(fifo);
	free(path);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
}

/* The shipped samples: valid, and their default grant holds read-only tools. */
static void test_sample_profiles(void **state)
{
	static const char *const ids[] = { "filesystem", "shell", "github", "x-posting", "memory", "everything" };
	const char *src = cordon_test_env("CORDON_SOURCE_DIR", NULL);

	if (!src)
		cordon_test_skip("CORDON_SOURCE_DIR is not set (run through ctest)");
	for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
		struct cordon_profile *p = NULL;
		struct cordon_diag d = {};
		char *path;

		assert_true(asprintf(&path, "%s/profiles/%s.yaml", src, ids[i]) > 0);
		if (cordon_profile_load(path, &p, &d) < 0)
			print_message("%s:%u:%u: %s\n", path, d.line, d.column, d.message);
		assert_non_null(p);
		assert_string_equal(p->id, ids[i]);
		assert_int_equal(p->default_risk, CORDON_RISK_HIGH);
		assert_true(p->n_grant > 0);
		for (size_t g = 0; g < p->n_grant; g++)
			assert_int_equal(cordon_profile_tool_risk(p, p->grant[g]), CORDON_RISK_READ);
		cordon_profile_free(p);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_only_comments),
		cmocka_unit_test(test_binary_nul),
		cmocka_unit_test(test_binary_invalid_utf8),
		cmocka_unit_test(test_control_character),
		cmocka_unit_test(test_too_large_buffer),
		cmocka_unit_test(test_size_boundary),
		cmocka_unit_test(test_nesting_too_deep),
		cmocka_unit_test(test_anchor_refused),
		cmocka_unit_test(test_alias_refused),
		cmocka_unit_test(test_tag_refused),
		cmocka_unit_test(test_two_documents),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_tabs),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_file_name_not_an_id),
		cmocka_unit_test(test_relative_path),
		cmocka_unit_test(test_dotdot_path),
		cmocka_unit_test(test_filesystem_rules),
		cmocka_unit_test(test_allow_uid0_owner),
		cmocka_unit_test(test_sizes_and_ranges),
		cmocka_unit_test(test_network_rules),
		cmocka_unit_test(test_tools_rules),
		cmocka_unit_test(test_connector_rules),
		cmocka_unit_test(test_sandbox_rules),
		cmocka_unit_test(test_client_requests_and_surfaces),
		cmocka_unit_test(test_quoted_values_bounded),
		cmocka_unit_test(test_all_errors_collected),
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_full_profile),
		cmocka_unit_test(test_string_styles),
		cmocka_unit_test(test_crlf_and_bom),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_bad_file_names),
		cmocka_unit_test(test_load_ten_mib_file),
		cmocka_unit_test(test_load_not_regular),
		cmocka_unit_test(test_sample_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
