/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Steps 2 and 3 of cordon_spawn() (the comment at the top of spawn.c): the
 * sandbox uid, the environment, every host path opened and cloned as a
 * detached mount (id-mapped where needed); and the namespaces the launcher
 * pins between spawns (the spare network namespace, the base mount
 * namespace, the id-mapping user namespaces). Parent side only. */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>
#include <linux/securebits.h>

#include "cgroup.h"
#include "cleanup.h"
#include "fd-util.h"
#include "landlock-uapi.h"
#include "landlock.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "seccomp.h"
#include "spawn-child.h"
#include "spawn-internal.h"
#include "syscall-compat.h"

#define CREDENTIAL_MAX_BYTES (64 * 1024)
#define MAX_ENV		     1024

int cordon_dynamic_uid_lock_open(int *ret_fd, struct cordon_diag *d)
{
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	struct stat st;

	/* Its own directory, never cordond's runtime directory: cordond gives
	 * that one to its user, who could then unlink or replace the lock (and
	 * two instances could get the same uid) or plant one whose every byte
	 * it holds. Root's, and writable by nobody else, or refused. */
	if (mkdir(CORDON_LAUNCH_RUN_DIR, 0700) < 0 && errno != EEXIST)
		return cordon_diag_set(d, errno, "user", "cannot create %s: %m", CORDON_LAUNCH_RUN_DIR);
	dfd = open(CORDON_LAUNCH_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return cordon_diag_set(d, errno, "user", "cannot open %s: %m", CORDON_LAUNCH_RUN_DIR);
	if (fstat(dfd, &st) < 0)
		return cordon_diag_set(d, errno, "user", "cannot stat %s: %m", CORDON_LAUNCH_RUN_DIR);
	if (st.st_uid != 0 || (st.st_mode & 022))
		return cordon_diag_set(d, EPERM, "user",
				       "%s is owned by uid %u with mode %04o: it must be root's and writable by "
				       "nobody else (remove it; the launcher recreates it)",
				       CORDON_LAUNCH_RUN_DIR, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	/* A fresh open file description per instance: OFD locks of one
	 * description never conflict with each other. */
	fd = openat(dfd, CORDON_DYNAMIC_UID_LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return cordon_diag_set(d, errno, "user", "cannot open %s: %m", CORDON_DYNAMIC_UID_LOCK);
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(d, errno, "user", "cannot stat %s: %m", CORDON_DYNAMIC_UID_LOCK);
	if (!S_ISREG(st.st_mode) || st.st_uid != 0)
		return cordon_diag_set(d, EPERM, "user", "%s is not a regular file of root's", CORDON_DYNAMIC_UID_LOCK);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int uid_allocate(int *ret_lock_fd, uid_t *ret_uid, struct cordon_diag *d)
{
	static unsigned counter;
	_cleanup_close_ int fd = -EBADF;
	unsigned start;
	int r;

	r = cordon_dynamic_uid_lock_open(&fd, d);
	if (r < 0)
		return r;

	/* Spread start points so concurrent launchers rarely probe the same
	 * numbers; the byte-range lock is what guarantees uniqueness. */
	start = ((unsigned)getpid() * 2654435761u + counter++ * 40503u) % CORDON_DYNAMIC_UID_COUNT;
	for (unsigned i = 0; i < CORDON_DYNAMIC_UID_COUNT; i++) {
		unsigned n = (start + i) % CORDON_DYNAMIC_UID_COUNT;
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)n, .l_len = 1 };

		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			*ret_lock_fd = TAKE_FD(fd);
			*ret_uid = CORDON_DYNAMIC_UID_BASE + n;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES)
			return cordon_diag_set(d, errno, "user", "locking byte %u of %s: %m", n,
					       CORDON_DYNAMIC_UID_LOCK);
	}
	return cordon_diag_set(d, EUSERS, "user", "all %u dynamic uids are in use", CORDON_DYNAMIC_UID_COUNT);
}

int spawn_resolve_user(const struct cordon_profile *p, struct spawn_ctx *c, struct cordon_diag *d)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;

	if (!p->user) {
		uid_t uid = 0;

		r = uid_allocate(&c->uid_lock_fd, &uid, d);
		if (r < 0)
			return r;
		c->uid = uid;
		c->gid = (gid_t)uid;
		return 0;
	}
	r = getpwnam_r(p->user, &pw, buf, sizeof(buf), &res);
	if (r != 0 || !res)
		return cordon_diag_set(d, r ? r : ENOENT, "user", "sandbox.user '%s' does not exist", p->user);
	if (pw.pw_uid == 0 || pw.pw_gid == 0)
		return cordon_diag_set(d, EPERM, "user", "sandbox.user '%s' is root; refusing", p->user);
	c->uid = pw.pw_uid;
	c->gid = pw.pw_gid;
	return 0;
}

