/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* C2SP signed notes carrying tlog checkpoints, Ed25519 via libsodium, and the
 * signing key file. Formats: docs/formats.md. */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canon.h"
#include "cleanup.h"
#include "fd-util.h"
#include "hex-util.h"

#define STEP		 "checkpoint"
#define SIG_TYPE_ED25519 0x01
#define EM_DASH		 "\xe2\x80\x94" /* U+2014 */
#define KEY_FILE_PREFIX	 "PRIVATE+KEY+"
#define KEY_FILE_MAX	 1024

struct cordon_note_signer {
	struct cordon_note_verifier pub;
	uint8_t *sk; /* sodium_malloc'd crypto_sign_SECRETKEYBYTES, read-only */
};

static bool name_valid(const char *name, size_t max)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		/* ASCII graphic characters only: no spaces, no controls, no
		 * non-ASCII (which rules out every Unicode space), and no '+'
		 * (the key-string separator). */
		if (c < 0x21 || c > 0x7e || c == '+')
			return false;
	}
	return true;
}

bool cordon_note_name_valid(const char *name)
{
	return name_valid(name, CORDON_NOTE_KEY_NAME_MAX);
}

static uint32_t key_id(const char *name, const uint8_t pub[static 32])
{
	crypto_hash_sha256_state st;
	uint8_t h[crypto_hash_sha256_BYTES];
	const uint8_t sep[2] = { '\n', SIG_TYPE_ED25519 };

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const uint8_t *)name, strlen(name));
	crypto_hash_sha256_update(&st, sep, sizeof(sep));
	crypto_hash_sha256_update(&st, pub, 32);
	crypto_hash_sha256_final(&st, h);
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int cordon_note_verifier_init(struct cordon_note_verifier *ret, const char *name, const uint8_t public_key[static 32])
{
	if (!cordon_note_name_valid(name))
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	memcpy(ret->public_key, public_key, 32);
	ret->key_id = key_id(name, public_key);
	return 0;
}

