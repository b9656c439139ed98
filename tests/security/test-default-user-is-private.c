/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond started as root without --user must not run as a shared account:
 * it drops to its private id (CORDON_BROKER_PRIVATE_ID, no user database
 * entry), so cordon.db (0600), its -wal/-shm and audit-signing.key (0600)
 * belong to an id no other process runs as. (Found by this suite: the old
 * default, nobody, let any other nobody process — a gateway client on the
 * 0666 gateway socket, say — open the database read-write and read the
 * signing key.) This test starts the real cordond binary as root with no
 * --user and, as a gateway client running as uid 65534, connects to the
 * gateway (allowed) and tries to open the database and the key: EACCES.
 * `--user nobody` is refused outright. */
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "checkpoint.h"
#include "daemon-core.h"
#include "fd-util.h"
#include "inventory.h"
#include "profile.h"
#include "daemon-harness.h"
#include "test-support.h"

static char *dir;
static pid_t daemon_pid;

static int teardown(void **state)
{
	(void)state;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		(void)cordon_test_wait(daemon_pid);
	}
	daemon_pid = 0;
	if (dir)
		(void)cordon_test_rm_rf(dir);
	free(dir);
	dir = NULL;
	return 0;
}

static void test_default_user_keeps_db_from_gateway_clients(void **state)
{
	char state_dir[600], profiles[600], bin[600], launcher[600], db[700], key[700], gateway[700];
	const char *build = cordon_test_env("CORDON_BUILD_DIR", "build");
	pid_t pid;
	int st;

	(void)state;
	cordon_test_require_root();
	dir = cordon_test_mkdtemp("sec-nobody");
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(profiles, sizeof(profiles), "%s/profiles", dir);
	assert_int_equal(mkdir(profiles, 0755), 0);
	snprintf(bin, sizeof(bin), "%s/broker/cordond", build);
	snprintf(launcher, sizeof(launcher), "%s/launcher/cordon-launch", build);
	snprintf(db, sizeof(db), "%s/cordon.db", state_dir);
	snprintf(key, sizeof(key), "%s/audit-signing.key", state_dir);
	snprintf(gateway, sizeof(gateway), "%s/run/gateway.sock", state_dir);

	fflush(NULL);
	daemon_pid = fork();
	assert_true(daemon_pid >= 0);
	if (daemon_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, bin, "--state", state_dir, "--profiles", profiles, "--launcher", launcher, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && access(gateway, F_OK) < 0; i++)
		usleep(25 * 1000);
	assert_int_equal(access(gateway, F_OK), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mcp_peer p;
		int fd, bad = 0;

		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
		CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
		/* A gateway client: the socket is open to every local user. */
		CHILD_CHECK(mcp_peer_connect(&p, gateway) == 0);
		fd = open(db, O_RDWR | O_CLOEXEC);
		printf("  uid 65534 open(%s, O_RDWR): %s\n", db, fd >= 0 ? "OPENED" : strerror(errno));
		bad += fd >= 0;
		fd = open(key, O_RDONLY | O_CLOEXEC);
		printf("  uid 65534 open(%s): %s\n", key, fd >= 0 ? "OPENED" : strerror(errno));
		bad += fd >= 0;
		fflush(stdout);
		_exit(bad);
	}
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Issue 11 finding 9: `cordond --help` said the default user was nobody.
 * It names the private id, and says nobody is refused. */
static void test_help_names_the_private_default_user(void **state)
{
	const char *build = cordon_test_env("CORDON_BUILD_DIR", "build");
	char cmd[700], *out = NULL;
	size_t len = 0;
	FILE *p, *m;
	int c;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/broker/cordond --help", build);
	p = popen(cmd, "re");
	assert_non_null(p);
	m = open_memstream(&out, &len);
	assert_non_null(m);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	fclose(m);
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out,
			       "  --user NAME              user to run as (as root default: cordond's private id "
			       "1879048191,\n"
			       "                           which no user entry names; a shared account such as nobody\n"
			       "                           is refused)\n"));
	assert_null(strstr(out, "default: nobody"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_default_user_keeps_db_from_gateway_clients, teardown),
		cmocka_unit_test(test_help_names_the_private_default_user),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
