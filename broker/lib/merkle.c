/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RFC 6962 §2.1 Merkle tree hashes. */
#include "merkle.h"

#include <sodium.h>
#include <string.h>

void cordon_merkle_leaf_hash(const void *record, size_t len, uint8_t ret[static CORDON_MERKLE_HASH_LEN])
{
	crypto_hash_sha256_state st;
	const uint8_t prefix = 0x00;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &prefix, 1);
	if (len > 0)
		crypto_hash_sha256_update(&st, record, len);
	crypto_hash_sha256_final(&st, ret);
}

void cordon_merkle_node_hash(const uint8_t left[static CORDON_MERKLE_HASH_LEN],
			     const uint8_t right[static CORDON_MERKLE_HASH_LEN],
			     uint8_t ret[static CORDON_MERKLE_HASH_LEN])
{
	crypto_hash_sha256_state st;
	const uint8_t prefix = 0x01;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &prefix, 1);
	crypto_hash_sha256_update(&st, left, CORDON_MERKLE_HASH_LEN);
	crypto_hash_sha256_update(&st, right, CORDON_MERKLE_HASH_LEN);
	crypto_hash_sha256_final(&st, ret);
}

void cordon_merkle_stream_init(struct cordon_merkle_stream *s)
{
	memset(s, 0, sizeof(*s));
}

/* The stack holds the roots of the perfect subtrees that make up the first
 * `size` leaves, one per set bit of size, largest first. Appending a leaf is
 * binary increment: merge equal-sized trailing subtrees while the low bits
 * carry. */
void cordon_merkle_stream_append(struct cordon_merkle_stream *s, const uint8_t leaf[static CORDON_MERKLE_HASH_LEN])
{
	uint8_t h[CORDON_MERKLE_HASH_LEN];

	memcpy(h, leaf, sizeof(h));
	for (uint64_t n = s->size; n & 1; n >>= 1) {
		s->depth--;
		cordon_merkle_node_hash(s->stack[s->depth], h, h);
	}
	memcpy(s->stack[s->depth++], h, sizeof(h));
	s->size++;
}

void cordon_merkle_stream_append_record(struct cordon_merkle_stream *s, const void *record, size_t len)
{
	uint8_t h[CORDON_MERKLE_HASH_LEN];

	cordon_merkle_leaf_hash(record, len, h);
	cordon_merkle_stream_append(s, h);
}

/* MTH splits at the largest power of two below n, so the tree over the
 * subtrees is right-leaning: fold from the smallest (rightmost) upward. */
void cordon_merkle_stream_root(const struct cordon_merkle_stream *s, uint8_t ret[static CORDON_MERKLE_HASH_LEN])
{
	uint8_t h[CORDON_MERKLE_HASH_LEN];

	if (s->depth == 0) {
		crypto_hash_sha256(ret, (const unsigned char *)"", 0);
		return;
	}
	memcpy(h, s->stack[s->depth - 1], sizeof(h));
	for (unsigned i = s->depth - 1; i-- > 0;)
		cordon_merkle_node_hash(s->stack[i], h, h);
	memcpy(ret, h, sizeof(h));
}

void cordon_merkle_root(const uint8_t (*leaves)[CORDON_MERKLE_HASH_LEN], size_t n,
			uint8_t ret[static CORDON_MERKLE_HASH_LEN])
{
	struct cordon_merkle_stream s;

	cordon_merkle_stream_init(&s);
	for (size_t i = 0; i < n; i++)
		cordon_merkle_stream_append(&s, leaves[i]);
	cordon_merkle_stream_root(&s, ret);
}
