/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escape attempts from inside a real cordon sandbox (full default profile,
 * every control on). Each test runs the sandbox-probe helper through
 * cordon_spawn() and asserts the exact errno or signal; the positive cases
 * check that what the profile grants still works. The test runner itself is
 * never confined. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "spawn-test.h"

static struct sbx *S;
static struct cordon_profile *P;
static pid_t sleeper = -1;
static char sleeper_pid[16];
static int tcp_listener = -1, unix_listener = -1, inherited_fd = -1;
static char tcp_port[8], inherited_fd_str[8];
static const char abstract_name[] = "cordon-test-abstract-escape";

static int group_setup(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sa);
	char path[PATH_MAX];

	(void)state;
	S = sbx_new("spawn-escape");
	P = sbx_profile(S, NULL);

	snprintf(path, sizeof(path), "%s/inside", S->root);
	sbx_write_file(path, "inside\n");
	/* A symlink planted in the root that points outside it. */
	snprintf(path, sizeof(path), "%s/to-secret", S->root);
	{
		char target[PATH_MAX];

		snprintf(target, sizeof(target), "%s/secret", S->outside);
		assert_int_equal(symlink(target, path), 0);
	}
	snprintf(path, sizeof(path), "%s/to-shadow", S->root);
	assert_int_equal(symlink("/etc/shadow", path), 0);

	/* A host process the sandbox must not reach. */
	sleeper = fork();
	assert_true(sleeper >= 0);
	if (sleeper == 0) {
		pause();
		_exit(0);
	}
	snprintf(sleeper_pid, sizeof(sleeper_pid), "%d", (int)sleeper);

	/* A TCP listener on the host's 127.0.0.1 and a host abstract socket. */
	tcp_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(tcp_listener >= 0);
	assert_int_equal(bind(tcp_listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(tcp_listener, 8), 0);
	assert_int_equal(getsockname(tcp_listener, (struct sockaddr *)&sa, &len), 0);
	snprintf(tcp_port, sizeof(tcp_port), "%u", ntohs(sa.sin_port));
	unix_listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(unix_listener >= 0);
	memcpy(su.sun_path + 1, abstract_name, strlen(abstract_name));
	assert_int_equal(bind(unix_listener, (struct sockaddr *)&su,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name))),
			 0);
	assert_int_equal(listen(unix_listener, 8), 0);

	/* A secret in the launcher's environment and an inherited fd (no
	 * CLOEXEC) that must not reach the connector. */
	setenv("CORDON_TEST_SECRET", "hunter2", 1);
	inherited_fd = open("/etc/hostname", O_RDONLY);
	assert_true(inherited_fd >= 3);
	snprintf(inherited_fd_str, sizeof(inherited_fd_str), "%d", inherited_fd);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
	}
	if (tcp_listener >= 0)
		close(tcp_listener);
	if (unix_listener >= 0)
		close(unix_listener);
	if (inherited_fd >= 0)
		close(inherited_fd);
	unsetenv("CORDON_TEST_SECRET");
	cordon_profile_free(P);
	sbx_free(S);
	return 0;
}

static int probe(const char *attempt, const char *x, const char *y)
{
	return sbx_probe_with(P, &S->caps, attempt, x, y);
}

static char *outside_secret(void)
{
	static char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/secret", S->outside);
	return p;
}

/* --- filesystem ---------------------------------------------------------- */

static void test_read_host_file_not_in_view(void **state)
{
	(void)state;
	assert_exited(probe("read", "/etc/shadow", NULL), ENOENT);
	assert_exited(probe("read", outside_secret(), NULL), ENOENT);
}

static void test_write_system_path_refused(void **state)
{
	(void)state;
	assert_exited(probe("write", "/usr/cordon-escape", NULL), EROFS);
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "/opt/cordon-test/planted");
		assert_exited(probe("write", path, NULL), EROFS);
	}
}

static void test_write_sandbox_root_refused(void **state)
{
	(void)state;
	/* The new root is a read-only tmpfs and Landlock grants nothing on "/". */
	assert_exited(probe("write", "/escape", NULL), EROFS);
	assert_exited(probe("listdir", "/", NULL), EACCES);
}

static void test_planted_symlink_out_of_root(void **state)
{
	(void)state;
	/* Followed inside the sandbox's view: the host target does not exist there. */
	assert_exited(probe("read", "/data/to-secret", NULL), ENOENT);
	assert_exited(probe("read", "/data/to-shadow", NULL), ENOENT);
}

static void test_symlink_made_inside_points_nowhere(void **state)
{
	(void)state;
	assert_exited(probe("symlink", "/etc/ld.so.cache", "/data/made-link"), 0);
	/* ld.so.cache is readable in the view; the link resolves in the view. */
	assert_exited(probe("read", "/data/made-link", NULL), 0);
	assert_exited(probe("symlink", outside_secret(), "/data/made-link2"), 0);
	assert_exited(probe("read", "/data/made-link2", NULL), ENOENT);
}

