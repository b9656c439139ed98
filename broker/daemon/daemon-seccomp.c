/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's own seccomp allowlist, loaded last in the privilege phases
 * (after the drop and Landlock, before the database is opened or any
 * traffic is read).
 *
 * What the broker does from then on is small and known: an epoll loop over
 * already created sockets and pipes (accept, send/recv, SCM_RIGHTS from the
 * helper), SQLite on files beneath the state directory, libsodium (getrandom,
 * mlock, mprotect), jansson/libyaml (memory only) and libmicrohttpd in
 * external-loop mode. It never creates a socket, never forks or executes a
 * program (the helper does that) — except the approval webhook's client
 * socket: with a webhook configured, socket(AF_INET, ...) and connect are
 * allowed (Landlock confines connect to the webhook's port) — never mounts, traces or loads BPF. Anything
 * not listed fails with EPERM (a missed rare path degrades into an error,
 * not a crash); the syscalls that would only serve an attacker — exec,
 * ptrace, process_vm_*, bpf, mount, unshare/setns, kexec, module loading,
 * keyctl, io_uring, userfaultfd, perf_event_open — kill the process, so an
 * exploit attempt is loud. Non-native architectures are killed by
 * libseccomp's bad-arch action. A test spawner that forks and executes in
 * process (struct cordon_spawner.sandbox_exec set) gets process creation
 * allowed in addition; cordond's launcher spawner never does. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <libseccomp-include.h>

#include "cleanup.h"
#include "daemon-private.h"

/* clang-format off */
static const char *const allowed[] = {
	/* I/O on existing fds */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
	"close", "lseek", "fcntl", "dup", "dup3", "sendfile",
	/* the loop */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll",
	"select", "pselect6", "eventfd2", "pipe2",
	/* sockets that already exist */
	"accept", "accept4", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown",
	"getsockopt", "setsockopt", "getsockname", "getpeername",
	/* files (Landlock confines where) */
	"openat", "openat2", "newfstatat", "fstat", "statx", "faccessat", "faccessat2", "readlinkat", "getdents64",
	"unlinkat", "renameat", "renameat2", "mkdirat", "fsync", "fdatasync", "ftruncate", "fallocate",
	"flock", "fchown", "fchmod", "getcwd",
	/* the same through glibc's legacy entry points on x86_64 */
	"open", "stat", "lstat", "access", "readlink", "unlink", "rename", "mkdir", "rmdir",
	/* memory (libsodium locks and guards its key pages) */
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "mlock", "mlock2", "munlock", "msync",
	/* signals, time, identity, limits */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "kill", "tgkill",
	"clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getrandom", "uname", "sysinfo", "getrlimit", "prlimit64", "getrusage", "sched_yield",
	"sched_getaffinity", "futex", "set_robust_list", "get_robust_list", "rseq", "restart_syscall",
	/* children: the helper is reaped at shutdown */
	"wait4", "waitid",
	"exit", "exit_group",
};

static const char *const fatal[] = {
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "mount",
	"umount2", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "pivot_root",
	"chroot", "unshare", "setns", "kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "userfaultfd", "perf_event_open", "personality", "setuid", "setgid",
	"setresuid", "setresgid", "setgroups", "capset",
};

/* The in-process test spawner forks and executes connectors. */
static const char *const spawn_extra[] = {
	"clone", "clone3", "fork", "vfork", "execve", "dup2", "prctl", "close_range", "set_tid_address",
	"arch_prctl", "setsid",
};
/* clang-format on */

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture */
	return seccomp_rule_add(ctx, action, nr, 0);
}

int privs_seccomp_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag)
{
	scmp_filter_ctx ctx;
	bool spawns = d->spawner.sandbox_exec != NULL;
	int r = 0;

	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return cordon_diag_set(diag, ENOMEM, "seccomp", "seccomp_init failed");
	/* no_new_privs is already set (privs_drop). */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(allowed); i++)
		r = add(ctx, SCMP_ACT_ALLOW, allowed[i]);
	/* ioctl: only the harmless queries libc and libmicrohttpd make. */
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, FIONREAD, 0));
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, FIONBIO, 0));
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TCGETS, 0));
	/* The approval webhook: an IPv4 TCP client socket, nothing else. */
	if (r >= 0 && d->webhook)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET, 0));
	if (r >= 0 && d->webhook)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(connect), 0);
	for (size_t i = 0; r >= 0 && spawns && i < ELEMENTSOF(spawn_extra); i++)
		r = add(ctx, SCMP_ACT_ALLOW, spawn_extra[i]);
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fatal); i++) {
		if (spawns && (!strcmp(fatal[i], "execve")))
			continue;
		r = add(ctx, SCMP_ACT_KILL_PROCESS, fatal[i]);
	}
	if (r >= 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return cordon_diag_set(diag, -r, "seccomp", "cannot load cordond's own filter: %s", strerror(-r));
	*ret_report =
		json_pack("{s:s, s:s, s:i, s:b, s:b}", "seccomp", "enforced", "default", "errno(EPERM)", "allowed",
			  (int)ELEMENTSOF(allowed) + 1, "spawner_exec", spawns, "webhook_client", d->webhook != NULL);
	return 0;
}
