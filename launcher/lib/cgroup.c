/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One cgroup per connector instance.
 *
 * Where the directories go. In every hierarchy (the cgroup2 one and each v1
 * hierarchy that holds a controller we use) the instance lives at
 *
 *     <own cgroup of the launcher>/cordon/i-<owner pid>-<owner start time>-<name>
 *
 * Nesting below the launcher's own cgroup keeps every limit the host (or a
 * service manager) put on the launcher in force for its connectors too; a
 * connector can never escape into a sibling tree with looser limits. On
 * cgroup2 the launcher's own cgroup normally holds the launcher itself, and
 * the no-internal-processes rule then forbids enabling controllers for
 * children there (EBUSY); in that case the parent of the launcher's cgroup is
 * used, which is what a service manager's delegation ("Delegate=yes" plus
 * "DelegateSubgroup=") sets up.
 *
 * The owner pid and its start time (field 22 of /proc/<pid>/stat) in the
 * name let a later launcher tell, without any state file, that the launcher
 * which made a directory is gone: the pid no longer exists or now belongs to
 * a process that started at another time. cordon_cgroup_cleanup_stale() only
 * ever touches "i-" directories under "cordon" parents, i.e. ones cordon
 * made.
 *
 * Limits are written before any process enters, so the connector never runs
 * a single instruction unconstrained. Any failure while creating removes what
 * was created so far: an instance is either complete or absent. */

/*
 * The module is split as crun splits its cgroup code:
 *   cgroup.c           the instance object, accessors, enter (child side),
 *                      attach, stats, delegation
 *   cgroup-discover.c  mount table, own cgroup paths, hybrid v1 + unified
 *                      vs pure v2, controller enabling (subtree_control)
 *   cgroup-create.c    cordon_cgroup_create() and the launcher's group
 *   cgroup-kill.c      killing (cgroup.kill, v1 freeze + SIGKILL), removal
 *   cgroup-stale.c     cleanup of instances whose owner (pid + start time)
 *                      is gone
 * cgroup-internal.h holds the types and helpers they share. */
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

void cg_hdir_init(struct hdir *h)
{
	*h = (struct hdir){ .fd = -EBADF, .procs_fd = -EBADF };
}

void cg_hdir_free(struct hdir *h)
{
	if (h->procs_fd >= 0)
		(void)close(h->procs_fd);
	if (h->fd >= 0)
		(void)close(h->fd);
	free(h->mount);
	free(h->parent);
	free(h->path);
	cg_hdir_init(h);
}

struct cordon_cgroup *cg_new(void)
{
	struct cordon_cgroup *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return NULL;
	cg_hdir_init(&cg->v2);
	for (size_t i = 0; i < ELEMENTSOF(cg->v1); i++)
		cg_hdir_init(&cg->v1[i]);
	return cg;
}

void cg_free(struct cordon_cgroup *cg)
{
	if (!cg)
		return;
	cg_proc_view_free(cg->pending_pv);
	cg_hdir_free(&cg->v2);
	for (size_t i = 0; i < ELEMENTSOF(cg->v1); i++)
		cg_hdir_free(&cg->v1[i]);
	free(cg);
}

bool cg_name_is_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-'))
			return false;
	return n <= NAME_MAX_LEN;
}

/* Reads a "key value" line from a flat-keyed cgroup file. */
int cg_read_keyed_u64(int dirfd, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t kl = strlen(key);
	char *line, *save = NULL;
	int r;

	r = read_file_bounded(dirfd, file, 64 * 1024, &buf, NULL);
	if (r < 0)
		return r;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ')
			return parse_u64(line + kl + 1, ret);
	return -ENOENT;
}

static int read_u64_at(int dirfd, const char *file, uint64_t *ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	r = read_file_bounded(dirfd, file, 4096, &buf, &len);
	if (r < 0)
		return r;
	while (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return parse_u64(buf, ret);
}

int cg_write_u64_at(int dirfd, const char *file, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	return write_small_file_at(dirfd, file, s);
}

const char *cg_ctrl_name(unsigned c)
{
	return cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)c);
}

