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
#include "cgroup.h"

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

#define CORDON_PARENT	"cordon"
#define CPU_PERIOD_USEC 100000ULL
/* The kernel refuses a CFS quota below 1 ms. */
#define CPU_QUOTA_MIN_USEC 1000ULL
#define NAME_MAX_LEN	   64
#define KILL_TIMEOUT_MSEC  5000
#define PROCS_MAX_BYTES	   (1024 * 1024)
#define TREE_MAX_DEPTH	   16
/* Limits on job cgroups a delegated worker may create below its instance. */
#define DELEGATE_MAX_DEPTH	 4
#define DELEGATE_MAX_DESCENDANTS 256

/* Controllers this module applies limits with. */
#define HANDLED_CTRLS ((1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU))

/* One directory of the instance in one hierarchy. */
struct hdir {
	unsigned ctrls; /* 1 << CORDON_CTRL_* applied through this directory */
	char *mount;	/* mount point of the hierarchy */
	char *parent;	/* <base>/cordon */
	char *path;	/* <base>/cordon/<dirname> */
	int fd;		/* O_DIRECTORY of path */
	int procs_fd;	/* O_WRONLY cgroup.procs, for enter() in the child */
	bool created;	/* we made `path` (so we remove it) */
	bool cpuacct;	/* has cpuacct.usage (v1 CPU time) */
};

struct cordon_cgroup {
	struct hdir v2; /* v2.fd < 0 when there is no cgroup2 directory */
	struct hdir v1[_CORDON_CTRL_MAX];
	size_t n_v1;
	bool placed_by_clone; /* clone3(CLONE_INTO_CGROUP) put the child in v2 */
	bool use_kill;	      /* the v2 directory has cgroup.kill */
	char dirname[NAME_MAX_LEN + 64];
	/* CORDON_CGROUP_DEFER_V1: what cordon_cgroup_complete() needs. */
	struct proc_view *pending_pv; /* non-NULL while the v1 part is pending */
	struct cordon_cgroup_limits pending_lim;
	unsigned pending_required;
};

static void hdir_init(struct hdir *h)
{
	*h = (struct hdir){.fd = -EBADF, .procs_fd = -EBADF};
}

static void hdir_free(struct hdir *h)
{
	if (h->procs_fd >= 0)
		(void)close(h->procs_fd);
	if (h->fd >= 0)
		(void)close(h->fd);
	free(h->mount);
	free(h->parent);
	free(h->path);
	hdir_init(h);
}

static struct cordon_cgroup *cg_new(void)
{
	struct cordon_cgroup *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return NULL;
	hdir_init(&cg->v2);
	for (size_t i = 0; i < ELEMENTSOF(cg->v1); i++)
		hdir_init(&cg->v1[i]);
	return cg;
}

static void proc_view_free(struct proc_view *pv);

static void cg_free(struct cordon_cgroup *cg)
{
	if (!cg)
		return;
	proc_view_free(cg->pending_pv);
	hdir_free(&cg->v2);
	for (size_t i = 0; i < ELEMENTSOF(cg->v1); i++)
		hdir_free(&cg->v1[i]);
	free(cg);
}

static bool name_is_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-'))
			return false;
	return n <= NAME_MAX_LEN;
}

static uint64_t now_msec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_msec(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Start time of a process in clock ticks since boot (field 22 of
 * /proc/<pid>/stat) and whether it has exited (state Z or X: a zombie
 * nobody reaped yet). -ENOENT when there is no such process. */
static int proc_starttime(pid_t pid, uint64_t *ret, bool *ret_dead)
{
	char path[64], buf[2048], *p, *tok, *save = NULL;
	bool dead;
	ssize_t n;
	uint64_t v;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = read_small_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* comm may contain spaces and parentheses: fields resume after the
	 * last ')'. Field 3 (state) is the first token there. */
	p = strrchr(buf, ')');
	if (!p)
		return -EBADMSG;
	p++;
	tok = strtok_r(p, " ", &save);
	if (!tok)
		return -EBADMSG;
	dead = strcmp(tok, "Z") == 0 || strcmp(tok, "X") == 0;
	for (int field = 3; tok && field < 22; field++)
		tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_u64(tok, &v) < 0)
		return -EBADMSG;
	*ret = v;
	if (ret_dead)
		*ret_dead = dead;
	return 0;
}

/* /proc/self/cgroup and /proc/self/mountinfo, read once per create() or
 * cleanup_stale() rather than once per hierarchy. */
struct proc_view {
	char *cgroup;
	char *mountinfo;
};

static void proc_view_done(struct proc_view *pv);

static void proc_view_free(struct proc_view *pv)
{
	if (!pv)
		return;
	proc_view_done(pv);
	free(pv);
}

static void proc_view_done(struct proc_view *pv)
{
	free(pv->cgroup);
	free(pv->mountinfo);
	*pv = (struct proc_view){0};
}

/* The mount table changes rarely and the kernel says when it did: a poll()
 * of an open /proc/self/mountinfo reports POLLPRI|POLLERR once after every
 * change since the fd was opened or last polled. So it is read again only
 * then, not on every create() (reading it formats every mount). Per
 * process: a forked copy opens its own. */
static pthread_mutex_t mountinfo_lock = PTHREAD_MUTEX_INITIALIZER;
static int mountinfo_fd = -EBADF;
static pid_t mountinfo_pid;
static char *mountinfo_text;