static void test_hardlink_out_of_root(void **state)
{
	(void)state;
	assert_exited(probe("hardlink", "/data/inside", "/tmp/stolen"), EXDEV);
	assert_exited(probe("hardlink", "/usr/bin/true", "/data/true"), EXDEV);
}

static void test_rename_out_of_root(void **state)
{
	(void)state;
	assert_exited(probe("rename", "/data/inside", "/tmp/moved"), EXDEV);
	assert_exited(probe("rename", "/data/inside", "/dev/shm/moved"), EXDEV);
}

static void test_dotdot(void **state)
{
	(void)state;
	assert_exited(probe("read", "/data/../../../etc/shadow", NULL), ENOENT);
	assert_exited(probe("listdir", "/data/..", NULL), EACCES);
	assert_exited(probe("read", "/data/../data/inside", NULL), 0);
}

static void test_exec_from_rw_root_refused(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/run-me", S->root);
	sbx_write_file(path, "#!/bin/sh\nexit 0\n");
	assert_int_equal(chmod(path, 0755), 0);
	/* noexec mount (and Landlock grants no EXECUTE there). */
	assert_exited(probe("exec", "/data/run-me", NULL), EACCES);
	unlink(path);
}

/* The mount table holds the sandbox's mounts only: the launcher's base
 * mount namespace leaves an empty read-only mount beneath the root, which
 * must be neither listed nor reachable. */
static void test_mount_table_is_the_view(void **state)
{
	(void)state;
	assert_exited(probe("mounts", NULL, NULL), 0);
	/* ".." of the root is the root (the base has no "data" directory). */
	assert_exited(probe("read", "/../../data/inside", NULL), 0);
}

/* --- processes ----------------------------------------------------------- */

static void test_host_proc_pid_invisible(void **state)
{
	char p[64];

	(void)state;
	snprintf(p, sizeof(p), "/proc/%s/status", sleeper_pid);
	assert_exited(probe("read", p, NULL), ENOENT);
	/* subset=pid: no /proc/sys, /proc/kcore... */
	assert_exited(probe("read", "/proc/sys/kernel/hostname", NULL), ENOENT);
}

static void test_ptrace_outside(void **state)
{
	(void)state;
	assert_exited(probe("ptrace", sleeper_pid, NULL), EPERM);
}

static void test_process_vm_readv_outside(void **state)
{
	(void)state;
	assert_exited(probe("vmread", sleeper_pid, NULL), EPERM);
}

static void test_kcmp_outside(void **state)
{
	(void)state;
	assert_exited(probe("kcmp", sleeper_pid, NULL), EPERM);
}

static void test_kill_outside(void **state)
{
	(void)state;
	assert_exited(probe("kill", sleeper_pid, NULL), ESRCH);
	assert_int_equal(kill(sleeper, 0), 0); /* still alive */
}

/* --- kernel attack surface ----------------------------------------------- */

static void test_mount_refused(void **state)
{
	(void)state;
	assert_exited(probe("mount", NULL, NULL), EPERM);
}

static void test_user_namespace_refused(void **state)
{
	(void)state;
	assert_exited(probe("unshare-user", NULL, NULL), EPERM);
	assert_exited(probe("clone-user", NULL, NULL), EPERM);
	assert_exited(probe("clone3-user", NULL, NULL), ENOSYS);
}

static void test_setns_refused(void **state)
{
	(void)state;
	assert_exited(probe("setns", NULL, NULL), EPERM);
}

static void test_dangerous_syscalls_refused(void **state)
{
	static const char *const names[] = { "bpf", "perf", "io_uring", "keyctl", "userfaultfd", "open_by_handle_at" };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		assert_exited(probe(names[i], NULL, NULL), EPERM);
}

static void test_raw_and_packet_sockets_refused(void **state)
{
	(void)state;
	assert_exited(probe("raw-socket", NULL, NULL), EPERM);
	/* AF_PACKET is not an allowed family: EAFNOSUPPORT, as on a kernel
	 * without it. */
	assert_exited(probe("packet-socket", NULL, NULL), EAFNOSUPPORT);
}

static void test_tcp_to_host_loopback_refused(void **state)
{
	(void)state;
	/* Landlock refuses the connect before the (empty) network namespace
	 * would answer ECONNREFUSED. */
	assert_exited(probe("tcp-connect", "127.0.0.1", tcp_port), EACCES);
}

