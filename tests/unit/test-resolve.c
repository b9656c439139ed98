/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The resolver, through openat2 and through the fallback walk: every escape
 * is refused with its exact errno, and in-root paths work. Each test runs in
 * both modes, selected with an injected capability struct. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "resolve.h"
#include "test-support.h"

static char *base;
static int root_fd = -1;

static const struct cordon_caps caps_openat2 = { .openat2 = true, .openat2_beneath = true };
static const struct cordon_caps caps_walk = { .openat2 = false, .openat2_beneath = false };
static const struct cordon_caps *const modes[] = { &caps_openat2, &caps_walk };

static void write_file(const char *rel, const char *content)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void make_link(const char *target, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	char p[4096];

	(void)state;
	base = cordon_test_mkdtemp("resolve");
	make_dir("root");
	make_dir("root/a");
	make_dir("root/a/b");
	write_file("root/a/b/file", "inside");
	make_dir("outside");
	write_file("outside/secret", "outside");
	make_dir("root-evil");
	write_file("root-evil/secret", "evil");
	make_link("../outside/secret", "root/esc");
	make_link("/etc/passwd", "root/abs");
	make_link("l2", "root/l1");
	make_link("a/b/file", "root/l2");
	make_link("loop2", "root/loop1");
	make_link("loop1", "root/loop2");
	make_link("../outside/created", "root/dangling");
	make_link("a/b", "root/inlink");
	snprintf(p, sizeof(p), "%s/root", base);
	root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root_fd >= 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(root_fd);
	assert_int_equal(cordon_test_rm_rf(base), 0);
	free(base);
	return 0;
}

static int try_open(const struct cordon_caps *caps, const char *path, int flags, unsigned rflags, int *ret_fd)
{
	struct cordon_resolve_how how = { .open_flags = flags, .mode = 0644, .flags = rflags };

	return cordon_resolve(root_fd, path, &how, caps, ret_fd);
}

/* Opens path read-only and returns what it contains ("" on error). */
static void read_via(const struct cordon_caps *caps, const char *path, unsigned rflags, char *buf, size_t size,
		     int *ret_r)
{
	int fd = -1, r;
	ssize_t n;

	buf[0] = '\0';
	r = try_open(caps, path, O_RDONLY, rflags, &fd);
	*ret_r = r;
	if (r < 0)
		return;
	n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void expect_read(const char *path, unsigned rflags, const char *content)
{
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		char buf[64];
		int r;

		read_via(modes[m], path, rflags, buf, sizeof(buf), &r);
		if (r != 0)
			fail_msg("mode %zu: %s: %s", m, path, strerror(-r));
		assert_string_equal(buf, content);
	}
}

static void expect_errno2(const char *path, int flags, unsigned rflags, int want_openat2, int want_walk)
{
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		int want = m == 0 ? want_openat2 : want_walk, fd = -1, r;

		r = try_open(modes[m], path, flags, rflags, &fd);
		if (r >= 0)
			close(fd);
		if (r != -want)
			fail_msg("mode %s: %s: got %d (%s), want -%d (%s)", m == 0 ? "openat2" : "walk", path, r,
				 r < 0 ? strerror(-r) : "success", want, strerror(want));
	}
}

static void expect_errno(const char *path, int flags, unsigned rflags, int want)
{
	expect_errno2(path, flags, rflags, want, want);
}

static void test_inside_paths(void **state)
{
	(void)state;
	expect_read("a/b/file", 0, "inside");
	expect_read("/a/b/file", 0, "inside");	 /* absolute = relative to the root */
	expect_read("a//b///file", 0, "inside"); /* "//" */
	expect_read("./a/./b/file", 0, "inside");
	expect_read("a/../a/b/file", 0, "inside"); /* ".." inside the root */
	/* A directory open with a mode set (ignored without O_CREAT). */
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		int fd = -1;

		assert_int_equal(try_open(modes[m], "/", O_RDONLY | O_DIRECTORY, 0, &fd), 0);
		close(fd);
		assert_int_equal(try_open(modes[m], "a", O_PATH | O_DIRECTORY, 0, &fd), 0);
		close(fd);
	}
}

static void test_dotdot_escape(void **state)
{
	(void)state;
	expect_errno("../outside/secret", O_RDONLY, 0, EXDEV);
	expect_errno("a/../../outside/secret", O_RDONLY, 0, EXDEV);
	expect_errno("/../outside/secret", O_RDONLY, 0, EXDEV);
	expect_errno("a/b/../../../outside/secret", O_RDONLY, CORDON_RESOLVE_SYMLINKS, EXDEV);
}

