/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* C2SP signed-note checkpoints and the Ed25519 key file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "test-support.h"

/* MTH of the RFC 6962 reference leaves, size 8. */
static const uint8_t root8[32] = { 0x5d, 0xc9, 0xda, 0x79, 0xa7, 0x06, 0x59, 0xa9, 0xad, 0x55, 0x9c,
				   0xb7, 0x01, 0xde, 0xd9, 0xa2, 0xab, 0x9d, 0x82, 0x3a, 0xad, 0x2f,
				   0x49, 0x60, 0xcf, 0xe3, 0x70, 0xef, 0xf4, 0x60, 0x43, 0x28 };

/* Computed independently with pyca/cryptography from seed 0x42 × 32: the
 * exact bytes of a cordon checkpoint (docs/formats.md). */
#define GOLDEN_NAME "cordon.test/audit"
#define GOLDEN_NOTE                                                                                                    \
	"cordon.test/audit\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n\n"                                       \
	"\xe2\x80\x94 cordon.test/audit "                                                                              \
	"c7FDCY6WoK2IBAsKHmL/gx+Ot+DMlwJvGqMf/VuXDLKOCjl7R9xGH/Hhww42PxsoSeYpf+4jZ9390vmrmJQKVaJaGwg=\n"
#define GOLDEN_VKEY "cordon.test/audit+73b14309+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS"

/* The reference example of golang.org/x/mod/sumdb/note (its documentation):
 * another implementation's key strings and signed note, byte for byte. */
#define GO_SKEY "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define GO_VKEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
#define GO_TEXT "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
#define GO_NOTE                                                                                                        \
	GO_TEXT "\n\xe2\x80\x94 PeterNeumann "                                                                         \
		"x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"

struct fixture {
	struct cordon_note_signer *signer;
	struct cordon_note_verifier v;
	char *dir;
};

static int setup(void **state)
{
	static struct fixture f;
	uint8_t seed[32];

	memset(seed, 0x42, sizeof(seed));
	if (cordon_note_signer_new_from_seed(GOLDEN_NAME, seed, &f.signer) < 0)
		return -1;
	cordon_note_signer_verifier(f.signer, &f.v);
	f.dir = cordon_test_mkdtemp("checkpoint");
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	cordon_note_signer_free(f->signer);
	cordon_test_rm_rf(f->dir);
	free(f->dir);
	return 0;
}

static char *sign(struct fixture *f, const char *origin, uint64_t size, const uint8_t root[32])
{
	struct cordon_checkpoint c = { .size = size };
	char *note = NULL;

	snprintf(c.origin, sizeof(c.origin), "%s", origin);
	memcpy(c.root, root, 32);
	assert_int_equal(cordon_checkpoint_sign(f->signer, &c, &note, NULL), 0);
	return note;
}

static int verify(struct fixture *f, const char *note, struct cordon_diag *d)
{
	return cordon_checkpoint_verify(note, strlen(note), &f->v, NULL, NULL, d);
}

static void test_golden(void **state)
{
	struct fixture *f = *state;
	struct cordon_checkpoint c = {};
	char *note = sign(f, GOLDEN_NAME, 8, root8), *vkey = NULL;
	size_t len = 0;

	assert_string_equal(note, GOLDEN_NOTE);
	assert_int_equal(cordon_checkpoint_verify(GOLDEN_NOTE, strlen(GOLDEN_NOTE), &f->v, GOLDEN_NAME, &c, NULL), 0);
	assert_string_equal(c.origin, GOLDEN_NAME);
	assert_int_equal(c.size, 8);
	assert_memory_equal(c.root, root8, 32);
	assert_int_equal(f->v.key_id, 0x73b14309);
	assert_int_equal(cordon_note_verifier_format(&f->v, &vkey), 0);
	assert_string_equal(vkey, GOLDEN_VKEY);
	free(vkey);
	free(note);

	note = NULL;
	{
		struct cordon_checkpoint c2 = { .origin = GOLDEN_NAME, .size = 8 };

		memcpy(c2.root, root8, 32);
		assert_int_equal(cordon_checkpoint_sign(f->signer, &c2, &note, &len), 0);
		assert_int_equal(len, strlen(GOLDEN_NOTE));
		free(note);
	}
}

