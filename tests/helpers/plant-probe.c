/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plant-probe: what a hostile connector tries against the host through its
 * sandbox (issue 11, findings 1 and 7). Every attempt prints one line
 *   "<name> <errno>"     (0 when the call succeeded)
 * and the run goes on; the test compares each errno with the one it wants.
 * Exit status 0 once all attempts ran, 200+ for a usage error.
 *
 *   plant-probe plant DIR
 *       DIR is a read-write root: setuid/setgid modes through every
 *       mode-setting syscall, device nodes, security/trusted xattrs,
 *       openat2, and the root directory itself, plus the allowed cases.
 *   plant-probe rootnames DIR
 *       DIR is a read-write root: every way of naming DIR itself (the
 *       path, DIR/., DIR/sub/.., an O_DIRECTORY fd, an O_PATH fd,
 *       /proc/self/fd/N) and, for contrast, a directory and a file inside
 *       it, each asked with statx whether it is the root of its mount:
 *       "mountroot-<how> 1|0" (-1 when statx cannot tell).
 *   plant-probe rootmode DIR
 *       chmod and chown of DIR itself through every syscall and naming,
 *       to modes without special bits (0777, 1777, its own 0755) and to
 *       the connector's own ids and others, then chmod/chown of a file
 *       and chmod of a directory inside DIR (issue 11, finding 1).
 *   plant-probe rootrel DIR
 *       the root named relatively (a dirfd inside plus "..", the cwd
 *       inside plus "..", an absolute symlink, a relative one, from a
 *       second thread) -> EPERM; relative names of things inside, the
 *       symlink itself (lchown) -> 0; fchmod/fchown of O_PATH fds -> EBADF.
 *   plant-probe rootrace DIR
 *       races that would defeat a guard that looks twice: a thread swaps
 *       a symlink between DIR and a file, flips the path buffer between
 *       "DIR" and "DIR/file", or dup2()s DIR's fd and a file's fd onto one
 *       number, while the main thread chmods 0777 through it; each call
 *       must end 0 (the file) or EPERM (the root): "race-<how>-other 0",
 *       and "race-root-mode 493" (0755, what the root kept).
 *   plant-probe fastopen ADDR DENIED_PORT ALLOWED_PORT
 *       TCP Fast Open to a port Landlock denies (sendto/sendmsg/sendmmsg
 *       with MSG_FASTOPEN, TCP_FASTOPEN_CONNECT), a plain connect to it,
 *       and a plain connect + send to the allowed port. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif

static char dir[256];

/* Prints the attempt's errno (0 on success) and returns it. */
static int say(const char *name, long r)
{
	int e = r < 0 ? errno : 0;

	printf("%s %d\n", name, e);
	fflush(stdout);
	return e;
}

