/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's small cryptographic vocabulary, all on libsodium:
 *   - length-prefixed field encoding (one definition, used by every hash/MAC),
 *   - the tool-definition fingerprint (inventory),
 *   - the per-process secret key with per-purpose subkeys,
 *   - the approval binding MAC, its display code, confirmation codes.
 * Byte-exact layouts: docs/formats.md. Libraries never log. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

#define CORDON_HASH_LEN 32 /* SHA-256 and HMAC-SHA-256 output */
#define CORDON_KEY_LEN	32 /* process key and every subkey */

/* ---- Length-prefixed fields ------------------------------------------------
 * Every variable-length field that enters a hash or MAC is written as
 *   u64be(len) ‖ bytes
 * (8-byte big-endian length, then the bytes). Integers are written as a
 * field of exactly 8 bytes: u64be(8) ‖ u64be(value). Writing everything
 * self-delimited makes the encoding injective: no two different field
 * sequences produce the same byte string. */
#define CORDON_LP_LEN_BYTES 8

/* Writes the 8-byte big-endian encoding of v to out. */
void cordon_u64be(uint64_t v, uint8_t out[static 8]);

/* ---- Tool fingerprint ------------------------------------------------------
 * SHA-256 over
 *   LP("cordon.tool.v1") ‖ LP(JCS(tool_def)) ‖ instructions_field
 * where instructions_field is the single byte 0x00 when the server sent no
 * instructions, and 0x01 ‖ LP(instructions UTF-8) when it did (so absent and
 * "" differ; instructions is a NUL-free C string, as cordon_canon_decode()
 * guarantees). tool_def is the whole tool object as the server listed it
 * (name, title, description, inputSchema, outputSchema, annotations, _meta and
 * anything else it carries). It must be an object and admissible
 * (cordon_canon_admit). Writes 32 bytes to ret and returns 0, or -EINVAL (not
 * an object), one of the canon.h errnos, -ENOMEM. */
#define CORDON_TOOL_FINGERPRINT_LABEL "cordon.tool.v1"
int cordon_tool_fingerprint(const json_t *tool_def, const char *instructions, uint8_t ret[static CORDON_HASH_LEN]);

/* ---- Process key -------------------------------------------------------------
 * 32 random bytes drawn at process start, held in sodium_malloc'd memory that
 * is locked (sodium_mlock: never swapped), excluded from core dumps and kept
 * PROT_NONE (sodium_mprotect_noaccess) except while a MAC is being computed.
 * It is never written anywhere: approvals die with the process by design.
 * The key object serializes its users with an internal mutex. */
struct cordon_key;

/* Purposes: each gets its own subkey, so a MAC made for one purpose can never
 * verify for another. Values are part of the format (subkey ids): never
 * renumber, only append. */
enum cordon_key_purpose {
	CORDON_KEY_PURPOSE_APPROVAL = 1,  /* approval binding */
	CORDON_KEY_PURPOSE_TOKEN = 2,	  /* opaque handles given to clients (ids, cursors) */
	CORDON_KEY_PURPOSE_AUDIT = 3,	  /* keyed digests in audit records */
	CORDON_KEY_PURPOSE_TEST = 0x7fff, /* tests only */
};

/* Creates a key from libsodium's CSPRNG. Calls sodium_init(). Returns 0 and
 * writes *ret, or -ENOMEM / -EIO (sodium_init failed) / -EPERM (mlock refused:
 * RLIMIT_MEMLOCK; the broker must not run with a swappable key). */
int cordon_key_new(struct cordon_key **ret);

/* Creates a key from fixed bytes. For tests and test vectors only: a
 * production key never comes from outside the process. */
int cordon_key_new_from_bytes(const uint8_t bytes[static CORDON_KEY_LEN], struct cordon_key **ret);

/* Wipes and frees. NULL is fine. */
void cordon_key_free(struct cordon_key *k);
static inline void cordon_key_freep(struct cordon_key **k)
{
	cordon_key_free(*k);
}

/* For tests only: the address of the key memory, so a test can check that
 * touching it outside a MAC computation faults (PROT_NONE). Never use it to
 * read the key. */
const void *cordon_key_memory_for_tests(const struct cordon_key *k);

/* HMAC-SHA-256(subkey(purpose), msg). Writes 32 bytes to ret, returns 0 or
 * -EINVAL (unknown purpose / NULL key). */
