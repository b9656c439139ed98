/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launcher (root) hands out dynamic uids by byte-range locks on one file,
 * CORDON_DYNAMIC_UID_LOCK. Found while packaging (issue 17): the lock lived
 * in /run/cordon, and cordond, started as the unit and the package start it
 * (`--runtime /run/cordon`), gives its runtime directory to its own user. A
 * compromised broker could then replace the lock file: launches after the
 * swap lock bytes of the new file while running instances hold the old one,
 * so two connectors could get the same uid (one could ptrace, signal or read
 * the other), or it could pre-plant the file and hold every byte (no launch
 * ever finds a uid).
 *
 * Requirement: the directory of the lock belongs to root and nobody else may
 * write to it, whoever owns cordond's runtime directory. This test starts the
 * real cordond as root with --runtime /run/cordon (its helper prepares the
 * lock), then, as cordond's run user, tries to plant a file beside the lock,
 * to unlink it and to rename a file over it: each must fail with EACCES.
 * /run/cordon's owner and mode are put back afterwards (or it is removed if
 * it did not exist); the test refuses to run while a cordond serves there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths.h"
#include "spawn.h"
#include "test-support.h"

#define RUN "/run/cordon"

static char *dir;
static pid_t daemon_pid;
static bool run_existed;
static struct stat run_before;

static void remove_sockets(void)
{
	static const char *const socks[] = { "gateway.sock",  "operator.sock", "http.sock",
					     "mcp-http.sock", "mine",	       "planted" };
	char p[128];

	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++) {
		snprintf(p, sizeof(p), RUN "/%s", socks[i]);
		(void)unlink(p);
	}
}

static int teardown(void **state)
{
	(void)state;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		(void)cordon_test_wait(daemon_pid);
	}
	daemon_pid = 0;
	remove_sockets();
	if (run_existed) {
		if (chown(RUN, run_before.st_uid, run_before.st_gid) < 0 || chmod(RUN, run_before.st_mode & 07777) < 0)
			fprintf(stderr, "cannot restore " RUN ": %m\n");
	} else
		(void)rmdir(RUN);
	if (dir)
		(void)cordon_test_rm_rf(dir);
	free(dir);
	dir = NULL;
	return 0;
}

static void test_broker_user_cannot_replace_the_dynamic_uid_lock(void **state)
{
	char state_dir[600], profiles[600], bin[600], launcher[600], lock_dir[sizeof(CORDON_DYNAMIC_UID_LOCK)];
	const char *build = cordon_test_env("CORDON_BUILD_DIR", "build");
	struct stat st;
	pid_t pid;

	(void)state;
	cordon_test_require_root();
	if (access(RUN "/operator.sock", F_OK) == 0 || access(RUN "/gateway.sock", F_OK) == 0)
		fail_msg("a cordond serves in " RUN " on this machine: this test would take the directory over");
	run_existed = lstat(RUN, &run_before) == 0;
	memcpy(lock_dir, CORDON_DYNAMIC_UID_LOCK, sizeof(lock_dir));
	dirname(lock_dir);

	dir = cordon_test_mkdtemp("sec-uidlock");
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(profiles, sizeof(profiles), "%s/profiles", dir);
	assert_int_equal(mkdir(profiles, 0755), 0);
	snprintf(bin, sizeof(bin), "%s/broker/cordond", build);
	snprintf(launcher, sizeof(launcher), "%s/launcher/cordon-launch", build);

	fflush(NULL);
	daemon_pid = fork();
	assert_true(daemon_pid >= 0);
	if (daemon_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, bin, "--state", state_dir, "--runtime", RUN, "--profiles", profiles, "--launcher", launcher,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 400 && access(RUN "/operator.sock", F_OK) < 0; i++)
		usleep(25 * 1000);
	assert_int_equal(access(RUN "/operator.sock", F_OK), 0);
	/* cordond took its runtime directory over, as it does under the unit. */
	assert_int_equal(lstat(RUN, &st), 0);
	assert_int_equal(st.st_uid, CORDON_BROKER_PRIVATE_ID);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char planted[sizeof(lock_dir) + 16], mine[64];
		int fd;

		snprintf(planted, sizeof(planted), "%s/planted", lock_dir);
		/* On the same file system as the lock (rename across
		 * mounts would fail with EXDEV first): the broker's own
		 * runtime directory. */
		snprintf(mine, sizeof(mine), RUN "/mine");
		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(setresgid(CORDON_BROKER_PRIVATE_ID, CORDON_BROKER_PRIVATE_ID, CORDON_BROKER_PRIVATE_ID) ==
			    0);
		CHILD_CHECK(setresuid(CORDON_BROKER_PRIVATE_ID, CORDON_BROKER_PRIVATE_ID, CORDON_BROKER_PRIVATE_ID) ==
			    0);
		CHILD_CHECK_ERRNO(open(planted, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), EACCES);
		CHILD_CHECK_ERRNO(unlink(CORDON_DYNAMIC_UID_LOCK), EACCES);
		fd = open(mine, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		CHILD_CHECK(fd >= 0);
		close(fd);
		CHILD_CHECK_ERRNO(rename(mine, CORDON_DYNAMIC_UID_LOCK), EACCES);
		CHILD_CHECK_ERRNO(open(CORDON_DYNAMIC_UID_LOCK, O_RDWR | O_CLOEXEC), EACCES);
		CHILD_CHECK(unlink(mine) == 0);
		_exit(0);
	}
	assert_int_equal(cordon_test_wait(pid), 0);
	/* Its helper made the lock at start. */
	assert_int_equal(lstat(CORDON_DYNAMIC_UID_LOCK, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	printf("  lock %s, cordond's runtime directory " RUN " (uid %u)\n", CORDON_DYNAMIC_UID_LOCK,
	       CORDON_BROKER_PRIVATE_ID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_broker_user_cannot_replace_the_dynamic_uid_lock, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
