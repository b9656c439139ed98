/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 11, finding 2): `cordonctl revoke-all --yes` ends every
 * instance of every connector, shared and per-session, including processes
 * a connector detached from itself; every cgroup of those instances is
 * emptied and removed, in every hierarchy. Removing grants ends the
 * instances of a connector that can no longer serve anything (no tool left
 * in its grant).
 *
 * The real cordond binary as root with the real launcher helper
 * (cordon-launch --serve), so each instance is a real sandbox with its own
 * cgroups. Two connectors run tests/helpers/evil-connector in mode
 * fork-stay: on each call it forks a grandchild that detaches (setsid,
 * double fork, SIGTERM/SIGHUP/SIGINT ignored) and keeps serving. `evil` is
 * shared, `evilps` per-session. One session calls both and a second session
 * calls evilps, so three instances each hold their connector and a detached
 * grandchild. The test notes, on the host: every pid in the instance's
 * cgroup (the grandchild found by its namespace pid and its ignored
 * SIGTERM), and the instance's directory in every hierarchy (from
 * /proc/PID/cgroup of its processes, mapped through the cgroup mounts; the
 * cgroup2 one must equal the path the enforcement report in /health/detail
 * gives).
 *
 *  - revoke-all: exit 0, "ended 3 connector instances"; then (polled, 10 s)
 *    every pid is gone (kill(pid, 0) == -1, ESRCH) and every directory is
 *    gone (stat == -1, ENOENT), and /health/detail lists no instance.
 *  - grants: `grants remove evil append` (evil's last tool) ends evil's
 *    instance the same way while evilps's keeps running (every pid alive,
 *    every directory there); `grants set evilps ""` then ends evilps's.
 * History: revoke-all only ended per-session instances started with a
 * delegated root, and grant changes ended nothing: the shared instance and
 * its detached grandchild kept running with their roots, credentials and
 * network after every grant was gone. */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

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
#include "cordond-runner.h"

#define MAX_PIDS 32
#define MAX_DIRS 16

static struct rcd C;

struct inst {
	char connector[32];
	char v2path[600];
	char dirs[MAX_DIRS][800];
	size_t n_dirs;
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	pid_t grandchild;
};

static int teardown(void **state)
{
	(void)state;
	rcd_teardown(&C, false);
	return 0;
}

/* The pids in a cgroup directory and the directories below it. */
static void collect_pids(const char *dir, struct inst *in, unsigned depth)
{
	char path[900], line[64];
	DIR *d;
	struct dirent *de;
	FILE *f;

	assert_true(depth < 8);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		assert_true(in->n_pids < MAX_PIDS);
		in->pids[in->n_pids++] = (pid_t)atoi(line);
	}
	fclose(f);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			collect_pids(path, in, depth + 1);
		}
	closedir(d);
}

/* The last NSpid of a host pid (its pid inside its own pid namespace), and
 * whether it ignores SIGTERM; -1 when it is gone. */
static pid_t ns_pid(pid_t pid, bool *ret_ignores_term)
{
	char path[64], line[512];
	pid_t last = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	*ret_ignores_term = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ign;

		if (!strncmp(line, "NSpid:", 6)) {
			char *save = NULL;

			for (char *t = strtok_r(line + 6, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
				last = (pid_t)atoi(t);
		} else if (sscanf(line, "SigIgn: %llx", &ign) == 1)
			*ret_ignores_term = (ign & (1ULL << (SIGTERM - 1))) != 0;
	}
	fclose(f);
	return last;
}

/* Mount point of the cgroup hierarchy holding exactly the controllers in
 * ctrls (comma-separated; "" for cgroup2), and its root. */
static bool hierarchy_mount(const char *ctrls, char *ret_mount, size_t size, char *ret_root, size_t rsize)
{
	char line[2048];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char root[512], mnt[512], fstype[64], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) != 2 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (!*ctrls)
			found = !strcmp(fstype, "cgroup2");
		else if (!strcmp(fstype, "cgroup")) {
			char want[256], *save = NULL;

			found = true;
			snprintf(want, sizeof(want), "%s", ctrls);
			for (char *c = strtok_r(want, ",", &save); c && found; c = strtok_r(NULL, ",", &save)) {
				char o[1100];

				snprintf(o, sizeof(o), ",%s,", opts);
				char needle[300];

				snprintf(needle, sizeof(needle), ",%s,", c);
				found = strstr(o, needle) != NULL;
			}
		}
		if (found) {
			snprintf(ret_mount, size, "%s", mnt);
			snprintf(ret_root, rsize, "%s", root);
		}
	}
	fclose(f);
	return found;
}

