/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure parts of the launcher: Landlock access masks per ABI (the fallthrough
 * downgrade), the per-access rights cordon grants, the SHA-256 behind the
 * report's policy hash (FIPS 180-4 test vectors), and shell exit codes. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "landlock-uapi.h"
#include "landlock.h"
#include "spawn-internal.h"
#include "spawn.h"

static void test_abi_masks_fallthrough(void **state)
{
	struct cordon_landlock_masks m;

	(void)state;
	m = cordon_landlock_abi_masks(0);
	assert_int_equal(m.fs, 0);
	assert_int_equal(m.net, 0);
	assert_int_equal(m.scoped, 0);
	assert_int_equal(cordon_landlock_abi_masks(1).fs, 0x1fff);
	assert_int_equal(cordon_landlock_abi_masks(2).fs, 0x3fff);
	assert_int_equal(cordon_landlock_abi_masks(3).fs, 0x7fff);
	m = cordon_landlock_abi_masks(4);
	assert_int_equal(m.fs, 0x7fff);
	assert_int_equal(m.net, LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP);
	assert_int_equal(m.scoped, 0);
	assert_int_equal(cordon_landlock_abi_masks(5).fs, 0xffff);
	m = cordon_landlock_abi_masks(6);
	assert_int_equal(m.scoped, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
	/* Newer ABIs than cordon knows handle at least what it knows. */
	m = cordon_landlock_abi_masks(42);
	assert_int_equal(m.fs, 0xffff);
	assert_int_equal(m.net, 0x3);
	assert_int_equal(m.scoped, 0x3);
}

static void test_access_rights(void **state)
{
	uint64_t rw = cordon_landlock_fs_access(CORDON_ACCESS_READ_WRITE);

	(void)state;
	assert_int_equal(cordon_landlock_fs_access(CORDON_ACCESS_READ),
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR);
	assert_int_equal(cordon_landlock_fs_access(CORDON_ACCESS_READ_EXEC),
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE);
	/* read-write never executes, never makes devices, never ioctls devices. */
	assert_int_equal(rw & LANDLOCK_ACCESS_FS_EXECUTE, 0);
	assert_int_equal(rw & LANDLOCK_ACCESS_FS_MAKE_CHAR, 0);
	assert_int_equal(rw & LANDLOCK_ACCESS_FS_MAKE_BLOCK, 0);
	assert_int_equal(rw & LANDLOCK_ACCESS_FS_IOCTL_DEV, 0);
	assert_true(rw & LANDLOCK_ACCESS_FS_WRITE_FILE);
	assert_true(rw & LANDLOCK_ACCESS_FS_REFER);
	assert_true(rw & LANDLOCK_ACCESS_FS_TRUNCATE);
	assert_int_equal(cordon_landlock_fs_dev_node() & LANDLOCK_ACCESS_FS_EXECUTE, 0);
}

static void test_ruleset_refused_without_landlock(void **state)
{
	struct cordon_landlock_masks want = cordon_landlock_abi_masks(7), eff = { 1, 1, 1 };
	int fd = 12345;

	(void)state;
	assert_int_equal(cordon_landlock_ruleset_new(0, &want, &eff, &fd), -EOPNOTSUPP);
	assert_int_equal(fd, 12345); /* ret_ untouched on failure */
	assert_int_equal(eff.fs, 1);
}

static void sha(const char *in, size_t len, const char *want)
{
	char out[65];

	cordon_sha256_hex(in, len, out);
	assert_string_equal(out, want);
}

static void test_sha256_vectors(void **state)
{
	char *mil;

	(void)state;
	sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 56 bytes: the length no longer fits the first padding block. */
	sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	mil = malloc(1000000);
	assert_non_null(mil);
	memset(mil, 'a', 1000000);
	sha(mil, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(mil);
}

static void test_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(cordon_exit_code(W_EXITCODE(0, 0)), 0);
	assert_int_equal(cordon_exit_code(W_EXITCODE(42, 0)), 42);
	assert_int_equal(cordon_exit_code(W_EXITCODE(0, SIGKILL)), 137);
	assert_int_equal(cordon_exit_code(W_EXITCODE(0, SIGSYS)), 128 + SIGSYS);
}

static void test_control_state_names(void **state)
{
	(void)state;
	assert_string_equal(cordon_control_state_to_string(CORDON_STATE_ENFORCED), "enforced");
	assert_string_equal(cordon_control_state_to_string(CORDON_STATE_DEGRADED), "degraded");
	assert_string_equal(cordon_control_state_to_string(CORDON_STATE_UNAVAILABLE), "unavailable");
	assert_string_equal(cordon_control_state_to_string(CORDON_STATE_DISABLED_BY_POLICY), "disabled_by_policy");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_masks_fallthrough),
		cmocka_unit_test(test_access_rights),
		cmocka_unit_test(test_ruleset_refused_without_landlock),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_control_state_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
