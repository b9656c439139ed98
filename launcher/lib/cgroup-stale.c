/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stale cleanup: instance ("i-") and group ("g-") directories under
 * "cordon" parents are named after their owner's pid and start time; one
 * whose owner no longer exists, or whose pid now belongs to a process that
 * started at another time, is killed and removed like a destroyed
 * instance. Only directories cordon made are ever touched. */
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
	if (parse_u64(buf, &pid) < 0 || pid == 0 || pid > INT32_MAX || parse_u64(p, &start) < 0 || !cg_name_is_valid(q))
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
	int r = cg_proc_starttime(pid, &now, &dead);

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

	if (caps->cgroup2_mount[0] && cg_hierarchy_base(pv, caps->cgroup2_mount, NULL, &base) >= 0) {
		parent_list_add(l, base, true);
		if (cg_path_is_strictly_below(base, caps->cgroup2_mount) && cg_parent_path(base, &up) >= 0)
			parent_list_add(l, up, true);
		free(up);
		up = NULL;
		free(base);
	}
	for (unsigned c = 0; c < _CORDON_CTRL_MAX; c++) {
		if (!(HANDLED_CTRLS & (1u << c)) || !caps->ctrl[c].available || caps->ctrl[c].v2)
			continue;
		base = NULL;
		if (cg_hierarchy_base(pv, caps->ctrl[c].path, cg_ctrl_name(c), &base) >= 0)
			parent_list_add(l, base, false);
		free(base);
	}
	/* The stats-only cpuacct directory of hosts without cgroup2. */
	if (cg_find_v1_mount(pv, "cpuacct", &up) >= 0) {
		base = NULL;
		if (cg_hierarchy_base(pv, up, "cpuacct", &base) >= 0)
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
	struct parent_list l = { 0 };
	struct proc_view pv;
	char **stale = NULL;
	size_t n_stale = 0, cap = 0;
	int r = 0, cleaned = 0;

	if (!caps)
		return -EINVAL;
	r = cg_proc_view_load(&pv);
	if (r < 0)
		return r;
	parent_list_fill(&pv, caps, &l);
	cg_proc_view_done(&pv);
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