/* Interoperability with the Go reference: our key file reader accepts its
 * signer key, derives the same key id and verifier key, and signs the same
 * note byte for byte. */
static void test_go_reference_vector(void **state)
{
	struct fixture *f = *state;
	struct cordon_note_signer *s = NULL;
	struct cordon_note_verifier v, parsed;
	struct cordon_diag d = {};
	char path[512], *vkey = NULL, *note = NULL;
	bool created = true;
	int fd;

	snprintf(path, sizeof(path), "%s/go.key", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, GO_SKEY "\n", strlen(GO_SKEY) + 1), (ssize_t)strlen(GO_SKEY) + 1);
	close(fd);

	if (cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d) < 0)
		fail_msg("%s", d.message);
	assert_false(created);
	cordon_note_signer_verifier(s, &v);
	assert_int_equal(v.key_id, 0xc74f20a3);
	assert_int_equal(cordon_note_verifier_format(&v, &vkey), 0);
	assert_string_equal(vkey, GO_VKEY);
	assert_int_equal(cordon_note_verifier_parse(GO_VKEY, &parsed, &d), 0);
	assert_memory_equal(&parsed, &v, sizeof(v));

	assert_int_equal(cordon_note_sign(s, GO_TEXT, strlen(GO_TEXT), &note, NULL), 0);
	assert_string_equal(note, GO_NOTE);

	free(vkey), free(note);
	cordon_note_signer_free(s);
	unlink(path);
}

static void test_roundtrip(void **state)
{
	struct fixture *f = *state;
	static const uint64_t sizes[] = { 0, 1, 2, 1000, UINT64_MAX };
	uint8_t root[32];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct cordon_checkpoint c = {};
		struct cordon_diag d = {};
		char *note;

		for (int j = 0; j < 32; j++)
			root[j] = (uint8_t)(i * 31 + (size_t)j);
		note = sign(f, "example.com/log-42", sizes[i], root);
		if (cordon_checkpoint_verify(note, strlen(note), &f->v, "example.com/log-42", &c, &d) < 0)
			fail_msg("%s: %s", note, d.message);
		assert_int_equal(c.size, sizes[i]);
		assert_memory_equal(c.root, root, 32);
		assert_string_equal(c.origin, "example.com/log-42");
		free(note);
	}
}

/* Replaces the first occurrence of from with to (same length or not). */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	char *out;

	assert_non_null(p);
	out = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
	assert_non_null(out);
	memcpy(out, s, (size_t)(p - s));
	strcpy(out + (p - s), to);
	strcat(out, p + strlen(from));
	return out;
}

static void expect_fail(struct fixture *f, const char *note, int err, const char *substr)
{
	struct cordon_diag d = {};
	int r = verify(f, note, &d);

	if (r != err || !strstr(d.message, substr))
		fail_msg("got %d '%s', want %d '%s' for:\n%s", r, d.message, err, substr, note);
	assert_string_equal(d.step, "checkpoint");
}

