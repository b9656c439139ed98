/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Syscalls glibc 2.36 does not wrap, and constants newer than the Linux 6.1
 * headers, each guarded so a newer header wins. */

#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* clang-format off */
#ifndef __NR_openat2
#define __NR_openat2		437
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2		452
#endif
#ifndef __NR_clone3
#define __NR_clone3		435
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd	438
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal	424
#endif
#ifndef __NR_close_range
#define __NR_close_range	436
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr	442
#endif
#ifndef __NR_open_tree
#define __NR_open_tree		428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount		429
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD		0x00001000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP		262
#endif
#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV		0x01
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS	0x02
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS	0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH		0x08
#endif
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT		0x10
#endif
/* clang-format on */

static inline int sys_openat2(int dirfd, const char *path, const struct open_how *how, size_t size)
{
	return (int)syscall(__NR_openat2, dirfd, path, how, size);
}

static inline long sys_clone3(struct clone_args *args, size_t size)
{
	return syscall(__NR_clone3, args, size);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags)
{
	return (int)syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int sys_close_range(unsigned first, unsigned last, unsigned flags)
{
	return (int)syscall(__NR_close_range, first, last, flags);
}
