/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch --profile FILE [--root ...] [--report FILE] [-- CMD ...]:
 * the real binary, run like a user would: exit status like a shell, signals
 * forwarded, 125 with one line naming the step when the sandbox cannot be
 * built, --root only beneath the ceiling, the report file, and no sandbox
 * process outliving a SIGKILLed launcher. */
#include <dirent.h>

#include "cgroup.h"
#include "spawn-test.h"

static struct sbx *S;
static char *profile_path, *launch;

static int group_setup(void **state)
{
	struct cordon_profile *p;
	char path[PATH_MAX];
	FILE *f;

	(void)state;
	S = sbx_new("spawn-cli");
	launch = strdup(cordon_test_env("CORDON_LAUNCH", "build/launcher/cordon-launch"));
	if (access(launch, X_OK) < 0)
		cordon_test_skip("cordon-launch not built at %s", launch);
	/* The same generated profile text, written to a file named like a
	 * connector id. */
	p = sbx_profile(S, NULL);
	cordon_profile_free(p);
	profile_path = sbx_path(S->dir, "clitest.yaml");
	f = fopen(profile_path, "we");
	assert_non_null(f);
	fprintf(f,
		"version: 1\n"
		"connector:\n"
		"  command: [/opt/cordon-test/sandbox-probe, exit, '7']\n"
		"  workdir: /data\n"
		"sandbox:\n"
		"  user: dynamic\n"
		"  filesystem:\n"
		"    system:\n"
		"      - {path: /usr, access: read-exec}\n"
		"      - {path: /bin, access: read-exec}\n"
		"      - {path: /lib, access: read-exec}\n"
		"      - {path: /lib64, access: read-exec}\n"
		"      - {path: /etc/ld.so.cache, access: read}\n"
		"    roots:\n"
		"      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		"      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		"    ceiling: [%s]\n"
		"  limits: {memory: 64M, pids: 32}\n"
		"tools:\n"
		"  default_risk: high\n"
		"  risk: {}\n"
		"  grant: []\n",
		S->bin, S->root, S->dir);
	fclose(f);
	snprintf(path, sizeof(path), "%s/extra", S->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/extra/file", S->dir);
	sbx_write_file(path, "extra\n");
	snprintf(path, sizeof(path), "%s/escape-link", S->dir);
	assert_int_equal(symlink("/etc", path), 0);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(profile_path);
	free(launch);
	sbx_free(S);
	return 0;
}

/* Runs cordon-launch with args; returns its wait status and stderr. */
static int run_launch(char *const extra[], char *err, size_t errsize, pid_t *ret_pid, bool wait_it)
{
	char *argv[32];
	int n = 0, pfd[2], st;
	pid_t pid;
	ssize_t len = 0, k;

	argv[n++] = launch;
	argv[n++] = (char *)"--profile";
	argv[n++] = profile_path;
	for (int i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		execv(launch, argv);
		_exit(126);
	}
	close(pfd[1]);
	if (ret_pid)
		*ret_pid = pid;
	if (!wait_it) {
		close(pfd[0]);
		return 0;
	}
	/* Drain stderr to EOF even when the caller does not want it (a closed
	 * pipe would SIGPIPE the launcher). */
	if (!err) {
		static char sink[4096];

		err = sink;
		errsize = sizeof(sink);
	}
	while ((k = read(pfd[0], err + len, errsize - 1 - (size_t)len)) > 0)
		len += k;
	if (err)
		err[len] = '\0';
	close(pfd[0]);
	st = cordon_test_wait(pid);
	if (err && *err)
		printf("  [stderr] %s", err);
	return st;
}

static void test_exit_status_of_profile_command(void **state)
{
	(void)state;
	assert_exited(run_launch(NULL, NULL, 0, NULL, true), 7);
}

static void test_command_override_and_exit_status(void **state)
{
	char probe[PATH_MAX];
	char *args[] = { (char *)"--", probe, (char *)"exit", (char *)"42", NULL };

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	assert_exited(run_launch(args, NULL, 0, NULL, true), 42);
}

static void test_killed_connector_gives_128_plus_signal(void **state)
{
	char probe[PATH_MAX];
	char *args[] = { (char *)"--", probe, (char *)"x32", NULL };

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	assert_exited(run_launch(args, NULL, 0, NULL, true), 128 + SIGSYS);
}

static void test_sigterm_forwarded(void **state)
{
	char probe[PATH_MAX];
	char *args[] = { (char *)"--", probe, (char *)"sleep", (char *)"30", NULL };
	pid_t pid;

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	run_launch(args, NULL, 0, &pid, false);
	usleep(300 * 1000);
	assert_int_equal(kill(pid, SIGTERM), 0);
	/* The connector dies of the forwarded SIGTERM: 128 + 15. */
	assert_exited(cordon_test_wait(pid), 128 + SIGTERM);
}

static void test_setup_failure_is_125_with_step(void **state)
{
	char *args[] = { (char *)"--", (char *)"/nonexistent/connector", NULL };
	char err[1024];

	(void)state;
	assert_exited(run_launch(args, err, sizeof(err), NULL, true), 125);
	assert_non_null(strstr(err, "step 'exec'"));
	assert_non_null(strstr(err, "No such file or directory"));
	/* One line. */
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
}

static void test_bad_profile_is_125_with_step(void **state)
{
	char *saved = profile_path, bad[PATH_MAX], err[1024];
	FILE *f;

	(void)state;
	snprintf(bad, sizeof(bad), "%s/broken.yaml", S->dir);
	f = fopen(bad, "we");
	assert_non_null(f);
	fputs("version: 1\nconnector: {command: [relative]}\n", f);
	fclose(f);
	profile_path = bad;
	assert_exited(run_launch(NULL, err, sizeof(err), NULL, true), 125);
	profile_path = saved;
	assert_non_null(strstr(err, "sandbox setup failed at step '"));
	assert_non_null(strstr(err, "broken.yaml:"));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	unlink(bad);
}

static void test_usage_error_is_2(void **state)
{
	char *args[] = { (char *)"--bogus", NULL };

	(void)state;
	assert_exited(run_launch(args, NULL, 0, NULL, true), 2);
}

static void test_root_beneath_ceiling(void **state)
{
	char probe[PATH_MAX], root[PATH_MAX];
	char *args[] = { (char *)"--root", root, (char *)"--", probe, (char *)"read", (char *)"/extra/file", NULL };

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	snprintf(root, sizeof(root), "%s/extra:/extra:read", S->dir);
	assert_exited(run_launch(args, NULL, 0, NULL, true), 0);
	/* read access: writing there is refused by the read-only mount. */
	args[4] = (char *)"write";
	assert_exited(run_launch(args, NULL, 0, NULL, true), EROFS);
}

static void test_root_outside_ceiling_refused(void **state)
{
	char probe[PATH_MAX], root[PATH_MAX];
	char *args[] = { (char *)"--root", root, (char *)"--", probe, (char *)"exit", (char *)"0", NULL };
	char err[1024];

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	snprintf(root, sizeof(root), "/etc:/etc:read");
	assert_exited(run_launch(args, err, sizeof(err), NULL, true), 125);
	assert_non_null(strstr(err, "ceiling"));
	/* A name that shares the ceiling's prefix is not beneath it. */
	{
		char evil[PATH_MAX - 16];

		snprintf(evil, sizeof(evil), "%s-evil", S->dir);
		assert_int_equal(mkdir(evil, 0755), 0);
		snprintf(root, sizeof(root), "%s:/x:read", evil);
		assert_exited(run_launch(args, err, sizeof(err), NULL, true), 125);
		assert_non_null(strstr(err, "ceiling"));
		rmdir(evil);
	}
	/* A symlink beneath the ceiling that leads out of it. */
	snprintf(root, sizeof(root), "%s/escape-link:/x:read", S->dir);
	assert_exited(run_launch(args, err, sizeof(err), NULL, true), 125);
	assert_non_null(strstr(err, "ceiling"));
}

static void test_report_file(void **state)
{
	char probe[PATH_MAX], rep[PATH_MAX];
	char *args[] = { (char *)"--report", rep, (char *)"--", probe, (char *)"exit", (char *)"3", NULL };
	json_error_t e;
	json_t *j;

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	snprintf(rep, sizeof(rep), "%s/report.json", S->dir);
	assert_exited(run_launch(args, NULL, 0, NULL, true), 3);
	j = json_load_file(rep, 0, &e);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "exit"), "code")), 3);
	assert_string_equal(sbx_state(j, "landlock"), "enforced");
	assert_non_null(json_object_get(j, "cgroup_stats"));
	json_decref(j);
}