/* ---- Accessors, entering, stats --------------------------------------- */

int cordon_cgroup_v2_fd(const struct cordon_cgroup *cg)
{
	return cg && cg->v2.fd >= 0 ? cg->v2.fd : -EBADF;
}

const char *cordon_cgroup_v2_path(const struct cordon_cgroup *cg)
{
	return cg && cg->v2.fd >= 0 ? cg->v2.path : NULL;
}

const char *cordon_cgroup_ctrl_path(const struct cordon_cgroup *cg, enum cordon_cgroup_ctrl c)
{
	if (!cg || (unsigned)c >= _CORDON_CTRL_MAX)
		return NULL;
	if (cg->v2.fd >= 0 && (cg->v2.ctrls & (1u << c)))
		return cg->v2.path;
	for (size_t i = 0; i < cg->n_v1; i++)
		if (cg->v1[i].fd >= 0 && (cg->v1[i].ctrls & (1u << c)))
			return cg->v1[i].path;
	return NULL;
}

const char *cordon_cgroup_dir_name(const struct cordon_cgroup *cg)
{
	return cg ? cg->dirname : NULL;
}

void cordon_cgroup_set_clone_placed(struct cordon_cgroup *cg, bool placed)
{
	if (cg)
		cg->placed_by_clone = placed && cg->v2.fd >= 0;
}

/* Async-signal-safe: write of a constant to fds opened by create. "0" names
 * the writing process itself. pwrite at offset 0 because every child shares
 * the open file description (and its offset) with the launcher; cgroupfs
 * ignores the offset, but nothing should depend on that. */