static int mountinfo_reread(void)
{
	size_t size = 16384, len = 0;
	_cleanup_free_ char *buf = NULL;

	if (lseek(mountinfo_fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (len + 1 >= size) {
			char *nb;

			if (size >= 4 * 1024 * 1024)
				return -EFBIG;
			size *= 2;
			nb = realloc(buf, size);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		} else if (!buf) {
			buf = malloc(size);
			if (!buf)
				return -ENOMEM;
		}
		n = read(mountinfo_fd, buf + len, size - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	free(mountinfo_text);
	mountinfo_text = TAKE_PTR(buf);
	return 0;
}

static int mountinfo_copy(char **ret)
{
	struct pollfd p = {.events = POLLPRI};
	char *copy;
	int r = 0;

	pthread_mutex_lock(&mountinfo_lock);
	if (mountinfo_fd >= 0 && mountinfo_pid != getpid()) {
		(void)close(mountinfo_fd); /* a forked copy's */
		mountinfo_fd = -EBADF;
	}
	if (mountinfo_fd < 0) {
		free(mountinfo_text);
		mountinfo_text = NULL;
		mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (mountinfo_fd < 0) {
			r = -errno;
			goto out;
		}
		mountinfo_pid = getpid();
		r = mountinfo_reread();
	} else {
		p.fd = mountinfo_fd;
		if (poll(&p, 1, 0) != 0 || !mountinfo_text)
			r = mountinfo_reread(); /* changed (or poll failed): read it again */
	}
	if (r < 0) {
		(void)close(mountinfo_fd);
		mountinfo_fd = -EBADF;
		goto out;
	}
	copy = strdup(mountinfo_text);
	if (!copy)
		r = -ENOMEM;
	else
		*ret = copy;
out:
	pthread_mutex_unlock(&mountinfo_lock);
	return r;
}

static int proc_view_load(struct proc_view *pv)
{
	int r;

	*pv = (struct proc_view){0};
	r = read_file_bounded(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, &pv->cgroup, NULL);
	if (r < 0)
		return r;
	r = mountinfo_copy(&pv->mountinfo);
	if (r < 0) {
		proc_view_done(pv);
		return r;
	}
	return 0;
}

/* The launcher's own cgroup path in one hierarchy, from /proc/self/cgroup:
 * ctrl NULL for the cgroup2 line ("0::/path"), else the v1 line whose
 * controller list names ctrl. */
static int own_cgroup_path(const struct proc_view *pv, const char *ctrl, char **ret)
{
	_cleanup_free_ char *buf = strdup(pv->cgroup);
	char *line, *save = NULL;

	if (!buf)
		return -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2, *path;
		bool match = false;

		if (!c1)
			continue;
		c2 = strchr(c1 + 1, ':');
		if (!c2)
			continue;
		*c2 = '\0';
		path = c2 + 1;
		if (!ctrl) {
			match = strncmp(line, "0:", 2) == 0 && c1[1] == '\0';
		} else {
			char *tok, *s2 = NULL;

			for (tok = strtok_r(c1 + 1, ",", &s2); tok; tok = strtok_r(NULL, ",", &s2))
				if (strcmp(tok, ctrl) == 0)
					match = true;
		}
		if (match) {
			if (path[0] != '/')
				return -EBADMSG;
			*ret = strdup(path);
			return *ret ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

/* The root (field 4 of mountinfo) of the mount at `mount`: a hierarchy may be
 * mounted from a sub-cgroup (containers without a cgroup namespace), and
 * /proc/self/cgroup paths are then relative to the hierarchy's real root. */
static int mount_root(const struct proc_view *pv, const char *mount, char **ret)
{
	_cleanup_free_ char *buf = strdup(pv->mountinfo);
	char *line, *save = NULL;

	if (!buf)
		return -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[5], *s2 = NULL;
		int i;

		f[0] = strtok_r(line, " ", &s2);
		for (i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &s2);
		if (i < 5 || !f[4])
			continue;
		/* Mount points with spaces are octal-escaped; cgroup mounts
		 * never have them, so a plain comparison is enough. */
		if (strcmp(f[4], mount) == 0) {
			*ret = strdup(f[3]);
			return *ret ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

/* <mount> + own cgroup path (made relative to the mount's root). */
static int hierarchy_base(const struct proc_view *pv, const char *mount, const char *ctrl, char **ret)
{
	_cleanup_free_ char *own = NULL, *root = NULL;
	const char *rel;
	size_t rl;
	char *s;
	int r;

	r = own_cgroup_path(pv, ctrl, &own);
	if (r < 0)
		return r;
	if (mount_root(pv, mount, &root) < 0 || strcmp(root, "/") == 0) {
		rel = own;
	} else {
		rl = strlen(root);
		if (strncmp(own, root, rl) == 0 && (own[rl] == '/' || own[rl] == '\0'))
			rel = own + rl;
		else
			rel = "/"; /* our cgroup is outside what is mounted */
	}
	while (*rel == '/')
		rel++;
	if (asprintf(&s, "%s%s%s", mount, *rel ? "/" : "", rel) < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}

static bool path_is_strictly_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strncmp(path, top, n) == 0 && path[n] == '/';
}

static int parent_path(const char *path, char **ret)
{
	const char *slash = strrchr(path, '/');
	char *s;

	if (!slash || slash == path)
		return -EINVAL;
	s = strndup(path, (size_t)(slash - path));
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* Reads a "key value" line from a flat-keyed cgroup file. */
static int read_keyed_u64(int dirfd, const char *file, const char *key, uint64_t *ret)
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

static int write_u64_at(int dirfd, const char *file, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	return write_small_file_at(dirfd, file, s);
}

/* The controllers listed in a space-separated cgroup2 file. */
static bool v2_list_has(int dirfd, const char *file, const char *ctrl)
{
	_cleanup_free_ char *buf = NULL;
	char *tok, *save = NULL;

	if (read_file_bounded(dirfd, file, 4096, &buf, NULL) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (strcmp(tok, ctrl) == 0)
			return true;
	return false;
}

/* Enables the controllers in `ctrls` (1 << CORDON_CTRL_*) for the children
 * of `dir`. The kernel takes a space-separated list in one write, so the
 * common case costs one write; when that fails, each controller is tried on
 * its own to learn which one fails and why (errs[c], positive errno, 0 =
 * enabled). Returns -EBUSY without trying one by one when the directory
 * holds processes (the no-internal-processes rule), -errno when the
 * directory cannot be opened, else 0. */
static int v2_enable_set(const char *dir, unsigned ctrls, int errs[static _CORDON_CTRL_MAX])
{
	_cleanup_close_ int fd = -EBADF;
	char list[128] = "";
	unsigned todo = 0;
	int r;

	fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		const char *n = cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)c);

		errs[c] = 0;
		if (!(ctrls & (1u << c)) || v2_list_has(fd, "cgroup.subtree_control", n))
			continue;
		if (!v2_list_has(fd, "cgroup.controllers", n)) {
			errs[c] = EOPNOTSUPP;
			continue;
		}
		todo |= 1u << c;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s+%s", list[0] ? " " : "", n);
	}
	if (!todo)
		return 0;
	r = write_small_file_at(fd, "cgroup.subtree_control", list);
	if (r >= 0 || r == -EBUSY)
		return r;
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		char one[32];

		if (!(todo & (1u << c)))
			continue;
		snprintf(one, sizeof(one), "+%s", cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)c));
		r = write_small_file_at(fd, "cgroup.subtree_control", one);
		errs[c] = r < 0 ? -r : 0;
	}
	return 0;
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
	r = read_keyed_u64(fd, "cgroup.events", "populated", &v);
	if (r == -ENOENT || r == -ENODEV)
		return false;
	if (r < 0)
		return true;
	return v != 0;
}

static bool cg_empty(const struct cordon_cgroup *cg)
{
	struct pidset s = {0};
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
		ts = (struct timespec){.tv_sec = 0, .tv_nsec = step_ns};
		if (ev >= 0) {
			struct pollfd p = {.fd = ev, .events = POLLPRI};
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
			if (read_keyed_u64(cg->v2.fd, "cgroup.events", "frozen", &v) < 0 || v == 1)
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
	struct pidset first = {0}, second = {0};
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

static int cg_teardown(struct cordon_cgroup *cg)
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

/* ---- Creation --------------------------------------------------------- */

static const char *ctrl_name(unsigned c)
{
	return cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)c);
}

/* Creates <parent> (shared, may exist) and <parent>/<dirname>, retrying
 * when a concurrent launcher removed the empty parent between the two
 * mkdirs. For cgroup2, enables v2_ctrls for the parent's children; errs[c]
 * says which failed. Opens the directory and its cgroup.procs. */
static int make_instance_dir(struct hdir *h, unsigned v2_ctrls, int errs[static _CORDON_CTRL_MAX])
{
	int r;

	for (int attempt = 0;; attempt++) {
		if (mkdir(h->parent, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (v2_ctrls) {
			r = v2_enable_set(h->parent, v2_ctrls, errs);
			if (r < 0 && r != -ENOENT)
				return r;
		}
		if (mkdir(h->path, 0755) >= 0) {
			h->created = true;
			break;
		}
		if (errno != ENOENT || attempt == 4)
			return -errno;
	}
	h->fd = open(h->path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->procs_fd = openat(h->fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (h->procs_fd < 0) {
		r = -errno;
		(void)close(h->fd);
		h->fd = -EBADF;
		return r;
	}
	return 0;
}

/* A launcher's own directory in the cgroup2 hierarchy,
 * <base>/cordon/g-<pid>-<start>, holding its instances' cgroup2 directories
 * (see cordon_cgroup_group_new()). */
struct cordon_cgroup_group {
	char *parent; /* <base>/cordon */
	char *path;   /* <base>/cordon/g-<pid>-<start> */
	char *mount;
	int fd;
	unsigned want;			   /* v2 controllers meant to reach the instances */
	int errs[_CORDON_CTRL_MAX];	   /* why one of them could not be enabled */
	char *err_where[_CORDON_CTRL_MAX]; /* ... in which directory's subtree_control */
};

struct create_ctx {
	const struct cordon_caps *caps;
	const struct cordon_cgroup_group *group;
	const struct cordon_cgroup_limits *lim;
	unsigned required;
	unsigned missing;
	struct cordon_diag *diag;
	struct proc_view pv;
};

static bool limit_requested(const struct cordon_cgroup_limits *lim, unsigned c)
{
	switch (c) {
	case CORDON_CTRL_MEMORY:
		return lim->mem_bytes > 0;
	case CORDON_CTRL_PIDS:
		return lim->pids_max > 0;
	case CORDON_CTRL_CPU:
		return lim->cpu_micro > 0;
	}
	return false;
}

/* Records a controller that could not be applied: fatal when required
 * (err is a positive errno). */
static int ctrl_failed(struct create_ctx *x, unsigned c, int err, const char *what, const char *where)
{
	if (x->required & (1u << c))
		return cordon_diag_set(x->diag, err, "cgroup", "cgroup controller %s: %s%s: %s", ctrl_name(c), what,
				       where, strerror(err));
	if (limit_requested(x->lim, c))
		x->missing |= 1u << c;
	return 0;
}

static uint64_t cpu_quota_usec(uint64_t cpu_micro)
{
	/* cpu_micro CPUs-in-millionths over a 100 ms period: quota =
	 * cpu_micro * 100000 / 1000000. */
	uint64_t q = cpu_micro / 10;

	return q < CPU_QUOTA_MIN_USEC ? CPU_QUOTA_MIN_USEC : q;
}

/* Writes one controller's limits into a v2 directory. */
static int write_v2_limits(int fd, unsigned c, const struct cordon_cgroup_limits *lim, const char **ret_file)
{
	char s[64];
	int r;

	switch (c) {
	case CORDON_CTRL_MEMORY:
		if (!lim->mem_bytes)
			return 0;
		*ret_file = "memory.max";
		r = write_u64_at(fd, "memory.max", lim->mem_bytes);
		if (r < 0)
			return r;
		/* No swap: a connector over its limit is OOM-killed rather
		 * than slowly paged out. The file is absent without swap
		 * accounting, where there is nothing to limit. */
		*ret_file = "memory.swap.max";
		r = write_small_file_at(fd, "memory.swap.max", "0");
		return r == -ENOENT ? 0 : r;
	case CORDON_CTRL_PIDS:
		if (!lim->pids_max)
			return 0;
		*ret_file = "pids.max";
		return write_u64_at(fd, "pids.max", lim->pids_max);
	case CORDON_CTRL_CPU:
		if (!lim->cpu_micro)
			return 0;
		*ret_file = "cpu.max";
		snprintf(s, sizeof(s), "%" PRIu64 " %llu", cpu_quota_usec(lim->cpu_micro), CPU_PERIOD_USEC);
		return write_small_file_at(fd, "cpu.max", s);
	}
	return 0;
}

/* Writes one controller's limits into its v1 directory. */
static int write_v1_limits(int fd, unsigned c, const struct cordon_cgroup_limits *lim, const char **ret_file)
{
	int r;

	switch (c) {
	case CORDON_CTRL_MEMORY:
		/* Keep the OOM killer on (a paused, over-limit connector would
		 * hang its client instead of failing). */
		*ret_file = "memory.oom_control";
		r = write_small_file_at(fd, "memory.oom_control", "0");
		if (r < 0)
			return r;
		if (!lim->mem_bytes)
			return 0;
		*ret_file = "memory.limit_in_bytes";
		r = write_u64_at(fd, "memory.limit_in_bytes", lim->mem_bytes);
		if (r < 0)
			return r;
		/* memory+swap equal to memory: no swap. memsw must not be
		 * below limit_in_bytes, hence the order. Without swap
		 * accounting the file is absent; then discourage swapping. */
		*ret_file = "memory.memsw.limit_in_bytes";
		r = write_u64_at(fd, "memory.memsw.limit_in_bytes", lim->mem_bytes);
		if (r == -ENOENT)
			(void)write_small_file_at(fd, "memory.swappiness", "0");
		else if (r < 0)
			return r;
		return 0;
	case CORDON_CTRL_PIDS:
		if (!lim->pids_max)
			return 0;
		*ret_file = "pids.max";
		return write_u64_at(fd, "pids.max", lim->pids_max);
	case CORDON_CTRL_CPU:
		if (!lim->cpu_micro)
			return 0;
		*ret_file = "cpu.cfs_period_us";
		r = write_u64_at(fd, "cpu.cfs_period_us", CPU_PERIOD_USEC);
		if (r < 0)
			return r;
		*ret_file = "cpu.cfs_quota_us";
		return write_u64_at(fd, "cpu.cfs_quota_us", cpu_quota_usec(lim->cpu_micro));
	}
	return 0;
}

static unsigned v2_wanted(const struct cordon_caps *caps)
{
	unsigned want = 0;

	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if ((HANDLED_CTRLS & (1u << c)) && caps->ctrl[c].available && caps->ctrl[c].v2)
			want |= 1u << c;
	return want;
}

/* The cgroup2 directory below which "cordon" lives, with `want` enabled
 * for its children where possible (errs[c] says why not). */
static int v2_find_base(const struct proc_view *pv, const struct cordon_caps *caps, unsigned want, char **ret,
			int errs[static _CORDON_CTRL_MAX])
{
	_cleanup_free_ char *base = NULL;
	int r;

	r = hierarchy_base(pv, caps->cgroup2_mount, NULL, &base);
	if (r < 0)
		return r;
	while (want) {
		char *up;

		r = v2_enable_set(base, want, errs);
		if (r != -EBUSY || !path_is_strictly_below(base, caps->cgroup2_mount))
			break;
		r = parent_path(base, &up);
		if (r < 0)
			return r;
		free(base);
		base = up;
	}
	if (want && r < 0)
		for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
			errs[c] = (want & (1u << c)) ? -r : 0;
	*ret = TAKE_PTR(base);
	return 0;
}

static int write_v2_limits_all(struct cordon_cgroup *cg, struct create_ctx *x, unsigned want);

/* The instance's cgroup2 directory inside the launcher's group: made with
 * mkdirat() on the group's fd, so it is below the very directory the
 * caller attached its programs to (never below a look-alike made after
 * the group was removed: mkdirat in a removed cgroup fails). */
static int setup_v2_in_group(struct cordon_cgroup *cg, struct create_ctx *x)
{
	const struct cordon_cgroup_group *g = x->group;
	unsigned want = g->want;
	int r;

	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if (g->errs[c] && (want & (1u << c))) {
			want &= ~(1u << c);
			r = ctrl_failed(x, c, g->errs[c], "cannot enable in cgroup.subtree_control of ",
					g->err_where[c] ? g->err_where[c] : g->path);
			if (r < 0)
				return r;
		}
	/* parent stays NULL: the group is not removed with an instance. */
	if (asprintf(&cg->v2.path, "%s/%s", g->path, cg->dirname) < 0 || !(cg->v2.mount = strdup(g->mount)))
		return cordon_diag_set(x->diag, ENOMEM, "cgroup", "out of memory");
	if (mkdirat(g->fd, cg->dirname, 0755) < 0)
		return cordon_diag_set(x->diag, errno, "cgroup", "cannot create cgroup2 directory %s: %m", cg->v2.path);
	cg->v2.created = true;
	cg->v2.fd = openat(g->fd, cg->dirname, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (cg->v2.fd < 0)
		return cordon_diag_set(x->diag, errno, "cgroup", "cannot open %s: %m", cg->v2.path);
	cg->v2.procs_fd = openat(cg->v2.fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (cg->v2.procs_fd < 0)
		return cordon_diag_set(x->diag, errno, "cgroup", "cannot open %s/cgroup.procs: %m", cg->v2.path);
	return write_v2_limits_all(cg, x, want);
}

static int setup_v2(struct cordon_cgroup *cg, struct create_ctx *x)
{
	const struct cordon_caps *caps = x->caps;
	_cleanup_free_ char *base = NULL;
	int errs[_CORDON_CTRL_MAX] = {0};
	unsigned want = v2_wanted(caps);
	int r = 0;

	if (x->group)
		return setup_v2_in_group(cg, x);
	r = hierarchy_base(&x->pv, caps->cgroup2_mount, NULL, &base);
	if (r < 0)
		return cordon_diag_set(x->diag, -r, "cgroup", "cannot find own cgroup2 path: %s", strerror(-r));

	/* Enable the controllers for the children of our own cgroup. When it
	 * holds processes (EBUSY) use its parent, as delegated service cgroups
	 * put the supervisor into a leaf of their own. */
	while (want) {
		char *up;

		r = v2_enable_set(base, want, errs);
		if (r != -EBUSY || !path_is_strictly_below(base, caps->cgroup2_mount))
			break;
		r = parent_path(base, &up);
		if (r < 0)
			return cordon_diag_set(x->diag, -r, "cgroup", "bad cgroup path %s", base);
		free(base);
		base = up;
	}
	if (want && r < 0)
		/* The base itself is unusable (not writable, still busy):
		 * every controller failed with that error. */
		for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
			errs[c] = (want & (1u << c)) ? -r : 0;
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if (errs[c] && (want & (1u << c))) {
			want &= ~(1u << c);
			r = ctrl_failed(x, c, errs[c], "cannot enable in cgroup.subtree_control of ", base);
			if (r < 0)
				return r;
		}

	if (asprintf(&cg->v2.parent, "%s/" CORDON_PARENT, base) < 0 ||
	    asprintf(&cg->v2.path, "%s/%s", cg->v2.parent, cg->dirname) < 0 ||
	    !(cg->v2.mount = strdup(caps->cgroup2_mount)))
		return cordon_diag_set(x->diag, ENOMEM, "cgroup", "out of memory");

	memset(errs, 0, sizeof(errs));
	r = make_instance_dir(&cg->v2, want, errs);
	if (r < 0)
		return cordon_diag_set(x->diag, -r, "cgroup", "cannot create cgroup2 directory %s: %s", cg->v2.path,
				       strerror(-r));
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if (errs[c] && (want & (1u << c))) {
			want &= ~(1u << c);
			r = ctrl_failed(x, c, errs[c], "cannot enable in cgroup.subtree_control of ", cg->v2.parent);
			if (r < 0)
				return r;
		}
	return write_v2_limits_all(cg, x, want);
}

static int write_v2_limits_all(struct cordon_cgroup *cg, struct create_ctx *x, unsigned want)
{
	int r;

	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		const char *file = "";

		if (!(want & (1u << c)))
			continue;
		r = write_v2_limits(cg->v2.fd, c, x->lim, &file);
		if (r < 0) {
			if (x->required & (1u << c))
				return cordon_diag_set(x->diag, -r, "cgroup",
						       "cgroup controller %s: cannot write %s/%s: %s", ctrl_name(c),
						       cg->v2.path, file, strerror(-r));
			if (limit_requested(x->lim, c))
				x->missing |= 1u << c;
			continue;
		}
		cg->v2.ctrls |= 1u << c;
	}
	return 0;
}

/* Finds or makes the instance directory in the v1 hierarchy mounted at
 * `mount`; `ctrl` names a controller of that hierarchy as /proc/self/cgroup
 * lists it. Controllers mounted together (cpu,cpuacct) share one directory.
 * *ret_h is set even on failure (with fd < 0) when an entry was used, so
 * that teardown removes a partly made directory. */
static int v1_dir(struct cordon_cgroup *cg, struct create_ctx *x, const char *mount, const char *ctrl,
		  struct hdir **ret_h)
{
	_cleanup_free_ char *base = NULL;
	int errs[_CORDON_CTRL_MAX];
	struct hdir *h;
	int r;

	*ret_h = NULL;
	for (size_t i = 0; i < cg->n_v1; i++)
		if (strcmp(cg->v1[i].mount, mount) == 0) {
			*ret_h = &cg->v1[i];
			return cg->v1[i].fd >= 0 ? 0 : -EBADF;
		}
	if (cg->n_v1 >= ELEMENTSOF(cg->v1))
		return -E2BIG;
	r = hierarchy_base(&x->pv, mount, ctrl, &base);
	if (r < 0)
		return r;
	h = &cg->v1[cg->n_v1];
	if (!(h->mount = strdup(mount)) || asprintf(&h->parent, "%s/" CORDON_PARENT, base) < 0 ||
	    asprintf(&h->path, "%s/%s", h->parent, cg->dirname) < 0)
		return -ENOMEM;
	/* Counted before mkdir so a partly made directory is removed on
	 * failure. */
	cg->n_v1++;
	*ret_h = h;
	return make_instance_dir(h, 0, errs);
}

static int setup_v1(struct cordon_cgroup *cg, struct create_ctx *x, unsigned c)
{
	const char *mount = x->caps->ctrl[c].path;
	const char *file = "";
	struct hdir *h;
	int r;

	r = v1_dir(cg, x, mount, ctrl_name(c), &h);
	if (r < 0) {
		if (r == -ENOMEM)
			return cordon_diag_set(x->diag, ENOMEM, "cgroup", "out of memory");
		if (x->required & (1u << c))
			return cordon_diag_set(x->diag, -r, "cgroup", "cgroup controller %s: cannot set up %s: %s",
					       ctrl_name(c), h ? h->path : mount, strerror(-r));
		if (limit_requested(x->lim, c))
			x->missing |= 1u << c;
		return 0;
	}
	r = write_v1_limits(h->fd, c, x->lim, &file);
	if (r < 0) {
		if (x->required & (1u << c))
			return cordon_diag_set(x->diag, -r, "cgroup", "cgroup controller %s: cannot write %s/%s: %s",
					       ctrl_name(c), h->path, file, strerror(-r));
		if (limit_requested(x->lim, c))
			x->missing |= 1u << c;
		return 0;
	}
	h->ctrls |= 1u << c;
	return 0;
}

/* Mount point of the v1 hierarchy that has controller `ctrl`, from
 * mountinfo ("... - cgroup <source> rw,cpuacct"). */
static int find_v1_mount(const struct proc_view *pv, const char *ctrl, char **ret)
{
	_cleanup_free_ char *buf = strdup(pv->mountinfo);
	char *line, *save = NULL;

	if (!buf)
		return -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *dash = strstr(line, " - "), *f[5], *s2 = NULL, *fstype, *opts, *tok, *s3 = NULL;
		int i;

		if (!dash)
			continue;
		*dash = '\0';
		f[0] = strtok_r(line, " ", &s2);
		for (i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &s2);
		if (i < 5 || !f[4])
			continue;
		fstype = strtok_r(dash + 3, " ", &s3);
		if (!fstype || strcmp(fstype, "cgroup") != 0 || !strtok_r(NULL, " ", &s3))
			continue;
		opts = strtok_r(NULL, " ", &s3);
		for (tok = opts ? strtok_r(opts, ",", &s2) : NULL; tok; tok = strtok_r(NULL, ",", &s2))
			if (strcmp(tok, ctrl) == 0) {
				*ret = strdup(f[4]);
				return *ret ? 0 : -ENOMEM;
			}
	}
	return -ENOENT;
}

/* Without a cgroup2 directory, CPU time comes from v1 cpuacct. When cpuacct
 * is not mounted with cpu it has a hierarchy of its own, and the instance
 * gets a directory there too, for the statistic only (best effort). */
static void setup_cpuacct(struct cordon_cgroup *cg, struct create_ctx *x)
{
	_cleanup_free_ char *mount = NULL;
	struct hdir *h;

	/* Only alongside other v1 directories: an instance that has none
	 * (no cgroups usable at all) gets nothing. */
	if (cg->v2.fd >= 0 || cg->n_v1 == 0)
		return;
	for (size_t i = 0; i < cg->n_v1; i++)
		if (cg->v1[i].fd >= 0 && faccessat(cg->v1[i].fd, "cpuacct.usage", F_OK, 0) >= 0) {
			cg->v1[i].cpuacct = true;
			return;
		}
	if (find_v1_mount(&x->pv, "cpuacct", &mount) < 0)
		return;
	if (v1_dir(cg, x, mount, "cpuacct", &h) >= 0 && faccessat(h->fd, "cpuacct.usage", F_OK, 0) >= 0)
		h->cpuacct = true;
}

/* The v1 hierarchies and the bookkeeping after them (second half of
 * create, or cordon_cgroup_complete()). Frees nothing on failure. */
static int setup_rest(struct cordon_cgroup *cg, struct create_ctx *x)
{
	const struct cordon_caps *caps = x->caps;
	int r;

	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		if (!(HANDLED_CTRLS & (1u << c)) || !caps->ctrl[c].available || caps->ctrl[c].v2)
			continue;
		r = setup_v1(cg, x, c);
		if (r < 0)
			return r;
	}
	setup_cpuacct(cg, x);
	/* Controllers we wanted that the kernel does not have at all. */
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if ((HANDLED_CTRLS & (1u << c)) && !caps->ctrl[c].available && limit_requested(x->lim, c))
			x->missing |= 1u << c;
	return 0;
}

int cordon_cgroup_complete(const struct cordon_caps *caps, struct cordon_cgroup *cg, unsigned *ret_missing,
			   struct cordon_diag *reterr_diag)
{
	struct create_ctx x = {.caps = caps, .lim = NULL, .diag = reterr_diag};
	int r;

	if (!caps || !cg)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing argument");
	if (!cg->pending_pv) {
		if (ret_missing)
			*ret_missing = 0;
		return 0;
	}
	x.lim = &cg->pending_lim;
	x.required = cg->pending_required;
	x.pv = *cg->pending_pv;
	r = setup_rest(cg, &x);
	if (r < 0)
		return r;		/* the caller destroys cg, which removes what was made */
	free(TAKE_PTR(cg->pending_pv)); /* its strings were moved into x.pv */
	proc_view_done(&x.pv);
	if (ret_missing)
		*ret_missing = x.missing;
	return 0;
}

static int create_impl(const struct cordon_caps *caps, const struct cordon_cgroup_group *group, pid_t owner,
		       const char *name, const struct cordon_cgroup_limits *lim, unsigned required, unsigned flags,
		       struct cordon_cgroup **ret, unsigned *ret_missing, struct cordon_diag *reterr_diag)
{
	struct cordon_cgroup *cg;
	struct create_ctx x = {.caps = caps, .group = group, .lim = lim, .required = required, .diag = reterr_diag};
	uint64_t start;
	int r;

	if (!caps || !lim || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing argument");
	if (!name_is_valid(name))
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup",
				       "invalid instance name '%.64s' (want [a-z0-9-], 1-%d characters)",
				       name ? name : "", NAME_MAX_LEN);
	if (owner <= 0)
		owner = getpid();

	/* Refuse up front what cannot work, before anything is created. */
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		if (!(required & (1u << c)))
			continue;
		if (!(HANDLED_CTRLS & (1u << c)))
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, "cgroup",
					       "cgroup controller %s: cordon applies no limits with it", ctrl_name(c));
		if (!caps->ctrl[c].available || (caps->ctrl[c].v2 && !caps->cgroup2_mount[0]))
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, "cgroup",
					       "cgroup controller %s: not available on this kernel (%s)", ctrl_name(c),
					       strerror(EOPNOTSUPP));
	}
	if (required & ~((1u << _CORDON_CTRL_MAX) - 1))
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "unknown controller bits 0x%x", required);

	r = proc_starttime(owner, &start, NULL);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read start time of owner pid %d: %s",
				       (int)owner, strerror(-r));

	r = proc_view_load(&x.pv);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read /proc/self/cgroup or mountinfo: %s",
				       strerror(-r));
	cg = cg_new();
	if (!cg) {
		proc_view_done(&x.pv);
		return cordon_diag_set(reterr_diag, ENOMEM, "cgroup", "out of memory");
	}
	snprintf(cg->dirname, sizeof(cg->dirname), "i-%d-%" PRIu64 "-%s", (int)owner, start, name);

	if (caps->cgroup2_mount[0] && caps->cgroup_layout != CORDON_CGROUP_NONE &&
	    caps->cgroup_layout != CORDON_CGROUP_V1) {
		r = setup_v2(cg, &x);
		if (r < 0)
			goto fail;
	}
	if (flags & CORDON_CGROUP_DEFER_V1) {
		cg->pending_pv = malloc(sizeof(*cg->pending_pv));
		if (!cg->pending_pv) {
			r = cordon_diag_set(reterr_diag, ENOMEM, "cgroup", "out of memory");
			goto fail;
		}
		*cg->pending_pv = x.pv; /* moved: complete() frees it */
		x.pv = (struct proc_view){0};
		cg->pending_lim = *lim;
		cg->pending_required = required;
	} else {
		r = setup_rest(cg, &x);
		if (r < 0)
			goto fail;
	}

	cg->use_kill = caps->cgroup_kill && cg->v2.fd >= 0 && faccessat(cg->v2.fd, "cgroup.kill", F_OK, 0) >= 0;
	cg->placed_by_clone = caps->clone_into_cgroup && cg->v2.fd >= 0;
	proc_view_done(&x.pv);
	*ret = cg;
	if (ret_missing)
		*ret_missing = x.missing;
	return 0;
fail:
	proc_view_done(&x.pv);
	(void)cg_teardown(cg);
	return r;
}