int cordon_note_verifier_format(const struct cordon_note_verifier *v, char **ret)
{
	uint8_t raw[33];
	char b64[sodium_base64_ENCODED_LEN(33, sodium_base64_VARIANT_ORIGINAL)];
	char *s;

	raw[0] = SIG_TYPE_ED25519;
	memcpy(raw + 1, v->public_key, 32);
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw), sodium_base64_VARIANT_ORIGINAL);
	if (asprintf(&s, "%s+%08" PRIx32 "+%s", v->name, v->key_id, b64) < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* True if s[0..n) is canonical-alphabet standard base64 with correct
 * padding (RFC 4648 §4). libsodium's decoder is not strict about bytes
 * outside the alphabet (found by fuzz-checkpoint: 0xaf decoded like an
 * alphabet character), so every decode checks here first. */
static bool b64_well_formed(const char *s, size_t n)
{
	if (n == 0 || n % 4 != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/')
			continue;
		if (c == '=' && (i == n - 1 || (i == n - 2 && s[n - 1] == '=')))
			continue;
		return false;
	}
	return true;
}

/* Decoded length of well-formed base64. */
static size_t b64_decoded_len(const char *s, size_t n)
{
	return n / 4 * 3 - (s[n - 1] == '=') - (s[n - 2] == '=');
}

/* Strict standard base64 of exactly `want` bytes (want == 0: any length up to
 * cap) from s[0..n). Returns the decoded length or -1. */
static ssize_t b64_decode(const char *s, size_t n, uint8_t *out, size_t cap, size_t want)
{
	const char *end;
	size_t got;

	if (!b64_well_formed(s, n))
		return -1;
	if (sodium_base642bin(out, cap, s, n, NULL, &got, &end, sodium_base64_VARIANT_ORIGINAL) < 0)
		return -1;
	if (end != s + n || (want && got != want))
		return -1;
	return (ssize_t)got;
}

static int parse_hex32(const char *s, uint32_t *ret)
{
	uint32_t v = 0;

	for (int i = 0; i < 8; i++) {
		int d = unhex_lower(s[i]);

		if (d < 0)
			return d;
		v = v << 4 | (uint32_t)d;
	}
	*ret = v;
	return 0;
}

int cordon_note_verifier_parse(const char *vkey, struct cordon_note_verifier *ret, struct cordon_diag *d)
{
	const char *p1, *p2;
	char name[CORDON_NOTE_KEY_NAME_MAX + 1];
	uint8_t raw[33];
	uint32_t id;
	struct cordon_note_verifier v;

	if (!vkey)
		return cordon_diag_set(d, EINVAL, STEP, "no verifier key");
	p1 = strchr(vkey, '+');
	if (!p1 || (size_t)(p1 - vkey) > CORDON_NOTE_KEY_NAME_MAX)
		return cordon_diag_set(d, EINVAL, STEP, "verifier key: expected <name>+<id>+<key>");
	memcpy(name, vkey, (size_t)(p1 - vkey));
	name[p1 - vkey] = 0;
	if (!cordon_note_name_valid(name))
		return cordon_diag_set(d, EINVAL, STEP, "verifier key: invalid key name");
	p2 = p1 + 1;
	if (strlen(p2) < 9 || p2[8] != '+' || parse_hex32(p2, &id) < 0)
		return cordon_diag_set(d, EINVAL, STEP, "verifier key: key id must be 8 lowercase hex digits");
	p2 += 9;
	if (b64_decode(p2, strlen(p2), raw, sizeof(raw), sizeof(raw)) < 0)
		return cordon_diag_set(d, EINVAL, STEP, "verifier key: key must be base64 of 33 bytes");
	if (raw[0] != SIG_TYPE_ED25519)
		return cordon_diag_set(d, EINVAL, STEP, "verifier key: unsupported signature type 0x%02x", raw[0]);
	cordon_note_verifier_init(&v, name, raw + 1);
	if (v.key_id != id)
		return cordon_diag_set(d, EINVAL, STEP,
				       "verifier key: key id %08" PRIx32 " does not match the key (%08" PRIx32 ")", id,
				       v.key_id);
	*ret = v;
	return 0;
}

/* ---- Signer ---------------------------------------------------------------- */

void cordon_note_signer_free(struct cordon_note_signer *s)
{
	if (!s)
		return;
	sodium_free(s->sk);
	free(s);
}

int cordon_note_signer_new_from_seed(const char *name, const uint8_t seed[static 32], struct cordon_note_signer **ret)
{
	struct cordon_note_signer *s;
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];

	if (sodium_init() < 0)
		return -EIO;
	if (!cordon_note_name_valid(name))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sk = sodium_malloc(crypto_sign_SECRETKEYBYTES);
	if (!s->sk) {
		free(s);
		return -ENOMEM;
	}
	crypto_sign_seed_keypair(pk, s->sk, seed);
	sodium_mprotect_readonly(s->sk);
	cordon_note_verifier_init(&s->pub, name, pk);
	*ret = s;
	return 0;
}

void cordon_note_signer_verifier(const struct cordon_note_signer *s, struct cordon_note_verifier *ret)
{
	*ret = s->pub;
}

/* Parses the key file contents buf[0..n): the single line
 * "PRIVATE+KEY+<name>+<id>+<base64(0x01 ‖ seed)>\n". */
static int key_file_parse(const char *path, const char *buf, size_t n, const char *want_name,
			  struct cordon_note_signer **ret, struct cordon_diag *d)
{
	const char *p = buf, *end = buf + n, *plus;
	char name[CORDON_NOTE_KEY_NAME_MAX + 1];
	uint8_t *raw;
	uint32_t id;
	int r;

