/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loader for bpf/rootguard.bpf.c: load once, attach per group or per
 * instance cgroup, detach. See rootguard.h for the contract. */

#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "../basic/cleanup.h"
#include "bpf-capture.h"
#include "rootguard.h"

#ifdef CORDON_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rootguard.skel.h"

enum { N_PROGS = 2 };

struct cordon_rootguard_attachment {
	uint64_t cgroup_id; /* the cgroup2 directory's inode number */
	dev_t dev;	    /* and its filesystem */
	bool group;	    /* a group attachment, owned by the state until close */
	struct bpf_link *links[N_PROGS];
	struct cordon_rootguard_attachment *next;
};

struct cordon_rootguard_state {
	struct cordon_rootguard *skel;
	struct cordon_rootguard_attachment *attachments;
};

DEFINE_CLEANUP(skel_destroyp, struct cordon_rootguard *, cordon_rootguard__destroy)

static struct bpf_program *prog_at(struct cordon_rootguard *skel, int i)
{
	return i == 0 ? skel->progs.cordon_rootguard_chmod : skel->progs.cordon_rootguard_chown;
}

int cordon_rootguard_open(struct cordon_rootguard_state **ret, struct cordon_diag *reterr_diag)
{
	_cleanup_(skel_destroyp) struct cordon_rootguard *skel = NULL;
	_cleanup_free_ struct cordon_rootguard_state *rg = NULL;
	libbpf_print_fn_t old;
	int r;

	rg = calloc(1, sizeof(*rg));
	if (!rg)
		return -ENOMEM;

	old = cordon_bpf_capture_begin(true);
	skel = cordon_rootguard__open();
	r = skel ? cordon_rootguard__load(skel) : -errno;
	cordon_bpf_capture_end(old);
	if (!skel)
		return cordon_diag_set(reterr_diag, -r, "rootguard", "opening the BPF object: %s", strerror(-r));
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "rootguard", "loading the BPF LSM programs: %s%s%s",
				       strerror(-r), cordon_bpf_captured()[0] ? ": " : "", cordon_bpf_captured());
	rg->skel = TAKE_PTR(skel);
	*ret = TAKE_PTR(rg);
	return 0;
}

static int cgroup_id_of(int cgroup_fd, uint64_t *ret, dev_t *ret_dev)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(cgroup_fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (fstatfs(cgroup_fd, &sfs) < 0)
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	/* On cgroup2 the directory's inode number is the cgroup id. */
	*ret = st.st_ino;
	*ret_dev = st.st_dev;
	return 0;
}

static void destroy_links(struct cordon_rootguard_attachment *a, int *first_error)
{
	for (int i = 0; i < N_PROGS; i++) {
		if (!a->links[i])
			continue;
		/* Detach explicitly: the program is off the cgroup when this
		 * returns, whoever else may still hold the link. */
		if (bpf_link__detach(a->links[i]) < 0 && first_error && *first_error == 0)
			*first_error = negative_errno();
		(void)bpf_link__destroy(a->links[i]);
		a->links[i] = NULL;
	}
}

static void unlink_attachment(struct cordon_rootguard_state *rg, struct cordon_rootguard_attachment *a)
{
	for (struct cordon_rootguard_attachment **p = &rg->attachments; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			return;
		}
}

static int attach_impl(struct cordon_rootguard_state *rg, int cgroup_fd, bool group,
		       struct cordon_rootguard_attachment **ret, struct cordon_diag *reterr_diag)
{
	_cleanup_free_ struct cordon_rootguard_attachment *a = NULL;
	libbpf_print_fn_t old;
	uint64_t cgid;
	dev_t dev;
	int r;

	if (!rg || cgroup_fd < 0)
		return -EINVAL;
	r = cgroup_id_of(cgroup_fd, &cgid, &dev);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "rootguard", "not a cgroup2 directory: %s", strerror(-r));
	for (struct cordon_rootguard_attachment *i = rg->attachments; i; i = i->next)
		if (i->cgroup_id == cgid && i->dev == dev)
			return cordon_diag_set(reterr_diag, EEXIST, "rootguard", "cgroup %llu is already guarded",
					       (unsigned long long)cgid);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cgroup_id = cgid;
	a->dev = dev;
	a->group = group;

	old = cordon_bpf_capture_begin(true); /* libbpf would print attach failures */
	for (int i = 0; i < N_PROGS; i++) {
		struct bpf_program *prog = prog_at(rg->skel, i);

		/* BPF_LSM_CGROUP, from the program's section: a link, so
		 * closing its fd (or this process dying) detaches it. */
		a->links[i] = bpf_program__attach_cgroup(prog, cgroup_fd);
		if (!a->links[i]) {
			r = negative_errno();
			cordon_bpf_capture_end(old);
			destroy_links(a, NULL);
			return cordon_diag_set(reterr_diag, -r, "rootguard", "attaching %s to cgroup %llu: %s%s%s",
					       bpf_program__section_name(prog), (unsigned long long)cgid, strerror(-r),
					       cordon_bpf_captured()[0] ? ": " : "", cordon_bpf_captured());
		}
	}
	cordon_bpf_capture_end(old);

	a->next = rg->attachments;
	rg->attachments = a;
	if (ret)
		*ret = a;
	a = NULL;
	return 0;
}

