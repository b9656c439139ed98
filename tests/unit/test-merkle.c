/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RFC 6962 Merkle tree hashes: published vectors and a recursive reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "crypto.h"
#include "merkle.h"
#include "hex-util.h"

/* The Certificate Transparency reference leaves and their tree heads for
 * sizes 0..8 (RFC 6962 test data, as published by certificate-transparency
 * and transparency-dev/merkle). */
static const struct {
	const char *data;
	size_t len;
} ct_leaves[] = {
	{ "", 0 },
	{ "\x00", 1 },
	{ "\x10", 1 },
	{ "\x20\x21", 2 },
	{ "\x30\x31", 2 },
	{ "\x40\x41\x42\x43", 4 },
	{ "\x50\x51\x52\x53\x54\x55\x56\x57", 8 },
	{ "\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f", 16 },
};
static const char *ct_roots[] = {
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

static void hexof(const uint8_t h[32], char out[65])
{
	hex_encode(h, 32, out);
}

static void test_rfc6962_vectors(void **state)
{
	uint8_t leaves[8][32], root[32];
	char hex[65];
	struct cordon_merkle_stream s;

	for (size_t i = 0; i < 8; i++)
		cordon_merkle_leaf_hash(ct_leaves[i].data, ct_leaves[i].len, leaves[i]);

	cordon_merkle_stream_init(&s);
	for (size_t n = 0; n <= 8; n++) {
		cordon_merkle_root((const uint8_t(*)[32])leaves, n, root);
		hexof(root, hex);
		if (strcmp(hex, ct_roots[n]) != 0)
			fail_msg("size %zu: root %s, RFC 6962 data says %s", n, hex, ct_roots[n]);

		cordon_merkle_stream_root(&s, root);
		hexof(root, hex);
		assert_string_equal(hex, ct_roots[n]);
		assert_int_equal(s.size, n);
		if (n < 8)
			cordon_merkle_stream_append_record(&s, ct_leaves[n].data, ct_leaves[n].len);
	}
}

static void test_leaf_and_node_prefixes(void **state)
{
	uint8_t h[32], want[32], l[32], r[32], buf[65];

	/* Leaf: SHA-256(0x00 ‖ data). */
	cordon_merkle_leaf_hash("abc", 3, h);
	crypto_hash_sha256(want,
			   (const uint8_t *)"\x00"
					    "abc",
			   4);
	assert_memory_equal(h, want, 32);

	/* Node: SHA-256(0x01 ‖ left ‖ right), and order matters. */
	memset(l, 0x11, 32);
	memset(r, 0x22, 32);
	buf[0] = 0x01;
	memcpy(buf + 1, l, 32);
	memcpy(buf + 33, r, 32);
	crypto_hash_sha256(want, buf, sizeof(buf));
	cordon_merkle_node_hash(l, r, h);
	assert_memory_equal(h, want, 32);
	cordon_merkle_node_hash(r, l, h);
	assert_memory_not_equal(h, want, 32);

	/* A leaf hash never equals a node hash of the same 64 bytes read as
	 * data: the domain separation of RFC 6962 §2.1. */
	cordon_merkle_leaf_hash(buf + 1, 64, h);
	assert_memory_not_equal(h, want, 32);
}

/* The recursive definition, straight from RFC 6962 §2.1. */
static void mth_reference(const uint8_t (*leaves)[32], size_t n, uint8_t out[32])
{
	size_t k = 1;
	uint8_t l[32], r[32];

	if (n == 0) {
		crypto_hash_sha256(out, (const uint8_t *)"", 0);
		return;
	}
	if (n == 1) {
		memcpy(out, leaves[0], 32);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	mth_reference(leaves, k, l);
	mth_reference(leaves + k, n - k, r);
	cordon_merkle_node_hash(l, r, out);
}

static void test_matches_recursive_definition(void **state)
{
	enum { N = 300 };
	uint8_t(*leaves)[32] = calloc(N, 32), a[32], b[32], c[32];
	struct cordon_merkle_stream s, copy;

	assert_non_null(leaves);
	for (size_t i = 0; i < N; i++) {
		uint8_t rec[8];

		cordon_u64be(i * 2654435761u, rec);
		cordon_merkle_leaf_hash(rec, sizeof(rec), leaves[i]);
	}
	cordon_merkle_stream_init(&s);
	for (size_t n = 0; n <= N; n++) {
		mth_reference((const uint8_t(*)[32])leaves, n, a);
		cordon_merkle_root((const uint8_t(*)[32])leaves, n, b);
		cordon_merkle_stream_root(&s, c);
		if (memcmp(a, b, 32) != 0 || memcmp(a, c, 32) != 0)
			fail_msg("size %zu: root differs from the recursive definition", n);
		assert_int_equal(s.depth, __builtin_popcountll(n));
		if (n < N)
			cordon_merkle_stream_append(&s, leaves[n]);
	}

	/* The stream is plain data: a copy continues independently. */
	copy = s;
	cordon_merkle_stream_append(&copy, leaves[0]);
	cordon_merkle_stream_root(&s, a);
	mth_reference((const uint8_t(*)[32])leaves, N, b);
	assert_memory_equal(a, b, 32);
	cordon_merkle_stream_root(&copy, c);
	assert_memory_not_equal(a, c, 32);
	free(leaves);
}

/* Any change to any leaf, or to the order, changes the root. */
static void test_root_sensitivity(void **state)
{
	uint8_t leaves[13][32], ref[32], got[32];

	for (int i = 0; i < 13; i++) {
		char rec[16];

		snprintf(rec, sizeof(rec), "record-%d", i);
		cordon_merkle_leaf_hash(rec, strlen(rec), leaves[i]);
	}
	cordon_merkle_root((const uint8_t(*)[32])leaves, 13, ref);
	for (int i = 0; i < 13; i++) {
		leaves[i][0] ^= 1;
		cordon_merkle_root((const uint8_t(*)[32])leaves, 13, got);
		assert_memory_not_equal(ref, got, 32);
		leaves[i][0] ^= 1;
	}
	{
		uint8_t t[32];

		memcpy(t, leaves[3], 32);
		memcpy(leaves[3], leaves[4], 32);
		memcpy(leaves[4], t, 32);
		cordon_merkle_root((const uint8_t(*)[32])leaves, 13, got);
		assert_memory_not_equal(ref, got, 32);
	}
	cordon_merkle_root((const uint8_t(*)[32])leaves, 12, got);
	assert_memory_not_equal(ref, got, 32);
	cordon_merkle_root(NULL, 0, got);
	{
		char hex[65];

		hexof(got, hex);
		assert_string_equal(hex, ct_roots[0]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc6962_vectors),
		cmocka_unit_test(test_leaf_and_node_prefixes),
		cmocka_unit_test(test_matches_recursive_definition),
		cmocka_unit_test(test_root_sensitivity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