	if (n < strlen(KEY_FILE_PREFIX) + 1 || memcmp(p, KEY_FILE_PREFIX, strlen(KEY_FILE_PREFIX)) != 0 ||
	    end[-1] != '\n')
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: not a PRIVATE+KEY line", path);
	p += strlen(KEY_FILE_PREFIX);
	end--; /* drop the newline */
	plus = memchr(p, '+', (size_t)(end - p));
	if (!plus || (size_t)(plus - p) > CORDON_NOTE_KEY_NAME_MAX)
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: malformed key name", path);
	memcpy(name, p, (size_t)(plus - p));
	name[plus - p] = 0;
	if (!cordon_note_name_valid(name))
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: invalid key name", path);
	if (strcmp(name, want_name) != 0)
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: holds the key of '%s', expected '%s'", path, name,
				       want_name);
	p = plus + 1;
	if (end - p < 9 || p[8] != '+' || parse_hex32(p, &id) < 0)
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: malformed key id", path);
	p += 9;

	raw = sodium_malloc(33);
	if (!raw)
		return cordon_diag_set(d, ENOMEM, STEP, "out of memory");
	if (b64_decode(p, (size_t)(end - p), raw, 33, 33) < 0 || raw[0] != SIG_TYPE_ED25519) {
		sodium_free(raw);
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: key must be base64 of 0x01 and a 32-byte seed",
				       path);
	}
	r = cordon_note_signer_new_from_seed(name, raw + 1, ret);
	sodium_free(raw);
	if (r < 0)
		return cordon_diag_set(d, -r, STEP, "key file %s: cannot set up the key", path);
	if ((*ret)->pub.key_id != id) {
		cordon_note_signer_free(*ret);
		*ret = NULL;
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: key id does not match the key", path);
	}
	return 0;
}

static int key_file_load(int fd, const char *path, const char *name, struct cordon_note_signer **ret,
			 struct cordon_diag *d)
{
	struct stat st;
	char *buf;
	size_t n = 0;
	int r;

