/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Path resolution beneath a root fd: openat2 first, a held-fd walk as the
 * fallback. See resolve.h for the guarantees. */
#include "resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "syscall-compat.h"

#define MAX_SYMLINK_HOPS   40 /* the kernel's own limit */
#define MAX_EAGAIN_RETRIES 64

void cordon_resolve_detect(struct cordon_caps *caps)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	int fd = sys_openat2(AT_FDCWD, "..", &how, sizeof(how));

	caps->openat2 = !(fd < 0 && errno == ENOSYS);
	caps->openat2_beneath = fd < 0 && errno == EXDEV;
	if (fd >= 0)
		close(fd);
}

bool cordon_resolve_has_openat2(const struct cordon_caps *caps)
{
	return caps && caps->openat2 && caps->openat2_beneath;
}

static bool flags_write(int open_flags)
{
	int acc = open_flags & O_ACCMODE;

	return acc == O_WRONLY || acc == O_RDWR || (open_flags & (O_CREAT | O_TRUNC)) != 0;
}

/* Strips leading slashes: absolute paths are relative to the root. */
static const char *relative(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

/* Checks done after a successful open, on both paths: never write through a
 * hard link (the other name may be outside the root), and apply O_TRUNC only
 * after that check. */
static int finish_open(int fd, const struct cordon_resolve_how *how)
{
	struct stat st;

	if (!flags_write(how->open_flags) || (how->open_flags & O_PATH))
		return 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1)
		return -EMLINK;
	if ((how->open_flags & O_TRUNC) && S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)
		return -errno;
	return 0;
}