static void test_tampered(void **state)
{
	struct fixture *f = *state;
	const char *g = GOLDEN_NOTE;
	char *t;

	/* Body: origin, size, root. The format stays valid; the signature
	 * no longer verifies. */
	t = replace(g, "cordon.test/audit\n8", "cordon.test/audiT\n8");
	expect_fail(f, t, -EKEYREJECTED, "signature does not verify");
	free(t);
	t = replace(g, "\n8\n", "\n9\n");
	expect_fail(f, t, -EKEYREJECTED, "signature does not verify");
	free(t);
	t = replace(g, "Xcnaeac", "Ycnaeac");
	expect_fail(f, t, -EKEYREJECTED, "signature does not verify");
	free(t);
	/* Signature bytes (after the key id). */
	t = replace(g, "Ot+DMlwJ", "Ot+DMlwK");
	expect_fail(f, t, -EKEYREJECTED, "checkpoint line 5: signature does not verify");
	free(t);
	/* Key id bytes: now an unknown key's signature, which is ignored,
	 * leaving none from ours. */
	t = replace(g, "c7FDCY6W", "c7FECY6W");
	expect_fail(f, t, -ENOKEY, "no signature by key 'cordon.test/audit'");
	free(t);
	/* Key name in the signature line. */
	t = replace(g, "\xe2\x80\x94 cordon.test/audit ", "\xe2\x80\x94 cordon.test/other ");
	expect_fail(f, t, -ENOKEY, "no signature by key");
	free(t);
	/* Truncated signature from our key (67 bytes): rejected, not ignored. */
	t = replace(g, "QKVaJaGwg=", "QKVaJaGw==");
	expect_fail(f, t, -EKEYREJECTED, "signature does not verify");
	free(t);
	t = replace(g, "QKVaJaGwg=", "QKVaJaGwg");
	expect_fail(f, t, -EBADMSG, "signature must be base64");
	free(t);
	/* Only a key id, no signature. */
	t = replace(g, "c7FDCY6WoK2IBAsKHmL/gx+Ot+DMlwJvGqMf/VuXDLKOCjl7R9xGH/Hhww42PxsoSeYpf+4jZ9390vmrmJQKVaJaGwg=",
		    "c7FDCQ==");
	expect_fail(f, t, -EBADMSG, "signature must be base64 of a key id and a signature");
	free(t);
}

static void test_wrong_verifier(void **state)
{
	struct fixture *f = *state;
	struct cordon_note_signer *other = NULL;
	struct cordon_note_verifier ov;
	uint8_t seed[32];

	/* Same name, other key: other key id, so our signature is "unknown". */
	memset(seed, 0x43, sizeof(seed));
	assert_int_equal(cordon_note_signer_new_from_seed(GOLDEN_NAME, seed, &other), 0);
	cordon_note_signer_verifier(other, &ov);
	assert_int_equal(cordon_checkpoint_verify(GOLDEN_NOTE, strlen(GOLDEN_NOTE), &ov, NULL, NULL, NULL), -ENOKEY);

	/* Same name and key id (a forged collision) but another public key:
	 * the signature is checked and fails. */
	ov.key_id = f->v.key_id;
	assert_int_equal(cordon_checkpoint_verify(GOLDEN_NOTE, strlen(GOLDEN_NOTE), &ov, NULL, NULL, NULL),
			 -EKEYREJECTED);
	cordon_note_signer_free(other);

	/* Origin check. */
	{
		struct cordon_diag d = {};

		assert_int_equal(
			cordon_checkpoint_verify(GOLDEN_NOTE, strlen(GOLDEN_NOTE), &f->v, "other/log", NULL, &d),
			-EINVAL);
		assert_string_equal(d.message, "checkpoint origin 'cordon.test/audit' is not the expected 'other/log'");
	}
}