/* The instance's directory in every hierarchy: the lines of
 * /proc/PID/cgroup whose last component is the instance's (the same name in
 * every hierarchy), each mapped to its host path. */
static void collect_dirs(pid_t pid, struct inst *in)
{
	char path[64], line[1024];
	const char *base = strrchr(in->v2path, '/');
	bool v2_seen = false;
	FILE *f;

	assert_non_null(base);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *cg, *last;
		char mnt[512], root[512];

		assert_non_null(c2);
		*c2 = 0;
		cg = c2 + 1;
		cg[strcspn(cg, "\n")] = 0;
		last = strrchr(cg, '/');
		if (!last || strcmp(last, base) != 0)
			continue;
		assert_true(hierarchy_mount(c1 + 1, mnt, sizeof(mnt), root, sizeof(root)));
		/* A hierarchy mounted at a sub-cgroup shows paths below it. */
		if (strcmp(root, "/") != 0) {
			assert_int_equal(strncmp(cg, root, strlen(root)), 0);
			cg += strlen(root);
		}
		assert_true(in->n_dirs < MAX_DIRS);
		snprintf(in->dirs[in->n_dirs], sizeof(in->dirs[0]), "%s%s", mnt, cg);
		printf("    %s: hierarchy '%s' %s\n", in->connector, c1 + 1, in->dirs[in->n_dirs]);
		if (!c1[1]) {
			/* The cgroup2 directory is the one the report names. */
			assert_string_equal(in->dirs[in->n_dirs], in->v2path);
			v2_seen = true;
		}
		in->n_dirs++;
	}
	fclose(f);
	assert_true(v2_seen);
}

/* The instances /health/detail lists for a connector. */
static size_t detail_instances(const char *connector, json_t **ret)
{
	int status = 0;
	json_t *d = rcd_http_json(&C, "/health/detail", &status), *c;
	size_t i, n = 0;

	assert_int_equal(status, 200);
	assert_non_null(d);
	json_array_foreach(json_object_get(d, "connectors"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "id")), connector) != 0)
			continue;
		n = json_array_size(json_object_get(c, "instances"));
		if (ret)
			*ret = json_incref(json_object_get(c, "instances"));
	}
	json_decref(d);
	return n;
}

/* Calls connector__append (which forks the detached grandchild) and notes
 * the instance's processes and directories. other: an instance of the same
 * connector noted before (another session's), or NULL. */
static void start_and_note(struct mcp_peer *p, const char *connector, bool per_session, const struct inst *other,
			   struct inst *in)
{
	char tool[64];
	json_t *r, *insts = NULL, *rep = NULL, *x;
	int gc_ns;
	const char *path = NULL;
	size_t k;

	memset(in, 0, sizeof(*in));
	snprintf(in->connector, sizeof(in->connector), "%s", connector);
	snprintf(tool, sizeof(tool), "%s__append", connector);
	r = mcp_peer_call(p, tool, json_object(), 20000);
	assert_non_null(r);
	gc_ns = (int)json_integer_value(json_object_get(json_object_get(r, "structuredContent"), "grandchild"));
	json_decref(r);
	assert_true(gc_ns > 1);

	assert_int_equal(detail_instances(connector, &insts), other ? 2 : 1);
	json_array_foreach(insts, k, x)
	{
		const char *xp;

		rep = json_object_get(x, "report");
		xp = json_string_value(
			json_object_get(json_object_get(json_object_get(rep, "controls"), "cgroup"), "path"));
		if (!xp)
			cordon_test_skip("the instance has no cgroup2 directory (no cgroup2 hierarchy)");
		assert_int_equal(json_is_string(json_object_get(x, "session")), per_session);
		if (!other || strcmp(xp, other->v2path) != 0)
			path = xp;
	}
	assert_non_null(path);
	snprintf(in->v2path, sizeof(in->v2path), "%s", path);
	json_decref(insts);

