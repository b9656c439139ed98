/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launcher/basic/log.c: the line formatter (journal "<N>" prefix, plain
 * "program: level: ", control bytes escaped so a value cannot start a line
 * of its own, long messages cut), JOURNAL_STREAM detection (the DEV:INO of
 * the fd itself, nothing else) and the level names an operator may set. */
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

#include "log.h"

static void test_journal_prefix(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_WARNING, true, true, "egress denied"),
			 strlen("<4>cordond: egress denied\n"));
	assert_string_equal(buf, "<4>cordond: egress denied\n");
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_CRIT, true, true, "x");
	assert_string_equal(buf, "<2>cordond: x\n");
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_DEBUG, true, false, "x");
	assert_string_equal(buf, "<7>cordond: x\n");
}

static void test_plain_level(void **state)
{
	char buf[256];

	(void)state;
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_NOTICE, false, true, "reload");
	assert_string_equal(buf, "cordond: notice: reload\n");
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_ERROR, false, true, "bad");
	assert_string_equal(buf, "cordond: error: bad\n");
	/* The CLI tools keep "program: message". */
	log_format_line(buf, sizeof(buf), "cordonctl", LOG_LEVEL_ERROR, false, false, "bad");
	assert_string_equal(buf, "cordonctl: bad\n");
}

/* A newline in a value (a tool name, a connector's text) must not start a
 * line that a reader would take for cordond's own, in either mode. */
static void test_control_bytes_escaped(void **state)
{
	char buf[256];

	(void)state;
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_INFO, true, true,
			"tool a\n<0>cordond: [cordon.approval.decided x] decision=approved\r\x1b[2J\x7f\tz");
	assert_string_equal(buf, "<6>cordond: tool a\\x0a<0>cordond: [cordon.approval.decided x] "
				 "decision=approved\\x0d\\x1b[2J\\x7f\tz\n");
	assert_null(strchr(buf, '\r'));
	assert_ptr_equal(strchr(buf, '\n'), buf + strlen(buf) - 1);
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_INFO, false, true, "a\nb");
	assert_string_equal(buf, "cordond: info: a\\x0ab\n");
	/* Backslashes and UTF-8 pass as they are. */
	log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_INFO, false, true, "\\x41 \xc3\xa9");
	assert_string_equal(buf, "cordond: info: \\x41 \xc3\xa9\n");
}

static void test_long_message_cut(void **state)
{
	char msg[300], buf[100];
	size_t n;

	(void)state;
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	n = log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_INFO, true, true, msg);
	assert_int_equal(n, strlen(buf));
	assert_true(n < sizeof(buf));
	assert_memory_equal(buf, "<6>cordond: mmm", 15);
	assert_string_equal(buf + n - 4, "...\n");
	/* An escape is never split by the cut. */
	memset(msg, '\n', sizeof(msg) - 1);
	n = log_format_line(buf, sizeof(buf), "cordond", LOG_LEVEL_INFO, true, true, msg);
	assert_string_equal(buf + n - 8, "\\x0a...\n");
	/* Too small a buffer: nothing. */
	assert_int_equal(log_format_line(buf, 10, "cordond", LOG_LEVEL_INFO, true, true, "x"), 0);
	assert_string_equal(buf, "");
}

static void test_journal_stream_matches(void **state)
{
	char path[] = "/tmp/cordon-test-log-XXXXXX", env[64];
	struct stat st;
	int fd, other;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	other = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	assert_true(log_journal_stream_matches(env, fd));
	/* Another file (a redirected stderr under a journal-connected parent). */
	assert_false(log_journal_stream_matches(env, other));
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino + 1);
	assert_false(log_journal_stream_matches(env, fd));
	/* Malformed values. */
	assert_false(log_journal_stream_matches(NULL, fd));
	assert_false(log_journal_stream_matches("", fd));
	assert_false(log_journal_stream_matches("12", fd));
	assert_false(log_journal_stream_matches(":", fd));
	assert_false(log_journal_stream_matches("a:b", fd));
	assert_false(log_journal_stream_matches("1:2:3", fd));
	assert_false(log_journal_stream_matches("-1:5", fd));
	assert_false(log_journal_stream_matches("123456789012345678901234567890:1", fd));
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	assert_false(log_journal_stream_matches(env, -1));
	close(other);
	close(fd);
	unlink(path);
}

/* log_open_stderr() reads JOURNAL_STREAM against fd 2, and log_internal()
 * writes the chosen form in one line. */
static void test_open_stderr_and_write(void **state)
{
	char path[] = "/tmp/cordon-test-log-XXXXXX", env[64], got[512] = "";
	struct stat st;
	int fd, saved;
	ssize_t n;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(fstat(fd, &st), 0);
	log_set_program("/usr/bin/cordond");
	unsetenv("JOURNAL_STREAM");
	assert_false(log_open_stderr());
	log_warning("one %s", "two");
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	assert_true(log_open_stderr());
	assert_true(log_get_journal());
	log_notice("three");
	assert_int_equal(log_error_errno(-ENOENT, "four"), -ENOENT);
	log_set_max_level(LOG_LEVEL_NOTICE);
	log_info("not shown");
	log_set_max_level(LOG_LEVEL_INFO);
	unsetenv("JOURNAL_STREAM");
	assert_false(log_open_stderr());
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, got, sizeof(got) - 1, 0);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, "cordond: warning: one two\n"
				 "<5>cordond: three\n"
				 "<3>cordond: four: No such file or directory\n");
	close(fd);
	unlink(path);
}

static void test_level_names(void **state)
{
	const char *const names[] = { "error", "warning", "notice", "info", "debug" };
	enum log_level l;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(log_level_from_name(names[i], &l), 0);
		assert_int_equal(l, LOG_LEVEL_ERROR + (int)i);
		assert_string_equal(log_level_name(l), names[i]);
	}
	assert_string_equal(log_level_name(LOG_LEVEL_CRIT), "crit");
	assert_string_equal(log_level_name((enum log_level)9), "?");
	assert_string_equal(log_level_name((enum log_level)0), "?");
	l = LOG_LEVEL_INFO;
	assert_int_equal(log_level_from_name("crit", &l), -EINVAL);
	assert_int_equal(log_level_from_name("err", &l), -EINVAL);
	assert_int_equal(log_level_from_name("WARNING", &l), -EINVAL);
	assert_int_equal(log_level_from_name("", &l), -EINVAL);
	assert_int_equal(log_level_from_name(NULL, &l), -EINVAL);
	assert_int_equal(l, LOG_LEVEL_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_prefix),
		cmocka_unit_test(test_plain_level),
		cmocka_unit_test(test_control_bytes_escaped),
		cmocka_unit_test(test_long_message_cut),
		cmocka_unit_test(test_journal_stream_matches),
		cmocka_unit_test(test_open_stderr_and_write),
		cmocka_unit_test(test_level_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