static void test_other_signatures(void **state)
{
	struct fixture *f = *state;
	char *t, *witness;

	/* A cosignature from an unknown key, before or after ours, is ignored. */
	witness = "\xe2\x80\x94 witness.example/w1 AAAAAAECAwQFBgcICQ==\n";
	t = malloc(strlen(GOLDEN_NOTE) + strlen(witness) + 1);
	sprintf(t, "%s%s", GOLDEN_NOTE, witness);
	assert_int_equal(verify(f, t, NULL), 0);
	free(t);
	t = replace(GOLDEN_NOTE, "\n\n\xe2\x80\x94",
		    "\n\n\xe2\x80\x94 witness.example/w1 AAAAAAECAwQFBgcICQ==\n\xe2\x80\x94");
	assert_int_equal(verify(f, t, NULL), 0);
	free(t);
	/* Post-quantum cosignatures are kilobytes long (ML-DSA-44: 2420 bytes);
	 * sixteen of them still fit, and they are skipped, not decoded. */
	{
		size_t sig_b64 = (4 + 2420 + 2) / 3 * 4, line_len = 32 + sig_b64;
		char *p;

		t = malloc(strlen(GOLDEN_NOTE) + 15 * line_len + 1);
		assert_non_null(t);
		p = t + sprintf(t, "%s", GOLDEN_NOTE);
		for (int i = 0; i < 15; i++) {
			p += sprintf(p, "\xe2\x80\x94 w.example/%c ", 'a' + i);
			for (size_t j = 0; j < sig_b64; j++)
				*p++ = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7 + j) %
													  64];
			*p++ = '\n';
		}
		*p = 0;
		assert_true(strlen(t) > 4096 && strlen(t) <= CORDON_NOTE_MAX_BYTES);
		assert_int_equal(verify(f, t, NULL), 0);
		free(t);
	}
	/* A line for another key with an unusual (non-ASCII) name too. */
	t = malloc(strlen(GOLDEN_NOTE) + 64);
	sprintf(t, "%s\xe2\x80\x94 w\xc3\xa9tness AAAAAAEC\n", GOLDEN_NOTE);
	assert_int_equal(verify(f, t, NULL), 0);
	free(t);
}

static void test_format_errors(void **state)
{
	struct fixture *f = *state;
	const char *g = GOLDEN_NOTE;
	char *t, *big = malloc(CORDON_NOTE_MAX_BYTES + 2);

	expect_fail(f, "", -EBADMSG, "does not end with a newline");
	t = strndup(g, strlen(g) - 1);
	expect_fail(f, t, -EBADMSG, "does not end with a newline");
	free(t);
	t = replace(g, "=\n\n", "=\n");
	expect_fail(f, t, -EBADMSG, "no blank line");
	free(t);
	t = replace(g, "=\n\n", "=\next\n\n");
	expect_fail(f, t, -EBADMSG, "line 4: extension lines are not supported");
	free(t);
	t = replace(g, "\n8\n", "\n08\n");
	expect_fail(f, t, -EBADMSG, "line 2: tree size must be a decimal number without leading zeros");
	free(t);
	t = replace(g, "\n8\n", "\n+8\n");
	expect_fail(f, t, -EBADMSG, "line 2: tree size");
	free(t);
	t = replace(g, "\n8\n", "\n\n");
	expect_fail(f, t, -EBADMSG, "line 2: tree size");
	free(t);
	t = replace(g, "\n8\n", "\n18446744073709551616\n");
	expect_fail(f, t, -EBADMSG, "line 2: tree size overflows 64 bits");
	free(t);
	t = replace(g, "\n8\n", "\n18446744073709551615\n"); /* fits: signature fails instead */
	expect_fail(f, t, -EKEYREJECTED, "signature does not verify");
	free(t);
	t = replace(g, "Xcnaeac", "Xcnaea");
	expect_fail(f, t, -EBADMSG, "line 3: root hash must be base64 of 32 bytes");
	free(t);
	t = replace(g, "RgQyg=", "RgQyh="); /* non-canonical trailing bits */
	expect_fail(f, t, -EBADMSG, "line 3: root hash");
	free(t);
	t = replace(g, "RgQyg=", "RgQyg");
	expect_fail(f, t, -EBADMSG, "line 3: root hash");
	free(t);
	t = replace(g, "Xcnaeac",
		    "Xcna\xc3\xa9"
		    "c"); /* valid UTF-8, not base64 */
	expect_fail(f, t, -EBADMSG, "line 3: root hash");
	free(t);
	t = replace(g, "cordon.test/audit\n8", "cordon test/audit\n8");
	expect_fail(f, t, -EBADMSG, "line 1: origin");
	free(t);
	t = replace(g, "cordon.test/audit\n8", "\n8");
	expect_fail(f, t, -EBADMSG, "line 1: origin is empty");
	free(t);
	t = replace(g, "\xe2\x80\x94 cordon", "- cordon");
	expect_fail(f, t, -EBADMSG, "line 5: signature line must start with an em dash");
	free(t);
	t = replace(g, "\xe2\x80\x94 cordon.test/audit c7", "\xe2\x80\x94 cordon.test/audit");
	expect_fail(f, t, -EBADMSG, "line 5: signature line must be");
	free(t);
	t = replace(g, "\xe2\x80\x94 cordon.test/audit ", "\xe2\x80\x94 cordon+test/audit ");
	expect_fail(f, t, -EBADMSG, "key name contains '+'");
	free(t);
	t = replace(g, "\n8\n", "\n8\r\n");
	expect_fail(f, t, -EBADMSG, "control byte 0x0d");
	free(t);
	t = replace(g, "\n8\n", "\n8\t\n");
	expect_fail(f, t, -EBADMSG, "control byte 0x09");
	free(t);
	t = replace(g, "cordon.test", "cordon.\xff");
	expect_fail(f, t, -EBADMSG, "not valid UTF-8");
	free(t);
	t = strdup("cordon.test/audit\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n\n");
	expect_fail(f, t, -EBADMSG, "no signature lines");
	free(t);

	/* Size bound. */
	assert_non_null(big);
	memset(big, 'a', CORDON_NOTE_MAX_BYTES + 2);
	big[CORDON_NOTE_MAX_BYTES] = '\n';
	big[CORDON_NOTE_MAX_BYTES + 1] = 0;
	expect_fail(f, big, -EBADMSG, "exceeds 65536 bytes");
	free(big);

	/* At most 16 signatures. */
	{
		size_t n = strlen(g);

		t = malloc(n + 17 * 40 + 1);
		strcpy(t, g);
		for (int i = 0; i < 16; i++)
			strcat(t, "\xe2\x80\x94 w.example/x AAAAAAECAwQ=\n");
		expect_fail(f, t, -EBADMSG, "too many signatures");
		free(t);
	}
	assert_int_equal(cordon_checkpoint_verify(NULL, 0, &f->v, NULL, NULL, NULL), -EINVAL);
}