static void test_host_abstract_unix_refused(void **state)
{
	(void)state;
	/* The abstract namespace belongs to the network namespace: the host's
	 * socket does not exist in the sandbox's. (Landlock's scoping, the
	 * layer for allowlist mode, is tested in test-spawn-network.) */
	assert_exited(probe("unix-abstract", abstract_name, NULL), ECONNREFUSED);
}

static void test_i386_int80_killed(void **state)
{
	(void)state;
	/* Where the machine has no i386 entry, int 0x80 faults before any
	 * filter runs (cordon_test_int80_available() prints why). */
	assert_signaled(probe("int80", NULL, NULL), cordon_test_int80_available() ? SIGSYS : SIGSEGV);
}

static void test_x32_killed(void **state)
{
	(void)state;
	assert_signaled(probe("x32", NULL, NULL), SIGSYS);
}

static void test_tiocsti_refused(void **state)
{
	(void)state;
	assert_exited(probe("tiocsti", NULL, NULL), EPERM);
}

/* --- hygiene ------------------------------------------------------------- */

static void test_launcher_secret_env_not_visible(void **state)
{
	(void)state;
	assert_exited(probe("env", "CORDON_TEST_SECRET", NULL), 0);
	assert_exited(probe("env", "PATH", NULL), 0);
	/* env.set does arrive. */
	assert_exited(probe("env-equals", "CORDON_VISIBLE", "yes"), 0);
}

static void test_inherited_fd_not_visible(void **state)
{
	(void)state;
	assert_exited(probe("fd", inherited_fd_str, NULL), EBADF);
	assert_exited(probe("fd", "3", NULL), EBADF);
}

static void test_capabilities_all_zero(void **state)
{
	(void)state;
	assert_exited(probe("caps", NULL, NULL), 0);
}

static void test_no_new_privs(void **state)
{
	(void)state;
	assert_exited(probe("nnp", NULL, NULL), 0);
}

static void test_rlimits_session_hostname(void **state)
{
	(void)state;
	assert_exited(probe("rlimits", "256", NULL), 0);
	assert_exited(probe("session", NULL, NULL), 0);
	assert_exited(probe("hostname", "cordon", NULL), 0);
}

static void test_env_pass_set_and_credentials(void **state)
{
	char cred[PATH_MAX], creds[PATH_MAX + 64];
	struct sbx_opts o = { .env_pass = "[CORDON_TEST_PASSED, CORDON_TEST_UNSET]", .credentials = creds };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *dump;
	char *argv[5];

	(void)state;
	snprintf(cred, sizeof(cred), "%s/token", S->outside);
	sbx_write_file(cred, "s3cr3t-t0ken\n");
	snprintf(creds, sizeof(creds), "[{env: CORDON_TOKEN, file: %s}]", cred);
	setenv("CORDON_TEST_PASSED", "passed-value", 1);
	unsetenv("CORDON_TEST_UNSET");
	p = sbx_profile(S, &o);
	assert_exited(sbx_probe_with(p, &S->caps, "env-equals", "CORDON_TEST_PASSED", "passed-value"), 0);
	assert_exited(sbx_probe_with(p, &S->caps, "env", "CORDON_TEST_UNSET", NULL), 0);
	/* The credential arrives as env (trailing newline stripped)... */
	assert_exited(sbx_probe_with(p, &S->caps, "env-equals", "CORDON_TOKEN", "s3cr3t-t0ken"), 0);
	/* ...its file is not visible, and the report names it but never holds it. */
	assert_exited(sbx_probe_with(p, &S->caps, "read", cred, NULL), ENOENT);
	argv[0] = p->command[0];
	argv[1] = (char *)"exit";
	argv[2] = (char *)"0";
	argv[3] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	dump = json_dumps(res.report, 0);
	assert_non_null(strstr(dump, "CORDON_TOKEN"));
	assert_null(strstr(dump, "s3cr3t"));
	free(dump);
	sbx_result_done(&res);
	unsetenv("CORDON_TEST_PASSED");
	cordon_profile_free(p);
}

static void test_keep_fds_passed(void **state)
{
	char *argv[] = { P->command[0], (char *)"fd", NULL, NULL };
	struct cordon_instance *inst = NULL;
	struct cordon_diag d = { 0 };
	char num[16];
	int pfd[2], st, keep;

	(void)state;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	keep = pfd[1];
	snprintf(num, sizeof(num), "%d", keep);
	argv[2] = num;
	{
		struct cordon_launch_policy pol = {
			.profile = P, .argv = argv, .stdio = CORDON_STDIO_INHERIT, .keep_fds = &keep, .n_keep_fds = 1
		};

		assert_int_equal(cordon_spawn(&pol, &S->caps, &inst, &d), 0);
	}
	assert_int_equal(cordon_instance_wait(inst, &st), 0);
	assert_exited(st, 0);
	cordon_instance_free(inst);
	/* An fd that is not open cannot be passed. */
	{
		int bad = 987;
		struct cordon_launch_policy pol = { .profile = P, .argv = argv, .keep_fds = &bad, .n_keep_fds = 1 };

		assert_int_equal(cordon_spawn(&pol, &S->caps, &inst, &d), -EBADF);
	}
	close(pfd[0]);
	close(pfd[1]);
}

