/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fingerprints, the process key and approval bindings (docs/formats.md). */
#include "crypto.h"

#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "canon.h"
#include "cleanup.h"

/* crypto_kdf context: exactly crypto_kdf_CONTEXTBYTES (8) characters. Part of
 * the format: changing it changes every subkey. */
#define KDF_CONTEXT "cordonk1"

void cordon_u64be(uint64_t v, uint8_t out[static 8])
{
	for (int i = 7; i >= 0; i--) {
		out[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}

void cordon_base32(const uint8_t *p, size_t n, char *out)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | p[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = alphabet[(acc >> (bits - 5)) & 0x1f];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[o++] = alphabet[(acc << (5 - bits)) & 0x1f];
	out[o] = 0;
}

/* ---- Length-prefixed streams over SHA-256 and HMAC-SHA-256 ------------------------ */

static void sha_lp(crypto_hash_sha256_state *st, const void *p, size_t n)
{
	uint8_t len[8];

	cordon_u64be(n, len);
	crypto_hash_sha256_update(st, len, sizeof(len));
	if (n > 0)
		crypto_hash_sha256_update(st, p, n);
}

static void mac_lp(crypto_auth_hmacsha256_state *st, const void *p, size_t n)
{
	uint8_t len[8];

	cordon_u64be(n, len);
	crypto_auth_hmacsha256_update(st, len, sizeof(len));
	if (n > 0)
		crypto_auth_hmacsha256_update(st, p, n);
}

static void mac_u64(crypto_auth_hmacsha256_state *st, uint64_t v)
{
	uint8_t b[8];

	cordon_u64be(v, b);
	mac_lp(st, b, sizeof(b));
}

/* ---- Fingerprint ---------------------------------------------------------------- */

int cordon_tool_fingerprint(const json_t *tool_def, const char *instructions, uint8_t ret[static CORDON_HASH_LEN])
{
	_cleanup_free_ char *jcs = NULL;
	crypto_hash_sha256_state st;
	size_t jcs_len;
	int r;

	if (!json_is_object(tool_def))
		return -EINVAL;
	r = cordon_canon_admit(tool_def, NULL, NULL);
	if (r < 0)
		return r;
	r = cordon_jcs_encode(tool_def, &jcs, &jcs_len);
	if (r < 0)
		return r;

	crypto_hash_sha256_init(&st);
	sha_lp(&st, CORDON_TOOL_FINGERPRINT_LABEL, strlen(CORDON_TOOL_FINGERPRINT_LABEL));
	sha_lp(&st, jcs, jcs_len);
	if (instructions) {
		const uint8_t present = 0x01;

		crypto_hash_sha256_update(&st, &present, 1);
		sha_lp(&st, instructions, strlen(instructions));
	} else {
		const uint8_t absent = 0x00;

		crypto_hash_sha256_update(&st, &absent, 1);
	}
	crypto_hash_sha256_final(&st, ret);
	return 0;
}

/* ---- Process key -------------------------------------------------------------------- */

struct cordon_key {
	/* sodium_malloc'd: [0, 32) master key, [32, 64) scratch for one subkey.
	 * PROT_NONE whenever no MAC is being set up. */
	uint8_t *mem;
	pthread_mutex_t lock;
};

static int key_alloc(struct cordon_key **ret)
{
	struct cordon_key *k;

	if (sodium_init() < 0)
		return -EIO;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->mem = sodium_malloc(2 * CORDON_KEY_LEN);
	if (!k->mem) {
		free(k);
		return -ENOMEM;
	}
	/* sodium_malloc tries to lock on its own but ignores failure; a key
	 * that can be swapped to disk is "written somewhere", so insist. */
	if (sodium_mlock(k->mem, 2 * CORDON_KEY_LEN) < 0) {
		int r = errno == ENOMEM ? -EPERM : negative_errno();

		sodium_free(k->mem);
		free(k);
		return r;
	}
	pthread_mutex_init(&k->lock, NULL);
	*ret = k;
	return 0;
}

int cordon_key_new(struct cordon_key **ret)
{
	struct cordon_key *k;
	int r;

	r = key_alloc(&k);
	if (r < 0)
		return r;
	randombytes_buf(k->mem, CORDON_KEY_LEN);
	sodium_mprotect_noaccess(k->mem);
	*ret = k;
	return 0;
}

int cordon_key_new_from_bytes(const uint8_t bytes[static CORDON_KEY_LEN], struct cordon_key **ret)
{
	struct cordon_key *k;
	int r;

	r = key_alloc(&k);
	if (r < 0)
		return r;
	memcpy(k->mem, bytes, CORDON_KEY_LEN);
	sodium_mprotect_noaccess(k->mem);
	*ret = k;
	return 0;
}

void cordon_key_free(struct cordon_key *k)
{
	if (!k)
		return;
	/* sodium_free() unprotects, wipes, unlocks and unmaps. */
	sodium_free(k->mem);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

const void *cordon_key_memory_for_tests(const struct cordon_key *k)
{
	return k ? k->mem : NULL;
}

static bool purpose_valid(enum cordon_key_purpose p)
{
	switch (p) {
	case CORDON_KEY_PURPOSE_APPROVAL:
	case CORDON_KEY_PURPOSE_TOKEN:
	case CORDON_KEY_PURPOSE_AUDIT:
	case CORDON_KEY_PURPOSE_TEST:
		return true;
	}
	return false;
}

/* Initialises an HMAC-SHA-256 state keyed with the purpose's subkey. The
 * master key is readable only inside this function; the subkey is wiped
 * before it returns, so only the HMAC state (which the caller must wipe)
 * outlives it. */
static int key_mac_begin(struct cordon_key *k, enum cordon_key_purpose purpose, crypto_auth_hmacsha256_state *st)
{
	uint8_t *subkey;
	int r = 0;

	if (!k || !purpose_valid(purpose))
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	subkey = k->mem + CORDON_KEY_LEN;
	if (sodium_mprotect_readwrite(k->mem) < 0) {
		r = negative_errno();
		goto out;
	}
	if (crypto_kdf_derive_from_key(subkey, CORDON_KEY_LEN, (uint64_t)purpose, KDF_CONTEXT, k->mem) < 0)
		r = -EIO;
	else
		crypto_auth_hmacsha256_init(st, subkey, CORDON_KEY_LEN);
	sodium_memzero(subkey, CORDON_KEY_LEN);
	sodium_mprotect_noaccess(k->mem);
out:
	pthread_mutex_unlock(&k->lock);
	return r;
}

int cordon_key_mac(struct cordon_key *k, enum cordon_key_purpose purpose, const void *msg, size_t len,
		   uint8_t ret[static CORDON_HASH_LEN])
{
	crypto_auth_hmacsha256_state st;
	int r;

	if (!msg && len > 0)
		return -EINVAL;
	r = key_mac_begin(k, purpose, &st);
	if (r < 0)
		return r;
	if (len > 0)
		crypto_auth_hmacsha256_update(&st, msg, len);
	crypto_auth_hmacsha256_final(&st, ret);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

bool cordon_digest_equal(const uint8_t a[static CORDON_HASH_LEN], const uint8_t b[static CORDON_HASH_LEN])
{
	return sodium_memcmp(a, b, CORDON_HASH_LEN) == 0;
}

int cordon_key_mac_verify(struct cordon_key *k, enum cordon_key_purpose purpose, const void *msg, size_t len,
			  const uint8_t mac[static CORDON_HASH_LEN])
{
	uint8_t want[CORDON_HASH_LEN];
	int r;

	r = cordon_key_mac(k, purpose, msg, len, want);
	if (r < 0)
		return r;
	r = cordon_digest_equal(want, mac) ? 0 : -EBADMSG;
	sodium_memzero(want, sizeof(want));
	return r;
}

/* ---- Approval binding ----------------------------------------------------------------- */

int cordon_approval_binding(struct cordon_key *k, const struct cordon_approval_fields *f,
			    uint8_t ret[static CORDON_HASH_LEN])
{
	_cleanup_free_ char *encoded = NULL;
	crypto_auth_hmacsha256_state st;
	const char *args;
	size_t args_len;
	uint32_t version;
	int r;

	if (!f || !f->session_id || !f->connector_id || !f->tool_name || !f->tool_fingerprint || !f->risk_tier)
		return -EINVAL;
	version = f->version ? f->version : CORDON_APPROVAL_BINDING_VERSION;
	if (version != CORDON_APPROVAL_BINDING_VERSION)
		return -EINVAL;

	if (f->arguments_jcs) {
		if (f->arguments)
			return -EINVAL;
		args = f->arguments_jcs;
		args_len = f->arguments_jcs_len;
	} else if (!f->arguments) {
		args = "{}"; /* absent arguments are {} everywhere */
		args_len = 2;
	} else {
		if (!json_is_object(f->arguments))
			return -EINVAL;
		r = cordon_jcs_encode(f->arguments, &encoded, &args_len);
		if (r < 0)
			return r;
		args = encoded;
	}

	r = key_mac_begin(k, CORDON_KEY_PURPOSE_APPROVAL, &st);
	if (r < 0)
		return r;
	mac_lp(&st, CORDON_APPROVAL_LABEL, strlen(CORDON_APPROVAL_LABEL));
	mac_u64(&st, version);
	mac_lp(&st, f->session_id, strlen(f->session_id));
	mac_lp(&st, f->connector_id, strlen(f->connector_id));
	mac_u64(&st, f->launch_generation);
	mac_lp(&st, f->tool_name, strlen(f->tool_name));
	mac_lp(&st, f->tool_fingerprint, CORDON_HASH_LEN);
	mac_u64(&st, f->policy_epoch);
	mac_lp(&st, f->risk_tier, strlen(f->risk_tier));
	mac_lp(&st, args, args_len);
	crypto_auth_hmacsha256_final(&st, ret);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

int cordon_approval_binding_verify(struct cordon_key *k, const struct cordon_approval_fields *f,
				   const uint8_t expected[static CORDON_HASH_LEN])
{
	uint8_t got[CORDON_HASH_LEN];
	int r;

	r = cordon_approval_binding(k, f, got);
	if (r < 0)
		return r;
	return cordon_digest_equal(got, expected) ? 0 : -EBADMSG;
}

void cordon_approval_display_code(const uint8_t binding[static CORDON_HASH_LEN],
				  char ret[static CORDON_DISPLAY_CODE_LEN + 1])
{
	cordon_base32(binding, 5, ret);
}

int cordon_confirmation_code_new(char ret[static CORDON_CONFIRM_CODE_LEN + 1])
{
	uint8_t b[5];

	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(b, sizeof(b));
	cordon_base32(b, sizeof(b), ret);
	sodium_memzero(b, sizeof(b));
	return 0;
}

bool cordon_confirmation_code_equal(const char *expected, const char *typed)
{
	char norm[CORDON_CONFIRM_CODE_LEN];

	if (!expected || !typed || strlen(expected) != CORDON_CONFIRM_CODE_LEN ||
	    strlen(typed) != CORDON_CONFIRM_CODE_LEN)
		return false;
	for (size_t i = 0; i < CORDON_CONFIRM_CODE_LEN; i++) {
		char c = typed[i];

		norm[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
	}
	return sodium_memcmp(norm, expected, CORDON_CONFIRM_CODE_LEN) == 0;
}