int cordon_cgroup_create_owned(const struct cordon_caps *caps, pid_t owner, const char *name,
			       const struct cordon_cgroup_limits *lim, unsigned required, struct cordon_cgroup **ret,
			       unsigned *ret_missing, struct cordon_diag *reterr_diag)
{
	return create_impl(caps, NULL, owner, name, lim, required, 0, ret, ret_missing, reterr_diag);
}

int cordon_cgroup_create(const struct cordon_caps *caps, const char *name, const struct cordon_cgroup_limits *lim,
			 unsigned required, struct cordon_cgroup **ret, unsigned *ret_missing,
			 struct cordon_diag *reterr_diag)
{
	return create_impl(caps, NULL, 0, name, lim, required, 0, ret, ret_missing, reterr_diag);
}

int cordon_cgroup_create_ex(const struct cordon_caps *caps, const struct cordon_cgroup_group *group, const char *name,
			    const struct cordon_cgroup_limits *lim, unsigned required, unsigned flags,
			    struct cordon_cgroup **ret, unsigned *ret_missing, struct cordon_diag *reterr_diag)
{
	if (flags & ~(unsigned)CORDON_CGROUP_DEFER_V1)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "unknown flags 0x%x", flags);
	return create_impl(caps, group, 0, name, lim, required, flags, ret, ret_missing, reterr_diag);
}

