/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creation: cordon_cgroup_create() makes the instance's directories (the
 * cgroup2 one, directly or inside the launcher's group, and one per v1
 * hierarchy, possibly deferred to cordon_cgroup_complete()) and writes the
 * limits before any process enters; and the launcher's group itself. Any
 * failure removes what was made so far (cg_teardown()). */
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

/* ---- Creation --------------------------------------------------------- */

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
			r = cg_v2_enable_set(h->parent, v2_ctrls, errs);
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
		return cordon_diag_set(x->diag, err, "cgroup", "cgroup controller %s: %s%s: %s", cg_ctrl_name(c), what,
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
		r = cg_write_u64_at(fd, "memory.max", lim->mem_bytes);
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
		return cg_write_u64_at(fd, "pids.max", lim->pids_max);
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
		r = cg_write_u64_at(fd, "memory.limit_in_bytes", lim->mem_bytes);
		if (r < 0)
			return r;
		/* memory+swap equal to memory: no swap. memsw must not be
		 * below limit_in_bytes, hence the order. Without swap
		 * accounting the file is absent; then discourage swapping. */
		*ret_file = "memory.memsw.limit_in_bytes";
		r = cg_write_u64_at(fd, "memory.memsw.limit_in_bytes", lim->mem_bytes);
		if (r == -ENOENT)
			(void)write_small_file_at(fd, "memory.swappiness", "0");
		else if (r < 0)
			return r;
		return 0;
	case CORDON_CTRL_PIDS:
		if (!lim->pids_max)
			return 0;
		*ret_file = "pids.max";
		return cg_write_u64_at(fd, "pids.max", lim->pids_max);
	case CORDON_CTRL_CPU:
		if (!lim->cpu_micro)
			return 0;
		*ret_file = "cpu.cfs_period_us";
		r = cg_write_u64_at(fd, "cpu.cfs_period_us", CPU_PERIOD_USEC);
		if (r < 0)
			return r;
		*ret_file = "cpu.cfs_quota_us";
		return cg_write_u64_at(fd, "cpu.cfs_quota_us", cpu_quota_usec(lim->cpu_micro));
	}
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
	int errs[_CORDON_CTRL_MAX] = { 0 };
	unsigned want = cg_v2_wanted(caps);
	int r = 0;

	if (x->group)
		return setup_v2_in_group(cg, x);
	r = cg_hierarchy_base(&x->pv, caps->cgroup2_mount, NULL, &base);
	if (r < 0)
		return cordon_diag_set(x->diag, -r, "cgroup", "cannot find own cgroup2 path: %s", strerror(-r));

	/* Enable the controllers for the children of our own cgroup. When it
	 * holds processes (EBUSY) use its parent, as delegated service cgroups
	 * put the supervisor into a leaf of their own. */
	while (want) {
		char *up;

		r = cg_v2_enable_set(base, want, errs);
		if (r != -EBUSY || !cg_path_is_strictly_below(base, caps->cgroup2_mount))
			break;
		r = cg_parent_path(base, &up);
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
						       "cgroup controller %s: cannot write %s/%s: %s", cg_ctrl_name(c),
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
	r = cg_hierarchy_base(&x->pv, mount, ctrl, &base);
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

	r = v1_dir(cg, x, mount, cg_ctrl_name(c), &h);
	if (r < 0) {
		if (r == -ENOMEM)
			return cordon_diag_set(x->diag, ENOMEM, "cgroup", "out of memory");
		if (x->required & (1u << c))
			return cordon_diag_set(x->diag, -r, "cgroup", "cgroup controller %s: cannot set up %s: %s",
					       cg_ctrl_name(c), h ? h->path : mount, strerror(-r));
		if (limit_requested(x->lim, c))
			x->missing |= 1u << c;
		return 0;
	}
	r = write_v1_limits(h->fd, c, x->lim, &file);
	if (r < 0) {
		if (x->required & (1u << c))
			return cordon_diag_set(x->diag, -r, "cgroup", "cgroup controller %s: cannot write %s/%s: %s",
					       cg_ctrl_name(c), h->path, file, strerror(-r));
		if (limit_requested(x->lim, c))
			x->missing |= 1u << c;
		return 0;
	}
	h->ctrls |= 1u << c;
	return 0;
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
	if (cg_find_v1_mount(&x->pv, "cpuacct", &mount) < 0)
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
	struct create_ctx x = { .caps = caps, .lim = NULL, .diag = reterr_diag };
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
	cg_proc_view_done(&x.pv);
	if (ret_missing)
		*ret_missing = x.missing;
	return 0;
}

