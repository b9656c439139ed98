/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The root guard without BPF LSM: a seccomp user-notification supervisor
 * (issue 11, finding 1). Where the kernel refuses BPF LSM programs (the BPF
 * guard, rootguard.h), the sandbox's init loads a second, small seccomp
 * filter that answers SECCOMP_RET_USER_NOTIF for chmod, fchmod, fchmodat,
 * fchmodat2, chown, fchown, lchown and fchownat, with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER; the listener goes to the launcher over
 * the sync socket, which hands it to a supervisor process outside the
 * sandbox (a child of the launcher, root, chrooted to the sandbox's root).
 *
 * The supervisor never lets the connector's syscall continue
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE is never used): it copies the path once,
 * confirms the notification is still live, resolves the path itself as the
 * kernel would for the connector (the connector's cwd or its dirfd, fetched
 * with pidfd_getfd, and the sandbox's root), refuses with EPERM when the
 * object is a mount root (statx STATX_ATTR_MOUNT_ROOT: the same test as the
 * BPF guard) or when a mode carries S_ISUID/S_ISGID, and otherwise performs
 * the operation on the resolved O_PATH fd with the connector's fsuid/fsgid,
 * no supplementary groups and every capability but CAP_SYS_PTRACE dropped,
 * so the kernel's own permission checks are the connector's (through the
 * same id-mapped mount). What it acted on is what it checked: no second
 * lookup, hence no time-of-check/time-of-use window.
 *
 * The ERRNO rules of the main filter (setuid bits, seccomp.c) keep
 * precedence over USER_NOTIF across stacked filters.
 *
 * The supervisor exits by itself when the listener reports POLLHUP (no task
 * uses the filter any more: the sandbox's init was reaped) and dies with
 * the launcher (PDEATHSIG). If it is gone, the filter answers ENOSYS: fail
 * closed. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>

/* The notification filter (native architecture; a foreign architecture or
 * an x32 number kills the process, as the main filter does). Returns a
 * pointer to a program built once per process (never NULL). */
const struct sock_fprog *cordon_rootguard_notify_filter(void);

/* Starts the supervisor for `listener` (a seccomp listener fd), guarding
 * the sandbox whose root directory is `root` (an O_PATH fd of the
 * sandbox's "/", which its init opened and sent with the listener: taken
 * then, it cannot race with an init that ends before the supervisor
 * runs), acting with `uid`/`gid`. The caller keeps and closes its own
 * copies of both fds. Returns 0 and writes the child's pidfd and pid, or
 * -errno. The caller reaps it (cordon_rootguard_notify_reap). */
int cordon_rootguard_notify_start(int listener, int root, uid_t uid, gid_t gid, int *ret_pidfd, pid_t *ret_pid);

/* Waits up to timeout_ms for the supervisor to exit by itself (it does once
 * no task uses the filter), else kills it; then reaps it and closes
 * *pidfd (set to -EBADF). Returns 1 when it had exited by itself with status
 * 0, 0 otherwise, -errno when it could not be reaped. */
int cordon_rootguard_notify_reap(int *pidfd, int timeout_ms);

/* Copies the NUL-terminated string at `addr` in task `pid`'s memory into
 * buf (size bytes, at most PATH_MAX) page by page. Returns its length, or
 * -EFAULT (unreadable before the NUL), -ENAMETOOLONG (no NUL within size),
 * -ESRCH. */
int cordon_rootguard_notify_read_path(pid_t pid, uint64_t addr, char *buf, size_t size);

/* Rewrites a leading "/proc/self" or "/proc/thread-self" component of path
 * (size bytes of room) to the target's own pid directory, given its pid
 * and thread id as the sandbox's pid namespace numbers them: the
 * supervisor, outside that namespace, would resolve "self" to nothing.
 * Returns 1 when rewritten, 0 when the path does not start so, or
 * -ENAMETOOLONG. */
int cordon_rootguard_notify_rewrite_self(char *path, size_t size, pid_t ns_tgid, pid_t ns_tid);