static const char *env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int env_push(struct spawn_ctx *c, const char *name, const char *value)
{
	char *s, **nv;

	/* Later sources win: set overrides pass, credentials override both. */
	for (size_t i = 0; i < c->n_env; i++)
		if (strncmp(c->envp[i], name, strlen(name)) == 0 && c->envp[i][strlen(name)] == '=') {
			if (asprintf(&s, "%s=%s", name, value) < 0)
				return -ENOMEM;
			explicit_bzero(c->envp[i], strlen(c->envp[i]));
			free(c->envp[i]);
			c->envp[i] = s;
			return 0;
		}
	if (c->n_env >= MAX_ENV)
		return -E2BIG;
	nv = realloc(c->envp, (c->n_env + 2) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	c->envp = nv;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	c->envp[c->n_env++] = s;
	c->envp[c->n_env] = NULL;
	return 0;
}

int spawn_build_env(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d)
{
	const struct cordon_profile *p = pol->profile;
	int r;

	c->envp = calloc(1, sizeof(char *));
	if (!c->envp)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_env_pass; i++) {
		const char *v = env_lookup(pol->env_source, p->env_pass[i]);

		if (v && (r = env_push(c, p->env_pass[i], v)) < 0)
			return cordon_diag_set(d, -r, "environment", "env.pass %s", p->env_pass[i]);
	}
	for (size_t i = 0; i < p->n_env_set; i++)
		if ((r = env_push(c, p->env_set[i].name, p->env_set[i].value)) < 0)
			return cordon_diag_set(d, -r, "environment", "env.set %s", p->env_set[i].name);
	for (size_t i = 0; i < p->n_credentials; i++) {
		char *buf = NULL;
		size_t len = 0;

		r = read_file_bounded(AT_FDCWD, p->credentials[i].file, CREDENTIAL_MAX_BYTES, &buf, &len);
		if (r < 0)
			/* Name the file and the variable, never the content. */
			return cordon_diag_set(d, -r, "credentials", "cannot read credential file %s for %s: %s",
					       p->credentials[i].file, p->credentials[i].env, strerror(-r));
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		if (memchr(buf, '\0', len)) {
			explicit_bzero(buf, len);
			free(buf);
			return cordon_diag_set(d, EINVAL, "credentials", "credential file %s contains a NUL byte",
					       p->credentials[i].file);
		}
		r = env_push(c, p->credentials[i].env, buf);
		explicit_bzero(buf, len);
		free(buf);
		if (r < 0)
			return cordon_diag_set(d, -r, "credentials", "env %s", p->credentials[i].env);
	}
	return 0;
}

/* A user namespace whose only mapping is owner -> uid (and ownergid -> gid),
 * for MOUNT_ATTR_IDMAP: on the id-mapped mount files owned by `owner` appear
 * as owned by the sandbox user, and files the sandbox user creates are
 * written to disk as owned by `owner`. A helper is cloned directly into a new
 * user namespace, sharing our memory (no page-table copy) and doing nothing
 * but pause(); we write its maps, keep only the namespace fd, and SIGKILL it
 * (which it never sees in user space, so it touches no shared state). */
