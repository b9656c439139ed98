/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kill and teardown: every process of an instance dies (cgroup.kill where
 * the kernel has it, else the v2 directory is frozen and each pid of every
 * hierarchy gets SIGKILL, in rounds until none is left), the wait for the
 * instance to empty is bounded, and then every directory is removed,
 * deepest first (a delegated worker may have made job cgroups below). */
#include "cgroup-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"
#include "syscall-compat.h"

static uint64_t now_msec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_msec(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- Killing and removal --------------------------------------------- */

struct pidset {
	pid_t *pids;
	size_t n, cap;
};

static int pidset_add(struct pidset *s, pid_t pid)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 32;
		pid_t *np = realloc(s->pids, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		s->pids = np;
		s->cap = ncap;
	}
	s->pids[s->n++] = pid;
	return 0;
}

static bool pidset_has(const struct pidset *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

/* Collects the pids in cgroup.procs of dirfd and of every directory below
 * it (job cgroups a worker made). */
static int collect_procs(int dirfd, unsigned depth, struct pidset *s)
{
	_cleanup_free_ char *buf = NULL;
	char *tok, *save = NULL;
	DIR *d;
	struct dirent *de;
	int r, fd;

	if (depth > TREE_MAX_DEPTH)
		return -ELOOP;
	r = read_file_bounded(dirfd, "cgroup.procs", PROCS_MAX_BYTES, &buf, NULL);
	if (r == -ENOENT)
		return 0; /* not a cgroup directory: nothing can be inside */
	if (r < 0)
		return r;
	for (tok = strtok_r(buf, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		uint64_t v;

		if (parse_u64(tok, &v) < 0 || v == 0 || v > INT32_MAX)
			return -EBADMSG;
		r = pidset_add(s, (pid_t)v);
		if (r < 0)
			return r;
	}
	{
		struct stat st;

		/* A directory's link count is 2 + its subdirectories (kernfs
		 * keeps it exact; a filesystem that does not track it says 1):
		 * 2 means no job cgroup below, so no listing of the
		 * controller's many files. */
		if (fstat(dirfd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2)
			return 0;
	}
	fd = openat(dirfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	r = 0;
	while ((de = readdir(d))) {
		_cleanup_close_ int sub = -EBADF;

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = openat(dirfd, de->d_name, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
		if (sub < 0) {
			if (errno == ENOENT)
				continue;
			r = -errno;
			break;
		}
		r = collect_procs(sub, depth + 1, s);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

static int cg_collect(const struct cordon_cgroup *cg, struct pidset *s)
{
	int r;

	if (cg->v2.fd >= 0) {
		r = collect_procs(cg->v2.fd, 0, s);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cg->n_v1; i++) {
		if (cg->v1[i].fd < 0)
			continue;
		r = collect_procs(cg->v1[i].fd, 0, s);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool v2_populated(int fd)
{
	uint64_t v;

	int r;

	/* cgroup.events covers the whole subtree. A removed directory (ENOENT)
	 * holds nothing; any other unreadable state counts as populated so
	 * that we keep trying rather than rmdir too early. */
	r = cg_read_keyed_u64(fd, "cgroup.events", "populated", &v);
	if (r == -ENOENT || r == -ENODEV)
		return false;
	if (r < 0)
		return true;
	return v != 0;
}

static bool cg_empty(const struct cordon_cgroup *cg)
{
	struct pidset s = { 0 };
	bool empty;

	if (cg->v2.fd >= 0 && v2_populated(cg->v2.fd))
		return false;
	if (cg->n_v1 == 0)
		return true;
	if (cg_collect(cg, &s) < 0) {
		free(s.pids);
		return false;
	}
	empty = s.n == 0;
	free(s.pids);
	return empty;
}

/* Waits until the instance holds no process or the deadline passes.
 * cgroup.events is pollable (POLLPRI), but the kernel rate-limits its
 * notifications to one per 20 ms per file, and the instance usually became
 * populated moments ago; so the wait is a poll with a short, growing
 * timeout (100 us doubling to 10 ms): killed processes are normally gone
 * within a few hundred microseconds. */
static int wait_empty(const struct cordon_cgroup *cg, uint64_t deadline)
{
	_cleanup_close_ int ev = -EBADF;
	long step_ns = 100 * 1000L;

	if (cg->v2.fd >= 0)
		ev = openat(cg->v2.fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	for (;;) {
		struct timespec ts;
		uint64_t now;

		if (cg_empty(cg))
			return 0;
		now = now_msec();
		if (now >= deadline)
			return -EBUSY;
		if (step_ns > (long)(deadline - now) * 1000000L)
			step_ns = (long)(deadline - now) * 1000000L;
		ts = (struct timespec){ .tv_sec = 0, .tv_nsec = step_ns };
		if (ev >= 0) {
			struct pollfd p = { .fd = ev, .events = POLLPRI };
			char b[64];

			/* A read re-arms the notification; cg_empty() reads
			 * the content again. */
			if (pread(ev, b, sizeof(b), 0) >= 0 && cg_empty(cg))
				return 0;
			(void)ppoll(&p, 1, &ts, NULL);
		} else
			(void)nanosleep(&ts, NULL);
		if (step_ns < 10 * 1000000L)
			step_ns *= 2;
	}
}

static void v2_freeze(const struct cordon_cgroup *cg, bool on)
{
	if (cg->v2.fd < 0)
		return;
	(void)write_small_file_at(cg->v2.fd, "cgroup.freeze", on ? "1" : "0");
	if (on) {
		/* Bounded: the freeze only narrows the window in which a
		 * process can fork between our read of cgroup.procs and the
		 * kill; the kill rounds converge without it. */
		uint64_t deadline = now_msec() + 100;
		uint64_t v;

		while (now_msec() < deadline) {
			if (cg_read_keyed_u64(cg->v2.fd, "cgroup.events", "frozen", &v) < 0 || v == 1)
				break;
			sleep_msec(1);
		}
	}
}

/* One round of SIGKILL for every process in the instance. Pids are pinned
 * with pidfds and only signalled when a second read of cgroup.procs still
 * lists them, so a pid that exited and was reused by a process outside the
 * instance between the two reads is never signalled. Returns the number of
 * processes signalled or -errno. */
static int kill_round(const struct cordon_cgroup *cg)
{
	struct pidset first = { 0 }, second = { 0 };
	int *pidfds = NULL;
	int r, killed = 0;

	r = cg_collect(cg, &first);
	if (r < 0 || first.n == 0)
		goto out;
	pidfds = malloc(first.n * sizeof(int));
	if (!pidfds) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < first.n; i++)
		pidfds[i] = sys_pidfd_open(first.pids[i], 0);
	r = cg_collect(cg, &second);
	if (r >= 0)
		for (size_t i = 0; i < first.n; i++)
			if (pidfds[i] >= 0 && pidset_has(&second, first.pids[i]) &&
			    sys_pidfd_send_signal(pidfds[i], SIGKILL, NULL, 0) >= 0)
				killed++;
	for (size_t i = 0; i < first.n; i++)
		if (pidfds[i] >= 0)
			(void)close(pidfds[i]);
out:
	free(pidfds);
	free(first.pids);
	free(second.pids);
	return r < 0 ? r : killed;
}

static int kill_all(const struct cordon_cgroup *cg)
{
	uint64_t deadline = now_msec() + KILL_TIMEOUT_MSEC;
	int r;

	if (cg->use_kill && cg->v2.fd >= 0 && v2_populated(cg->v2.fd)) {
		/* cgroup.kill kills the whole subtree atomically with respect
		 * to forks: no process can escape by forking during the kill. */
		r = write_small_file_at(cg->v2.fd, "cgroup.kill", "1");
		if (r >= 0 && wait_empty(cg, deadline) >= 0)
			return 0;
	}
	/* Fallback (no cgroup.kill, or processes that sit only in v1
	 * directories): freeze where possible, SIGKILL each pid, repeat until
	 * empty. */
	for (;;) {
		if (cg_empty(cg))
			return 0;
		if (now_msec() >= deadline)
			return -EBUSY;
		v2_freeze(cg, true);
		r = kill_round(cg);
		v2_freeze(cg, false);
		if (r < 0)
			return r;
		(void)wait_empty(cg, now_msec() + 20 < deadline ? now_msec() + 20 : deadline);
	}
}

/* Removes a cgroup directory and the directories below it, deepest first.
 * cgroupfs directories contain only control files, which rmdir ignores. */
static int rmdir_tree(const char *path, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > TREE_MAX_DEPTH)
		return -ELOOP;
	/* The usual case, a leaf whose processes are gone: one rmdir, no
	 * listing of the control files. */
	if (rmdir(path) >= 0 || errno == ENOENT)
		return 0;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;
		int k;

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&sub, "%s/%s", path, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		k = rmdir_tree(sub, depth + 1);
		if (k < 0 && r == 0)
			r = k;
	}
	closedir(d);
	/* A process that was just killed leaves its cgroups a little after
	 * it is reported gone; retry EBUSY briefly. */
	for (int i = 0; i < 200; i++) {
		if (rmdir(path) >= 0 || errno == ENOENT)
			return r;
		if (errno != EBUSY)
			break;
		sleep_msec(1);
	}
	return r < 0 ? r : -errno;
}

static void hdir_remove(struct hdir *h, int *first_err)
{
	int r;

	if (h->procs_fd >= 0) {
		(void)close(h->procs_fd);
		h->procs_fd = -EBADF;
	}
	if (h->fd >= 0) {
		(void)close(h->fd);
		h->fd = -EBADF;
	}
	if (h->path && h->created) {
		r = rmdir_tree(h->path, 0);
		if (r < 0 && *first_err == 0)
			*first_err = r;
	}
	/* The shared "cordon" parent goes when it is empty; while another
	 * instance lives there rmdir fails with EBUSY and it stays. A launcher
	 * creating an instance at the same moment retries on ENOENT. */
	if (h->parent)
		(void)rmdir(h->parent);
}

int cg_teardown(struct cordon_cgroup *cg)
{
	int r, first = 0;

	r = kill_all(cg);
	if (r < 0)
		first = r;
	hdir_remove(&cg->v2, &first);
	for (size_t i = 0; i < cg->n_v1; i++)
		hdir_remove(&cg->v1[i], &first);
	cg_free(cg);
	return first;
}

bool cordon_cgroup_is_empty(const struct cordon_cgroup *cg)
{
	return !cg || cg_empty(cg);
}

int cordon_cgroup_destroy(struct cordon_cgroup *cg)
{
	if (!cg)
		return 0;
	return cg_teardown(cg);
}
