/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: the gateway cannot open the Docker socket or the privileged
 * SQLite database.
 *
 * The Docker socket is simulated (never /var/run/docker.sock): a listening
 * unix socket the test creates at a temp path, root-owned, mode 0660. The
 * database is the broker's real state.db (created by cordon_db_open, 0600,
 * root) in a 0700 state directory.
 *  1. A gateway-side process — exec'd with the credentials cordond drops
 *     to (uid/gid 65534, no supplementary groups, no capabilities,
 *     no_new_privs) — connect(2) to the socket -> EACCES; open(2) of the
 *     database read-only and read-write -> EACCES; the same program as
 *     root connects (the socket is real and listening).
 *  2. A connector in a real cordon_spawn() sandbox: the socket and the
 *     database outside its roots are not in its view -> ENOENT; a copy of
 *     the socket placed INSIDE its read-write root (visible at /data; the
 *     root owned by uid 1000, so the id-mapped mount maps the connector to
 *     1000) is still refused -> EACCES (DAC: neither owner nor group).
 * Layer: real processes and credentials, libcordon (spawn), libcordon-broker
 * (db). The cordond process itself is not in this build yet; its
 * self-sandbox (Landlock on state/run/profile dirs) would add a third wall. */
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sec-sbx.h"
#include "../unit/broker-test.h"

static int make_socket(const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(su.sun_path));
	strcpy(su.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&su, sizeof(su)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, 0660), 0);
	return fd;
}

/* Runs sec-probe ATTEMPT PATH as uid/gid 65534 like the dropped broker
 * (or as root when as_root); returns its exit code. */
static int run_dropped(const char *probe, const char *attempt, const char *path, bool as_root)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!as_root) {
			CHILD_CHECK(setgroups(0, NULL) == 0);
			CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
			CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
			CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
		}
		execl(probe, probe, attempt, path, (char *)NULL);
		_exit(127);
	}
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_gateway_cannot_open_docker_socket_or_db(void **state)
{
	struct sbx *s = sbx_new("sec-docker");
	struct bt *t = bt_new();
	char sock[PATH_MAX], probe[PATH_MAX], inside_sock[PATH_MAX], probe_inside[PATH_MAX];
	int lfd, lfd2;
	struct cordon_profile *p;
	struct stat st;

	(void)state;
	snprintf(probe, sizeof(probe), "%s/sec-probe", s->helpers);
	sec_sbx_install(s, "sec-probe", probe_inside, sizeof(probe_inside));
	snprintf(sock, sizeof(sock), "%s/docker.sock", s->outside);
	lfd = make_socket(sock);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(chmod(t->dir, 0700), 0);

	/* 1. The dropped gateway process. Root can, so the target is real. */
	assert_int_equal(run_dropped(probe, "unix-connect", sock, true), 0);
	assert_int_equal(run_dropped(probe, "unix-connect", sock, false), EACCES);
	assert_int_equal(run_dropped(probe, "open-ro", t->path, false), EACCES);
	assert_int_equal(run_dropped(probe, "open-rw", t->path, false), EACCES);

	/* 2. A sandboxed connector. */
	p = sbx_profile(s, NULL);
	{
		char *argv1[] = { probe_inside, (char *)"unix-connect", sock, NULL };
		char *argv2[] = { probe_inside, (char *)"open-ro", t->path, NULL };
		char *argv3[] = { probe_inside, (char *)"unix-connect", (char *)"/data/docker.sock", NULL };
		struct sbx_result res;
		struct cordon_diag d = {};

		assert_int_equal(sbx_spawn(p, &s->caps, argv1, &res, &d), 0);
		assert_exited(res.status, ENOENT);
		sbx_result_done(&res);
		assert_int_equal(sbx_spawn(p, &s->caps, argv2, &res, &d), 0);
		assert_exited(res.status, ENOENT);
		sbx_result_done(&res);
		/* The root belongs to an ordinary user (uid 1000): the id-mapped
		 * read-write root makes the connector act as that user there.
		 * (A root-owned read-write root would make it act as uid 0 for
		 * DAC inside the root — see docs/security-tests.md, findings.) */
		assert_int_equal(chown(s->root, 1000, 1000), 0);
		snprintf(inside_sock, sizeof(inside_sock), "%s/docker.sock", s->root);
		lfd2 = make_socket(inside_sock);
		assert_int_equal(sbx_spawn(p, &s->caps, argv3, &res, &d), 0);
		assert_exited(res.status, EACCES);
		sbx_result_done(&res);
		close(lfd2);
	}
	cordon_profile_free(p);
	close(lfd);
	bt_free(t);
	sbx_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_cannot_open_docker_socket_or_db),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