/* A namespace held by an nsfd: a helper is cloned into a new namespace of
 * type `flag` (sharing our memory: no page-table copy), runs `setup` there
 * (spawn-child.c: async-signal-safe), and pauses; `configure` (the user
 * namespace's id maps) runs here while it exists; then /proc/<pid>/ns/<name>
 * is opened and the helper killed and reaped. One helper at a time: they
 * share one stack. The three namespaces the launcher pins (the spare
 * network namespace, the base mount namespace, the id-mapping user
 * namespaces) are made by this one function. Returns 0 and writes *ret_fd,
 * or -errno. */
static int ns_pin(unsigned long flag, const char *name, int (*setup)(void),
		  int (*configure)(pid_t pid, uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid), uid_t owner,
		  gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	static char stack[16384] __attribute__((aligned(64)));
	struct spawn_pin_args a = { .setup = setup, .pipe_w = -EBADF };
	int pfd[2] = { -EBADF, -EBADF }, fd = -EBADF, r = 0;
	char path[64], ok = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	a.pipe_w = pfd[1];
	a.parent = getpid();
	pid = clone(spawn_pin_helper, stack + sizeof(stack), (int)flag | CLONE_VM | SIGCHLD, &a);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	do
		n = read(pfd[0], &ok, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || ok != 1)
		r = -EIO;
	if (r >= 0 && configure)
		r = configure(pid, owner, owner_gid, uid, gid);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = -errno;
	}
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
out:
	(void)close(pfd[0]);
	(void)close(pfd[1]);
	if (r < 0)
		return r;
	*ret_fd = fd;
	return 0;
}

/* A spare network namespace, made while the launcher waits for the
 * previous sandbox to start (it is idle then) and used by the next spawn
 * that needs one: creating a network namespace is the costliest single
 * step of a spawn. It is fresh (nothing has ever run in it; the helper
 * only brought lo up, which every sandbox does first) and used exactly once: the fd is handed
 * to one child and closed in the launcher right after the clone. Only the
 * process that made it uses it (a forked copy of the launcher holds the
 * same namespace through its copy of the fd and must not hand it out a
 * second time). */
static int spare_netns_fd = -EBADF;
static pid_t spare_netns_pid;

void spawn_spare_netns_make(void)
{
	int fd = -EBADF;

	if (spare_netns_fd >= 0 && spare_netns_pid == getpid())
		return;
	if (spare_netns_fd >= 0)
		(void)close(spare_netns_fd); /* a forked copy's: the parent's spare, not ours */
	spare_netns_fd = -EBADF;
	if (ns_pin(CLONE_NEWNET, "net", spawn_pin_setup_netns, NULL, 0, 0, 0, 0, &fd) < 0)
		return; /* the next child unshares its own */
	spare_netns_fd = fd;
	spare_netns_pid = getpid();
}

/* The base mount namespace, made once per launcher process: its only mount
 * is an empty read-only tmpfs holding the directory NEWROOT. A sandbox
 * enters it and unshares a private copy instead of copying the host's
 * namespace, so it never has to unmount the host tree (an unmount waits
 * for an RCU grace period). Held by an nsfs fd; a forked copy of the
 * launcher makes its own, like the spare network namespace. */
static int mntns_base_fd = -EBADF;
static pid_t mntns_base_pid;

int spawn_mntns_base_get(void)
{
	int fd = -EBADF;

	if (mntns_base_fd >= 0 && mntns_base_pid == getpid())
		return mntns_base_fd;
	if (mntns_base_fd >= 0)
		(void)close(mntns_base_fd); /* a forked copy's */
	mntns_base_fd = -EBADF;
	if (ns_pin(CLONE_NEWNS, "mnt", spawn_pin_setup_mntns, NULL, 0, 0, 0, 0, &fd) < 0)
		return -EBADF; /* this child copies the host's namespace */
	mntns_base_fd = fd;
	mntns_base_pid = getpid();
	return fd;
}