int cordon_cgroup_create_in_group(const struct cordon_caps *caps, const struct cordon_cgroup_group *group,
				  const char *name, const struct cordon_cgroup_limits *lim, unsigned required,
				  struct cordon_cgroup **ret, unsigned *ret_missing, struct cordon_diag *reterr_diag)
{
	if (!group)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing group");
	return create_impl(caps, group, 0, name, lim, required, 0, ret, ret_missing, reterr_diag);
}

/* ---- The launcher's group ---------------------------------------------- */

void cordon_cgroup_group_free(struct cordon_cgroup_group *g)
{
	if (!g)
		return;
	if (g->fd >= 0)
		(void)close(g->fd);
	/* Empty by now unless instances outlive the group object (then EBUSY:
	 * it stays, and a later launcher's stale cleanup removes it). */
	if (g->path)
		(void)rmdir(g->path);
	if (g->parent)
		(void)rmdir(g->parent);
	free(g->parent);
	free(g->path);
	free(g->mount);
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		free(g->err_where[c]);
	free(g);
}

static void group_note_errs(struct cordon_cgroup_group *g, const int errs[static _CORDON_CTRL_MAX], const char *where)
{
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if (errs[c] && (g->want & (1u << c)) && !g->errs[c]) {
			g->errs[c] = errs[c];
			g->err_where[c] = strdup(where);
		}
}