int cordon_cgroup_create(const struct cordon_caps *caps, const struct cordon_cgroup_options *opts,
			 struct cordon_cgroup **ret, unsigned *ret_missing, struct cordon_diag *reterr_diag)
{
	const struct cordon_cgroup_limits *lim = opts ? opts->limits : NULL;
	const char *name = opts ? opts->name : NULL;
	unsigned required = opts ? opts->required : 0, flags = opts ? opts->flags : 0;
	pid_t owner = opts ? opts->owner : 0;
	struct cordon_cgroup *cg;
	struct create_ctx x = {
		.caps = caps, .group = opts ? opts->group : NULL, .lim = lim, .required = required, .diag = reterr_diag
	};
	uint64_t start;
	int r;

	if (!caps || !lim || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing argument");
	if (flags & ~(unsigned)CORDON_CGROUP_DEFER_V1)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "unknown flags 0x%x", flags);
	if (!cg_name_is_valid(name))
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
					       "cgroup controller %s: cordon applies no limits with it",
					       cg_ctrl_name(c));
		if (!caps->ctrl[c].available || (caps->ctrl[c].v2 && !caps->cgroup2_mount[0]))
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, "cgroup",
					       "cgroup controller %s: not available on this kernel (%s)",
					       cg_ctrl_name(c), strerror(EOPNOTSUPP));
	}
	if (required & ~((1u << _CORDON_CTRL_MAX) - 1))
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "unknown controller bits 0x%x", required);

	r = cg_proc_starttime(owner, &start, NULL);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read start time of owner pid %d: %s",
				       (int)owner, strerror(-r));

	r = cg_proc_view_load(&x.pv);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read /proc/self/cgroup or mountinfo: %s",
				       strerror(-r));
	cg = cg_new();
	if (!cg) {
		cg_proc_view_done(&x.pv);
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
		x.pv = (struct proc_view){ 0 };
		cg->pending_lim = *lim;
		cg->pending_required = required;
	} else {
		r = setup_rest(cg, &x);
		if (r < 0)
			goto fail;
	}

	cg->use_kill = caps->cgroup_kill && cg->v2.fd >= 0 && faccessat(cg->v2.fd, "cgroup.kill", F_OK, 0) >= 0;
	cg->placed_by_clone = caps->clone_into_cgroup && cg->v2.fd >= 0;
	cg_proc_view_done(&x.pv);
	*ret = cg;
	if (ret_missing)
		*ret_missing = x.missing;
	return 0;
fail:
	cg_proc_view_done(&x.pv);
	(void)cg_teardown(cg);
	return r;
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
	int errs[_CORDON_CTRL_MAX] = { 0 };
	uint64_t start;
	int r;

	if (!caps || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, "cgroup", "missing argument");
	if (!caps->cgroup2_mount[0] || caps->cgroup_layout == CORDON_CGROUP_NONE ||
	    caps->cgroup_layout == CORDON_CGROUP_V1)
		return cordon_diag_set(reterr_diag, EOPNOTSUPP, "cgroup", "no cgroup2 hierarchy");
	r = cg_proc_starttime(getpid(), &start, NULL);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read own start time: %s", strerror(-r));
	r = cg_proc_view_load(&pv);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot read /proc/self/cgroup or mountinfo: %s",
				       strerror(-r));
	g = calloc(1, sizeof(*g));
	if (!g) {
		cg_proc_view_done(&pv);
		return -ENOMEM;
	}
	g->fd = -EBADF;
	g->want = cg_v2_wanted(caps);
	r = cg_v2_find_base(&pv, caps, g->want, &base, errs);
	cg_proc_view_done(&pv);
	if (r < 0) {
		cordon_cgroup_group_free(g);
		return cordon_diag_set(reterr_diag, -r, "cgroup", "cannot find own cgroup2 path: %s", strerror(-r));
	}
	group_note_errs(g, errs, base);
	cg_hdir_init(&h);
	if (asprintf(&h.parent, "%s/" CORDON_PARENT, base) < 0 ||
	    asprintf(&h.path, "%s/g-%d-%" PRIu64, h.parent, (int)getpid(), start) < 0 ||
	    !(g->mount = strdup(caps->cgroup2_mount))) {
		cg_hdir_free(&h);
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
		cg_hdir_free(&h);
		cordon_cgroup_group_free(g);
		return r;
	}
	group_note_errs(g, errs, h.parent);
	/* Instances get their limits from the group's subtree_control. */
	if (g->want) {
		memset(errs, 0, sizeof(errs));
		(void)cg_v2_enable_set(h.path, g->want, errs);
		group_note_errs(g, errs, h.path);
	}
	g->fd = TAKE_FD(h.fd);
	g->parent = TAKE_PTR(h.parent);
	g->path = TAKE_PTR(h.path);
	cg_hdir_free(&h);
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
