/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The approval webhook's pieces that need no daemon (webhook.h): the
 * signature against an independent computation (openssl dgst -hmac), the
 * secret file's checks, and the bounded queue dropping its oldest body. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"
#include "webhook.h"

#define SECRET "0123456789abcdef0123"

static char *dir;

static const char *secret_file(const char *name, const char *content, mode_t mode)
{
	static char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	(void)unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

/* `printf '%s' '1764693601.{"a":1}' | openssl dgst -sha256 -hmac 0123456789abcdef0123` */
static void test_signature_known_answer(void **state)
{
	char sig[65];

	(void)state;
	cordon_webhook_sign((const uint8_t *)SECRET, strlen(SECRET), "1764693601", "{\"a\":1}", 7, sig);
	assert_string_equal(sig, "88d941bbd5c54a5474624643f9c6ba3a27f202828507a271200f512617695c77");
}

/* 0600 with a trailing newline: accepted (the newline is not the key);
 * readable by others, too short, or a directory: refused naming why. */
static void test_secret_file_checks(void **state)
{
	struct cordon_webhook *w = NULL;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(cordon_webhook_new("http://127.0.0.1:9/x", secret_file("ok", SECRET "\n", 0600), &w, &d), 0);
	cordon_webhook_free(w);
	assert_int_equal(cordon_webhook_new("http://127.0.0.1:9/x", secret_file("wide", SECRET, 0644), &w, &d), -EPERM);
	assert_non_null(strstr(d.message, "not readable or writable by group or others"));
	assert_int_equal(cordon_webhook_new("http://127.0.0.1:9/x", secret_file("short", "tooshort\n", 0600), &w, &d),
			 -EINVAL);
	assert_non_null(strstr(d.message, "16 to 1024 bytes"));
	assert_int_equal(cordon_webhook_new("http://127.0.0.1:9/x", dir, &w, &d), -EINVAL);
	assert_non_null(strstr(d.message, "not a regular file"));
	assert_int_equal(cordon_webhook_new("https://127.0.0.1/x", secret_file("ok", SECRET, 0600), &w, &d), -EINVAL);
	assert_non_null(strstr(d.message, "https is not supported"));
}

/* A full queue drops its oldest body (nothing is on the wire before
 * cordon_webhook_start()) and keeps the newest CORDON_WEBHOOK_QUEUE. */
static void test_queue_drops_oldest(void **state)
{
	struct cordon_webhook *w = NULL;
	struct cordon_diag d = {};
	unsigned n = 0;
	char body[32];

	(void)state;
	assert_int_equal(cordon_webhook_new("http://127.0.0.1:9/x", secret_file("ok", SECRET, 0600), &w, &d), 0);
	for (unsigned i = 0; i < CORDON_WEBHOOK_QUEUE + 6; i++) {
		snprintf(body, sizeof(body), "{\"n\":%u}", i);
		assert_int_equal(cordon_webhook_enqueue(w, body, "approval.requested"), 0);
	}
	assert_string_equal(cordon_webhook_queued(w, 0, &n), "{\"n\":6}");
	assert_int_equal(n, CORDON_WEBHOOK_QUEUE);
	snprintf(body, sizeof(body), "{\"n\":%u}", CORDON_WEBHOOK_QUEUE + 5);
	assert_string_equal(cordon_webhook_queued(w, CORDON_WEBHOOK_QUEUE - 1, NULL), body);
	assert_null(cordon_webhook_queued(w, CORDON_WEBHOOK_QUEUE, NULL));
	cordon_webhook_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature_known_answer),
		cmocka_unit_test(test_secret_file_checks),
		cmocka_unit_test(test_queue_drops_oldest),
	};
	int r;

	dir = cordon_test_mkdtemp("webhook");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	cordon_test_rm_rf(dir);
	free(dir);
	return r;
}