/* Takes the spare (the caller closes it after the clone), or -EBADF. */
int spawn_spare_netns_take(void)
{
	if (spare_netns_fd < 0 || spare_netns_pid != getpid())
		return -EBADF;
	return TAKE_FD(spare_netns_fd);
}

/* The id maps of a pinned user namespace: owner <-> the sandbox user. */
static int idmap_write(pid_t pid, uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid)
{
	char path[64], map[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner, (unsigned)uid);
	r = write_small_file(path, map);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner_gid, (unsigned)gid);
	return write_small_file(path, map);
}

static int make_idmap_userns(uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	return ns_pin(CLONE_NEWUSER, "user", NULL, idmap_write, owner, owner_gid, uid, gid, ret_fd);
}

/* Opens an extra root (delegation, --root) from a ceiling directory with
 * RESOLVE_BENEATH, so neither ".." nor a symlink can leave the ceiling, and
 * checks by dev/ino that it is the very object the host path names. */
/* A user namespace that only carries a mapping is immutable once its maps
 * are written, so one per (owner, sandbox user) serves every instance with
 * that pair: a dynamic uid number is reused once its instance is gone, and
 * building the namespace costs a clone and two /proc writes. A few slots,
 * the oldest replaced. Returns a borrowed fd. */
static struct {
	uid_t owner, uid;
	gid_t owner_gid, gid;
	int fd;
} idmap_cache[4] = { { .fd = -EBADF }, { .fd = -EBADF }, { .fd = -EBADF }, { .fd = -EBADF } };
static unsigned idmap_cache_next;

static int idmap_userns_cached(uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	unsigned slot;
	int fd = -EBADF, r;

	for (size_t i = 0; i < ELEMENTSOF(idmap_cache); i++)
		if (idmap_cache[i].fd >= 0 && idmap_cache[i].owner == owner && idmap_cache[i].owner_gid == owner_gid &&
		    idmap_cache[i].uid == uid && idmap_cache[i].gid == gid) {
			*ret_fd = idmap_cache[i].fd;
			return 0;
		}
	r = make_idmap_userns(owner, owner_gid, uid, gid, &fd);
	if (r < 0)
		return r;
	slot = idmap_cache_next++ % ELEMENTSOF(idmap_cache);
	if (idmap_cache[slot].fd >= 0)
		(void)close(idmap_cache[slot].fd);
	idmap_cache[slot].owner = owner;
	idmap_cache[slot].owner_gid = owner_gid;
	idmap_cache[slot].uid = uid;
	idmap_cache[slot].gid = gid;
	idmap_cache[slot].fd = fd;
	*ret_fd = fd;
	return 0;
}

static int open_beneath_ceiling(const struct cordon_profile *p, const char *host, int *ret_fd, struct cordon_diag *d)
{
	struct stat want;

	if (!path_is_absolute_canonical(host))
		return cordon_diag_set(d, EINVAL, "root", "root '%s' is not an absolute canonical path", host);
	if (stat(host, &want) < 0)
		return cordon_diag_set(d, errno, "root", "root '%s': %m", host);
	for (size_t i = 0; i < p->n_ceiling; i++) {
		_cleanup_close_ int cfd = -EBADF, fd = -EBADF;
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
		};
		const char *rel;
		struct stat st;
		size_t n = strlen(p->ceiling[i]);

		/* The component-wise prefix only picks the relative part to
		 * resolve; the decision is openat2's and the dev/ino check. */
		if (!path_is_beneath(host, p->ceiling[i]))
			continue;
		rel = host + (strcmp(p->ceiling[i], "/") == 0 ? 1 : n);
		while (*rel == '/')
			rel++;
		if (*rel == '\0')
			rel = ".";
		cfd = open(p->ceiling[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			continue;
		fd = sys_openat2(cfd, rel, &how, sizeof(how));
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino)
			continue;
		*ret_fd = TAKE_FD(fd);
		return 0;
	}
	return cordon_diag_set(d, EPERM, "root", "root '%s' is not beneath the profile's ceiling", host);
}