int cordon_cgroup_group_new(const struct cordon_caps *caps, struct cordon_cgroup_group **ret,
			    struct cordon_diag *reterr_diag)
{
	struct cordon_cgroup_group *g = NULL;
	_cleanup_free_ char *base = NULL;
	struct proc_view pv;
	struct hdir h;
	int errs[_CORDON_CTRL_MAX] = {0};
	uint64_t start;
	int r;

	if (!caps || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing argument");
	if (!caps->cgroup2_mount[0] || caps->cgroup_layout == CORDON_CGROUP_NONE ||
	    caps->cgroup_layout == CORDON_CGROUP_V1)
		return cordon_diag_set(reterr_diag, EOPNOTSUPP, "cgroup", "no cgroup2 hierarchy");
	r = proc_starttime(getpid(), &start, NULL);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read own start time: %s", strerror(-r));
	r = proc_view_load(&pv);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read /proc/self/cgroup or mountinfo: %s",
				       strerror(-r));
	g = calloc(1, sizeof(*g));
	if (!g) {
		proc_view_done(&pv);
		return -ENOMEM;
	}
	g->fd = -EBADF;
	g->want = v2_wanted(caps);
	r = v2_find_base(&pv, caps, g->want, &base, errs);
	proc_view_done(&pv);
	if (r < 0) {
		cordon_cgroup_group_free(g);
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot find own cgroup2 path: %s", strerror(-r));
	}
	group_note_errs(g, errs, base);
	hdir_init(&h);
	if (asprintf(&h.parent, "%s/" CORDON_PARENT, base) < 0 ||
	    asprintf(&h.path, "%s/g-%d-%" PRIu64, h.parent, (int)getpid(), start) < 0 ||
	    !(g->mount = strdup(caps->cgroup2_mount))) {
		hdir_free(&h);
		cordon_cgroup_group_free(g);
		return cordon_diag_set(reterr_diag, ENOMEM, "cgroup", "out of memory");
	}
	memset(errs, 0, sizeof(errs));
	r = make_instance_dir(&h, g->want, errs);
	if (r < 0) {
		if (h.created)
			(void)rmdir(h.path);
		(void)rmdir(h.parent);
		cordon_diag_set(reterr_diag, -r, "cgroup", "cannot create cgroup2 directory %s: %s", h.path,
				strerror(-r));
		hdir_free(&h);
		cordon_cgroup_group_free(g);
		return r;
	}
	group_note_errs(g, errs, h.parent);
	/* Instances get their limits from the group's subtree_control. */
	if (g->want) {
		memset(errs, 0, sizeof(errs));
		(void)v2_enable_set(h.path, g->want, errs);
		group_note_errs(g, errs, h.path);
	}
	g->fd = TAKE_FD(h.fd);
	g->parent = TAKE_PTR(h.parent);
	g->path = TAKE_PTR(h.path);
	hdir_free(&h);
	*ret = g;
	return 0;
}