static int write_self(int fd)
{
	ssize_t n;

	do
		n = pwrite(fd, "0", 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -EIO;
}

/* Async-signal-safe: whether the cgroup2 directory's cgroup.procs lists the
 * calling process. Pids there are shown in the reader's pid namespace, so
 * getpid() compares correctly inside a new pid namespace too. A list larger
 * than the buffer counts as "not found" (the caller then writes, which is
 * harmless when already there). */
static bool v2_holds_self(const struct cordon_cgroup *cg)
{
	char buf[4096];
	long self = (long)getpid(), cur = -1;
	ssize_t n, len = 0;
	int fd;

	fd = openat(cg->v2.fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	do {
		n = read(fd, buf + len, sizeof(buf) - (size_t)len);
		if (n > 0)
			len += n;
	} while ((n > 0 && len < (ssize_t)sizeof(buf)) || (n < 0 && errno == EINTR));
	(void)close(fd);
	if (n != 0)
		return false; /* read error or truncated */
	for (ssize_t i = 0; i < len; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			cur = (cur < 0 ? 0 : cur) * 10 + (buf[i] - '0');
			if (cur > INT32_MAX)
				return false;
		} else {
			if (cur == self)
				return true;
			cur = -1;
		}
	}
	return cur == self;
}

int cordon_cgroup_enter(const struct cordon_cgroup *cg)
{
	int r;

	if (!cg)
		return -EINVAL;
	/* Trust but verify the clone3 placement: a spawner that fell back to
	 * a clone without CLONE_INTO_CGROUP and forgot to say so would
	 * otherwise leave the connector outside the cgroup2 directory, and so
	 * outside its BPF egress policy and cgroup.kill. */
	if (cg->v2.procs_fd >= 0 && (!cg->placed_by_clone || !v2_holds_self(cg))) {
		r = write_self(cg->v2.procs_fd);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cg->n_v1; i++) {
		if (cg->v1[i].procs_fd < 0)
			continue;
		r = write_self(cg->v1[i].procs_fd);
		if (r < 0)
			return r;
	}
	return 0;
}

int cordon_cgroup_attach_pid(const struct cordon_cgroup *cg, pid_t pid)
{
	char s[32];
	int r;

	if (!cg || pid <= 0)
		return -EINVAL;
	if (cg->pending_pv)
		return -EBUSY; /* cordon_cgroup_complete() first */
	snprintf(s, sizeof(s), "%d", (int)pid);
	if (cg->v2.fd >= 0) {
		r = write_small_file_at(cg->v2.fd, "cgroup.procs", s);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cg->n_v1; i++) {
		if (cg->v1[i].fd < 0)
			continue;
		r = write_small_file_at(cg->v1[i].fd, "cgroup.procs", s);
		if (r < 0)
			return r;
	}
	return 0;
}

static int ctrl_fd(const struct cordon_cgroup *cg, unsigned c, bool *ret_v2)
{
	if (cg->v2.fd >= 0 && (cg->v2.ctrls & (1u << c))) {
		*ret_v2 = true;
		return cg->v2.fd;
	}
	for (size_t i = 0; i < cg->n_v1; i++)
		if (cg->v1[i].fd >= 0 && (cg->v1[i].ctrls & (1u << c))) {
			*ret_v2 = false;
			return cg->v1[i].fd;
		}
	/* A v1 directory exists even when no limit was written (stats). */
	*ret_v2 = false;
	return -EBADF;
}

int cordon_cgroup_stats(const struct cordon_cgroup *cg, struct cordon_cgroup_stats *ret)
{
	struct cordon_cgroup_stats s = { 0 };
	bool v2;
	int fd, r;

	if (!cg || !ret)
		return -EINVAL;

	fd = ctrl_fd(cg, CORDON_CTRL_MEMORY, &v2);
	if (fd >= 0) {
		r = read_u64_at(fd, v2 ? "memory.peak" : "memory.max_usage_in_bytes", &s.mem_peak_bytes);
		if (r < 0 && r != -ENOENT)
			return r;
		r = cg_read_keyed_u64(fd, v2 ? "memory.events" : "memory.oom_control", "oom_kill", &s.oom_kills);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	fd = ctrl_fd(cg, CORDON_CTRL_PIDS, &v2);
	if (fd >= 0) {
		r = read_u64_at(fd, "pids.peak", &s.pids_peak);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	/* CPU time: cgroup2's core cpu.stat counts usage_usec in every
	 * non-root cgroup even without the cpu controller, so on hybrid hosts
	 * the unified directory has it. Else the v1 cpuacct counter (ns) when
	 * cpuacct is mounted with cpu. */
	if (cg->v2.fd >= 0) {
		r = cg_read_keyed_u64(cg->v2.fd, "cpu.stat", "usage_usec", &s.cpu_usage_usec);
		if (r < 0 && r != -ENOENT)
			return r;
	} else {
		for (size_t i = 0; i < cg->n_v1; i++) {
			uint64_t ns;

			if (cg->v1[i].fd < 0 || !cg->v1[i].cpuacct)
				continue;
			r = read_u64_at(cg->v1[i].fd, "cpuacct.usage", &ns);
			if (r < 0)
				return r;
			s.cpu_usage_usec = ns / 1000;
			break;
		}
	}
	*ret = s;
	return 0;
}

int cordon_cgroup_delegate(const struct cordon_cgroup *cg, uid_t uid, gid_t gid)
{
	/* The files cgroup-v2.rst names for delegation: the directory, and
	 * cgroup.procs, cgroup.threads and cgroup.subtree_control in it. */
	static const char *const files[] = { "cgroup.procs", "cgroup.threads", "cgroup.subtree_control" };

	int r;

	if (!cg || cg->v2.fd < 0)
		return -EBADF;
	/* Bound what the delegate can build below the instance before it
	 * gets write access: these two files stay root's, and teardown walks
	 * at most TREE_MAX_DEPTH levels. */
	r = cg_write_u64_at(cg->v2.fd, "cgroup.max.depth", DELEGATE_MAX_DEPTH);
	if (r < 0)
		return r;
	r = cg_write_u64_at(cg->v2.fd, "cgroup.max.descendants", DELEGATE_MAX_DESCENDANTS);
	if (r < 0)
		return r;
	if (fchown(cg->v2.fd, uid, gid) < 0)
		return -errno;
	for (size_t i = 0; i < ELEMENTSOF(files); i++)
		if (fchownat(cg->v2.fd, files[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	return 0;
}
