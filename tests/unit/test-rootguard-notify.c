/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootguard-notify.c, the parts that need no sandbox: copying a path out of
 * a task's memory (page by page, exact errnos), rewriting the target's
 * /proc/self, and the notification filter (which syscalls it sends: with
 * no listener the kernel answers ENOSYS for exactly those). Any user. The
 * supervisor itself runs in test-connector-cannot-chmod-its-root-directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rootguard-notify.h"
#include "syscall-compat.h"

static void test_read_path_plain(void **state)
{
	static const char s[] = "/data/some/file";
	char buf[PATH_MAX];

	(void)state;
	assert_int_equal(cordon_rootguard_notify_read_path(getpid(), (uint64_t)(uintptr_t)s, buf, sizeof(buf)),
			 (int)strlen(s));
	assert_string_equal(buf, s);
	assert_int_equal(cordon_rootguard_notify_read_path(getpid(), 0, buf, sizeof(buf)), -EFAULT);
}

/* Two pages: a string across the boundary is read whole; with the second
 * page unreadable, one that runs into it is EFAULT, one that ends (NUL)
 * on the first page's last byte is fine; no NUL within the size is
 * ENAMETOOLONG. */
static void test_read_path_pages(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m, buf[PATH_MAX];

	(void)state;
	m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	memset(m, 'a', (size_t)page * 2);
	m[page + 10] = '\0';
	assert_int_equal(
		cordon_rootguard_notify_read_path(getpid(), (uint64_t)(uintptr_t)(m + page - 20), buf, sizeof(buf)),
		30);
	/* Bounded by size: no NUL in the first 16 bytes. */
	assert_int_equal(cordon_rootguard_notify_read_path(getpid(), (uint64_t)(uintptr_t)m, buf, 16), -ENAMETOOLONG);
	assert_int_equal(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	assert_int_equal(
		cordon_rootguard_notify_read_path(getpid(), (uint64_t)(uintptr_t)(m + page - 20), buf, sizeof(buf)),
		-EFAULT);
	m[page - 1] = '\0';
	assert_int_equal(
		cordon_rootguard_notify_read_path(getpid(), (uint64_t)(uintptr_t)(m + page - 5), buf, sizeof(buf)), 4);
	assert_string_equal(buf, "aaaa");
	assert_int_equal(munmap(m, (size_t)page * 2), 0);
}

static void test_read_path_no_task(void **state)
{
	char buf[64];
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(cordon_rootguard_notify_read_path(pid, (uint64_t)(uintptr_t) "x", buf, sizeof(buf)), -ESRCH);
}

static void rewrite(const char *in, int want_r, const char *want)
{
	char p[64];

	snprintf(p, sizeof(p), "%s", in);
	assert_int_equal(cordon_rootguard_notify_rewrite_self(p, sizeof(p), 7, 9), want_r);
	assert_string_equal(p, want);
}

static void test_rewrite_self(void **state)
{
	char p[24];

	(void)state;
	rewrite("/proc/self/fd/3", 1, "/proc/7/fd/3");
	rewrite("/proc/self", 1, "/proc/7");
	rewrite("/proc/self/", 1, "/proc/7/");
	rewrite("/proc/thread-self/fd/3", 1, "/proc/7/task/9/fd/3");
	rewrite("/proc/selfish", 0, "/proc/selfish");
	rewrite("/proc/7/fd/3", 0, "/proc/7/fd/3");
	rewrite("proc/self/fd/3", 0, "proc/self/fd/3");
	rewrite("/data/proc/self", 0, "/data/proc/self");
	/* No room: refused, unchanged. */
	snprintf(p, sizeof(p), "/proc/thread-self/fd/3");
	assert_int_equal(cordon_rootguard_notify_rewrite_self(p, sizeof(p), 1234567, 1234568), -ENAMETOOLONG);
	assert_string_equal(p, "/proc/thread-self/fd/3");
}

/* The filter under no_new_privs and without a listener: USER_NOTIF with
 * nobody listening is ENOSYS, so exactly the eight syscalls fail so; the
 * rest (stat, getpid, open) run. Checked in a child, which prints what
 * differs and exits non-zero. */
static void test_filter_sends_exactly_the_chmod_family(void **state)
{
	const struct sock_fprog *f = cordon_rootguard_notify_filter();
	int st;
	pid_t pid;

	(void)state;
	assert_non_null(f);
	assert_ptr_equal(cordon_rootguard_notify_filter(), f); /* built once */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct stat sb;
		int bad = 0;

#define CHILD_EXPECT(call, err)                                                                                        \
	do {                                                                                                           \
		long _r = (long)(call);                                                                                \
		int _e = _r < 0 ? errno : 0;                                                                           \
		if (_e != (err)) {                                                                                     \
			fprintf(stderr, "%s: errno %d, want %d\n", #call, _e, (err));                                  \
			bad = 1;                                                                                       \
		}                                                                                                      \
	} while (0)
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, f) < 0)
			_exit(2);
		CHILD_EXPECT(syscall(SYS_chmod, "/nonexistent-cordon", 0644), ENOSYS);
		CHILD_EXPECT(syscall(SYS_fchmod, 0, 0644), ENOSYS);
		CHILD_EXPECT(syscall(SYS_fchmodat, AT_FDCWD, "/nonexistent-cordon", 0644), ENOSYS);
		CHILD_EXPECT(syscall(__NR_fchmodat2, AT_FDCWD, "/nonexistent-cordon", 0644, 0), ENOSYS);
		CHILD_EXPECT(syscall(SYS_chown, "/nonexistent-cordon", -1, -1), ENOSYS);
		CHILD_EXPECT(syscall(SYS_lchown, "/nonexistent-cordon", -1, -1), ENOSYS);
		CHILD_EXPECT(syscall(SYS_fchown, 0, -1, -1), ENOSYS);
		CHILD_EXPECT(syscall(SYS_fchownat, AT_FDCWD, "/nonexistent-cordon", -1, -1, 0), ENOSYS);
		CHILD_EXPECT(stat("/nonexistent-cordon", &sb), ENOENT);
		CHILD_EXPECT(getpid(), 0);
		CHILD_EXPECT(open("/nonexistent-cordon", O_RDONLY), ENOENT);
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_path_plain),
		cmocka_unit_test(test_read_path_pages),
		cmocka_unit_test(test_read_path_no_task),
		cmocka_unit_test(test_rewrite_self),
		cmocka_unit_test(test_filter_sends_exactly_the_chmod_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
