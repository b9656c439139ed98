/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared helpers for cordon's tests. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define CORDON_TEST_SKIP 77

/* Prints why and exits 77, or exits 1 when CORDON_TEST_MUST_RUN=1 (CI on a
 * capable machine must not skip). */
__attribute__((noreturn, format(printf, 1, 2))) void cordon_test_skip(const char *fmt, ...);

/* Skips because the kernel lacks `feature` (a stable name such as
 * "bpf-lsm-cgroup"). Like cordon_test_skip(), except that under
 * CORDON_TEST_MUST_RUN=1 it still exits 77 when `feature` is listed in the
 * comma-separated CORDON_TEST_MAY_LACK: a narrow, named exception for a
 * feature the CI machine is known to lack (.ci/run says why). */
__attribute__((noreturn, format(printf, 2, 3))) void cordon_test_skip_feature(const char *feature, const char *fmt,
									      ...);

/* Whether `feature` is listed in the comma-separated CORDON_TEST_MAY_LACK
 * (whole names only). */
bool cordon_test_may_lack(const char *feature);

/* Skips unless running as root. */
void cordon_test_require_root(void);

/* Inside a forked child that runs restricted code: never use cmocka asserts
 * (they longjmp into the copied runner). CHILD_CHECK prints the failed
 * condition and _exits with a distinctive status; the parent asserts the exit
 * status with cordon_test_wait_exit(). */
#define CHILD_CHECK(cond)                                                                                              \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "CHILD_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);               \
			fflush(stderr);                                                                                \
			_exit(99);                                                                                     \
		}                                                                                                      \
	} while (0)

/* CHILD_CHECK_ERRNO(expr, e): expr must return -1 with errno == e. */
#define CHILD_CHECK_ERRNO(expr, e)                                                                                     \
	do {                                                                                                           \
		errno = 0;                                                                                             \
		long _r = (long)(expr);                                                                                \
		int _e = errno;                                                                                        \
		if (_r != -1 || _e != (e)) {                                                                           \
			fprintf(stderr,                                                                                \
				"CHILD_CHECK_ERRNO failed at %s:%d: %s returned %ld errno %d (%s), want errno %d "     \
				"(%s)\n",                                                                              \
				__FILE__, __LINE__, #expr, _r, _e, strerror(_e), (e), strerror(e));                    \
			fflush(stderr);                                                                                \
			_exit(98);                                                                                     \
		}                                                                                                      \
	} while (0)

/* Waits for pid; returns the raw wait status, or -errno. */
int cordon_test_wait(pid_t pid);

/* Creates a fresh directory under $TMPDIR (or /tmp) and returns its malloc'd
 * path. Aborts on failure. */
char *cordon_test_mkdtemp(const char *tag);

/* Removes a directory tree this test created (does not follow symlinks, does
 * not cross mount points). Returns 0 or -errno. */
int cordon_test_rm_rf(const char *path);

/* Environment lookups with a fallback; the paths ctest exports. */
const char *cordon_test_env(const char *name, const char *fallback);

/* VmRSS of process pid from /proc/PID/status, in KiB; -1 when it cannot be
 * read (the process is gone). */
long cordon_test_rss_kib(pid_t pid);

/* Whether this machine delivers the i386 system call entry (int 0x80) to a
 * 64-bit process. Some kernels and paravirtualised VMs do not: there int 0x80
 * raises SIGSEGV with no filter at all, so a test of seccomp's i386 kill must
 * expect that signal instead. Probed once in a forked child; prints why when
 * the entry is unavailable. x86_64 only. */
bool cordon_test_int80_available(void);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t cordon_test_now_ms(void);

/* Polls `cond` (an expression, re-evaluated) every 10 ms until it is true or
 * timeout_ms have passed; evaluates to its last value (true: it happened).
 * Synchronisation for tests: wait for the state a test needs instead of
 * sleeping a fixed time and hoping it was reached. */
#define wait_until(cond, timeout_ms)                                                                                   \
	({                                                                                                             \
		const uint64_t _wu_deadline = cordon_test_now_ms() + (uint64_t)(timeout_ms);                           \
		bool _wu_ok;                                                                                           \
		while (!(_wu_ok = !!(cond)) && cordon_test_now_ms() < _wu_deadline)                                    \
			usleep(10 * 1000);                                                                             \
		_wu_ok;                                                                                                \
	})

/* Number of newline characters in the file at path (0 when it does not
 * exist). */
int cordon_test_file_lines(const char *path);