static const char *at(const char *name)
{
	static char buf[4][512];
	static unsigned k;
	char *b = buf[k++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

/* The open_how of openat2 and the setxattrat argument struct. */
struct xattr_args_v0 {
	unsigned long long value;
	unsigned int size;
	unsigned int flags;
};

static int plant(void)
{
	/* A minimal file capability (v2, cap_setuid permitted+effective). */
	static const unsigned char cap[20] = { 0x01, 0x00, 0x00, 0x02, 0x80, 0 };
	struct xattr_args_v0 xa = { .value = (unsigned long long)(uintptr_t)cap, .size = sizeof(cap) };
	struct open_how how = { .flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = 04755 };
	int fd, dfd;

	umask(0);
	/* Allowed: create 0644, chmod 0644, mkdir 0755, a FIFO, chmod of the
	 * root directory to the mode it already has. */
	fd = open(at("plain"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	say("create-0644", fd);
	say("chmod-0644", chmod(at("plain"), 0644));
	say("mkdir-0755", mkdir(at("dir"), 0755));
	say("mknod-fifo", mknod(at("fifo"), S_IFIFO | 0644, 0));

	/* Setuid and setgid through every mode-setting syscall. */
	say("chmod-4755", chmod(at("plain"), 04755));
	say("chmod-2755", chmod(at("plain"), 02755));
	say("chmod-raw-4755", syscall(SYS_chmod, at("plain"), 04755));
	say("fchmod-4755", fchmod(fd, 04755));
	say("fchmod-2755", fchmod(fd, 02755));
	say("fchmodat-6755", syscall(SYS_fchmodat, AT_FDCWD, at("plain"), 06755));
	say("fchmodat2-4755", syscall(__NR_fchmodat2, AT_FDCWD, at("plain"), 04755, 0));
	/* The upper half of mode is ignored by the kernel: seen by seccomp,
	 * it must not hide the bit. */
	say("fchmod-4755-high", syscall(SYS_fchmod, fd, 0xffffffff00000000ul | 04755));
	say("chmod-dir-2755", chmod(at("dir"), 02755));
	say("open-creat-4755", syscall(SYS_open, at("o1"), O_CREAT | O_WRONLY | O_CLOEXEC, 04755));
	say("openat-creat-2755", syscall(SYS_openat, AT_FDCWD, at("o2"), O_CREAT | O_WRONLY | O_CLOEXEC, 02755));
	say("creat-4755", syscall(SYS_creat, at("o3"), 04755));
	say("openat-tmpfile-4755", syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755));
	say("mkdir-2755", syscall(SYS_mkdir, at("sg"), 02755));
	say("mkdirat-4755", syscall(SYS_mkdirat, AT_FDCWD, at("su"), 04755));
	say("mknod-reg-4755", mknod(at("reg"), S_IFREG | 04755, 0));
	say("mknodat-reg-2755", mknodat(AT_FDCWD, at("reg2"), S_IFREG | 02755, 0));
	say("mknod-chr", mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)));
	say("mknodat-blk", mknodat(AT_FDCWD, at("blk"), S_IFBLK | 0600, makedev(7, 0)));
	say("openat2-creat-4755", syscall(SYS_openat2, AT_FDCWD, at("o4"), &how, sizeof(how)));
	how = (struct open_how){ .flags = O_RDONLY | O_CLOEXEC };
	say("openat2-read", syscall(SYS_openat2, AT_FDCWD, at("plain"), &how, sizeof(how)));

	/* Extended attributes. */
	say("setxattr-security-capability", setxattr(at("plain"), "security.capability", cap, sizeof(cap), 0));
	say("lsetxattr-trusted", lsetxattr(at("plain"), "trusted.x", "1", 1, 0));
	say("fsetxattr-security-foo", fsetxattr(fd, "security.foo", "1", 1, 0));
	say("setxattr-user", setxattr(at("plain"), "user.x", "1", 1, 0));
	say("setxattrat-security-capability",
	    syscall(__NR_setxattrat, AT_FDCWD, at("plain"), 0, "security.capability", &xa, sizeof(xa)));

	/* The root directory itself: special bits by path and by fd, and a
	 * new owner. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	say("root-open", dfd);
	say("root-chmod-2755", chmod(dir, 02755));
	say("root-chmod-4755", chmod(dir, 04755));
	say("root-fchmod-2775", fchmod(dfd, 02775));
	say("root-chown-65534", chown(dir, 65534, (gid_t)-1));
	say("root-fchown-0", fchown(dfd, 0, 0));
	say("root-chgrp-65534", chown(dir, (uid_t)-1, 65534));
	return 0;
}

/* 1 when statx says the name is the root of its mount, 0 when not, -1
 * when it cannot tell. */
static int mount_root(int dirfd, const char *name, int flags)
{
	struct statx stx;

	if (statx(dirfd, name, flags, STATX_BASIC_STATS, &stx) < 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -1;
	return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

static int rootnames(void)
{
	char proc[64];
	int dfd, pfd, fd;

	(void)mkdir(at("sub"), 0755);
	fd = open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || pfd < 0)
		return 201;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	printf("mountroot-path %d\n", mount_root(AT_FDCWD, dir, 0));
	printf("mountroot-dot %d\n", mount_root(AT_FDCWD, at("."), 0));
	printf("mountroot-dotdot %d\n", mount_root(AT_FDCWD, at("sub/.."), 0));
	printf("mountroot-fd %d\n", mount_root(dfd, "", AT_EMPTY_PATH));
	printf("mountroot-opath %d\n", mount_root(pfd, "", AT_EMPTY_PATH));
	printf("mountroot-procfd %d\n", mount_root(AT_FDCWD, proc, 0));
	printf("mountroot-sub %d\n", mount_root(AT_FDCWD, at("sub"), 0));
	printf("mountroot-file %d\n", mount_root(AT_FDCWD, at("file"), 0));
	fflush(stdout);
	return 0;
}

static int rootmode(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char proc[64];
	int dfd, fd;

	umask(0);
	fd = open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || mkdir(at("sub"), 0755) < 0)
		return 201;
	close(fd);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	say("root-open", dfd);
	if (dfd < 0)
		return 202;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);

	/* The mode of the root itself: no special bit anywhere, so seccomp
	 * lets each call through to the kernel. */
	say("root-chmod-0777", chmod(dir, 0777));
	say("root-chmod-1777", chmod(dir, 01777));
	say("root-chmod-0755-same", chmod(dir, 0755));
	say("root-fchmod-0777", fchmod(dfd, 0777));
	say("root-fchmod-1777", fchmod(dfd, 01777));
	say("root-fchmodat-0777", syscall(SYS_fchmodat, AT_FDCWD, dir, 0777));
	say("root-fchmodat-fd-dot-1777", syscall(SYS_fchmodat, dfd, ".", 01777));
	say("root-fchmodat2-empty-1777", syscall(__NR_fchmodat2, dfd, "", 01777, AT_EMPTY_PATH));
	say("root-chmod-dot-0777", chmod(at("."), 0777));
	say("root-chmod-dotdot-0777", chmod(at("sub/.."), 0777));
	say("root-chmod-procfd-0777", chmod(proc, 0777));

	/* Its owner: to the connector's own ids (what the id-mapped mount
	 * maps back to the owner), to nothing (-1, -1), and to others. */
	say("root-chown-own", chown(dir, uid, gid));
	say("root-fchown-own", fchown(dfd, uid, gid));
	say("root-lchown-none", lchown(dir, (uid_t)-1, (gid_t)-1));
	say("root-fchownat-0", fchownat(AT_FDCWD, dir, 0, 0, 0));
	say("root-chown-65534", chown(dir, 65534, 65534));
	say("root-fchownat-empty-own", fchownat(dfd, "", uid, gid, AT_EMPTY_PATH));

	/* Inside the root, the ordinary rules. */
	say("file-chmod-0640", chmod(at("file"), 0640));
	say("file-chown-own", chown(at("file"), uid, gid));
	say("sub-chmod-0700", chmod(at("sub"), 0700));
	close(dfd);
	return 0;
}

static void *chmod_root_thread(void *arg)
{
	(void)arg;
	say("thread-chmod-root", chmod(dir, 0777));
	return NULL;
}

static int rootrel(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char path[512];
	int sfd, pfd, ffd;
	pthread_t t;

	umask(0);
	ffd = open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (ffd < 0 || mkdir(at("sub"), 0755) < 0 || symlink(dir, at("link-root")) < 0 ||
	    symlink("..", at("sub/up")) < 0 || symlink("file", at("link-file")) < 0)
		return 201;
	close(ffd);
	sfd = open(at("sub"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return 202;
	say("rel-fchmodat-sub-dotdot", syscall(SYS_fchmodat, sfd, "..", 0777));
	say("rel-fchownat-sub-dotdot", fchownat(sfd, "..", uid, gid, 0));
	say("rel-fchmodat2-sub-dotdot", syscall(__NR_fchmodat2, sfd, "..", 0777, 0));
	say("rel-fchmodat-sub-dotdot-file", syscall(SYS_fchmodat, sfd, "../file", 0640));
	say("rel-fchmodat-sub-dot", syscall(SYS_fchmodat, sfd, ".", 0750));
	if (chdir(at("sub")) < 0)
		return 203;
	say("rel-cwd-chmod-dotdot", chmod("..", 0777));
	say("rel-cwd-lchown-dotdot", lchown("..", uid, gid));
	say("rel-cwd-chmod-up", chmod("up", 0777));
	say("rel-cwd-chmod-dot", chmod(".", 0755));
	if (chdir("/") < 0)
		return 204;
	say("rel-chmod-link-root", chmod(at("link-root"), 0777));
	say("rel-chown-link-root", chown(at("link-root"), uid, gid));
	say("rel-lchown-link-root", lchown(at("link-root"), uid, gid)); /* the link itself */
	say("rel-chmod-sub-up", chmod(at("sub/up"), 0777));
	say("rel-chmod-sub-up-slash", chmod(at("sub/up/"), 0777));
	say("rel-chmod-link-file", chmod(at("link-file"), 0644));
	snprintf(path, sizeof(path), "%s/sub/../sub/./..//", dir);
	say("rel-chmod-messy", chmod(path, 0777));
	say("rel-chmod-empty", chmod("", 0777));
	say("rel-fchmodat2-empty-noflag", syscall(__NR_fchmodat2, sfd, "", 0777, 0));
	say("rel-fchmodat2-badflag", syscall(__NR_fchmodat2, sfd, "..", 0777, 0x8000));
	say("rel-fchmodat-badfd", syscall(SYS_fchmodat, 9999, "x", 0777));
	say("rel-fchmodat-badfd-abs", syscall(SYS_fchmodat, 9999, at("file"), 0600));
	say("rel-chmod-efault", syscall(SYS_chmod, (void *)16, 0777));
	pfd = open(at("file"), O_PATH | O_CLOEXEC);
	say("rel-fchmod-opath", fchmod(pfd, 0644));
	say("rel-fchown-opath", fchown(pfd, uid, gid));
	close(pfd);
	pfd = open(dir, O_PATH | O_CLOEXEC);
	say("rel-fchmod-opath-root", fchmod(pfd, 0777));
	say("rel-fchmodat2-opath-root-empty", syscall(__NR_fchmodat2, pfd, "", 0777, AT_EMPTY_PATH));
	close(pfd);
	if (pthread_create(&t, NULL, chmod_root_thread, NULL) != 0)
		return 205;
	pthread_join(t, NULL);
	close(sfd);
	return 0;
}

static volatile int race_stop;
static char race_buf[512];
static int race_fd_root, race_fd_file, race_fd_slot;

static void *swap_symlink(void *arg)
{
	char tmp[512], link[512];

	(void)arg;
	snprintf(tmp, sizeof(tmp), "%s/swap.tmp", dir);
	snprintf(link, sizeof(link), "%s/swap", dir);
	for (unsigned i = 0; !race_stop; i++) {
		(void)unlink(tmp);
		if (symlink(i % 2 ? dir : "file", tmp) == 0)
			(void)rename(tmp, link);
	}
	return NULL;
}

static void *flip_buffer(void *arg)
{
	size_t n = strlen(dir);

	(void)arg;
	while (!race_stop) {
		__atomic_store_n(&race_buf[n], '\0', __ATOMIC_RELAXED);
		__atomic_store_n(&race_buf[n], '/', __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *flip_fd(void *arg)
{
	(void)arg;
	while (!race_stop) {
		(void)dup2(race_fd_root, race_fd_slot);
		(void)dup2(race_fd_file, race_fd_slot);
	}
	return NULL;
}

/* Runs `what` against a flipping thread `fn` `rounds` times; prints the
 * calls that ended neither 0 nor EPERM. */
static void race(const char *name, void *(*fn)(void *), int (*what)(void), int rounds)
{
	pthread_t t;
	int other = 0, perm = 0, ok = 0;
	char line[64];

	race_stop = 0;
	if (pthread_create(&t, NULL, fn, NULL) != 0) {
		printf("%s-other -1\n", name);
		return;
	}
	for (int i = 0; i < rounds; i++) {
		int r = what();

		if (r == 0)
			ok++;
		else if (r == EPERM)
			perm++;
		else
			other++;
	}
	race_stop = 1;
	pthread_join(t, NULL);
	snprintf(line, sizeof(line), "%s-other", name);
	printf("%s %d\n", line, other);
	fprintf(stderr, "%s: %d ok, %d EPERM, %d other\n", name, ok, perm, other);
	fflush(stdout);
}

static int chmod_swap(void)
{
	return chmod(at("swap"), 0777) < 0 ? errno : 0;
}

static int chmod_buf(void)
{
	return chmod(race_buf, 0777) < 0 ? errno : 0;
}

static int fchmod_slot(void)
{
	return fchmod(race_fd_slot, 0777) < 0 ? errno : 0;
}

static int rootrace(void)
{
	struct stat st;
	int fd;

	fd = open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || symlink("file", at("swap")) < 0)
		return 201;
	close(fd);
	race("race-symlink", swap_symlink, chmod_swap, 3000);
	snprintf(race_buf, sizeof(race_buf), "%s/file", dir);
	race("race-buffer", flip_buffer, chmod_buf, 3000);
	race_fd_root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	race_fd_file = open(at("file"), O_RDONLY | O_CLOEXEC);
	race_fd_slot = dup(race_fd_file);
	if (race_fd_root < 0 || race_fd_file < 0 || race_fd_slot < 0)
		return 202;
	race("race-fd", flip_fd, fchmod_slot, 3000);
	printf("race-root-mode %d\n", stat(dir, &st) == 0 ? (int)(st.st_mode & 07777) : -1);
	fflush(stdout);
	return 0;
}

static int fastopen(const char *addr, int denied, int allowed)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)denied) };
	struct sockaddr_in ok = { .sin_family = AF_INET, .sin_port = htons((uint16_t)allowed) };
	struct iovec iov = { .iov_base = "leak", .iov_len = 4 };
	struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm = { .msg_hdr = mh };
	int one = 1, fd;

	/* A refused peer must show up as an errno, not as SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1 || inet_pton(AF_INET, addr, &ok.sin_addr) != 1)
		return 203;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("fastopen-sendto", sendto(fd, "leak", 4, MSG_FASTOPEN, (struct sockaddr *)&to, sizeof(to)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("fastopen-sendmsg", sendmsg(fd, &mh, MSG_FASTOPEN));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("fastopen-sendmmsg", sendmmsg(fd, &mm, 1, MSG_FASTOPEN));
	close(fd);
	/* The flag is an int to the kernel: garbage above bit 31 changes
	 * nothing. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("fastopen-sendto-high",
	    syscall(SYS_sendto, fd, "leak", 4, 0xffffffff00000000ul | MSG_FASTOPEN, &to, sizeof(to)));
	close(fd);
	/* TCP_FASTOPEN_CONNECT defers the SYN of a connect(2), which Landlock
	 * checks: to the denied port it is refused, and after a connect to
	 * the allowed port a sendto naming the denied one goes to the
	 * connected peer. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("fastopen-connect-opt", setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one)));
	say("fastopen-connect-denied", connect(fd, (struct sockaddr *)&to, sizeof(to)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one));
	if (say("fastopen-connect-allowed", connect(fd, (struct sockaddr *)&ok, sizeof(ok))) == 0)
		say("fastopen-connected-sendto-denied",
		    sendto(fd, "tfo-", 4, 0, (struct sockaddr *)&to, sizeof(to)) == 4 ? 0 : -1);
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("connect-denied", connect(fd, (struct sockaddr *)&to, sizeof(to)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (say("connect-allowed", connect(fd, (struct sockaddr *)&ok, sizeof(ok))) == 0)
		say("send-allowed", send(fd, "fine", 4, 0) == 4 ? 0 : -1);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "plant") == 0 && strlen(argv[2]) < sizeof(dir)) {
		snprintf(dir, sizeof(dir), "%s", argv[2]);
		return plant();
	}
	if (argc == 3 && (strcmp(argv[1], "rootnames") == 0 || strcmp(argv[1], "rootmode") == 0) &&
	    strlen(argv[2]) < sizeof(dir)) {
		snprintf(dir, sizeof(dir), "%s", argv[2]);
		return strcmp(argv[1], "rootnames") == 0 ? rootnames() : rootmode();
	}
	if (argc == 3 && (strcmp(argv[1], "rootrel") == 0 || strcmp(argv[1], "rootrace") == 0) &&
	    strlen(argv[2]) < sizeof(dir)) {
		snprintf(dir, sizeof(dir), "%s", argv[2]);
		return strcmp(argv[1], "rootrel") == 0 ? rootrel() : rootrace();
	}
	if (argc == 5 && strcmp(argv[1], "fastopen") == 0)
		return fastopen(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: plant-probe plant DIR | rootnames DIR | rootmode DIR | rootrel DIR | rootrace DIR | "
			"fastopen ADDR DENIED_PORT "
			"ALLOWED_PORT\n");
	return 200;
}
