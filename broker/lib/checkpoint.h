/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* C2SP tlog-checkpoint signed notes with Ed25519 (c2sp.org/signed-note,
 * c2sp.org/tlog-checkpoint), and the broker's signing key file.
 *
 * A note, byte for byte (docs/formats.md):
 *   <origin>\n<tree size, decimal, no leading zeros>\n<base64 root hash>\n
 *   \n
 *   — <key name> <base64(key id[4] ‖ Ed25519 signature[64])>\n     (one or more)
 * The signed text is the first three lines including the final newline;
 * key id = SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key[32])[0:4].
 *
 * The signing key lives in a file of mode 0600 created on first start; its
 * contents are one line in the Go/C2SP note signer-key form
 *   PRIVATE+KEY+<key name>+<key id, 8 hex>+<base64(0x01 ‖ seed[32])>\n
 * The secret is only ever held in sodium_malloc'd, locked memory. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

#define CORDON_NOTE_KEY_NAME_MAX     128
#define CORDON_CHECKPOINT_ORIGIN_MAX 256
/* The parser refuses larger notes. Generous enough for 16 post-quantum
 * cosignatures (C2SP: verifiers must accept at least 16 signatures). */
#define CORDON_NOTE_MAX_BYTES	   65536
#define CORDON_NOTE_MAX_SIGNATURES 16

struct cordon_checkpoint {
	char origin[CORDON_CHECKPOINT_ORIGIN_MAX + 1]; /* non-empty, printable UTF-8, no spaces, no '+' */
	uint64_t size;
	uint8_t root[32];
};

/* A public verifier: key name, Ed25519 public key and derived key id. */
struct cordon_note_verifier {
	char name[CORDON_NOTE_KEY_NAME_MAX + 1];
	uint8_t public_key[32];
	uint32_t key_id;
};

struct cordon_note_signer; /* opaque; secret in sodium_malloc'd memory */

/* Key names and origins: non-empty, at most the _MAX above, printable
 * (no byte < 0x21 or 0x7f: no spaces or controls), no '+'. (Non-ASCII UTF-8
 * is refused too, which also excludes Unicode spaces.) Returns true if ok. */
bool cordon_note_name_valid(const char *name);

/* Builds a verifier. Returns 0 or -EINVAL (invalid name). */
int cordon_note_verifier_init(struct cordon_note_verifier *ret, const char *name, const uint8_t public_key[static 32]);

/* The C2SP/Go verifier key string "<name>+<key id, 8 hex>+<base64(0x01 ‖ pub)>"
 * (what operators configure on other machines), malloc'd in *ret. Parse:
 * strict inverse; -EINVAL with diag on any mismatch (including a key id that
 * does not match the key). */
int cordon_note_verifier_format(const struct cordon_note_verifier *v, char **ret);
int cordon_note_verifier_parse(const char *vkey, struct cordon_note_verifier *ret, struct cordon_diag *d);

/* Signer from a 32-byte Ed25519 seed (tests, golden vectors). Calls
 * sodium_init(). Returns 0, -EINVAL (bad name), -ENOMEM, -EIO. */
int cordon_note_signer_new_from_seed(const char *name, const uint8_t seed[static 32], struct cordon_note_signer **ret);

/* Opens the key file at path, creating it (O_CREAT|O_EXCL, mode 0600, with a
 * new random seed and the given name) if it does not exist. An existing file
 * must be a regular file (not a symlink: O_NOFOLLOW), owned by the effective
 * uid, with no group/other permission bits, at most 1 KiB, in the exact
 * format above, and its key name must equal name; otherwise fails closed:
 * -EPERM (owner/mode), -EINVAL (format, name mismatch), -errno from the
 * syscalls. The diag says which and names the path. A partially written new
 * file is removed. Sets *ret_created (may be NULL) to whether it was created. */
int cordon_note_signer_load_or_create(const char *path, const char *name, struct cordon_note_signer **ret,
				      bool *ret_created, struct cordon_diag *d);

void cordon_note_signer_free(struct cordon_note_signer *s);
static inline void cordon_note_signer_freep(struct cordon_note_signer **s)
{
	cordon_note_signer_free(*s);
}

/* The signer's public half. */
void cordon_note_signer_verifier(const struct cordon_note_signer *s, struct cordon_note_verifier *ret);

/* Signs an arbitrary note text (generic C2SP signed note): text[0..len) must
 * end with '\n' after a non-empty last line, and be valid UTF-8 without
 * control bytes other than '\n'. Writes
 * "<text>\n— <name> <base64(key id ‖ signature)>\n" malloc'd to *ret.
 * Returns 0, -EINVAL, -ENOMEM. */
int cordon_note_sign(const struct cordon_note_signer *s, const char *text, size_t len, char **ret, size_t *ret_len);

/* Formats and signs a checkpoint. Writes a malloc'd NUL-terminated note to
 * *ret and its length to *ret_len (may be NULL). Returns 0, -EINVAL (origin
 * invalid), -ENOMEM. */
int cordon_checkpoint_sign(const struct cordon_note_signer *s, const struct cordon_checkpoint *c, char **ret,
			   size_t *ret_len);

/* Parses note[0..len) strictly and verifies it against v:
 *   - at most CORDON_NOTE_MAX_BYTES, valid UTF-8, no control bytes but '\n';
 *   - body exactly three lines: origin, size (decimal, no leading zeros,
 *     fits in uint64), base64 of exactly 32 bytes (canonical padding);
 *     extension lines are refused (cordon never writes them);
 *   - one blank line, then 1..CORDON_NOTE_MAX_SIGNATURES signature lines
 *     "— name base64\n" with a valid name and a decoded length >= 5;
 *   - signatures from other keys (different name or key id) are ignored;
 *     one whose name and key id match v must be exactly 68 bytes and verify,
 *     else the note is rejected; at least one must match v;
 *   - if expected_origin is non-NULL the origin must equal it.
 * Returns 0 and writes *ret (may be NULL) on success; -EBADMSG (format, with
 * diag naming line and problem), -EKEYREJECTED (a matching signature failed
 * to verify), -ENOKEY (no signature from v), -EINVAL (origin mismatch). */
int cordon_checkpoint_verify(const char *note, size_t len, const struct cordon_note_verifier *v,
			     const char *expected_origin, struct cordon_checkpoint *ret, struct cordon_diag *d);