static int resolve_openat2(int root_fd, const char *path, const struct cordon_resolve_how *how, int *ret_fd)
{
	struct open_how oh = {
		.flags = (uint64_t)((how->open_flags & ~O_TRUNC) | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int fd = -EBADF;
	int r;

	/* openat2 validates flags strictly: O_PATH takes no O_NOCTTY, and a
	 * mode is only accepted with O_CREAT or O_TMPFILE. */
	if (!(how->open_flags & O_PATH))
		oh.flags |= O_NOCTTY;
	if ((how->open_flags & O_CREAT) || (how->open_flags & O_TMPFILE) == O_TMPFILE)
		oh.mode = how->mode;
	if (!(how->flags & CORDON_RESOLVE_SYMLINKS))
		oh.resolve |= RESOLVE_NO_SYMLINKS;
	if (how->flags & CORDON_RESOLVE_NO_XDEV)
		oh.resolve |= RESOLVE_NO_XDEV;

	/* EAGAIN means the kernel saw a concurrent rename or mount while
	 * resolving ".." and refused to guess: retry, but not forever. */
	for (int i = 0; i < MAX_EAGAIN_RETRIES; i++) {
		fd = sys_openat2(root_fd, relative(path), &oh, sizeof(oh));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd < 0)
		return -errno;
	r = finish_open(fd, how);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* The fallback walk keeps every directory fd on the way, so ".." pops a held
 * fd instead of asking the kernel, and a rename elsewhere cannot move us. */
struct walk {
	int *fds;
	size_t depth, cap;
	int root_mnt_ok;
	uint64_t root_mnt;
};

static void walk_done(struct walk *w)
{
	for (size_t i = 0; i < w->depth; i++)
		closep(&w->fds[i]);
	free(w->fds);
	w->fds = NULL;
	w->depth = 0;
}

static int walk_push(struct walk *w, int fd)
{
	if (w->depth == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 16;
		int *n;

		if (ncap > PATH_MAX)
			return -ENAMETOOLONG;
		n = realloc(w->fds, ncap * sizeof(int));
		if (!n)
			return -ENOMEM;
		w->fds = n;
		w->cap = ncap;
	}
	w->fds[w->depth++] = fd;
	return 0;
}

static int mount_id(int fd, uint64_t *ret)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*ret = stx.stx_mnt_id;
	return 0;
}

static int check_xdev(const struct walk *w, int fd, unsigned flags)
{
	uint64_t id = 0;
	int r;

	if (!(flags & CORDON_RESOLVE_NO_XDEV))
		return 0;
	r = mount_id(fd, &id);
	if (r < 0)
		return r;
	return id == w->root_mnt ? 0 : -EXDEV;
}

/* Replaces the not-yet-walked remainder with target + "/" + rest. */
static int splice_target(char **remaining, const char *target, const char *rest)
{
	size_t tl = strlen(target), rl = strlen(rest);
	char *n = malloc(tl + 1 + rl + 1);

	if (!n)
		return -ENOMEM;
	memcpy(n, target, tl);
	n[tl] = '/';
	memcpy(n + tl + 1, rest, rl + 1);
	free(*remaining);
	*remaining = n;
	return 0;
}

static int read_link(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t n = readlinkat(dirfd, name, buf, size - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

static int resolve_walk(int root_fd, const char *path, const struct cordon_resolve_how *how, int *ret_fd)
{
	_cleanup_free_ char *remaining = NULL;
	struct walk w = { 0 };
	bool follow = how->flags & CORDON_RESOLVE_SYMLINKS;
	bool write = flags_write(how->open_flags);
	unsigned hops = 0;
	int r, fd;

	remaining = strdup(relative(path));
	if (!remaining)
		return -ENOMEM;

	fd = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = walk_push(&w, fd);
	if (r < 0) {
		close(fd);
		goto out;
	}
	if (how->flags & CORDON_RESOLVE_NO_XDEV) {
		r = mount_id(fd, &w.root_mnt);
		if (r < 0)
			goto out;
	}

	for (;;) {
		char *p = remaining, *comp, *slash;
		char target[PATH_MAX];
		bool last;
		int cur = w.fds[w.depth - 1];
		struct stat st;

		while (*p == '/')
			p++;
		comp = p;
		slash = strchr(comp, '/');
		if (slash)
			*slash = '\0';
		p = slash ? slash + 1 : comp + strlen(comp);
		while (*p == '/')
			p++;
		last = *p == '\0';

		if (comp[0] == '\0' || strcmp(comp, ".") == 0) {
			if (!last) {
				memmove(remaining, p, strlen(p) + 1);
				continue;
			}
			/* The path names the current directory itself. */
			fd = openat(cur, ".", (how->open_flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC | O_NOCTTY);
			if (fd < 0) {
				r = -errno;
				goto out;
			}
			goto opened;
		}
		if (strcmp(comp, "..") == 0) {
			/* Never ask the kernel for "..": pop a held fd. */
			if (w.depth <= 1) {
				r = -EXDEV;
				goto out;
			}
			closep(&w.fds[--w.depth]);
			if (last) {
				fd = openat(w.fds[w.depth - 1], ".",
					    (how->open_flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC | O_NOCTTY);
				if (fd < 0) {
					r = -errno;
					goto out;
				}
				goto opened;
			}
			memmove(remaining, p, strlen(p) + 1);
			continue;
		}

		if (!last) {
			fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				r = -errno;
				goto out;
			}
			if (fstat(fd, &st) < 0) {
				r = -errno;
				close(fd);
				goto out;
			}
			if (S_ISLNK(st.st_mode)) {
				close(fd);
				goto symlink;
			}
			if (!S_ISDIR(st.st_mode)) {
				close(fd);
				r = -ENOTDIR;
				goto out;
			}
			r = check_xdev(&w, fd, how->flags);
			if (r < 0) {
				close(fd);
				goto out;
			}
			r = walk_push(&w, fd);
			if (r < 0) {
				close(fd);
				goto out;
			}
			memmove(remaining, p, strlen(p) + 1);
			continue;
		}

		/* The final component: O_NOFOLLOW so that a symlink swapped in
		 * after any check is refused by the kernel (ELOOP), and O_TRUNC
		 * only after finish_open()'s hard-link check. */
		fd = openat(cur, comp, (how->open_flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, how->mode);
		if (fd < 0) {
			r = -errno;
			/* O_NOFOLLOW on a symlink gives ELOOP, or ENOTDIR with
			 * O_DIRECTORY: look at what is there. The follow itself
			 * goes through readlinkat and a fresh walk, so this check
			 * racing with a swap cannot lead outside. */
			if (r == -ELOOP || r == -ENOTDIR) {
				if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
					goto symlink;
			}
			goto out;
		}
		if (how->open_flags & O_PATH) {
			if (fstat(fd, &st) < 0) {
				r = -errno;
				close(fd);
				goto out;
			}
			if (S_ISLNK(st.st_mode)) {
				close(fd);
				goto symlink;
			}
		}
	opened:
		r = check_xdev(&w, fd, how->flags);
		if (r >= 0)
			r = finish_open(fd, how);
		if (r < 0) {
			close(fd);
			goto out;
		}
		*ret_fd = fd;
		r = 0;
		goto out;

	symlink:
		/* Symlinks are refused unless the root allows them. Writes never
		 * follow one in the fallback: fail closed rather than reason
		 * about where a link points while it may be changing. */
		if (!follow || write) {
			r = -ELOOP;
			goto out;
		}
		if (++hops > MAX_SYMLINK_HOPS) {
			r = -ELOOP;
			goto out;
		}
		r = read_link(cur, comp, target, sizeof(target));
		if (r < 0)
			goto out;
		if (target[0] == '/') {
			r = -EXDEV; /* as RESOLVE_BENEATH: absolute targets leave the root */
			goto out;
		}
		r = splice_target(&remaining, target, p);
		if (r < 0)
			goto out;
	}
out:
	walk_done(&w);
	return r;
}

int cordon_resolve(int root_fd, const char *path, const struct cordon_resolve_how *how, const struct cordon_caps *caps,
		   int *ret_fd)
{
	int r;

	if (root_fd < 0 || !path || !how || !ret_fd)
		return -EINVAL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;

	if (cordon_resolve_has_openat2(caps)) {
		r = resolve_openat2(root_fd, path, how, ret_fd);
		/* A kernel that turns out not to have openat2 after all (seccomp
		 * in a container, say) falls back to the walk. */
		if (r != -ENOSYS && r != -E2BIG)
			return r;
	}
	return resolve_walk(root_fd, path, how, ret_fd);
}

int cordon_resolve_parent(int root_fd, const char *path, unsigned flags, const struct cordon_caps *caps,
			  int *ret_dir_fd, char **ret_name)
{
	_cleanup_free_ char *copy = NULL, *name = NULL;
	struct cordon_resolve_how how = { .open_flags = O_PATH | O_DIRECTORY, .flags = flags };
	char *slash;
	size_t len;
	int fd, r;

	if (!path)
		return -EINVAL;
	copy = strdup(relative(path));
	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	name = strdup(slash ? slash + 1 : copy);
	if (!name)
		return -ENOMEM;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if (slash)
		*slash = '\0';
	r = cordon_resolve(root_fd, slash ? copy : ".", &how, caps, &fd);
	if (r < 0)
		return r;
	*ret_dir_fd = fd;
	*ret_name = TAKE_PTR(name);
	return 0;
}
