/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Discovery: what the host's cgroup layout is and where this process sits
 * in it. /proc/self/cgroup and the mount table (re-read only when the
 * kernel says it changed), the launcher's own path in each hierarchy, the
 * base below which "cordon" lives (pure v2, or hybrid: v1 controller
 * hierarchies plus the unified one), and enabling controllers for children
 * through cgroup.subtree_control. */
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

/* Start time of a process in clock ticks since boot (field 22 of
 * /proc/<pid>/stat) and whether it has exited (state Z or X: a zombie
 * nobody reaped yet). -ENOENT when there is no such process. */
int cg_proc_starttime(pid_t pid, uint64_t *ret, bool *ret_dead)
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

void cg_proc_view_free(struct proc_view *pv)
{
	if (!pv)
		return;
	cg_proc_view_done(pv);
	free(pv);
}

void cg_proc_view_done(struct proc_view *pv)
{
	free(pv->cgroup);
	free(pv->mountinfo);
	*pv = (struct proc_view){ 0 };
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
	struct pollfd p = { .events = POLLPRI };
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

int cg_proc_view_load(struct proc_view *pv)
{
	int r;

	*pv = (struct proc_view){ 0 };
	r = read_file_bounded(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, &pv->cgroup, NULL);
	if (r < 0)
		return r;
	r = mountinfo_copy(&pv->mountinfo);
	if (r < 0) {
		cg_proc_view_done(pv);
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
int cg_hierarchy_base(const struct proc_view *pv, const char *mount, const char *ctrl, char **ret)
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

bool cg_path_is_strictly_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strncmp(path, top, n) == 0 && path[n] == '/';
}

int cg_parent_path(const char *path, char **ret)
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
int cg_v2_enable_set(const char *dir, unsigned ctrls, int errs[static _CORDON_CTRL_MAX])
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

/* Mount point of the v1 hierarchy that has controller `ctrl`, from
 * mountinfo ("... - cgroup <source> rw,cpuacct"). */
int cg_find_v1_mount(const struct proc_view *pv, const char *ctrl, char **ret)
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

unsigned cg_v2_wanted(const struct cordon_caps *caps)
{
	unsigned want = 0;

	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++)
		if ((HANDLED_CTRLS & (1u << c)) && caps->ctrl[c].available && caps->ctrl[c].v2)
			want |= 1u << c;
	return want;
}

/* The cgroup2 directory below which "cordon" lives, with `want` enabled
 * for its children where possible (errs[c] says why not). */
int cg_v2_find_base(const struct proc_view *pv, const struct cordon_caps *caps, unsigned want, char **ret,
		    int errs[static _CORDON_CTRL_MAX])
{
	_cleanup_free_ char *base = NULL;
	int r;

	r = cg_hierarchy_base(pv, caps->cgroup2_mount, NULL, &base);
	if (r < 0)
		return r;
	while (want) {
		char *up;

		r = cg_v2_enable_set(base, want, errs);
		if (r != -EBUSY || !cg_path_is_strictly_below(base, caps->cgroup2_mount))
			break;
		r = cg_parent_path(base, &up);
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