	collect_pids(in->v2path, in, 0);
	for (size_t i = 0; i < in->n_pids; i++) {
		bool ign = false;

		if (ns_pid(in->pids[i], &ign) == gc_ns && ign)
			in->grandchild = in->pids[i];
	}
	printf("  %s: cgroup %s, %zu processes, detached grandchild host pid %d (pid %d inside)\n", connector,
	       in->v2path, in->n_pids, (int)in->grandchild, gc_ns);
	/* The connector and its detached grandchild at least. */
	assert_true(in->n_pids >= 2);
	assert_true(in->grandchild > 0);
	collect_dirs(in->grandchild, in);
	for (size_t i = 0; i < in->n_dirs; i++) {
		struct stat st;

		assert_int_equal(stat(in->dirs[i], &st), 0);
	}
}

static bool all_gone(const struct inst *in)
{
	struct stat st;

	for (size_t i = 0; i < in->n_pids; i++)
		if (kill(in->pids[i], 0) == 0 || errno != ESRCH)
			return false;
	for (size_t i = 0; i < in->n_dirs; i++)
		if (stat(in->dirs[i], &st) == 0 || errno != ENOENT)
			return false;
	return true;
}

/* Polls (10 s) until every process and directory of the instance is gone,
 * then asserts each exactly. */
static void assert_ended(const struct inst *in)
{
	uint64_t deadline = cordon_test_now_ms() + 10000;
	struct stat st;

	while (!all_gone(in) && cordon_test_now_ms() < deadline)
		usleep(10 * 1000);
	for (size_t i = 0; i < in->n_pids; i++) {
		assert_int_equal(kill(in->pids[i], 0), -1);
		assert_int_equal(errno, ESRCH);
	}
	for (size_t i = 0; i < in->n_dirs; i++) {
		assert_int_equal(stat(in->dirs[i], &st), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(detail_instances(in->connector, NULL), 0);
	printf("  %s: %zu processes and %zu cgroup directories gone\n", in->connector, in->n_pids, in->n_dirs);
}

static void assert_running(const struct inst *in)
{
	struct stat st;

	for (size_t i = 0; i < in->n_pids; i++)
		assert_int_equal(kill(in->pids[i], 0), 0);
	for (size_t i = 0; i < in->n_dirs; i++)
		assert_int_equal(stat(in->dirs[i], &st), 0);
	assert_int_equal(detail_instances(in->connector, NULL), 1);
}

static void start_two(struct mcp_peer *p, struct inst *shared, struct inst *ps)
{
	rcd_setup(&C, "sec-revoke-inst");
	rcd_evil_profile(&C, "evil", "fork-stay", "shared");
	rcd_evil_profile(&C, "evilps", "fork-stay", "per-session");
	rcd_start(&C);
	rcd_install(&C, "evil");
	rcd_install(&C, "evilps");
	rcd_session(&C, p);
	start_and_note(p, "evil", false, NULL, shared);
	start_and_note(p, "evilps", true, NULL, ps);
}

static void test_revoke_all_ends_every_instance(void **state)
{
	struct mcp_peer p, q;
	struct inst shared, ps, ps2;
	char *out = NULL, *err = NULL;
	json_t *r;

	(void)state;
	start_two(&p, &shared, &ps);
	/* A second session: its own per-session instance of evilps. */
	rcd_session(&C, &q);
	start_and_note(&q, "evilps", true, &ps, &ps2);

	assert_int_equal(rcd_ctl(&C, &out, &err, "revoke-all", "--yes", (char *)NULL), 0);
	printf("  cordonctl revoke-all --yes: %s", out);
	assert_string_equal(out, "revoked: 2 grants, 0 approvals, 0 delegations; ended 3 connector instances\n");
	free(out);
	free(err);
	assert_ended(&shared);
	assert_ended(&ps);
	assert_ended(&ps2);

	/* The session is still served; the connectors' tools are gone. */
	r = mcp_peer_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "evil__append", "arguments"), 10000);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
	json_decref(r);
	mcp_peer_disconnect(&p);
	mcp_peer_disconnect(&q);
	rcd_stop_clean(&C);
}

static void test_removing_last_grant_ends_instances(void **state)
{
	struct mcp_peer p;
	struct inst shared, ps;

	(void)state;
	start_two(&p, &shared, &ps);

	/* evil's last tool: its instance ends, evilps's keeps running. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "remove", "evil", "append", (char *)NULL), 0);
	assert_ended(&shared);
	assert_running(&ps);
	/* An empty grant set ends evilps's too. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "set", "evilps", "", (char *)NULL), 0);
	assert_ended(&ps);
	mcp_peer_disconnect(&p);
	rcd_stop_clean(&C);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_revoke_all_ends_every_instance, teardown),
		cmocka_unit_test_teardown(test_removing_last_grant_ends_instances, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
