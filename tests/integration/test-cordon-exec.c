/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-exec as a real MCP server: argv passed literally, timeouts that end
 * a whole process tree (forking, SIGTERM-ignoring, setsid'ing), output caps,
 * the working directory resolved beneath a root, the environment allowlist,
 * cancellation, and jobs killed when their root is revoked — in both job
 * modes (process group + subreaper, and a delegated cgroup2 directory). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mcp-client.h"
#include "test-support.h"

static char *base, root[1024], root2[1024], binary[1024], cgdir[1024];

static void put(const char *rel, const char *content)
{
	char p[2048];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

/* The cgroup2 mount point, from mountinfo ("" if none). */
static void cgroup2_mount(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), mnt[1024];

		if (sep && strncmp(sep + 3, "cgroup2 ", 8) == 0 && sscanf(line, "%*s %*s %*s %*s %1023s", mnt) == 1) {
			snprintf(out, size, "%s", mnt);
			break;
		}
	}
	if (f)
		fclose(f);
}

static int setup(void **state)
{
	char p[2048], mnt[1024];

	(void)state;
	base = cordon_test_mkdtemp("cordon-exec");
	snprintf(root, sizeof(root), "%s/work", base);
	snprintf(root2, sizeof(root2), "%s/delegated", base);
	snprintf(binary, sizeof(binary), "%s/cordon-exec", cordon_test_env("CORDON_TOOLS_DIR", "."));
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(root2, 0755), 0);
	snprintf(p, sizeof(p), "%s/work/sub", base);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/work/link", base);
	assert_int_equal(symlink("/etc", p), 0);
	put("work/sub/f", "in sub");

	cgdir[0] = '\0';
	if (geteuid() == 0) {
		cgroup2_mount(mnt, sizeof(mnt));
		if (mnt[0]) {
			snprintf(cgdir, sizeof(cgdir), "%s/cordon-test-exec-%d", mnt, (int)getpid());
			assert_int_equal(mkdir(cgdir, 0755), 0);
		}
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (cgdir[0])
		assert_int_equal(rmdir(cgdir), 0);
	assert_int_equal(cordon_test_rm_rf(base), 0);
	free(base);
	return 0;
}

static void start(struct mcp_peer *p, bool with_cgroup)
{
	char *argv[7];
	int n = 0;
	json_t *init;

	argv[n++] = binary;
	if (with_cgroup) {
		argv[n++] = (char *)"--job-cgroup";
		argv[n++] = cgdir;
	}
	argv[n++] = (char *)"--env-allow";
	argv[n++] = (char *)"CORDON_TEST_OK";
	argv[n++] = root;
	argv[n++] = NULL;
	/* root2 is passed separately below (argv is fixed-size). */
	{
		char *full[9];
		int k = 0;

		for (int i = 0; argv[i]; i++)
			full[k++] = argv[i];
		full[k++] = root2;
		full[k] = NULL;
		assert_int_equal(mcp_peer_start(p, full), 0);
	}
	init = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(init);
	json_decref(init);
}