static void test_sign_invalid(void **state)
{
	struct fixture *f = *state;
	struct cordon_checkpoint c = { .origin = "has space" };
	char *note = NULL;

	assert_int_equal(cordon_checkpoint_sign(f->signer, &c, &note, NULL), -EINVAL);
	snprintf(c.origin, sizeof(c.origin), "a+b");
	assert_int_equal(cordon_checkpoint_sign(f->signer, &c, &note, NULL), -EINVAL);
	c.origin[0] = 0;
	assert_int_equal(cordon_checkpoint_sign(f->signer, &c, &note, NULL), -EINVAL);
	assert_null(note);
	assert_int_equal(cordon_note_sign(f->signer, "no newline", 10, &note, NULL), -EINVAL);
	assert_int_equal(cordon_note_sign(f->signer, "blank\n\n", 7, &note, NULL), -EINVAL);
	assert_int_equal(cordon_note_sign(f->signer, "tab\there\n", 9, &note, NULL), -EINVAL);
	assert_null(note);

	assert_false(cordon_note_name_valid(""));
	assert_false(cordon_note_name_valid("a b"));
	assert_false(cordon_note_name_valid("a+b"));
	assert_false(cordon_note_name_valid("caf\xc3\xa9"));
	assert_false(cordon_note_name_valid(NULL));
	assert_true(cordon_note_name_valid("example.com/log-1"));
	{
		char longname[CORDON_NOTE_KEY_NAME_MAX + 2];

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = 0;
		assert_false(cordon_note_name_valid(longname));
		longname[CORDON_NOTE_KEY_NAME_MAX] = 0;
		assert_true(cordon_note_name_valid(longname));
	}
}