	if (fstat(fd, &st) < 0)
		return cordon_diag_set(d, errno, STEP, "key file %s: fstat: %m", path);
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: not a regular file", path);
	/* Fail closed: a key others could read, or that someone else placed,
	 * is not ours to trust. */
	if (st.st_uid != geteuid())
		return cordon_diag_set(d, EPERM, STEP, "key file %s: owned by uid %u, not by uid %u", path,
				       (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return cordon_diag_set(d, EPERM, STEP, "key file %s: mode %04o is group/world accessible (want 0600)",
				       path, (unsigned)(st.st_mode & 07777));
	if (st.st_size > KEY_FILE_MAX)
		return cordon_diag_set(d, EINVAL, STEP, "key file %s: larger than %d bytes", path, KEY_FILE_MAX);

	buf = sodium_malloc(KEY_FILE_MAX + 1);
	if (!buf)
		return cordon_diag_set(d, ENOMEM, STEP, "out of memory");
	{
		ssize_t k = read_full(fd, buf, KEY_FILE_MAX + 1);

		if (k < 0) {
			r = cordon_diag_set(d, (int)-k, STEP, "key file %s: read: %s", path, strerror((int)-k));
			goto out;
		}
		n = (size_t)k;
		if (n > KEY_FILE_MAX) {
			r = cordon_diag_set(d, EINVAL, STEP, "key file %s: larger than %d bytes", path, KEY_FILE_MAX);
			goto out;
		}
	}
	r = key_file_parse(path, buf, n, name, ret, d);
out:
	sodium_free(buf);
	return r;
}

static void fsync_parent(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int dfd = -EBADF;

	if (!copy)
		return;
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
}

static int key_file_create(int fd, const char *path, const char *name, struct cordon_note_signer **ret,
			   struct cordon_diag *d)
{
	uint8_t *raw = NULL;
	char *line = NULL;
	size_t line_cap, b64_len = sodium_base64_ENCODED_LEN(33, sodium_base64_VARIANT_ORIGINAL);
	struct cordon_note_signer *s = NULL;
	int r, len;

	/* The umask can only clear bits; make the mode exact regardless. */
	if (fchmod(fd, 0600) < 0)
		return cordon_diag_set(d, errno, STEP, "key file %s: fchmod: %m", path);

	line_cap = strlen(KEY_FILE_PREFIX) + strlen(name) + 1 + 8 + 1 + b64_len + 2;
	raw = sodium_malloc(33);
	line = sodium_malloc(line_cap);
	if (!raw || !line) {
		r = cordon_diag_set(d, ENOMEM, STEP, "out of memory");
		goto out;
	}
	raw[0] = SIG_TYPE_ED25519;
	randombytes_buf(raw + 1, 32);
	r = cordon_note_signer_new_from_seed(name, raw + 1, &s);
	if (r < 0) {
		r = cordon_diag_set(d, -r, STEP, "key file %s: cannot set up the key", path);
		goto out;
	}
	len = snprintf(line, line_cap, "%s%s+%08" PRIx32 "+", KEY_FILE_PREFIX, name, s->pub.key_id);
	sodium_bin2base64(line + len, line_cap - (size_t)len, raw, 33, sodium_base64_VARIANT_ORIGINAL);
	len += (int)strlen(line + len);
	line[len++] = '\n';

	r = write_all(fd, line, (size_t)len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0) {
		r = cordon_diag_set(d, -r, STEP, "key file %s: write: %s", path, strerror(-r));
		goto out;
	}
	fsync_parent(path);
	*ret = TAKE_PTR(s);
	r = 0;
out:
	cordon_note_signer_free(s);
	sodium_free(raw);
	sodium_free(line);
	return r;
}

int cordon_note_signer_load_or_create(const char *path, const char *name, struct cordon_note_signer **ret,
				      bool *ret_created, struct cordon_diag *d)
{
	struct cordon_note_signer *s = NULL;
	int r;

	if (!path || !cordon_note_name_valid(name))
		return cordon_diag_set(d, EINVAL, STEP, "invalid key file path or key name");
	if (sodium_init() < 0)
		return cordon_diag_set(d, EIO, STEP, "libsodium initialisation failed");

	/* Two rounds: if another process creates the file between our failed
	 * open and our O_EXCL create, load what it wrote. */
	for (int round = 0; round < 2; round++) {
		/* O_NONBLOCK: a FIFO planted at the path must not hang us; fstat
		 * then refuses anything but a regular file. */
		_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

		if (fd >= 0) {
			r = key_file_load(fd, path, name, &s, d);
			if (r < 0)
				return r;
			if (ret_created)
				*ret_created = false;
			*ret = s;
			return 0;
		}
		if (errno == ELOOP)
			return cordon_diag_set(d, EPERM, STEP, "key file %s: is a symbolic link", path);
		if (errno != ENOENT)
			return cordon_diag_set(d, errno, STEP, "key file %s: open: %m", path);

		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return cordon_diag_set(d, errno, STEP, "key file %s: create: %m", path);
		}
		r = key_file_create(fd, path, name, &s, d);
		if (r < 0) {
			/* Never leave a half-written key behind. */
			(void)unlink(path);
			return r;
		}
		if (ret_created)
			*ret_created = true;
		*ret = s;
		return 0;
	}
	return cordon_diag_set(d, EAGAIN, STEP, "key file %s: appeared and vanished while opening", path);
}

/* ---- Checkpoints ------------------------------------------------------------------ */

int cordon_note_sign(const struct cordon_note_signer *s, const char *text, size_t len, char **ret, size_t *ret_len)
{
	char sig64[sodium_base64_ENCODED_LEN(68, sodium_base64_VARIANT_ORIGINAL)];
	uint8_t sig[68];
	char *note;
	size_t name_len, sig_len, n = 0;

	if (!s || !text || len < 2 || text[len - 1] != '\n' || text[len - 2] == '\n' ||
	    !cordon_utf8_valid(text, len, NULL))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 && text[i] != '\n')
			return -EINVAL;

	sig[0] = (uint8_t)(s->pub.key_id >> 24);
	sig[1] = (uint8_t)(s->pub.key_id >> 16);
	sig[2] = (uint8_t)(s->pub.key_id >> 8);
	sig[3] = (uint8_t)s->pub.key_id;
	crypto_sign_detached(sig + 4, NULL, (const uint8_t *)text, len, s->sk);
	sodium_bin2base64(sig64, sizeof(sig64), sig, sizeof(sig), sodium_base64_VARIANT_ORIGINAL);

