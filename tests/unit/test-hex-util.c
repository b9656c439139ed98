/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launcher/basic/hex-util.c: the lower-case hex encoder and validator. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hex-util.h"

static void test_hex_encode(void **state)
{
	const uint8_t in[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(in) + 1];

	memset(out, 'X', sizeof(out));
	hex_encode(in, sizeof(in), out);
	assert_string_equal(out, "00017f80abff");
	hex_encode(in, 0, out);
	assert_string_equal(out, "");
}

static void test_unhex_lower(void **state)
{
	assert_int_equal(unhex_lower('0'), 0);
	assert_int_equal(unhex_lower('9'), 9);
	assert_int_equal(unhex_lower('a'), 10);
	assert_int_equal(unhex_lower('f'), 15);
	assert_int_equal(unhex_lower('A'), -EINVAL);
	assert_int_equal(unhex_lower('g'), -EINVAL);
	assert_int_equal(unhex_lower('\0'), -EINVAL);
}

static void test_hex_is_lower_n(void **state)
{
	assert_true(hex_is_lower_n("0123456789abcdef", 16));
	assert_true(hex_is_lower_n("", 0));
	assert_false(hex_is_lower_n("0123456789abcdef", 15)); /* longer */
	assert_false(hex_is_lower_n("0123456789abcde", 16));  /* shorter */
	assert_false(hex_is_lower_n("0123456789ABCDEF", 16)); /* upper case */
	assert_false(hex_is_lower_n("0123456789abcdeg", 16));
	assert_false(hex_is_lower_n(NULL, 0));
}

static void test_hex_roundtrip(void **state)
{
	uint8_t in[32];
	char out[65];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	hex_encode(in, sizeof(in), out);
	assert_true(hex_is_lower_n(out, 64));
	for (size_t i = 0; i < sizeof(in); i++)
		assert_int_equal(unhex_lower(out[2 * i]) << 4 | unhex_lower(out[2 * i + 1]), in[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex_encode),
		cmocka_unit_test(test_unhex_lower),
		cmocka_unit_test(test_hex_is_lower_n),
		cmocka_unit_test(test_hex_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