static void test_verifier_parse(void **state)
{
	struct cordon_note_verifier v;
	struct cordon_diag d = {};

	assert_int_equal(cordon_note_verifier_parse(GOLDEN_VKEY, &v, &d), 0);
	assert_string_equal(v.name, GOLDEN_NAME);
	assert_int_equal(v.key_id, 0x73b14309);
	assert_int_equal(cordon_note_verifier_parse(
				 "cordon.test/audit+73b14308+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS", &v, &d),
			 -EINVAL);
	assert_non_null(strstr(d.message, "does not match the key"));
	assert_int_equal(cordon_note_verifier_parse(
				 "cordon.test/audit+73B14309+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS", &v, &d),
			 -EINVAL); /* uppercase hex */
	assert_int_equal(cordon_note_verifier_parse(
				 "cordon.test/audit+73b14309+AiFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS", &v, &d),
			 -EINVAL); /* type 0x02 */
	assert_int_equal(cordon_note_verifier_parse("cordon.test/audit+73b14309+ASFS", &v, &d), -EINVAL);
	/* Bytes outside the base64 alphabet (libsodium alone would skip over
	 * some of them; found by fuzz-checkpoint). */
	assert_int_equal(cordon_note_verifier_parse(
				 "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq\xafLDE4izWy10TW", &v, &d),
			 -EINVAL);
	assert_int_equal(cordon_note_verifier_parse(
				 "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq LDE4izWy10TW", &v, &d),
			 -EINVAL);
	assert_int_equal(cordon_note_verifier_parse(
				 "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T=W", &v, &d),
			 -EINVAL);
	assert_int_equal(cordon_note_verifier_parse("+73b14309+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS", &v, &d),
			 -EINVAL);
	assert_int_equal(cordon_note_verifier_parse("nokey", &v, &d), -EINVAL);
}

/* ---- Key file ------------------------------------------------------------------ */

static void write_file(const char *path, const char *content, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static void test_key_file_create_and_reload(void **state)
{
	struct fixture *f = *state;
	struct cordon_note_signer *a = NULL, *b = NULL;
	struct cordon_note_verifier va, vb;
	struct cordon_diag d = {};
	char path[512], buf[256];
	struct stat st;
	bool created = false;
	mode_t old;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/audit.key", f->dir);
	old = umask(0); /* the file mode must not depend on the umask */
	if (cordon_note_signer_load_or_create(path, "host.example/cordon-audit", &a, &created, &d) < 0)
		fail_msg("%s", d.message);
	umask(old);
	assert_true(created);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());

	/* Contents: one PRIVATE+KEY line that names our key. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = 0;
	cordon_note_signer_verifier(a, &va);
	{
		char prefix[128];

		snprintf(prefix, sizeof(prefix), "PRIVATE+KEY+host.example/cordon-audit+%08x+", va.key_id);
		assert_memory_equal(buf, prefix, strlen(prefix));
		assert_int_equal(strlen(buf), strlen(prefix) + 44 + 1);
		assert_int_equal(buf[n - 1], '\n');
	}

	/* Reload: same key, not created. */
	if (cordon_note_signer_load_or_create(path, "host.example/cordon-audit", &b, &created, &d) < 0)
		fail_msg("%s", d.message);
	assert_false(created);
	cordon_note_signer_verifier(b, &vb);
	assert_memory_equal(&va, &vb, sizeof(va));

	/* And what one signs, the other's verifier accepts. */
	{
		struct cordon_checkpoint c = { .origin = "host.example/cordon-audit", .size = 3 };
		char *note = NULL;

		assert_int_equal(cordon_checkpoint_sign(a, &c, &note, NULL), 0);
		assert_int_equal(cordon_checkpoint_verify(note, strlen(note), &vb, NULL, NULL, NULL), 0);
		free(note);
	}
	cordon_note_signer_free(a);
	cordon_note_signer_free(b);

	/* Another name for the same file: refused, the file is untouched. */
	assert_int_equal(cordon_note_signer_load_or_create(path, "other.example/log", &a, NULL, &d), -EINVAL);
	assert_non_null(
		strstr(d.message, "holds the key of 'host.example/cordon-audit', expected 'other.example/log'"));
	unlink(path);
}