	/* text ‖ "\n" ‖ "— " ‖ name ‖ " " ‖ sig64 ‖ "\n" */
	name_len = strlen(s->pub.name);
	sig_len = strlen(sig64);
	note = malloc(len + 1 + strlen(EM_DASH " ") + name_len + 1 + sig_len + 2);
	if (!note)
		return -ENOMEM;
	memcpy(note, text, len), n += len;
	note[n++] = '\n';
	memcpy(note + n, EM_DASH " ", strlen(EM_DASH " ")), n += strlen(EM_DASH " ");
	memcpy(note + n, s->pub.name, name_len), n += name_len;
	note[n++] = ' ';
	memcpy(note + n, sig64, sig_len), n += sig_len;
	note[n++] = '\n';
	note[n] = 0;
	*ret = note;
	if (ret_len)
		*ret_len = n;
	return 0;
}

int cordon_checkpoint_sign(const struct cordon_note_signer *s, const struct cordon_checkpoint *c, char **ret,
			   size_t *ret_len)
{
	char root64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_ORIGINAL)];
	_cleanup_free_ char *body = NULL;
	int body_len;

	if (!s || !c || !name_valid(c->origin, CORDON_CHECKPOINT_ORIGIN_MAX))
		return -EINVAL;
	sodium_bin2base64(root64, sizeof(root64), c->root, 32, sodium_base64_VARIANT_ORIGINAL);
	body_len = asprintf(&body, "%s\n%" PRIu64 "\n%s\n", c->origin, c->size, root64);
	if (body_len < 0) {
		body = NULL;
		return -ENOMEM;
	}
	return cordon_note_sign(s, body, (size_t)body_len, ret, ret_len);
}

static int note_fail(struct cordon_diag *d, int error, unsigned line, const char *what)
{
	return cordon_diag_set_at(d, error, STEP, line, 0, "checkpoint line %u: %s", line, what);
}

