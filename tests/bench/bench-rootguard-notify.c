/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-rootguard-notify: what a chmod costs when the root guard is the
 * seccomp supervisor (rootguard-notify.h) instead of BPF LSM. A forked
 * child chmods one file N times directly (baseline, same run), then loads
 * the notification filter, hands its listener to a supervisor started
 * with cordon_rootguard_notify_start() (the same one a sandbox gets,
 * chrooted to the child's root "/" and acting with the child's ids), and
 * chmods the same file N times through it (the full round trip: notify,
 * read the path, resolve, statx, fchmodat2, reply); also fchmod (no path
 * to read or resolve) and a getppid in the filtered child (the filter's
 * cost on other syscalls). Prints medians and p90 in µs, and the ratio.
 * Root only. Figures only; nothing here is an assertion.
 *
 * Usage: bench-rootguard-notify [N]   (default 20000) */

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootguard-notify.h"
#include "bench-util.h"

enum { DIRECT, NOTIFIED, FCHMOD_NOTIFIED, GETPPID_DIRECT, GETPPID_FILTERED, _N };
static const char *const names[_N] = { "chmod direct", "chmod via supervisor", "fchmod via supervisor",
				       "getppid direct", "getppid under the filter" };

static void measure(int kind, const char *path, int fd, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t = now_ns();

		switch (kind) {
		case DIRECT:
		case NOTIFIED:
			if (chmod(path, i % 2 ? 0640 : 0600) < 0)
				_exit(3);
			break;
		case FCHMOD_NOTIFIED:
			if (fchmod(fd, i % 2 ? 0640 : 0600) < 0)
				_exit(3);
			break;
		default:
			(void)syscall(SYS_getppid);
		}
		v[i] = now_ns() - t;
	}
}

static int send_fd(int sock, int fd)
{
	char byte = 1;
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;

	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	char dir[] = "/tmp/cordon-bench-rgn-XXXXXX", path[64];
	uint64_t *v, med[_N], p90[_N];
	int sv[2], fd, st, sup_pidfd = -1, listener, root, gone;
	char go = 1;
	pid_t pid, sup_pid;
	double load[3] = { 0 };

	if (geteuid() != 0) {
		fprintf(stderr,
			"bench-rootguard-notify: needs root (the supervisor chroots and sets its capabilities)\n");
		return 77;
	}
	if (n < 10 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	v = mmap(NULL, sizeof(uint64_t) * n * _N, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || v == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int lfd;

		close(sv[0]);
		measure(DIRECT, path, fd, v + n * DIRECT, n);
		measure(GETPPID_DIRECT, path, fd, v + n * GETPPID_DIRECT, n);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		lfd = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
				   cordon_rootguard_notify_filter());
		if (lfd < 0 || send_fd(sv[1], lfd) < 0)
			_exit(2);
		close(lfd);
		if (read(sv[1], &go, 1) != 1) /* the supervisor runs */
			_exit(2);
		measure(NOTIFIED, path, fd, v + n * NOTIFIED, n);
		measure(FCHMOD_NOTIFIED, path, fd, v + n * FCHMOD_NOTIFIED, n);
		measure(GETPPID_FILTERED, path, fd, v + n * GETPPID_FILTERED, n);
		_exit(0);
	}
	close(sv[1]);
	listener = recv_fd(sv[0]);
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC); /* the bench child's root is ours */
	if (listener < 0 || root < 0 ||
	    cordon_rootguard_notify_start(listener, root, getuid(), getgid(), &sup_pidfd, &sup_pid) < 0 ||
	    write(sv[0], &go, 1) != 1)
		return 1;
	close(listener);
	close(root);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench child failed (status 0x%x)\n", st);
		return 1;
	}
	gone = cordon_rootguard_notify_reap(&sup_pidfd, 1000);
	for (int k = 0; k < _N; k++) {
		med[k] = pct(v + n * (size_t)k, n, 50);
		p90[k] = pct(v + n * (size_t)k, n, 90);
	}
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("bench-rootguard-notify: N=%zu, load average %.2f %.2f %.2f\n", n, load[0], load[1], load[2]);
	for (int k = 0; k < _N; k++)
		printf("  %-26s median %8.2f us  p90 %8.2f us\n", names[k], med[k] / 1000.0, p90[k] / 1000.0);
	printf("  chmod round trip / direct: %.1fx (+%.2f us)\n", (double)med[NOTIFIED] / (double)med[DIRECT],
	       ((double)med[NOTIFIED] - (double)med[DIRECT]) / 1000.0);
	printf("  supervisor ended by itself: %s\n", gone > 0 ? "yes" : "no");
	unlink(path);
	rmdir(dir);
	return 0;
}