static void test_key_file_refusals(void **state)
{
	struct fixture *f = *state;
	struct cordon_note_signer *s = NULL;
	struct cordon_diag d = {};
	char path[512], link[512], good[256];
	bool created = true;

	snprintf(path, sizeof(path), "%s/k.key", f->dir);
	snprintf(link, sizeof(link), "%s/link.key", f->dir);
	snprintf(good, sizeof(good), "%s\n", GO_SKEY);

	/* Group or world accessible: refused, whatever the bits. */
	write_file(path, good, 0644);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EPERM);
	assert_non_null(strstr(d.message, "mode 0644 is group/world accessible"));
	write_file(path, good, 0640);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EPERM);
	write_file(path, good, 0604);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EPERM);
	write_file(path, good, 0400);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), 0);
	cordon_note_signer_free(s);
	s = NULL;

	/* Owned by someone else (needs root to arrange). */
	if (geteuid() == 0) {
		write_file(path, good, 0600);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EPERM);
		assert_non_null(strstr(d.message, "owned by uid 65534"));
	}

	/* A symlink, even to a good file. */
	write_file(path, good, 0600);
	unlink(link);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(cordon_note_signer_load_or_create(link, "PeterNeumann", &s, &created, &d), -EPERM);
	assert_non_null(strstr(d.message, "symbolic link"));
	unlink(link);

	/* A dangling symlink is not followed to create a file elsewhere. */
	{
		char target[512];
		struct stat st;

		snprintf(target, sizeof(target), "%s/elsewhere.key", f->dir);
		assert_int_equal(symlink(target, link), 0);
		assert_int_equal(cordon_note_signer_load_or_create(link, "PeterNeumann", &s, &created, &d), -EPERM);
		assert_int_equal(stat(target, &st), -1);
		unlink(link);
	}

	/* Malformed contents. */
	static const char *bad[] = {
		"",
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz",   /* no newline */
		"PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n", /* id */
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDF\n",  /* b64 */
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AoEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n", /* type */
		"PUBLIC+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n\n",
		"PRIVATE+KEY+Peter Neumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i], 0600);
		if (cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d) != -EINVAL)
			fail_msg("accepted bad key file %zu", i);
	}

	/* Too large. */
	{
		char huge[2048];

		memset(huge, 'A', sizeof(huge) - 1);
		huge[sizeof(huge) - 1] = 0;
		write_file(path, huge, 0600);
		assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EINVAL);
		assert_non_null(strstr(d.message, "larger than 1024 bytes"));
	}
	unlink(path);

	/* Not a regular file: a directory, a FIFO (which must not block us). */
	assert_int_equal(cordon_note_signer_load_or_create(f->dir, "PeterNeumann", &s, &created, &d), -EINVAL);
	assert_non_null(strstr(d.message, "not a regular file"));
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -EINVAL);
	assert_non_null(strstr(d.message, "not a regular file"));
	unlink(path);

	/* Cannot create: the directory does not exist. */
	snprintf(path, sizeof(path), "%s/missing/k.key", f->dir);
	assert_int_equal(cordon_note_signer_load_or_create(path, "PeterNeumann", &s, &created, &d), -ENOENT);
	assert_int_equal(cordon_note_signer_load_or_create(path, "bad name", &s, &created, &d), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_go_reference_vector),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_wrong_verifier),
		cmocka_unit_test(test_other_signatures),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_sign_invalid),
		cmocka_unit_test(test_verifier_parse),
		cmocka_unit_test(test_key_file_create_and_reload),
		cmocka_unit_test(test_key_file_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