int cordon_cgroup_group_fd(const struct cordon_cgroup_group *g)
{
	return g ? g->fd : -EBADF;
}

const char *cordon_cgroup_group_path(const struct cordon_cgroup_group *g)
{
	return g ? g->path : NULL;
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
	struct cordon_cgroup_stats s = {0};
	bool v2;
	int fd, r;

	if (!cg || !ret)
		return -EINVAL;

	fd = ctrl_fd(cg, CORDON_CTRL_MEMORY, &v2);
	if (fd >= 0) {
		r = read_u64_at(fd, v2 ? "memory.peak" : "memory.max_usage_in_bytes", &s.mem_peak_bytes);
		if (r < 0 && r != -ENOENT)
			return r;
		r = read_keyed_u64(fd, v2 ? "memory.events" : "memory.oom_control", "oom_kill", &s.oom_kills);
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
		r = read_keyed_u64(cg->v2.fd, "cpu.stat", "usage_usec", &s.cpu_usage_usec);
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

int cordon_cgroup_delegate(const struct cordon_cgroup *cg, uid_t uid, gid_t gid)
{
	/* The files cgroup-v2.rst names for delegation: the directory, and
	 * cgroup.procs, cgroup.threads and cgroup.subtree_control in it. */
	static const char *const files[] = {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"};

	int r;

	if (!cg || cg->v2.fd < 0)
		return -EBADF;
	/* Bound what the delegate can build below the instance before it
	 * gets write access: these two files stay root's, and teardown walks
	 * at most TREE_MAX_DEPTH levels. */
	r = write_u64_at(cg->v2.fd, "cgroup.max.depth", DELEGATE_MAX_DEPTH);
	if (r < 0)
		return r;
	r = write_u64_at(cg->v2.fd, "cgroup.max.descendants", DELEGATE_MAX_DESCENDANTS);
	if (r < 0)
		return r;
	if (fchown(cg->v2.fd, uid, gid) < 0)
		return -errno;
	for (size_t i = 0; i < ELEMENTSOF(files); i++)
		if (fchownat(cg->v2.fd, files[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	return 0;
}

/* ---- Stale instances ---------------------------------------------------- */

/* Parses "i-<pid>-<start>-<name>". */
static int parse_dirname(const char *s, pid_t *ret_pid, uint64_t *ret_start)
{
	char buf[NAME_MAX_LEN + 64];
	char *p, *q;
	uint64_t pid, start;

	if (strncmp(s, "i-", 2) != 0 || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s + 2);
	p = strchr(buf, '-');
	if (!p)
		return -EINVAL;
	*p++ = '\0';
	q = strchr(p, '-');
	if (!q)
		return -EINVAL;
	*q++ = '\0';
	if (parse_u64(buf, &pid) < 0 || pid == 0 || pid > INT32_MAX || parse_u64(p, &start) < 0 || !name_is_valid(q))
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	*ret_start = start;
	return 0;
}

/* "g-<pid>-<start>": a launcher's group directory (cgroup2 only). */
static int parse_group_dirname(const char *s, pid_t *ret_pid, uint64_t *ret_start)
{
	char buf[64];
	char *p;
	uint64_t pid, start;

	if (strncmp(s, "g-", 2) != 0 || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s + 2);
	p = strchr(buf, '-');
	if (!p)
		return -EINVAL;
	*p++ = '\0';
	if (parse_u64(buf, &pid) < 0 || pid == 0 || pid > INT32_MAX || parse_u64(p, &start) < 0)
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	*ret_start = start;
	return 0;
}

static bool owner_is_gone(pid_t pid, uint64_t start)
{
	uint64_t now;
	bool dead = false;
	int r = proc_starttime(pid, &now, &dead);

	if (r == -ENOENT || r == -ESRCH)
		return true;
	if (r < 0)
		return false; /* unsure: leave it alone */
	/* Another process now has the pid, or the owner has exited and is
	 * only waiting to be reaped. */
	return now != start || dead;
}

/* The "cordon" parent directories this launcher would use: one per v1
 * hierarchy of a handled controller, and in cgroup2 both candidates
 * (own cgroup and its parent, see setup_v2). */
struct parent_list {
	char *path[_CORDON_CTRL_MAX + 2];
	bool v2[_CORDON_CTRL_MAX + 2];
	size_t n;
};

static void parent_list_add(struct parent_list *l, const char *base, bool v2)
{
	char *p;

	if (l->n >= ELEMENTSOF(l->path) || asprintf(&p, "%s/" CORDON_PARENT, base) < 0)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->path[i], p) == 0) {
			free(p);
			return;
		}
	l->path[l->n] = p;
	l->v2[l->n++] = v2;
}

static void parent_list_fill(const struct proc_view *pv, const struct cordon_caps *caps, struct parent_list *l)
{
	char *base = NULL, *up = NULL;

	if (caps->cgroup2_mount[0] && hierarchy_base(pv, caps->cgroup2_mount, NULL, &base) >= 0) {
		parent_list_add(l, base, true);
		if (path_is_strictly_below(base, caps->cgroup2_mount) && parent_path(base, &up) >= 0)
			parent_list_add(l, up, true);
		free(up);
		up = NULL;
		free(base);
	}
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		if (!(HANDLED_CTRLS & (1u << c)) || !caps->ctrl[c].available || caps->ctrl[c].v2)
			continue;
		base = NULL;
		if (hierarchy_base(pv, caps->ctrl[c].path, ctrl_name(c), &base) >= 0)
			parent_list_add(l, base, false);
		free(base);
	}
	/* The stats-only cpuacct directory of hosts without cgroup2. */
	if (find_v1_mount(pv, "cpuacct", &up) >= 0) {
		base = NULL;
		if (hierarchy_base(pv, up, "cpuacct", &base) >= 0)
			parent_list_add(l, base, false);
		free(base);
		free(up);
	}
}

static int cleanup_one(const struct parent_list *l, const char *dirname)
{
	struct cordon_cgroup *cg = cg_new();

	if (!cg)
		return -ENOMEM;
	snprintf(cg->dirname, sizeof(cg->dirname), "%s", dirname);
	for (size_t i = 0; i < l->n; i++) {
		struct hdir *h;
		char *path;
		int fd;

		if (asprintf(&path, "%s/%s", l->path[i], dirname) < 0)
			continue;
		fd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			free(path);
			continue;
		}
		h = (l->v2[i] && cg->v2.fd < 0) ? &cg->v2
						: (cg->n_v1 < ELEMENTSOF(cg->v1) ? &cg->v1[cg->n_v1++] : NULL);
		if (!h) {
			(void)close(fd);
			free(path);
			continue;
		}
		h->fd = fd;
		h->path = path;
		h->created = true;
		h->parent = strdup(l->path[i]);
	}
	cg->use_kill = cg->v2.fd >= 0 && faccessat(cg->v2.fd, "cgroup.kill", F_OK, 0) >= 0;
	return cg_teardown(cg);
}

int cordon_cgroup_cleanup_stale(const struct cordon_caps *caps)
{
	struct parent_list l = {0};
	struct proc_view pv;
	char **stale = NULL;
	size_t n_stale = 0, cap = 0;
	int r = 0, cleaned = 0;

	if (!caps)
		return -EINVAL;
	r = proc_view_load(&pv);
	if (r < 0)
		return r;
	parent_list_fill(&pv, caps, &l);
	proc_view_done(&pv);
	for (size_t i = 0; i < l.n && r >= 0; i++) {
		DIR *d = opendir(l.path[i]);
		struct dirent *de;

		if (!d)
			continue;
		while ((de = readdir(d))) {
			pid_t pid;
			uint64_t start;
			bool dup = false;

			if (de->d_type != DT_DIR)
				continue;
			/* A dead launcher's group goes whole (cgroup.kill of
			 * the subtree, then every directory below it). */
			if (parse_dirname(de->d_name, &pid, &start) < 0 &&
			    (!l.v2[i] || parse_group_dirname(de->d_name, &pid, &start) < 0))
				continue;
			if (!owner_is_gone(pid, start))
				continue;
			for (size_t k = 0; k < n_stale; k++)
				if (strcmp(stale[k], de->d_name) == 0)
					dup = true;
			if (dup)
				continue;
			if (n_stale == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				char **ns = realloc(stale, ncap * sizeof(*ns));

				if (!ns) {
					r = -ENOMEM;
					break;
				}
				stale = ns;
				cap = ncap;
			}
			if (!(stale[n_stale] = strdup(de->d_name))) {
				r = -ENOMEM;
				break;
			}
			n_stale++;
		}
		closedir(d);
	}
	for (size_t k = 0; k < n_stale; k++) {
		if (r >= 0) {
			int q = cleanup_one(&l, stale[k]);

			if (q < 0)
				r = q;
			else
				cleaned++;
		}
		free(stale[k]);
	}
	free(stale);
	for (size_t i = 0; i < l.n; i++)
		free(l.path[i]);
	return r < 0 ? r : cleaned;
}