/* --- positive ------------------------------------------------------------ */

static void test_read_write_inside_root(void **state)
{
	char path[PATH_MAX];
	struct stat st, rst;

	(void)state;
	assert_exited(probe("read", "/data/inside", NULL), 0);
	assert_exited(probe("write", "/data/new-file", NULL), 0);
	assert_exited(probe("read", "/data/new-file", NULL), 0);
	assert_exited(probe("write", "/tmp/scratch", NULL), 0);
	assert_exited(probe("write", "/dev/shm/scratch", NULL), 0);
	assert_exited(probe("write", "/dev/null", NULL), 0);
	assert_exited(probe("read", "/dev/urandom", NULL), 0);
	/* On the host the file belongs to the root's owner (id-mapped), not
	 * to a dynamic uid that will be reused. */
	snprintf(path, sizeof(path), "%s/new-file", S->root);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(stat(S->root, &rst), 0);
	assert_int_equal(st.st_uid, rst.st_uid);
	assert_int_equal(st.st_gid, rst.st_gid);
}

static void test_fork_and_threads(void **state)
{
	(void)state;
	assert_exited(probe("fork", NULL, NULL), 0);
	assert_exited(probe("threads", NULL, NULL), 0);
}

/* Seccomp is normally loaded once, by init, just before it starts the
 * connector (which inherits it). A profile that denies clone would stop
 * init itself: then the connector loads the filter and still cannot fork,
 * while it runs at all. */
static void test_seccomp_deny_clone_still_starts(void **state)
{
	struct sbx_opts o = { .seccomp = "{base: default, action: errno, deny: [clone]}" };
	struct cordon_profile *p = sbx_profile(S, &o);

	(void)state;
	assert_exited(sbx_probe_with(p, &S->caps, "exit", "0", NULL), 0);
	assert_exited(sbx_probe_with(p, &S->caps, "fork", NULL, NULL), EPERM);
	/* Verified in the connector either way. */
	assert_exited(sbx_probe_with(p, &S->caps, "nnp", NULL, NULL), 0);
	cordon_profile_free(p);
}

static void test_exit_status_passes_through(void **state)
{
	(void)state;
	assert_exited(probe("exit", "42", NULL), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_host_file_not_in_view),
		cmocka_unit_test(test_write_system_path_refused),
		cmocka_unit_test(test_write_sandbox_root_refused),
		cmocka_unit_test(test_planted_symlink_out_of_root),
		cmocka_unit_test(test_symlink_made_inside_points_nowhere),
		cmocka_unit_test(test_hardlink_out_of_root),
		cmocka_unit_test(test_rename_out_of_root),
		cmocka_unit_test(test_dotdot),
		cmocka_unit_test(test_exec_from_rw_root_refused),
		cmocka_unit_test(test_mount_table_is_the_view),
		cmocka_unit_test(test_host_proc_pid_invisible),
		cmocka_unit_test(test_ptrace_outside),
		cmocka_unit_test(test_process_vm_readv_outside),
		cmocka_unit_test(test_kcmp_outside),
		cmocka_unit_test(test_kill_outside),
		cmocka_unit_test(test_mount_refused),
		cmocka_unit_test(test_user_namespace_refused),
		cmocka_unit_test(test_setns_refused),
		cmocka_unit_test(test_dangerous_syscalls_refused),
		cmocka_unit_test(test_raw_and_packet_sockets_refused),
		cmocka_unit_test(test_tcp_to_host_loopback_refused),
		cmocka_unit_test(test_host_abstract_unix_refused),
		cmocka_unit_test(test_i386_int80_killed),
		cmocka_unit_test(test_x32_killed),
		cmocka_unit_test(test_tiocsti_refused),
		cmocka_unit_test(test_launcher_secret_env_not_visible),
		cmocka_unit_test(test_inherited_fd_not_visible),
		cmocka_unit_test(test_capabilities_all_zero),
		cmocka_unit_test(test_no_new_privs),
		cmocka_unit_test(test_rlimits_session_hostname),
		cmocka_unit_test(test_env_pass_set_and_credentials),
		cmocka_unit_test(test_keep_fds_passed),
		cmocka_unit_test(test_read_write_inside_root),
		cmocka_unit_test(test_fork_and_threads),
		cmocka_unit_test(test_seccomp_deny_clone_still_starts),
		cmocka_unit_test(test_exit_status_passes_through),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
