/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((format(printf, 2, 0))) static _Noreturn void skip_v(const char *feature, const char *fmt, va_list ap)
{
	const char *must = getenv("CORDON_TEST_MUST_RUN");

	fflush(stdout);
	fprintf(stderr, "SKIP: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	if (must && strcmp(must, "1") == 0) {
		if (feature && cordon_test_may_lack(feature)) {
			fprintf(stderr, "SKIP: lacking %s is allowed by CORDON_TEST_MAY_LACK\n", feature);
			exit(CORDON_TEST_SKIP);
		}
		fprintf(stderr, "FAIL: CORDON_TEST_MUST_RUN=1 forbids skipping\n");
		exit(1);
	}
	exit(CORDON_TEST_SKIP);
}

bool cordon_test_may_lack(const char *feature)
{
	const char *list = getenv("CORDON_TEST_MAY_LACK");
	size_t len = strlen(feature);

	if (!list || len == 0)
		return false;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, feature, len) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

void cordon_test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	skip_v(NULL, fmt, ap);
}

void cordon_test_skip_feature(const char *feature, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	skip_v(feature, fmt, ap);
}

void cordon_test_require_root(void)
{
	if (geteuid() != 0)
		cordon_test_skip("needs root (euid is %u)", (unsigned)geteuid());
}

int cordon_test_wait(pid_t pid)
{
	int status;

	for (;;) {
		if (waitpid(pid, &status, 0) >= 0)
			return status;
		if (errno != EINTR)
			return -errno;
	}
}

char *cordon_test_mkdtemp(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *path = NULL;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/cordon-test-%s-XXXXXX", base, tag) < 0)
		abort();
	if (!mkdtemp(path)) {
		fprintf(stderr, "mkdtemp(%s): %s\n", path, strerror(errno));
		abort();
	}
	return path;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

int cordon_test_rm_rf(const char *path)
{
	if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

const char *cordon_test_env(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

long cordon_test_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

bool cordon_test_int80_available(void)
{
	static int cached = -1;
	pid_t pid;
	int status;

	if (cached >= 0)
		return cached;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		long r = 20; /* __NR_getpid in the i386 table */

		/* cmocka's handler would longjmp into a copy of the runner. */
		signal(SIGSEGV, SIG_DFL);
		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		_exit(r == getpid() ? 0 : 90);
	}
	status = cordon_test_wait(pid);
	if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		cached = 1;
	else if (status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
		printf("note: int 0x80 raises SIGSEGV here with no filter (the kernel or VM has no i386 "
		       "entry); the i386 case expects SIGSEGV, not seccomp's SIGSYS\n");
		cached = 0;
	} else {
		fprintf(stderr, "int 0x80 probe: unexpected wait status 0x%x\n", (unsigned)status);
		abort();
	}
	return cached;
}

uint64_t cordon_test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cordon_test_file_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}