static void stop(struct mcp_peer *p)
{
	int status = mcp_peer_stop(p, 10000);

	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static json_t *run(struct mcp_peer *p, const char *tool, json_t *args, const char **err)
{
	json_t *res = mcp_peer_call(p, tool, args, 30000);

	assert_non_null(res);
	*err = NULL;
	if (json_is_true(json_object_get(res, "isError")))
		*err = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
	return res;
}

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* Reads the pids a job wrote into pids.txt and asserts none is alive. */
static void assert_pids_gone(void)
{
	char p[2048];
	FILE *f;
	int pid, count = 0;

	snprintf(p, sizeof(p), "%s/pids.txt", root);
	f = fopen(p, "re");
	assert_non_null(f);
	while (fscanf(f, "%d", &pid) == 1) {
		count++;
		for (int i = 0; i < 100 && pid_alive(pid); i++)
			usleep(10000);
		if (pid_alive(pid))
			fail_msg("job process %d outlived its job", pid);
	}
	fclose(f);
	assert_true(count >= 3);
	unlink(p);
}

static void check_basics(bool with_cgroup)
{
	struct mcp_peer p;
	const char *err;
	json_t *res, *sc;

	start(&p, with_cgroup);

	/* Shell metacharacters in argv are passed literally. */
	res = run(&p, "run_command", json_pack("{s:[s, s, s, s]}", "argv", "printf", "%s|", "a;b", "$(id) `x` *"),
		  &err);
	assert_null(err);
	sc = json_object_get(res, "structuredContent");
	assert_string_equal(json_string_value(json_object_get(sc, "stdout")), "a;b|$(id) `x` *|");
	assert_int_equal(json_integer_value(json_object_get(sc, "exit_code")), 0);
	json_decref(res);

	/* Exit status and signal. */
	res = run(&p, "run_shell", json_pack("{s:s}", "command", "echo out; echo err >&2; exit 7"), &err);
	sc = json_object_get(res, "structuredContent");
	assert_int_equal(json_integer_value(json_object_get(sc, "exit_code")), 7);
	assert_string_equal(json_string_value(json_object_get(sc, "stderr")), "err\n");
	json_decref(res);
	res = run(&p, "run_shell", json_pack("{s:s}", "command", "kill -SEGV $$"), &err);
	sc = json_object_get(res, "structuredContent");
	assert_int_equal(json_integer_value(json_object_get(sc, "signal")), SIGSEGV);
	json_decref(res);

	/* A timeout ends the whole tree: a child that ignores SIGTERM, a
	 * grandchild in the background, and a setsid'd double fork. */
	res = run(&p, "run_shell",
		  json_pack("{s:s, s:i}", "command",
			    "trap '' TERM; echo $$ > pids.txt; (trap '' TERM; sleep 60) & echo $! >> pids.txt; "
			    "setsid sh -c 'echo $$ >> pids.txt; sleep 60' & sleep 0.3; sleep 60",
			    "timeout_ms", 1000),
		  &err);
	assert_null(err);
	sc = json_object_get(res, "structuredContent");
	assert_true(json_is_true(json_object_get(sc, "timed_out")));
	assert_int_equal(json_integer_value(json_object_get(sc, "signal")), SIGKILL);
	json_decref(res);
	assert_pids_gone();

	/* Output caps, with truncation flags. */
	res = run(&p, "run_shell",
		  json_pack("{s:s, s:i}", "command", "head -c 300000 /dev/zero | tr '\\0' x", "max_output", 1000),
		  &err);
	sc = json_object_get(res, "structuredContent");
	assert_int_equal(strlen(json_string_value(json_object_get(sc, "stdout"))), 1000);
	assert_true(json_is_true(json_object_get(sc, "stdout_truncated")));
	assert_false(json_is_true(json_object_get(sc, "stderr_truncated")));
	json_decref(res);

	/* Working directory: beneath a root only. */
	res = run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "pwd", "cwd", "sub"), &err);
	assert_null(err);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(res, "structuredContent"), "stdout")),
			       "/work/sub"));
	json_decref(res);
	json_decref(run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "pwd", "cwd", "/etc"), &err));
	res = run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "pwd", "cwd", "/etc"), &err);
	assert_non_null(strstr(err, "argument 'cwd': /etc is not beneath any root"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "pwd", "cwd", "../"), &err);
	assert_non_null(strstr(err, "leaves its root"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "pwd", "cwd", "link"), &err);
	assert_non_null(strstr(err, "argument 'cwd'"));
	json_decref(res);

	/* Environment: only allowlisted names. */
	res = run(&p, "run_command", json_pack("{s:[s], s:{s:s}}", "argv", "env", "env", "LD_PRELOAD", "/x.so"), &err);
	assert_non_null(strstr(err, "argument 'env.LD_PRELOAD': not in the environment allowlist"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[s], s:{s:s}}", "argv", "env", "env", "CORDON_TEST_OK", "yes"),
		  &err);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(res, "structuredContent"), "stdout")),
			       "CORDON_TEST_OK=yes"));
	json_decref(res);

	/* Argument errors name the argument. */
	res = run(&p, "run_command", json_pack("{s:s}", "command", "ls"), &err);
	assert_non_null(strstr(err, "run_command takes 'argv' (no shell)"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[]}", "argv"), &err);
	assert_non_null(strstr(err, "argument 'argv'"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[s]}", "argv", "no-such-program-xyz"), &err);
	assert_non_null(strstr(err, "command not found"));
	json_decref(res);

	stop(&p);
}

static void test_pgid_mode(void **state)
{
	(void)state;
	check_basics(false);
}

static void test_cgroup_mode(void **state)
{
	(void)state;
	if (!cgdir[0])
		cordon_test_skip("job cgroups need root and a cgroup2 hierarchy");
	check_basics(true);
}

/* Revoking a root kills the jobs working in it and makes it unusable;
 * cancelling a call kills its job and it gets no answer. */
static void test_revoke_and_cancel(void **state)
{
	struct mcp_peer p;
	const char *err;
	json_t *res, *msg;
	char *s;

	(void)state;
	start(&p, cgdir[0] != '\0');

	/* A job in the delegated root, then the broker's revocation. */
	msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:[s, s], s:s}}}", "jsonrpc", "2.0", "id", 100, "method",
			"tools/call", "params", "name", "run_command", "arguments", "argv", "sleep", "30", "cwd",
			root2);
	s = json_dumps(msg, JSON_COMPACT);
	assert_int_equal(mcp_peer_send_raw(&p, s, strlen(s)), 0);
	assert_int_equal(mcp_peer_send_raw(&p, "\n", 1), 0);
	free(s);
	json_decref(msg);
	usleep(200000);
	msg = json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method", "notifications/cordon/root_revoked",
			"params", "path", root2);
	s = json_dumps(msg, JSON_COMPACT);
	assert_int_equal(mcp_peer_send_raw(&p, s, strlen(s)), 0);
	assert_int_equal(mcp_peer_send_raw(&p, "\n", 1), 0);
	free(s);
	json_decref(msg);
	res = mcp_peer_read(&p, 5000);
	assert_non_null(res);
	assert_int_equal(json_integer_value(json_object_get(res, "id")), 100);
	assert_non_null(
		strstr(json_string_value(json_object_get(
			       json_array_get(json_object_get(json_object_get(res, "result"), "content"), 0), "text")),
		       "was revoked"));
	json_decref(res);
	res = run(&p, "run_command", json_pack("{s:[s], s:s}", "argv", "true", "cwd", root2), &err);
	assert_non_null(strstr(err, "has been revoked"));
	json_decref(res);

	/* Cancellation: the job dies, no response; the next call works. */
	msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", 200, "method", "tools/call",
			"params", "name", "run_shell", "arguments", "command",
			"echo $$ > pids.txt; echo x >> pids.txt; sleep 30");
	s = json_dumps(msg, JSON_COMPACT);
	assert_int_equal(mcp_peer_send_raw(&p, s, strlen(s)), 0);
	assert_int_equal(mcp_peer_send_raw(&p, "\n", 1), 0);
	free(s);
	json_decref(msg);
	usleep(300000);
	msg = json_pack("{s:s, s:s, s:{s:i}}", "jsonrpc", "2.0", "method", "notifications/cancelled", "params",
			"requestId", 200);
	s = json_dumps(msg, JSON_COMPACT);
	assert_int_equal(mcp_peer_send_raw(&p, s, strlen(s)), 0);
	assert_int_equal(mcp_peer_send_raw(&p, "\n", 1), 0);
	free(s);
	json_decref(msg);
	res = run(&p, "run_command", json_pack("{s:[s, s]}", "argv", "echo", "after"), &err);
	assert_null(err);
	json_decref(res);
	{
		char path[2048];
		FILE *f;
		int pid = 0;

		snprintf(path, sizeof(path), "%s/pids.txt", root);
		f = fopen(path, "re");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &pid), 1);
		fclose(f);
		unlink(path);
		assert_false(pid_alive(pid));
	}
	stop(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pgid_mode),
		cmocka_unit_test(test_cgroup_mode),
		cmocka_unit_test(test_revoke_and_cancel),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