static void test_prefix_sibling(void **state)
{
	(void)state;
	/* "/work" must never admit "/work-evil". */
	expect_errno("../root-evil/secret", O_RDONLY, 0, EXDEV);
	expect_errno("../root-evil/secret", O_RDONLY, CORDON_RESOLVE_SYMLINKS, EXDEV);
}

static void test_symlink_outside(void **state)
{
	(void)state;
	expect_errno("esc", O_RDONLY, 0, ELOOP);
	expect_errno("esc", O_RDONLY, CORDON_RESOLVE_SYMLINKS, EXDEV);
	expect_errno("abs", O_RDONLY, 0, ELOOP);
	expect_errno("abs", O_RDONLY, CORDON_RESOLVE_SYMLINKS, EXDEV);
}

static void test_symlink_chain_and_loop(void **state)
{
	(void)state;
	expect_errno("l1", O_RDONLY, 0, ELOOP);
	expect_read("l1", CORDON_RESOLVE_SYMLINKS, "inside");
	expect_read("inlink/file", CORDON_RESOLVE_SYMLINKS, "inside");
	expect_errno("inlink/file", O_RDONLY, 0, ELOOP);
	expect_errno("loop1", O_RDONLY, 0, ELOOP);
	expect_errno("loop1", O_RDONLY, CORDON_RESOLVE_SYMLINKS, ELOOP);
}

static void test_magic_link(void **state)
{
	const struct cordon_resolve_how how = { .open_flags = O_RDONLY, .flags = CORDON_RESOLVE_SYMLINKS };
	const struct cordon_resolve_how strict = { .open_flags = O_RDONLY };
	int proc_fd, fd = -1;

	(void)state;
	proc_fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(proc_fd >= 0);
	/* /proc/self/root is a magic link to "/": never followed. */
	assert_int_equal(cordon_resolve(proc_fd, "root/etc/hostname", &strict, &caps_openat2, &fd), -ELOOP);
	assert_int_equal(cordon_resolve(proc_fd, "root/etc/hostname", &strict, &caps_walk, &fd), -ELOOP);
	assert_int_equal(cordon_resolve(proc_fd, "root/etc/hostname", &how, &caps_openat2, &fd), -ELOOP);
	/* The walk never asks the kernel to follow it: the link text "/" is an
	 * absolute target, which leaves the root. */
	assert_int_equal(cordon_resolve(proc_fd, "root/etc/hostname", &how, &caps_walk, &fd), -EXDEV);
	close(proc_fd);
}

static void test_dangling_symlink_on_create(void **state)
{
	char p[4096];

	(void)state;
	expect_errno("dangling", O_WRONLY | O_CREAT, 0, ELOOP);
	/* openat2 refuses the escaping target; the walk never follows a symlink
	 * for a write. */
	expect_errno2("dangling", O_WRONLY | O_CREAT, CORDON_RESOLVE_SYMLINKS, EXDEV, ELOOP);
	expect_errno("dangling", O_WRONLY | O_CREAT | O_EXCL, CORDON_RESOLVE_SYMLINKS, EEXIST);
	snprintf(p, sizeof(p), "%s/outside/created", base);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_hardlink_outside(void **state)
{
	char src[4096], dst[4096], buf[64];
	int r;

	(void)state;
	snprintf(src, sizeof(src), "%s/outside/secret", base);
	snprintf(dst, sizeof(dst), "%s/root/hl", base);
	assert_int_equal(link(src, dst), 0);
	/* Read-only at most ... */
	expect_read("hl", 0, "outside");
	/* ... never written through, and O_TRUNC never applied. */
	expect_errno("hl", O_WRONLY, 0, EMLINK);
	expect_errno("hl", O_RDWR | O_TRUNC, 0, EMLINK);
	read_via(&caps_openat2, "hl", 0, buf, sizeof(buf), &r);
	assert_int_equal(r, 0);
	assert_string_equal(buf, "outside");
	assert_int_equal(unlink(dst), 0);
}

static void test_create_write_inside(void **state)
{
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		char name[32], buf[64];
		int fd = -1, r;

		(void)state;
		snprintf(name, sizeof(name), "a/new-%zu", m);
		assert_int_equal(try_open(modes[m], name, O_WRONLY | O_CREAT | O_EXCL, 0, &fd), 0);
		assert_int_equal(write(fd, "fresh", 5), 5);
		close(fd);
		assert_int_equal(try_open(modes[m], name, O_WRONLY | O_TRUNC, 0, &fd), 0);
		close(fd);
		read_via(modes[m], name, 0, buf, sizeof(buf), &r);
		assert_int_equal(r, 0);
		assert_string_equal(buf, "");
		assert_int_equal(try_open(modes[m], name, O_WRONLY | O_CREAT | O_EXCL, 0, &fd), -EEXIST);
	}
}

