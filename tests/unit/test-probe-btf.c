/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon_probe_btf_find_func() (launcher/lib/probe-lsm.c): the BTF id of a
 * function, found by walking the raw type section, as the probe of BPF LSM
 * programs per cgroup needs for the path_chmod hook. A synthetic blob with
 * every variable-length kind before the target gives exact ids; broken
 * blobs (bad magic, sections out of range, a kind this code does not know,
 * a truncated type) are refused with -EBADMSG, never read past; on the
 * running kernel's BTF the answer is libbpf's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <cmocka.h>

#include "fd-util.h"
#include "probe-util.h"

/* The info word of a type (linux/btf.h has only the decoders). */
#define INFO(kind, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(vlen))

/* "\0int\0foo\0bar\0fo\0": name offsets 1, 5, 9, 13. */
static const char strs[] = "\0int\0foo\0bar\0fo";

struct blob {
	unsigned char buf[1024];
	size_t len;
	size_t types; /* offset of the type section */
};

static void put(struct blob *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->buf));
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put_type(struct blob *b, uint32_t name_off, unsigned kind, unsigned vlen, uint32_t size_or_type,
		     size_t extra)
{
	struct btf_type t = { .name_off = name_off, .info = INFO(kind, vlen), .size = size_or_type };
	unsigned char zeros[64] = { 0 };

	put(b, &t, sizeof(t));
	assert_true(extra <= sizeof(zeros));
	put(b, zeros, extra);
}

/* Types: [1] int, [2] func_proto (1 param), [3] struct (2 members),
 * [4] FUNC foo, [5] enum64 (1 value), [6] array, [7] datasec (1 var),
 * [8] FUNC bar. Then the string section. */
static void build(struct blob *b)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h) };

	memset(b, 0, sizeof(*b));
	put(b, &h, sizeof(h));
	b->types = b->len;
	put_type(b, 1, BTF_KIND_INT, 0, 4, 4);
	put_type(b, 0, BTF_KIND_FUNC_PROTO, 1, 1, sizeof(struct btf_param));
	put_type(b, 0, BTF_KIND_STRUCT, 2, 8, 2 * sizeof(struct btf_member));
	put_type(b, 5, BTF_KIND_FUNC, 0, 2, 0);
	put_type(b, 0, BTF_KIND_ENUM64, 1, 8, 12);
	put_type(b, 0, BTF_KIND_ARRAY, 0, 0, sizeof(struct btf_array));
	put_type(b, 0, BTF_KIND_DATASEC, 1, 0, sizeof(struct btf_var_secinfo));
	put_type(b, 9, BTF_KIND_FUNC, 0, 2, 0);
	h.type_off = 0;
	h.type_len = (uint32_t)(b->len - b->types);
	h.str_off = h.type_len;
	h.str_len = sizeof(strs);
	put(b, strs, sizeof(strs));
	memcpy(b->buf, &h, sizeof(h));
}

static struct btf_header header(const struct blob *b)
{
	struct btf_header h;

	memcpy(&h, b->buf, sizeof(h));
	return h;
}

static void set_header(struct blob *b, const struct btf_header *h)
{
	memcpy(b->buf, h, sizeof(*h));
}

static void test_synthetic_ids(void **state)
{
	struct blob b;
	uint32_t id = 0;

	(void)state;
	build(&b);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), 0);
	assert_int_equal(id, 4);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "bar", &id), 0);
	assert_int_equal(id, 8);
	/* A name that exists but not as a function, a prefix of one, and
	 * none at all. */
	id = 99;
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "int", &id), -ENOENT);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "fo", &id), -ENOENT);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "ba", &id), -ENOENT);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "bpf_lsm_path_chmod", &id), -ENOENT);
	assert_int_equal(id, 99); /* written only on success */
	assert_int_equal(cordon_probe_btf_find_func(NULL, b.len, "foo", &id), -EINVAL);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, NULL, &id), -EINVAL);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", NULL), -EINVAL);
}

static void test_broken_blobs(void **state)
{
	struct blob b;
	struct btf_header h;
	uint32_t id;

	(void)state;
	build(&b);
	h = header(&b);
	h.magic = 0x9feb; /* the other byte order */
	set_header(&b, &h);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);

	/* Shorter than a header; a header length beyond the blob. */
	build(&b);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, sizeof(struct btf_header) - 1, "foo", &id), -EBADMSG);
	h = header(&b);
	h.hdr_len = (uint32_t)b.len + 1;
	set_header(&b, &h);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);

	/* Sections out of range, including by wrap-around. */
	build(&b);
	h = header(&b);
	h.str_len += 1;
	set_header(&b, &h);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);
	build(&b);
	h = header(&b);
	h.type_off = UINT32_MAX;
	set_header(&b, &h);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);

	/* A type section that ends inside a type: the struct's members are
	 * cut off. */
	build(&b);
	h = header(&b);
	h.type_len = (uint32_t)(2 * sizeof(struct btf_type) + 4 + sizeof(struct btf_param) + sizeof(struct btf_type) +
				sizeof(struct btf_member));
	set_header(&b, &h);
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);

	/* A kind newer than this code, before the target: the walk stops. */
	build(&b);
	{
		struct btf_type t;
		size_t off = b.types + sizeof(struct btf_type) + 4; /* type [2] */

		memcpy(&t, b.buf + off, sizeof(t));
		t.info = INFO(31, 1);
		memcpy(b.buf + off, &t, sizeof(t));
	}
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -EBADMSG);

	/* A function whose name offset lies outside the string section is
	 * never matched (nor read). */
	build(&b);
	{
		struct btf_type t;
		size_t off = b.types + 3 * sizeof(struct btf_type) + 4 + sizeof(struct btf_param) +
			     2 * sizeof(struct btf_member); /* type [4], foo */

		memcpy(&t, b.buf + off, sizeof(t));
		t.name_off = 4000;
		memcpy(b.buf + off, &t, sizeof(t));
	}
	assert_int_equal(cordon_probe_btf_find_func(b.buf, b.len, "foo", &id), -ENOENT);
}

/* The running kernel's BTF, when readable: the same id as libbpf's full
 * parse. */
static void test_kernel_btf_matches_libbpf(void **state)
{
	static const char *const names[] = { "bpf_lsm_path_chmod", "bpf_lsm_path_chown", "security_path_chmod" };
	char *data = NULL;
	size_t len = 0;
	struct btf *btf;

	(void)state;
	if (read_file_bounded(AT_FDCWD, "/sys/kernel/btf/vmlinux", 512u << 20, &data, &len) < 0) {
		free(data);
		skip();
	}
	btf = btf__parse_raw("/sys/kernel/btf/vmlinux");
	assert_non_null(btf);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int want = btf__find_by_name_kind(btf, names[i], BTF_KIND_FUNC);
		uint32_t id = 0;

		printf("%s: libbpf %d\n", names[i], want);
		if (want < 0) {
			assert_int_equal(cordon_probe_btf_find_func(data, len, names[i], &id), -ENOENT);
			continue;
		}
		assert_int_equal(cordon_probe_btf_find_func(data, len, names[i], &id), 0);
		assert_int_equal(id, (uint32_t)want);
	}
	btf__free(btf);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic_ids),
		cmocka_unit_test(test_broken_blobs),
		cmocka_unit_test(test_kernel_btf_matches_libbpf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
