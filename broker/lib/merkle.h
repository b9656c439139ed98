/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* RFC 6962 Merkle tree hashing for the audit log (§2.1):
 *   leaf hash  = SHA-256(0x00 ‖ record bytes)
 *   node hash  = SHA-256(0x01 ‖ left ‖ right)
 *   MTH({})    = SHA-256("")            (e3b0c442…b855)
 *   MTH({d0})  = leaf hash of d0
 *   MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two < n
 * Pure functions; thread-safe. */

#include <stddef.h>
#include <stdint.h>

#define CORDON_MERKLE_HASH_LEN 32

void cordon_merkle_leaf_hash(const void *record, size_t len, uint8_t ret[static CORDON_MERKLE_HASH_LEN]);
void cordon_merkle_node_hash(const uint8_t left[static CORDON_MERKLE_HASH_LEN],
			     const uint8_t right[static CORDON_MERKLE_HASH_LEN],
			     uint8_t ret[static CORDON_MERKLE_HASH_LEN]);

/* MTH of n leaves given as their leaf hashes (leaves may be NULL when n == 0).
 * Writes the root to ret. O(n) time, O(log n) memory. */
void cordon_merkle_root(const uint8_t (*leaves)[CORDON_MERKLE_HASH_LEN], size_t n,
			uint8_t ret[static CORDON_MERKLE_HASH_LEN]);

/* Incremental tree: append leaf hashes one at a time and read the MTH of
 * everything appended so far at any point, in O(log n), without keeping the
 * leaves. The audit writer keeps one of these to sign checkpoints; the
 * verifier rebuilds one from the stored records. Plain data: copyable,
 * no cleanup. */
struct cordon_merkle_stream {
	uint64_t size;				   /* leaves appended */
	uint8_t stack[64][CORDON_MERKLE_HASH_LEN]; /* perfect subtree roots, one per set bit of size,
						    * largest (leftmost) first */
	unsigned depth;				   /* entries used in stack == popcount(size) */
};

void cordon_merkle_stream_init(struct cordon_merkle_stream *s);
void cordon_merkle_stream_append(struct cordon_merkle_stream *s, const uint8_t leaf[static CORDON_MERKLE_HASH_LEN]);
/* Convenience: append cordon_merkle_leaf_hash(record). */
void cordon_merkle_stream_append_record(struct cordon_merkle_stream *s, const void *record, size_t len);
void cordon_merkle_stream_root(const struct cordon_merkle_stream *s, uint8_t ret[static CORDON_MERKLE_HASH_LEN]);