/* Finds the end of the line starting at p (the '\n'), within [p, end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

int cordon_checkpoint_verify(const char *note, size_t len, const struct cordon_note_verifier *v,
			     const char *expected_origin, struct cordon_checkpoint *ret, struct cordon_diag *d)
{
	struct cordon_checkpoint c = {};
	const char *end = note + len, *p, *e, *sep = NULL, *body_end;
	unsigned line = 1, nsig = 0;
	bool matched = false;
	size_t bad;

	if (!note || !v)
		return cordon_diag_set(d, EINVAL, STEP, "no note or verifier");
	if (len > CORDON_NOTE_MAX_BYTES)
		return cordon_diag_set(d, EBADMSG, STEP, "checkpoint of %zu bytes exceeds %d bytes", len,
				       CORDON_NOTE_MAX_BYTES);
	if (len == 0 || note[len - 1] != '\n')
		return cordon_diag_set(d, EBADMSG, STEP, "checkpoint does not end with a newline");
	if (!cordon_utf8_valid(note, len, &bad))
		return cordon_diag_set(d, EBADMSG, STEP, "checkpoint is not valid UTF-8 (byte %zu)", bad);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)note[i] < 0x20 && note[i] != '\n')
			return cordon_diag_set(d, EBADMSG, STEP, "checkpoint has control byte 0x%02x at byte %zu",
					       (unsigned char)note[i], i);

	/* The text ends at the last empty line ("\n\n": the text's own final
	 * newline followed by the blank separator line). */
	for (const char *q = end - 1; q > note; q--)
		if (q[0] == '\n' && q[-1] == '\n') {
			sep = q;
			break;
		}
	if (!sep)
		return cordon_diag_set(d, EBADMSG, STEP, "checkpoint has no blank line before its signatures");
	body_end = sep; /* the body includes the newline at sep[-1] */

	/* Line 1: origin. */
	p = note;
	e = line_end(p, body_end);
	if ((size_t)(e - p) > CORDON_CHECKPOINT_ORIGIN_MAX || e == p)
		return note_fail(d, EBADMSG, line, "origin is empty or too long");
	memcpy(c.origin, p, (size_t)(e - p));
	c.origin[e - p] = 0;
	if (!name_valid(c.origin, CORDON_CHECKPOINT_ORIGIN_MAX))
		return note_fail(d, EBADMSG, line, "origin has spaces, '+' or non-ASCII characters");
	if (e >= body_end)
		return note_fail(d, EBADMSG, line, "missing tree size line");

	/* Line 2: tree size, decimal, no leading zeros. */
	p = e + 1, line++;
	e = line_end(p, body_end);
	if (e == p || e - p > 20 || (p[0] == '0' && e - p > 1))
		return note_fail(d, EBADMSG, line, "tree size must be a decimal number without leading zeros");
	for (const char *q = p; q < e; q++) {
		if (*q < '0' || *q > '9')
			return note_fail(d, EBADMSG, line, "tree size must be a decimal number without leading zeros");
		if (c.size > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
			return note_fail(d, EBADMSG, line, "tree size overflows 64 bits");
		c.size = c.size * 10 + (uint64_t)(*q - '0');
	}
	if (e >= body_end)
		return note_fail(d, EBADMSG, line, "missing root hash line");

	/* Line 3: root hash. */
	p = e + 1, line++;
	e = line_end(p, body_end);
	if (b64_decode(p, (size_t)(e - p), c.root, sizeof(c.root), sizeof(c.root)) < 0)
		return note_fail(d, EBADMSG, line, "root hash must be base64 of 32 bytes");
	/* cordon never writes extension lines and cannot audit them. */
	if (e != body_end - 1)
		return note_fail(d, EBADMSG, line + 1, "extension lines are not supported");

	/* Signature lines. */
	line += 2;
	for (p = sep + 1; p < end; p = e + 1, line++) {
		const char *name, *name_end, *b64;
		uint8_t head[6], sig[4 + crypto_sign_BYTES];
		size_t b64_len;
		uint32_t id;

		e = line_end(p, end);
		if (++nsig > CORDON_NOTE_MAX_SIGNATURES)
			return note_fail(d, EBADMSG, line, "too many signatures");
		if ((size_t)(e - p) < strlen(EM_DASH " ") || memcmp(p, EM_DASH " ", strlen(EM_DASH " ")) != 0)
			return note_fail(d, EBADMSG, line, "signature line must start with an em dash and a space");
		name = p + strlen(EM_DASH " ");
		name_end = memchr(name, ' ', (size_t)(e - name));
		if (!name_end || name_end == name)
			return note_fail(d, EBADMSG, line, "signature line must be '— <key name> <signature>'");
		if (memchr(name, '+', (size_t)(name_end - name)))
			return note_fail(d, EBADMSG, line, "key name contains '+'");
		b64 = name_end + 1;
		b64_len = (size_t)(e - b64);
		/* Other keys' signatures may be large (post-quantum cosignatures
		 * run to kilobytes): check the encoding, decode only the key id. */
		if (!b64_well_formed(b64, b64_len) || b64_decoded_len(b64, b64_len) < 5 ||
		    b64_decode(b64, 8, head, sizeof(head), 0) < 4)
			return note_fail(d, EBADMSG, line, "signature must be base64 of a key id and a signature");
		id = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];

		/* Signatures by other keys (rotation, witnesses) are ignored:
		 * both name and id must match to count. */
		if ((size_t)(name_end - name) != strlen(v->name) || memcmp(name, v->name, strlen(v->name)) != 0 ||
		    id != v->key_id)
			continue;
		if (b64_decode(b64, b64_len, sig, sizeof(sig), sizeof(sig)) < 0 ||
		    crypto_sign_verify_detached(sig + 4, (const uint8_t *)note, (size_t)(body_end - note),
						v->public_key) != 0)
			return note_fail(d, EKEYREJECTED, line, "signature does not verify");
		matched = true;
	}
	if (nsig == 0)
		return cordon_diag_set(d, EBADMSG, STEP, "checkpoint has no signature lines");
	if (!matched)
		return cordon_diag_set(d, ENOKEY, STEP, "checkpoint carries no signature by key '%s' (%08" PRIx32 ")",
				       v->name, v->key_id);
	if (expected_origin && strcmp(expected_origin, c.origin) != 0)
		return cordon_diag_set(d, EINVAL, STEP, "checkpoint origin '%s' is not the expected '%s'", c.origin,
				       expected_origin);
	if (ret)
		*ret = c;
	return 0;
}
