/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The spare network namespace: cordon_spawn() makes the next instance's
 * network namespace while it waits for the current one to start. Each
 * instance must still get its own, never used namespace: two live
 * instances never share one (nor the launcher's), and a forked copy of the
 * launcher never hands out the namespace its parent holds. Real kernel,
 * root. */
#include "spawn-test.h"

#include <dirent.h>
#include <sys/syscall.h>

static struct sbx *S;

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("spawn-netns");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

/* Spawns `sandbox-probe sleep 5` with stdio inherited; the caller frees. */
static int spawn_sleeper_opts(const struct cordon_profile *p, bool one_shot, struct cordon_instance **ret)
{
	char *argv[] = { p->command[0], (char *)"sleep", (char *)"5", NULL };
	struct cordon_launch_policy pol = {
		.profile = p,
		.argv = argv,
		.env_source = environ,
		.stdio = CORDON_STDIO_INHERIT,
		.one_shot = one_shot,
	};
	struct cordon_diag d = { 0 };
	int r = cordon_spawn(&pol, &S->caps, ret, &d);

	if (r < 0)
		fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
	return r;
}

static int spawn_sleeper(const struct cordon_profile *p, struct cordon_instance **ret)
{
	return spawn_sleeper_opts(p, false, ret);
}

/* File descriptors of this process that are network namespaces. */
static int count_netns_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], target[64];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += strncmp(target, "net:[", 5) == 0;
		}
	}
	closedir(d);
	return n;
}

static ino_t netns_of(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st) < 0)
		return 0;
	return st.st_ino;
}

static void test_each_instance_own_netns(void **state)
{
	struct cordon_profile *p = sbx_profile(S, NULL);
	struct cordon_instance *a = NULL, *b = NULL, *c = NULL;
	ino_t na, nb, nc, self = netns_of(getpid());

	(void)state;
	/* a unshares or takes a spare; b and c take the spares made while
	 * their predecessors started. */
	assert_int_equal(spawn_sleeper(p, &a), 0);
	assert_int_equal(spawn_sleeper(p, &b), 0);
	assert_int_equal(spawn_sleeper(p, &c), 0);
	na = netns_of(cordon_instance_pid(a));
	nb = netns_of(cordon_instance_pid(b));
	nc = netns_of(cordon_instance_pid(c));
	printf("  netns: launcher %lu, instances %lu %lu %lu\n", (unsigned long)self, (unsigned long)na,
	       (unsigned long)nb, (unsigned long)nc);
	assert_true(na != 0 && nb != 0 && nc != 0);
	assert_true(na != self && nb != self && nc != self);
	assert_true(na != nb && nb != nc && na != nc);
	cordon_instance_free(a);
	cordon_instance_free(b);
	cordon_instance_free(c);
	cordon_profile_free(p);
}

/* After a spawn the launcher holds a spare. A forked copy of it that
 * spawns must make its own namespace, not enter the parent's spare. */
static void test_forked_launcher_does_not_share_the_spare(void **state)
{
	struct cordon_profile *p = sbx_profile(S, NULL);
	struct cordon_instance *first = NULL, *mine = NULL;
	int pfd[2], done[2], st;
	ino_t theirs = 0, ours;
	pid_t child;

	(void)state;
	assert_int_equal(spawn_sleeper(p, &first), 0); /* leaves a spare behind */
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(done, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct cordon_instance *inst = NULL;
		ino_t n;
		char c;

		close(done[1]);
		alarm(30);
		CHILD_CHECK(spawn_sleeper(p, &inst) == 0);
		n = netns_of(cordon_instance_pid(inst));
		CHILD_CHECK(write(pfd[1], &n, sizeof(n)) == (ssize_t)sizeof(n));
		/* Alive while the parent spawns and compares: until it closes
		 * its end of `done` (EOF). */
		(void)!read(done[0], &c, 1);
		cordon_instance_free(inst);
		_exit(0);
	}
	assert_int_equal(read(pfd[0], &theirs, sizeof(theirs)), (ssize_t)sizeof(theirs));
	assert_int_equal(spawn_sleeper(p, &mine), 0); /* takes the parent's spare */
	ours = netns_of(cordon_instance_pid(mine));
	printf("  netns: forked launcher's instance %lu, ours %lu\n", (unsigned long)theirs, (unsigned long)ours);
	assert_true(theirs != 0 && ours != 0);
	assert_true(theirs != ours);
	assert_true(netns_of(cordon_instance_pid(first)) != ours);
	close(done[1]);
	close(done[0]);
	close(pfd[1]);
	st = cordon_test_wait(child);
	close(pfd[0]);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	cordon_instance_free(mine);
	cordon_instance_free(first);
	cordon_profile_free(p);
}

/* A one-shot launcher (cordon-launch --profile) makes no spare for a next
 * spawn that never comes; without one_shot the same launcher then holds
 * one. First in the list: the process holds no spare before it. */
static void test_one_shot_makes_no_spare(void **state)
{
	struct cordon_profile *p = sbx_profile(S, NULL);
	struct cordon_instance *inst = NULL;

	(void)state;
	assert_int_equal(count_netns_fds(), 0);
	assert_int_equal(spawn_sleeper_opts(p, true, &inst), 0);
	assert_int_equal(count_netns_fds(), 0);
	cordon_instance_free(inst);
	inst = NULL;
	assert_int_equal(spawn_sleeper_opts(p, false, &inst), 0);
	assert_int_equal(count_netns_fds(), 1);
	cordon_instance_free(inst);
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_shot_makes_no_spare),
		cmocka_unit_test(test_each_instance_own_netns),
		cmocka_unit_test(test_forked_launcher_does_not_share_the_spare),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