int cordon_rootguard_attach(struct cordon_rootguard_state *rg, int cgroup_fd, struct cordon_rootguard_attachment **ret,
			    struct cordon_diag *reterr_diag)
{
	if (!ret)
		return -EINVAL;
	return attach_impl(rg, cgroup_fd, false, ret, reterr_diag);
}

/* A cgroup link whose cgroup was removed has been detached by the kernel:
 * its info reports cgroup id 0. */
static bool link_is_orphan(struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len) < 0)
		return false;
	return info.cgroup.cgroup_id == 0;
}

/* The group attachment of the directory st describes, or NULL. */
static struct cordon_rootguard_attachment *find_group(const struct cordon_rootguard_state *rg, const struct stat *st)
{
	for (struct cordon_rootguard_attachment *i = rg->attachments; i; i = i->next)
		if (i->group && i->cgroup_id == st->st_ino && i->dev == st->st_dev)
			return i;
	return NULL;
}

int cordon_rootguard_attach_group(struct cordon_rootguard_state *rg, int group_fd, struct cordon_diag *reterr_diag)
{
	struct cordon_rootguard_attachment *next;
	struct stat st;

	if (!rg || group_fd < 0)
		return -EINVAL;
	/* Every spawn in group mode asks: one fstat when the group is
	 * already guarded. */
	if (fstat(group_fd, &st) < 0)
		return cordon_diag_set(reterr_diag, errno, "rootguard", "fstat of the group: %m");
	/* Release the attachments of other groups that are gone (none to
	 * look at, and no syscall, while one group is all there is). */
	for (struct cordon_rootguard_attachment *i = rg->attachments; i; i = next) {
		next = i->next;
		if (i->group && (i->cgroup_id != st.st_ino || i->dev != st.st_dev) && i->links[0] &&
		    link_is_orphan(i->links[0])) {
			unlink_attachment(rg, i);
			destroy_links(i, NULL);
			free(i);
		}
	}
	if (find_group(rg, &st))
		return 0;
	return attach_impl(rg, group_fd, true, NULL, reterr_diag);
}

bool cordon_rootguard_guards_group(const struct cordon_rootguard_state *rg, int group_fd)
{
	struct stat st;

	if (!rg || group_fd < 0 || fstat(group_fd, &st) < 0)
		return false;
	return find_group(rg, &st) != NULL;
}

int cordon_rootguard_detach(struct cordon_rootguard_state *rg, struct cordon_rootguard_attachment *a)
{
	int r = 0;

	if (!a)
		return 0;
	if (rg)
		unlink_attachment(rg, a);
	destroy_links(a, &r);
	free(a);
	return r;
}

bool cordon_rootguard_is_idle(const struct cordon_rootguard_state *rg)
{
	if (!rg)
		return true;
	for (const struct cordon_rootguard_attachment *i = rg->attachments; i; i = i->next)
		if (!i->group)
			return false;
	return true;
}

uint64_t cordon_rootguard_attachment_cgroup_id(const struct cordon_rootguard_attachment *a)
{
	return a ? a->cgroup_id : 0;
}

void cordon_rootguard_close(struct cordon_rootguard_state *rg)
{
	if (!rg)
		return;
	/* Instances first, the groups last: a group's programs stay while
	 * anything below it may still run. */
	for (int pass = 0; pass < 2; pass++) {
		struct cordon_rootguard_attachment *next;

		for (struct cordon_rootguard_attachment *i = rg->attachments; i; i = next) {
			next = i->next;
			if (i->group == (pass == 1))
				(void)cordon_rootguard_detach(rg, i);
		}
	}
	cordon_rootguard__destroy(rg->skel);
	free(rg);
}

#else /* !CORDON_HAVE_BPF */

int cordon_rootguard_open(struct cordon_rootguard_state **ret, struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "rootguard", "built without BPF support (CORDON_BPF=OFF)");
}

void cordon_rootguard_close(struct cordon_rootguard_state *rg)
{
}

int cordon_rootguard_attach(struct cordon_rootguard_state *rg, int cgroup_fd, struct cordon_rootguard_attachment **ret,
			    struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "rootguard", "built without BPF support (CORDON_BPF=OFF)");
}

int cordon_rootguard_attach_group(struct cordon_rootguard_state *rg, int group_fd, struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "rootguard", "built without BPF support (CORDON_BPF=OFF)");
}

bool cordon_rootguard_guards_group(const struct cordon_rootguard_state *rg, int group_fd)
{
	return false;
}

int cordon_rootguard_detach(struct cordon_rootguard_state *rg, struct cordon_rootguard_attachment *a)
{
	return a ? -EOPNOTSUPP : 0;
}

bool cordon_rootguard_is_idle(const struct cordon_rootguard_state *rg)
{
	return true;
}

uint64_t cordon_rootguard_attachment_cgroup_id(const struct cordon_rootguard_attachment *a)
{
	return 0;
}

#endif
