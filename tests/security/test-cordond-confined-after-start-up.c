/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 12 item 4): cordond confines itself with libcordon's
 * privilege drop and Landlock (launcher/lib/privdrop.h, landlock.h), and
 * once started it can reach only its own directories and holds no
 * privilege.
 *
 * cordond's core runs in a forked child exactly as cordond does (no --user:
 * its private id; a spawner that runs nothing and asks for no directories,
 * so the Landlock domain and seccomp filter are cordond's own). After
 * cordon_daemon_new() returned (every start-up phase done: drop, Landlock,
 * seccomp, database) the child tries, with exact errnos:
 *  - outside its directories, where the file modes let its uid do anything
 *    (a process with the same uid and no Landlock domain does each of these
 *    first, so the refusal is the domain's): read a file, list the
 *    directory, create a file, open the file for writing -> EACCES;
 *    /etc/passwd (0644) -> EACCES;
 *  - the profiles directory (a 0777 subdirectory, a 0666 file): reading
 *    works; writing, creating, mkdir -> EACCES;
 *  - the state and runtime directories: create, write, truncate, rename,
 *    mkdir, rmdir, unlink work (what SQLite and the sockets need).
 * Meanwhile the test reads /proc/PID/status: uid and gid the private id in
 * all four slots, no supplementary groups, CapInh, CapPrm, CapEff, CapBnd
 * and CapAmb all zero, NoNewPrivs 1, Seccomp 2 (docs/cordond.md: cordond
 * keeps no capability).
 * Layer: cordond core, real kernel. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-core.h"
#include "paths.h"
#include "test-support.h"

#define ID CORDON_BROKER_PRIVATE_ID

static char base[256], state[300], runtime[300], profiles[300], scratch[320], outside[300];

static char *at(const char *dir, const char *name)
{
	static char bufs[4][512];
	static unsigned next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The exit status of pid, or 1000 + the signal that killed it. */
static int wait_exit(pid_t pid)
{
	int st = cordon_test_wait(pid);

	assert_true(st >= 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

/* ---- the spawner: cordond's launcher helper is not under test ------------ */

static int s_spawn(void *userdata, const struct cordon_profile *p, const char *tag,
		   const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		   struct cordon_diag *diag)
{
	(void)userdata, (void)p, (void)tag, (void)roots, (void)n_roots, (void)ret;
	return cordon_diag_set(diag, ENOSYS, "spawn", "this test starts no connector");
}

static void s_kill(void *userdata, uint32_t instance)
{
	(void)userdata, (void)instance;
}

static int s_reap(void *userdata, uint32_t instance)
{
	(void)userdata, (void)instance;
	return -1;
}

/* What the daemon's uid may do to outside/ by file modes alone. */
static void check_outside_without_landlock(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		CHILD_CHECK(setgroups(0, NULL) == 0 && setresgid(ID, ID, ID) == 0 && setresuid(ID, ID, ID) == 0);
		CHILD_CHECK((fd = open(at(outside, "secret.txt"), O_RDONLY | O_CLOEXEC)) >= 0 && close(fd) == 0);
		CHILD_CHECK((fd = open(at(outside, "secret.txt"), O_WRONLY | O_CLOEXEC)) >= 0 && close(fd) == 0);
		CHILD_CHECK((fd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 && close(fd) == 0);
		CHILD_CHECK((fd = open(at(outside, "made"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0 &&
			    close(fd) == 0 && unlink(at(outside, "made")) == 0);
		CHILD_CHECK((fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC)) >= 0 && close(fd) == 0);
		CHILD_CHECK((fd = open(at(scratch, "w.txt"), O_WRONLY | O_CLOEXEC)) >= 0 && close(fd) == 0);
		CHILD_CHECK(mkdir(at(scratch, "d"), 0700) == 0 && rmdir(at(scratch, "d")) == 0);
		_exit(0);
	}
	assert_int_equal(wait_exit(pid), 0);
}

static _Noreturn void daemon_child(int ready_fd, int go_fd)
{
	struct cordon_spawner sp = { .spawn = s_spawn, .kill = s_kill, .reap = s_reap };
	struct cordon_daemon_config cfg;
	struct cordon_daemon *d = NULL;
	struct cordon_diag diag = {};
	char c;
	int fd, r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	cordon_daemon_config_init(&cfg);
	cfg.state_dir = strdup(state);
	cfg.runtime_dir = strdup(runtime);
	cfg.profiles_dir = strdup(profiles);
	r = cordon_daemon_new(&cfg, &sp, &d, &diag);
	cordon_daemon_config_done(&cfg);
	if (r < 0) {
		fprintf(stderr, "daemon child: %s: %s\n", diag.step, diag.message);
		_exit(10);
	}

	/* Outside: refused by the domain. */
	CHILD_CHECK_ERRNO(open(at(outside, "secret.txt"), O_RDONLY | O_CLOEXEC), EACCES);
	CHILD_CHECK_ERRNO(open(at(outside, "secret.txt"), O_WRONLY | O_CLOEXEC), EACCES);
	CHILD_CHECK_ERRNO(open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
	CHILD_CHECK_ERRNO(open(at(outside, "made"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600), EACCES);
	CHILD_CHECK_ERRNO(open("/etc/passwd", O_RDONLY | O_CLOEXEC), EACCES);
	/* Profiles: read only. */
	CHILD_CHECK((fd = open(at(scratch, "w.txt"), O_RDONLY | O_CLOEXEC)) >= 0 && read(fd, &c, 1) == 1 && c == 'p' &&
		    close(fd) == 0);
	CHILD_CHECK_ERRNO(open(at(scratch, "w.txt"), O_WRONLY | O_CLOEXEC), EACCES);
	CHILD_CHECK_ERRNO(open(at(scratch, "new.txt"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600), EACCES);
	CHILD_CHECK_ERRNO(mkdir(at(scratch, "d"), 0700), EACCES);
	/* State and runtime: what the database and the sockets need. */
	for (const char *dir = state; dir; dir = dir == state ? runtime : NULL) {
		CHILD_CHECK((fd = open(at(dir, "probe.tmp"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) >= 0);
		CHILD_CHECK(write(fd, "xy", 2) == 2 && ftruncate(fd, 1) == 0 && close(fd) == 0);
		CHILD_CHECK(rename(at(dir, "probe.tmp"), at(dir, "probe.2")) == 0);
		CHILD_CHECK(unlink(at(dir, "probe.2")) == 0);
		CHILD_CHECK(mkdir(at(dir, "probe.d"), 0700) == 0 && rmdir(at(dir, "probe.d")) == 0);
	}
	fprintf(stderr, "daemon child: confined as expected\n");
	CHILD_CHECK(write(ready_fd, "R", 1) == 1);
	/* Stay alive while the test reads /proc/PID/status. */
	(void)!read(go_fd, &c, 1);
	_exit(0);
}

static void proc_status(pid_t pid, const char *key, char *out, size_t size)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
			snprintf(out, size, "%s", line + strlen(key) + 1 + strspn(line + strlen(key) + 1, " \t"));
			out[strcspn(out, "\n")] = '\0';
		}
	fclose(f);
}

static void test_cordond_confined_after_start_up(void **state_)
{
	char want_id[64], v[256], c;
	int ready[2], go[2];
	pid_t pid;

	(void)state_;
	cordon_test_require_root();
	if (getpwuid(ID) || getgrgid(ID))
		cordon_test_skip("the private id %u is in the user database here", ID);
	snprintf(base, sizeof(base), "/tmp/cordon-sec-confined-XXXXXX");
	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(runtime, sizeof(runtime), "%s/run", base);
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	snprintf(scratch, sizeof(scratch), "%s/scratch", profiles);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	assert_int_equal(mkdir(profiles, 0755), 0);
	assert_int_equal(mkdir(scratch, 0777), 0);
	assert_int_equal(chmod(scratch, 0777), 0);
	write_file(at(scratch, "w.txt"), "profiles-side\n", 0666);
	assert_int_equal(mkdir(outside, 0777), 0);
	assert_int_equal(chmod(outside, 0777), 0);
	write_file(at(outside, "secret.txt"), "outside\n", 0666);
	check_outside_without_landlock();

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		daemon_child(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		close(go[1]);
		fail_msg("cordond's core failed a check (exit status %d)", wait_exit(pid));
	}

	snprintf(want_id, sizeof(want_id), "%u\t%u\t%u\t%u", ID, ID, ID, ID);
	proc_status(pid, "Uid", v, sizeof(v));
	assert_string_equal(v, want_id);
	proc_status(pid, "Gid", v, sizeof(v));
	assert_string_equal(v, want_id);
	proc_status(pid, "Groups", v, sizeof(v));
	assert_string_equal(v, "");
	for (const char *const *k = (const char *const[]){ "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL }; *k;
	     k++) {
		proc_status(pid, *k, v, sizeof(v));
		printf("  %s: %s\n", *k, v);
		assert_string_equal(v, "0000000000000000");
	}
	proc_status(pid, "NoNewPrivs", v, sizeof(v));
	assert_string_equal(v, "1");
	proc_status(pid, "Seccomp", v, sizeof(v));
	assert_string_equal(v, "2");

	close(go[1]);
	assert_int_equal(wait_exit(pid), 0);
	close(ready[0]);
	cordon_test_rm_rf(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cordond_confined_after_start_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