static void test_egress_denial_printed_as_one_line(void **state)
{
	char probe[PATH_MAX];
	char *args[] = { (char *)"--", probe, (char *)"udp-send", (char *)"127.0.0.1", (char *)"9", NULL };
	char err[2048];

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	/* UDP is not Landlock's: the eBPF sendmsg4 hook refuses it (EPERM)
	 * and the launcher prints the denial event. */
	assert_exited(run_launch(args, err, sizeof(err), NULL, true), EPERM);
	assert_non_null(strstr(err, "\"event\":\"net-deny\""));
	assert_non_null(strstr(err, "\"hook\":\"sendmsg4\""));
	assert_non_null(strstr(err, "\"addr\":\"127.0.0.1\""));
}

static void test_stdio_passed_through(void **state)
{
	char probe[PATH_MAX];
	char *argv[] = { launch, (char *)"--profile", profile_path, (char *)"--", probe, (char *)"echo", NULL };
	int in[2], out[2], st;
	char buf[256];
	ssize_t n, len = 0;
	pid_t pid;

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(launch, argv);
		_exit(126);
	}
	close(in[0]);
	close(out[1]);
	assert_int_equal(write(in[1], "{\"jsonrpc\":\"2.0\"}\n", 18), 18);
	close(in[1]);
	while ((n = read(out[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	close(out[0]);
	st = cordon_test_wait(pid);
	assert_exited(st, 0);
	assert_string_equal(buf, "{\"jsonrpc\":\"2.0\"}\n");
}

static pid_t child_of(pid_t parent)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

static bool gone(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	return strstr(buf, ") Z ") != NULL || strstr(buf, ") X ") != NULL;
}

/* --check (issue 11): the profile is good ("ok <id>", exit 0), and the
 * allow_uid0_owner opt-in on its /data root is named on stderr. */
static void test_check_warns_on_uid0_opt_in(void **state)
{
	char cmd[2 * PATH_MAX + 64], out[4096];
	size_t len = 0;
	FILE *f;
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' --check '%s' 2>&1", launch, profile_path);
	f = popen(cmd, "re");
	assert_non_null(f);
	len = fread(out, 1, sizeof(out) - 1, f);
	out[len] = '\0';
	st = pclose(f);
	printf("%s", out);
	assert_exited(st, 0);
	assert_non_null(strstr(out, "ok clitest\n"));
	assert_non_null(strstr(out, ": warning: sandbox.filesystem.roots[1] ("));
	assert_non_null(strstr(out, ") sets allow_uid0_owner: if uid 0 owns it, the connector acts as uid 0"));
}

static void test_launcher_sigkill_takes_sandbox_down(void **state)
{
	char probe[PATH_MAX];
	char *args[] = { (char *)"--", probe, (char *)"sleep", (char *)"30", NULL };
	pid_t pid, init = -1, conn = -1;

	(void)state;
	snprintf(probe, sizeof(probe), "/opt/cordon-test/sandbox-probe");
	run_launch(args, NULL, 0, &pid, false);
	for (int i = 0; i < 100 && (init <= 0 || conn <= 0); i++) {
		usleep(20 * 1000);
		init = child_of(pid);
		if (init > 0)
			conn = child_of(init);
	}
	assert_true(init > 0 && conn > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(cordon_test_wait(pid) & 0x7f, SIGKILL);
	for (int i = 0; i < 250 && !(gone(init) && gone(conn)); i++)
		usleep(20 * 1000);
	assert_true(gone(init));
	assert_true(gone(conn));
	/* The killed launcher could not remove its cgroups; the next launcher
	 * does (stale cleanup at start). Do it here, so this test leaves nothing
	 * behind, and check that the dead launcher's directories are gone. */
	{
		char name[64], cmd[256];
		FILE *f;
		int left;

		assert_true(cordon_cgroup_cleanup_stale(&S->caps) >= 1);
		snprintf(name, sizeof(name), "i-%d-", (int)pid);
		snprintf(cmd, sizeof(cmd), "find /sys/fs/cgroup -maxdepth 6 -type d -name '%s*' 2>/dev/null | wc -l",
			 name);
		f = popen(cmd, "re");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &left), 1);
		pclose(f);
		assert_int_equal(left, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_of_profile_command),
		cmocka_unit_test(test_command_override_and_exit_status),
		cmocka_unit_test(test_killed_connector_gives_128_plus_signal),
		cmocka_unit_test(test_sigterm_forwarded),
		cmocka_unit_test(test_setup_failure_is_125_with_step),
		cmocka_unit_test(test_bad_profile_is_125_with_step),
		cmocka_unit_test(test_usage_error_is_2),
		cmocka_unit_test(test_root_beneath_ceiling),
		cmocka_unit_test(test_root_outside_ceiling_refused),
		cmocka_unit_test(test_report_file),
		cmocka_unit_test(test_stdio_passed_through),
		cmocka_unit_test(test_egress_denial_printed_as_one_line),
		cmocka_unit_test(test_check_warns_on_uid0_opt_in),
		cmocka_unit_test(test_launcher_sigkill_takes_sandbox_down),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