static void test_no_xdev(void **state)
{
	int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;
	const struct cordon_resolve_how how = { .open_flags = O_PATH, .flags = CORDON_RESOLVE_NO_XDEV };
	const struct cordon_resolve_how plain = { .open_flags = O_PATH };

	(void)state;
	assert_true(slash >= 0);
	/* /proc is a different mount from "/". */
	assert_int_equal(cordon_resolve(slash, "proc/self", &how, &caps_openat2, &fd), -EXDEV);
	assert_int_equal(cordon_resolve(slash, "proc/self", &how, &caps_walk, &fd), -EXDEV);
	assert_int_equal(cordon_resolve(slash, "proc/version", &plain, &caps_walk, &fd), 0);
	close(fd);
	close(slash);
}

static void test_resolve_parent(void **state)
{
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		char *name = NULL;
		int dfd = -1;

		(void)state;
		assert_int_equal(cordon_resolve_parent(root_fd, "/a/b/newfile", 0, modes[m], &dfd, &name), 0);
		assert_string_equal(name, "newfile");
		assert_int_equal(faccessat(dfd, "file", F_OK, 0), 0);
		close(dfd);
		free(name);
		assert_int_equal(cordon_resolve_parent(root_fd, "/", 0, modes[m], &dfd, &name), -EINVAL);
		assert_int_equal(cordon_resolve_parent(root_fd, "a/..", 0, modes[m], &dfd, &name), -EINVAL);
		assert_int_equal(cordon_resolve_parent(root_fd, "../x", 0, modes[m], &dfd, &name), -EXDEV);
		assert_int_equal(cordon_resolve_parent(root_fd, "esc/x", 0, modes[m], &dfd, &name), -ELOOP);
	}
}

/* A thread swaps a directory for a symlink to outside as fast as it can,
 * while the resolver opens and reads through it: it must never read outside. */
struct race {
	volatile int stop;
	unsigned long swaps;
};

static void *swapper(void *arg)
{
	struct race *rc = arg;
	char a[4096], b[4096];

	snprintf(a, sizeof(a), "%s/root/sw", base);
	snprintf(b, sizeof(b), "%s/root/swl", base);
	while (!rc->stop && rc->swaps < 100000) {
		if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
			break;
		rc->swaps++;
	}
	rc->stop = 1;
	return NULL;
}

static void test_race_swap_dir_for_symlink(void **state)
{
	(void)state;
	make_dir("root/sw");
	write_file("root/sw/f", "inside");
	make_link("../../outside", "root/swl");
	write_file("outside/f", "outside");

	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		for (unsigned rflags = 0; rflags <= CORDON_RESOLVE_SYMLINKS; rflags += CORDON_RESOLVE_SYMLINKS) {
			struct race rc = { 0 };
			unsigned long inside = 0, refused = 0;
			pthread_t t;

			assert_int_equal(pthread_create(&t, NULL, swapper, &rc), 0);
			while (!rc.stop) {
				char buf[64];
				int r;

				read_via(modes[m], "sw/f", rflags, buf, sizeof(buf), &r);
				if (r == 0) {
					assert_string_equal(buf, "inside");
					inside++;
				} else {
					refused++;
				}
				read_via(modes[m], "swl/f", rflags, buf, sizeof(buf), &r);
				if (r == 0) {
					assert_string_equal(buf, "inside");
					inside++;
				} else {
					refused++;
				}
			}
			assert_int_equal(pthread_join(t, NULL), 0);
			assert_int_equal(rc.swaps, 100000);
			print_message("mode %s symlinks=%u: %lu swaps, %lu inside reads, %lu refused, 0 outside\n",
				      m == 0 ? "openat2" : "walk", rflags, rc.swaps, inside, refused);
			assert_true(inside > 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inside_paths),
		cmocka_unit_test(test_dotdot_escape),
		cmocka_unit_test(test_prefix_sibling),
		cmocka_unit_test(test_symlink_outside),
		cmocka_unit_test(test_symlink_chain_and_loop),
		cmocka_unit_test(test_magic_link),
		cmocka_unit_test(test_dangling_symlink_on_create),
		cmocka_unit_test(test_hardlink_outside),
		cmocka_unit_test(test_create_write_inside),
		cmocka_unit_test(test_no_xdev),
		cmocka_unit_test(test_resolve_parent),
		cmocka_unit_test(test_race_swap_dir_for_symlink),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