int cordon_spawn_check_beneath_ceiling(const struct cordon_profile *p, const char *host,
				       struct cordon_diag *reterr_diag)
{
	_cleanup_close_ int fd = -EBADF;

	return open_beneath_ceiling(p, host, &fd, reterr_diag);
}

static bool at_is_reserved(const char *at)
{
	static const char *const reserved[] = { "/proc", "/dev", "/tmp" };

	if (strcmp(at, "/") == 0)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
		if (path_is_beneath(at, reserved[i]))
			return true;
	return false;
}

int spawn_add_mount(struct spawn_ctx *c, const struct cordon_fs_entry *e, bool is_root, bool extra,
		    const struct cordon_profile *p, bool fs_view, struct cordon_diag *d)
{
	struct mount_item *m, *nm;
	const char *at = e->at ? e->at : e->path;
	struct stat st;
	int r;

	if (!path_is_absolute_canonical(e->path) || !path_is_absolute_canonical(at))
		return cordon_diag_set(d, EINVAL, "policy", "path '%s' (at '%s') is not absolute and canonical",
				       e->path, at);
	if (at_is_reserved(at))
		return cordon_diag_set(d, EINVAL, "policy", "'%s' cannot be mounted at '%s' (reserved by cordon)",
				       e->path, at);
	if (!fs_view && strcmp(at, e->path) != 0)
		return cordon_diag_set(d, EOPNOTSUPP, "namespaces",
				       "'%s' should appear at '%s' but there is no mount namespace", e->path, at);
	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i].at, at) == 0)
			return cordon_diag_set(d, EEXIST, "policy", "two entries are mounted at '%s'", at);

	nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*c->mounts));
	if (!nm)
		return -ENOMEM;
	c->mounts = nm;
	m = &c->mounts[c->n_mounts];
	*m = (struct mount_item){ .access = e->access, .path_fd = -EBADF, .tree_fd = -EBADF };
	m->at = strdup(at);
	m->host = strdup(e->path);
	c->n_mounts++;
	if (!m->at || !m->host)
		return -ENOMEM;

	if (!is_root && lstat(e->path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* A system path that is a symlink (merged /usr: /bin, /lib, /lib64)
		 * becomes the same symlink inside the sandbox; its target must
		 * be mounted by another entry. */
		char target[PATH_MAX];
		ssize_t n = readlink(e->path, target, sizeof(target) - 1);

		if (n < 0)
			return cordon_diag_set(d, errno, "mount", "readlink %s: %m", e->path);
		target[n] = '\0';
		if (!fs_view)
			return 0;
		m->symlink = strdup(target);
		return m->symlink ? 0 : -ENOMEM;
	}

	if (extra) {
		r = open_beneath_ceiling(p, e->path, &m->path_fd, d);
		if (r < 0)
			return r;
	} else {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };

		/* Roots name data a user may control: no symlink anywhere on
		 * the way. System paths are the operator's (/usr, certs). */
		if (is_root)
			how.resolve |= RESOLVE_NO_SYMLINKS;
		m->path_fd = sys_openat2(AT_FDCWD, e->path, &how, sizeof(how));
		if (m->path_fd < 0 && errno == ENOSYS)
			m->path_fd = open(e->path, O_PATH | O_CLOEXEC | (is_root ? O_NOFOLLOW : 0));
		if (m->path_fd < 0)
			return cordon_diag_set(d, errno, "mount", "cannot open %s '%s': %m",
					       is_root ? "root" : "system path", e->path);
	}
	if (fstat(m->path_fd, &st) < 0)
		return cordon_diag_set(d, errno, "mount", "fstat %s: %m", e->path);
	m->is_dir = S_ISDIR(st.st_mode);
	m->owner_uid = st.st_uid;
	m->owner_gid = st.st_gid;
	if (!m->is_dir && !S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, "mount", "'%s' is neither a directory nor a regular file", e->path);
	/* A read-write root is id-mapped to its owner: owned by uid 0, the
	 * connector would act as uid 0 for every file in it (issue 11,
	 * finding 1). Refused unless the profile's entry says so explicitly
	 * (allow_uid0_owner); delegated roots are approved one by one by the
	 * operator and are not checked here. The seccomp rules keep setuid
	 * and setgid bits, devices and security xattrs out either way. */
	if (e->access == CORDON_ACCESS_READ_WRITE && is_root && !extra && st.st_uid == 0 && !e->allow_uid0_owner)
		return cordon_diag_set(d, EPERM, "policy",
				       "read-write root '%s' is owned by uid 0: the connector would act as uid 0 "
				       "there; give it an unprivileged owner or set allow_uid0_owner: true",
				       e->path);
	if (e->access == CORDON_ACCESS_READ_WRITE && (st.st_uid != c->uid || st.st_gid != c->gid))
		m->idmapped = true;
	if (!fs_view) {
		if (m->idmapped)
			return cordon_diag_set(
				d, EOPNOTSUPP, "namespaces",
				"read-write root '%s' needs an id-mapped mount, which needs a mount namespace",
				e->path);
		return 0;
	}

	{
		struct mount_attr attr = { 0 };
		int userns = -EBADF; /* borrowed from the cache */
		unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;

		/* Read-only trees keep their submounts (all made read-only);
		 * a read-write root is exactly the one mount, which also keeps
		 * id-mapping to a single filesystem. */
		if (e->access != CORDON_ACCESS_READ_WRITE)
			flags |= AT_RECURSIVE;
		m->tree_fd = open_tree(m->path_fd, "", flags);
		if (m->tree_fd < 0)
			return cordon_diag_set(d, errno, "mount", "open_tree(%s): %m", e->path);
		switch (e->access) {
		case CORDON_ACCESS_READ:
			attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
			break;
		case CORDON_ACCESS_READ_EXEC:
			attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
			break;
		case CORDON_ACCESS_READ_WRITE:
			attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
			break;
		}
		if (mount_setattr(m->tree_fd, "", AT_EMPTY_PATH | (flags & AT_RECURSIVE), &attr, sizeof(attr)) < 0)
			return cordon_diag_set(d, errno, "mount", "mount_setattr(%s): %m", e->path);
		if (m->idmapped) {
			r = idmap_userns_cached(st.st_uid, st.st_gid, c->uid, c->gid, &userns);
			if (r < 0)
				return cordon_diag_set(d, -r, "idmap", "user namespace for the id-mapped root '%s': %s",
						       e->path, strerror(-r));
			attr = (struct mount_attr){ .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns };
			if (mount_setattr(m->tree_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
				return cordon_diag_set(d, errno, "idmap",
						       "id-mapped mount of '%s' (owner %u) for uid %u: %m", e->path,
						       (unsigned)st.st_uid, (unsigned)c->uid);
		}
	}
	return 0;
}

int spawn_cmp_mount(const void *a, const void *b)
{
	return strcmp(((const struct mount_item *)a)->at, ((const struct mount_item *)b)->at);
}

void cordon_spawn_drop_caches(void)
{
	if (spare_netns_fd >= 0 && spare_netns_pid == getpid())
		(void)close(TAKE_FD(spare_netns_fd));
	if (mntns_base_fd >= 0 && mntns_base_pid == getpid())
		(void)close(TAKE_FD(mntns_base_fd));
	for (size_t i = 0; i < ELEMENTSOF(idmap_cache); i++)
		if (idmap_cache[i].fd >= 0)
			(void)close(TAKE_FD(idmap_cache[i].fd));
}