int cordon_key_mac(struct cordon_key *k, enum cordon_key_purpose purpose, const void *msg, size_t len,
		   uint8_t ret[static CORDON_HASH_LEN]);

/* Recomputes the MAC and compares it with mac in constant time
 * (sodium_memcmp). Returns 0 on match, -EBADMSG on mismatch, -EINVAL. */
int cordon_key_mac_verify(struct cordon_key *k, enum cordon_key_purpose purpose, const void *msg, size_t len,
			  const uint8_t mac[static CORDON_HASH_LEN]);

/* ---- Approval binding --------------------------------------------------------
 * binding = HMAC-SHA-256(subkey(APPROVAL),
 *   LP("cordon.approval") ‖ U64(version) ‖ LP(session_id) ‖ LP(connector_id) ‖
 *   U64(launch_generation) ‖ LP(tool_name) ‖ LP(tool_fingerprint, 32 bytes) ‖
 *   U64(policy_epoch) ‖ LP(risk_tier) ‖ LP(JCS(arguments)))
 * where LP(x) = u64be(len) ‖ x and U64(v) = LP(u64be(v)). */
#define CORDON_APPROVAL_LABEL		"cordon.approval"
#define CORDON_APPROVAL_BINDING_VERSION 1u

struct cordon_approval_fields {
	uint32_t version; /* CORDON_APPROVAL_BINDING_VERSION; 0 means that */
	const char *session_id;
	const char *connector_id;
	uint64_t launch_generation;
	const char *tool_name;
	const uint8_t *tool_fingerprint; /* CORDON_HASH_LEN bytes */
	uint64_t policy_epoch;
	const char *risk_tier; /* tier name as in the profile: "read", "low", "high", "critical", ... */

	/* The arguments: EITHER the decoded value (NULL = absent = {}), which is
	 * JCS-encoded here, OR (arguments_jcs != NULL) the canonical bytes the
	 * caller already produced with cordon_jcs_encode() — the very bytes it
	 * forwards. Setting both is -EINVAL. */
	const json_t *arguments;
	const char *arguments_jcs;
	size_t arguments_jcs_len;
};

/* Computes the binding. Returns 0 and writes 32 bytes to ret, or -EINVAL
 * (missing string field, NULL fingerprint, unsupported version, both
 * argument forms, arguments not an object), a canon.h errno from encoding the
 * arguments, -ENOMEM. */
int cordon_approval_binding(struct cordon_key *k, const struct cordon_approval_fields *f,
			    uint8_t ret[static CORDON_HASH_LEN]);

/* Recomputes the binding for f and compares it with expected in constant
 * time. Returns 0 on match, -EBADMSG on mismatch, or an error of
 * cordon_approval_binding(). Authorization always uses all 32 bytes. */
int cordon_approval_binding_verify(struct cordon_key *k, const struct cordon_approval_fields *f,
				   const uint8_t expected[static CORDON_HASH_LEN]);

/* Constant-time equality of two 32-byte digests (sodium_memcmp). */
bool cordon_digest_equal(const uint8_t a[static CORDON_HASH_LEN], const uint8_t b[static CORDON_HASH_LEN]);

/* Display code: RFC 4648 base32 (alphabet A–Z 2–7, no padding) of the first
 * 5 bytes of the binding: exactly 8 characters. For humans to talk about the
 * same approval; never used for authorization. buf gets 9 bytes (NUL). */
#define CORDON_DISPLAY_CODE_LEN 8
void cordon_approval_display_code(const uint8_t binding[static CORDON_HASH_LEN],
				  char ret[static CORDON_DISPLAY_CODE_LEN + 1]);

/* Confirmation code for the critical tier: 8 characters of RFC 4648 base32
 * from 5 random bytes (40 bits), shown only on the operator surface. Returns 0
 * or -EIO (sodium_init failed). */
#define CORDON_CONFIRM_CODE_LEN 8
int cordon_confirmation_code_new(char ret[static CORDON_CONFIRM_CODE_LEN + 1]);

/* Compares a confirmation code typed by an operator with the stored one in
 * constant time; case-insensitive for letters. Returns true on match. */
bool cordon_confirmation_code_equal(const char *expected, const char *typed);

/* RFC 4648 base32 encoder without padding: writes ceil(8n/5) characters and a
 * NUL to out. */
void cordon_base32(const uint8_t *p, size_t n, char *out);
