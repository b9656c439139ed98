/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The connector's seccomp filter, compiled with libseccomp in the parent and
 * loaded in the child as the last step before execve. docs/seccomp.md is the
 * rule-by-rule explanation; this file keeps the tables and the mechanics.
 *
 * Why it is one file of ~1050 lines: about half of it is the syscall tables
 * (refused sets, argument guards, the names newer than libseccomp), which are
 * read together with the compiler that turns them into one program; split
 * them out when the syscall-name table moves to its own module (it is what
 * ties profile.c to this file, see tools/check-layers).
 *
 * Shape of the program:
 *
 *   base: default  One libseccomp filter, "guard filter" below: default
 *                  action ALLOW, the refused set and the argument guards
 *                  return the profile's action. This is the container-runtime
 *                  approach: connectors are arbitrary runtimes (node, python,
 *                  C) whose syscall needs we cannot enumerate.
 *
 *   base: strict   An allowlist filter (default action = the profile's
 *                  action) chained in front of the same guard filter: every
 *                  "RET ALLOW" of the allowlist program becomes a jump to the
 *                  first instruction of the guard program. The result is
 *                  what two stacked filters would give, in one program and
 *                  one seccomp(2) call. The chaining is needed because
 *                  libseccomp cannot express "allowed, except for these
 *                  argument values" for a syscall: an unconditional rule
 *                  supersedes the conditional ones, and the complements of
 *                  the guards (say, "ioctl cmd != TIOCSTI on the low 32 bits")
 *                  are not expressible as single comparisons.
 *
 * Both filters kill the process for a non-native architecture (i386 via
 * int 0x80) and, on x86-64, for x32 syscall numbers (libseccomp emits the
 * nr >= 0x40000000 check itself when x32 is not in the filter).
 *
 * Argument guards compare exactly what the kernel uses: for parameters the
 * kernel declares as int/unsigned int/umode_t, only the low bits are
 * compared (MASKED_EQ), because the upper half of the register is ignored by
 * the kernel but seen by seccomp. A 64-bit EQ on ioctl's cmd would let
 * 0x100005412 through as TIOCSTI. */

#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <libseccomp-include.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "hex-util.h"
#include "syscall-compat.h"

#define STEP "seccomp"

/* Bumped whenever the tables below change: the policy hash must change with
 * the program a policy compiles to. */
#define POLICY_FORMAT "cordon-seccomp-policy/2"

#define NAME_MAX_LEN 63
#define CACHE_MAX    256

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

DEFINE_CLEANUP(scmp_releasep, scmp_filter_ctx, seccomp_release)
DEFINE_CLEANUP(programp, struct cordon_seccomp_program *, cordon_seccomp_program_free)

/* Syscalls newer than the libseccomp this is built against (2.5.4 knows the
 * table up to Linux 6.0, cachestat/fchmodat2 included): resolved by number.
 * x86-64 numbers only; on other architectures these names stay unknown. */
/* clang-format off */
static const struct { const char *name; int nr; } compat_syscalls[] = {
#if defined(__x86_64__)
	{ "map_shadow_stack",	453 },
	{ "futex_wake",		454 },
	{ "futex_wait",		455 },
	{ "futex_requeue",	456 },
	{ "statmount",		457 },
	{ "listmount",		458 },
	{ "lsm_get_self_attr",	459 },
	{ "lsm_set_self_attr",	460 },
	{ "lsm_list_modules",	461 },
	{ "mseal",		462 },
	{ "setxattrat",		463 },
	{ "getxattrat",		464 },
	{ "listxattrat",	465 },
	{ "removexattrat",	466 },
	{ "open_tree_attr",	467 },
	{ "file_getattr",	468 },
	{ "file_setattr",	469 },
#endif
};

/* The refused set (EPERM, or the profile's action): each gives a process
 * reach beyond its own sandbox (other processes, the kernel, the mount
 * table, the clock, devices) or is a large attack surface few connectors
 * need. docs/seccomp.md says why for each group. `seccomp.allow` can lift
 * any of these. */
static const char *const refused_syscalls[] = {
	/* other processes' memory and file tables */
	"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise",
	"pidfd_getfd", "kcmp",
	/* kernel attack surface */
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	/* the mount table and the root */
	"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "open_tree_attr", "mount_setattr",
	"pivot_root", "chroot", "setns",
	/* kernel modules, kexec, power */
	"init_module", "finit_module", "delete_module", "create_module",
	"get_kernel_syms", "query_module",
	"kexec_load", "kexec_file_load", "reboot",
	/* system-wide state */
	"swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"clock_settime", "clock_adjtime", "settimeofday", "adjtimex", "stime",
	"syslog", "vhangup",
	/* file handles bypass path-based checks */
	"open_by_handle_at", "name_to_handle_at",
	/* extended attributes: security.capability gives a file capabilities
	 * on the host, other security.* and trusted.* names label or trust
	 * it; the name is a string seccomp cannot read, so the whole set
	 * family goes (the kernel also refuses those namespaces to a process
	 * without CAP_SETFCAP/CAP_SYS_ADMIN, which the connector never has:
	 * lifting these with `allow` leaves that layer and opens user.*) */
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	/* hardware and segment tables */
	"iopl", "ioperm", "modify_ldt",
	/* obsolete interfaces */
	"lookup_dcookie", "nfsservctl", "uselib", "_sysctl",
};

/* Syscalls with argument guards (add_guards() below): clone, clone3,
 * unshare, socket, socketpair, ioctl, personality, mknod, mknodat, the
 * chmod family, creat, open, openat, mkdir, mkdirat, and the plan rules'
 * openat2, sendto, sendmsg, sendmmsg. The guards can never be lifted:
 * naming one of these in `allow` allows it *with* its guards (which
 * matters for the strict base only); naming one in `deny` refuses it
 * outright, except clone3, which always answers ENOSYS. */

/* The strict base: what a node, python or C MCP server speaking on stdio
 * needs (file I/O, memory, threads, futex, epoll, signals, time, sockets
 * under the guards, exec of helpers). Everything else gets the profile's
 * action. Checked against `strace -f` of node 20 and python 3 servers. */
static const char *const strict_syscalls[] = {
	/* files */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "preadv2", "pwritev2", "open", "openat", "openat2", "creat",
	"close", "close_range", "lseek", "stat", "fstat", "lstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getdents", "getdents64", "mkdir", "mkdirat",
	"rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link",
	"linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat",
	"fchmodat2", "chown", "fchown", "lchown", "fchownat", "truncate",
	"ftruncate", "fsync", "fdatasync", "sync_file_range", "fallocate",
	"fadvise64", "utime", "utimes", "utimensat", "futimesat", "dup", "dup2",
	"dup3", "pipe", "pipe2", "fcntl", "flock", "sendfile", "splice", "tee",
	"copy_file_range", "getcwd", "chdir", "fchdir", "umask", "getxattr",
	"lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
	"fremovexattr", "memfd_create", "inotify_init", "inotify_init1",
	"inotify_add_watch", "inotify_rm_watch", "ioctl",
	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync",
	"mincore", "mlock", "mlock2", "munlock", "membarrier", "pkey_mprotect",
	"pkey_alloc", "pkey_free",
	/* processes and threads */
	"clone", "clone3", "fork", "vfork", "execve", "execveat", "exit",
	"exit_group", "wait4", "waitid", "kill", "tgkill", "tkill", "getpid",
	"gettid", "getppid", "getpgrp", "getpgid", "setpgid", "getsid", "setsid",
	"set_tid_address", "set_robust_list", "get_robust_list", "rseq",
	"futex", "futex_waitv", "sched_yield", "sched_getaffinity",
	"sched_getparam", "sched_getscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getattr", "getpriority", "setpriority",
	"prctl", "arch_prctl", "getrlimit", "setrlimit", "prlimit64",
	"getrusage", "times", "sysinfo", "uname", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "getgroups", "capget",
	"pidfd_open", "pidfd_send_signal", "getcpu", "getrandom",
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "sigaltstack",
	"signalfd", "signalfd4", "pause", "alarm", "restart_syscall",
	/* time */
	"clock_gettime", "clock_getres", "clock_nanosleep", "gettimeofday",
	"time", "nanosleep", "timer_create", "timer_settime", "timer_gettime",
	"timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "getitimer", "setitimer",
	/* events */
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
	"eventfd", "eventfd2",
	/* sockets (family, type and protocol guarded) */
	"socket", "socketpair", "connect", "bind", "listen", "accept",
	"accept4", "getsockname", "getpeername", "sendto", "recvfrom",
	"sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "setsockopt",
	"getsockopt",
};

/* Namespace flags clone(2) and unshare(2) may not carry. CLONE_NEWTIME
 * (0x80) is only meaningful to unshare and clone3: for clone() those bits are
 * the exit signal. */
static const uint64_t clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static const uint64_t allowed_families[] = { AF_UNIX, AF_INET, AF_INET6 };
/* clang-format on */

/* The normalized inputs of a policy: what the hash covers and what the
 * program is compiled from. Names point into the profile. */
struct policy {
	enum cordon_seccomp_base base;
	enum cordon_seccomp_action action;
	uint32_t arch;
	bool kill_process; /* SECCOMP_RET_KILL_PROCESS, else KILL_THREAD */
	const char **allow;
	size_t n_allow;
	const char **deny;
	size_t n_deny;
	unsigned opts; /* CORDON_SECCOMP_OPENAT2_ENOSYS | CORDON_SECCOMP_NO_FASTOPEN */
};

static void policy_done(struct policy *p)
{
	free(p->allow);
	free(p->deny);
}

static bool name_in(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

/* Returns the syscall number for the native architecture, a negative
 * libseccomp pseudo-number for a syscall that exists only on other
 * architectures (rules on those are no-ops), or __NR_SCMP_ERROR. */
static int resolve_name(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr != __NR_SCMP_ERROR)
		return nr;
	for (size_t i = 0; i < ELEMENTSOF(compat_syscalls); i++)
		if (strcmp(name, compat_syscalls[i].name) == 0)
			return compat_syscalls[i].nr;
	return __NR_SCMP_ERROR;
}

static bool name_valid(const char *s)
{
	size_t n = strnlen(s, NAME_MAX_LEN + 1);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

bool cordon_seccomp_syscall_name_known(const char *name)
{
	return name && name_valid(name) && resolve_name(name) != __NR_SCMP_ERROR;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Validates, sorts and deduplicates one of the profile's name lists. */
static int normalize_list(char *const *names, size_t n, const char *key, const char ***ret, size_t *ret_n,
			  struct cordon_diag *reterr_diag)
{
	_cleanup_free_ const char **v = NULL;
	size_t k = 0;

	if (n > 4096)
		return cordon_diag_set(reterr_diag, E2BIG, STEP, "seccomp.%s: too many names (%zu, at most 4096)", key,
				       n);
	if (n > 0 && !names)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp.%s: %zu names but no list", key, n);
	if (n > 0) {
		v = calloc(n, sizeof(*v));
		if (!v)
			return cordon_diag_set(reterr_diag, ENOMEM, STEP, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (!names[i] || !name_valid(names[i]))
			return cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp.%s: '%.*s' is not a syscall name",
					       key, NAME_MAX_LEN + 1, names[i] ? names[i] : "(null)");
		if (resolve_name(names[i]) == __NR_SCMP_ERROR)
			return cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp.%s: unknown syscall '%s'", key,
					       names[i]);
		v[i] = names[i];
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
	*ret = TAKE_PTR(v);
	*ret_n = k;
	return 0;
}

static int normalize(const struct cordon_profile *p, const struct cordon_caps *caps, unsigned opts, struct policy *ret,
		     struct cordon_diag *reterr_diag)
{
	struct policy pol = {
		.base = p->seccomp_base,
		.action = p->seccomp_action,
		.arch = seccomp_arch_native(),
		.kill_process = true,
		.opts = opts,
	};
	int r;

	if (opts & ~(unsigned)CORDON_SECCOMP_OPTS_ALL)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "unknown seccomp options 0x%x", opts);

	if (pol.base != CORDON_SECCOMP_DEFAULT && pol.base != CORDON_SECCOMP_STRICT)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp.base: invalid value %d", (int)pol.base);
	if (pol.action != CORDON_SECCOMP_ERRNO && pol.action != CORDON_SECCOMP_KILL && pol.action != CORDON_SECCOMP_LOG)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp.action: invalid value %d", (int)pol.action);

	/* caps is optional: without it the running kernel is assumed to have
	 * everything (Linux >= 4.14). With it, the program adapts to what the
	 * probe found, and the adaptation is part of the policy hash. */
	if (caps) {
		if (caps->seccomp_native_arch != 0 && caps->seccomp_native_arch != pol.arch)
			return cordon_diag_set(reterr_diag, EINVAL, STEP,
					       "probe reports native arch 0x%08x but libseccomp builds for 0x%08x",
					       caps->seccomp_native_arch, pol.arch);
		if (caps->seccomp_filter && !caps->seccomp_kill_process)
			pol.kill_process = false;
		if (caps->seccomp_filter && !caps->seccomp_log && pol.action == CORDON_SECCOMP_LOG)
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, STEP,
					       "seccomp.action 'log' needs SECCOMP_RET_LOG (Linux 4.14)");
	}

	r = normalize_list(p->seccomp_allow, p->n_seccomp_allow, "allow", &pol.allow, &pol.n_allow, reterr_diag);
	if (r < 0)
		return r;
	r = normalize_list(p->seccomp_deny, p->n_seccomp_deny, "deny", &pol.deny, &pol.n_deny, reterr_diag);
	if (r < 0) {
		policy_done(&pol);
		return r;
	}
	/* io_uring stays refused whatever `allow` says: its operations
	 * (IORING_OP_OPENAT/OPENAT2/MKDIRAT with any mode, IORING_OP_SETXATTR)
	 * run in the kernel where seccomp sees none of their arguments, so
	 * allowing it would walk around the setuid/setgid and xattr rules. */
	for (size_t i = 0; i < pol.n_allow; i++)
		if (strncmp(pol.allow[i], "io_uring_", 9) == 0) {
			r = cordon_diag_set(reterr_diag, EINVAL, STEP,
					    "seccomp.allow: '%s' cannot be allowed: io_uring operations (open, mkdir, "
					    "setxattr) would bypass the setuid/setgid and xattr rules",
					    pol.allow[i]);
			policy_done(&pol);
			return r;
		}
	for (size_t i = 0; i < pol.n_deny; i++) {
		if (name_in(pol.deny[i], pol.allow, pol.n_allow)) {
			r = cordon_diag_set(reterr_diag, EINVAL, STEP, "seccomp: '%s' is in both allow and deny",
					    pol.deny[i]);
			policy_done(&pol);
			return r;
		}
		/* glibc falls back from clone3 to clone on ENOSYS only: any
		 * other answer breaks pthread_create and posix_spawn. */
		if (strcmp(pol.deny[i], "clone3") == 0) {
			r = cordon_diag_set(reterr_diag, EINVAL, STEP,
					    "seccomp.deny: 'clone3' always returns ENOSYS (libc then uses clone); "
					    "deny 'clone' to forbid new processes and threads");
			policy_done(&pol);
			return r;
		}
	}
	*ret = pol;
	return 0;
}

static const char *base_name(enum cordon_seccomp_base b)
{
	return b == CORDON_SECCOMP_STRICT ? "strict" : "default";
}

static const char *action_name(enum cordon_seccomp_action a)
{
	switch (a) {
	case CORDON_SECCOMP_KILL:
		return "kill";
	case CORDON_SECCOMP_LOG:
		return "log";
	default:
		return "errno";
	}
}

static void hash_str(crypto_hash_sha256_state *st, const char *s)
{
	crypto_hash_sha256_update(st, (const unsigned char *)s, strlen(s));
}

/* SHA-256 over a line-oriented canonical text of the normalized policy.
 * Names are [a-z0-9_] only, so "," and "\n" cannot be forged by them.
 * libsodium's SHA-256 is plain C with no CPU dispatch and needs no
 * sodium_init(). */
static void policy_hash(const struct policy *pol, char out[65])
{
	crypto_hash_sha256_state st;
	unsigned char digest[crypto_hash_sha256_BYTES];
	char line[96];

	crypto_hash_sha256_init(&st);
	snprintf(line, sizeof(line), "%s\nbase=%s\naction=%s\narch=%08x\nkill=%s\n", POLICY_FORMAT,
		 base_name(pol->base), action_name(pol->action), pol->arch, pol->kill_process ? "process" : "thread");
	hash_str(&st, line);
	hash_str(&st, "allow=");
	for (size_t i = 0; i < pol->n_allow; i++) {
		hash_str(&st, pol->allow[i]);
		hash_str(&st, ",");
	}
	hash_str(&st, "\ndeny=");
	for (size_t i = 0; i < pol->n_deny; i++) {
		hash_str(&st, pol->deny[i]);
		hash_str(&st, ",");
	}
	hash_str(&st, "\nopts=");
	if (pol->opts & CORDON_SECCOMP_OPENAT2_ENOSYS)
		hash_str(&st, "openat2-enosys,");
	if (pol->opts & CORDON_SECCOMP_NO_FASTOPEN)
		hash_str(&st, "no-fastopen,");
	hash_str(&st, "\n");
	crypto_hash_sha256_final(&st, digest);
	hex_encode(digest, sizeof(digest), out);
}

static uint32_t kill_action(const struct policy *pol)
{
	return pol->kill_process ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL_THREAD;
}

/* What a refusal returns: the rule's errno, or kill, or log ("audit mode":
 * allowed and logged). */
static uint32_t refusal(const struct policy *pol, int err)
{
	switch (pol->action) {
	case CORDON_SECCOMP_KILL:
		return kill_action(pol);
	case CORDON_SECCOMP_LOG:
		return SCMP_ACT_LOG;
	default:
		return SCMP_ACT_ERRNO((uint32_t)err);
	}
}

static int new_filter(const struct policy *pol, uint32_t def_action, scmp_filter_ctx *ret,
		      struct cordon_diag *reterr_diag)
{
	scmp_filter_ctx ctx = seccomp_init(def_action);
	int r;

	if (!ctx)
		return cordon_diag_set(reterr_diag, ENOMEM, STEP, "seccomp_init failed");
	/* A syscall from another ABI (i386 int 0x80) is killed whatever the
	 * profile's action: the rules below name native numbers only, so a
	 * foreign ABI would otherwise walk around all of them. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill_action(pol));
	if (r < 0) {
		seccomp_release(ctx);
		return cordon_diag_set(reterr_diag, -r, STEP, "cannot set the bad-arch action: %s", strerror(-r));
	}
	/* Level 2 sorts the syscall checks into a binary tree (libseccomp >=
	 * 2.5). Older libraries refuse the attribute; the linear program they
	 * build is equally correct, only slower per syscall. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	*ret = ctx;
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, const char *name, unsigned n_args,
		    const struct scmp_arg_cmp *args, struct cordon_diag *reterr_diag)
{
	int r = seccomp_rule_add_array(ctx, action, nr, n_args, args);

	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, STEP, "libseccomp refused a rule for '%s': %s", name,
				       strerror(-r));
	return 0;
}

static int add_masked(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned arg, uint64_t mask,
		      uint64_t datum, struct cordon_diag *reterr_diag)
{
	struct scmp_arg_cmp c = { .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = datum };

	return add_rule(ctx, action, resolve_name(name), name, 1, &c, reterr_diag);
}

static int add_cmp(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned arg, enum scmp_compare op,
		   uint64_t datum, struct cordon_diag *reterr_diag)
{
	struct scmp_arg_cmp c = { .arg = arg, .op = op, .datum_a = datum };

	return add_rule(ctx, action, resolve_name(name), name, 1, &c, reterr_diag);
}

/* socket(2) and socketpair(2): family, type and protocol guards. */
static int add_socket_guards(const struct policy *pol, scmp_filter_ctx ctx, const char *name,
			     struct cordon_diag *reterr_diag)
{
	/* Families other than AF_UNIX (1), AF_INET (2), AF_INET6 (10) answer
	 * EAFNOSUPPORT, as for a family the kernel lacks, so runtimes that
	 * probe take their fallback: glibc's getaddrinfo(AI_ADDRCONFIG) opens
	 * a netlink socket on every name lookup (node's fetch does). Like
	 * clone3's ENOSYS this is an answer, not a refusal, and it is the
	 * same under every action: kill would kill every DNS lookup, and log
	 * would make audit mode behave unlike enforcement. The family is an
	 * int: any value with upper bits set is > 10 and refused too. */
	uint32_t no_family = SCMP_ACT_ERRNO(EAFNOSUPPORT);
	int r;

	r = add_cmp(ctx, no_family, name, 0, SCMP_CMP_EQ, AF_UNSPEC, reterr_diag);
	for (uint64_t f = AF_INET + 1; r >= 0 && f < AF_INET6; f++)
		r = add_cmp(ctx, no_family, name, 0, SCMP_CMP_EQ, f, reterr_diag);
	if (r >= 0)
		r = add_cmp(ctx, no_family, name, 0, SCMP_CMP_GT, AF_INET6, reterr_diag);
	/* For the allowed families only (so a refused family always answers
	 * EAFNOSUPPORT, whatever its type): raw and packet sockets see and
	 * forge traffic below Landlock's TCP rules, EPERM as for an
	 * unprivileged caller. The low 4 bits are the type (SOCK_NONBLOCK and
	 * SOCK_CLOEXEC live above them). An MPTCP socket is not a TCP socket
	 * to Landlock's LANDLOCK_ACCESS_NET_CONNECT_TCP/BIND_TCP, so it would
	 * bypass the port rules: EPROTONOSUPPORT, what a kernel without MPTCP
	 * says, on which runtimes that try MPTCP first fall back to TCP —
	 * under every action, for the same reason as the family. The
	 * protocol is an int: compare its low 32 bits. */
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(allowed_families); i++) {
		uint64_t fam = allowed_families[i];
		struct scmp_arg_cmp raw[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = fam },
			{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xf, .datum_b = SOCK_RAW },
		};
		struct scmp_arg_cmp packet[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = fam },
			{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xf, .datum_b = SOCK_PACKET },
		};
		struct scmp_arg_cmp mptcp[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = fam },
			{ .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = IPPROTO_MPTCP },
		};

		r = add_rule(ctx, refusal(pol, EPERM), resolve_name(name), name, 2, raw, reterr_diag);
		if (r >= 0)
			r = add_rule(ctx, refusal(pol, EPERM), resolve_name(name), name, 2, packet, reterr_diag);
		if (r >= 0 && fam != AF_UNIX)
			r = add_rule(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), resolve_name(name), name, 2, mptcp,
				     reterr_diag);
	}
	return r;
}

/* Set-user-ID and set-group-ID bits (issue 11, finding 1). A read-write
 * root is id-mapped so that the connector acts as the root's owner: a
 * setuid file it made there is setuid *on the host* (the sandbox's nosuid
 * mount only protects the sandbox). So no syscall that sets a mode may
 * carry S_ISUID or S_ISGID: chmod, fchmod, fchmodat, fchmodat2, creat,
 * open/openat with O_CREAT or O_TMPFILE, mkdir/mkdirat (the kernel ignores
 * those bits there but inherits S_ISGID from a setgid parent; asking is
 * refused all the same), mknod/mknodat (S_IFREG | 04755 makes a setuid
 * regular file). openat2 carries its mode in a struct: see
 * CORDON_SECCOMP_OPENAT2_ENOSYS. S_ISVTX stays allowed: the sticky bit
 * only restricts who may delete (the root directory itself takes no chmod
 * at all: the root guard, rootguard.h). mode is a umode_t and the open flags an
 * int: each bit is tested on its own (MASKED_EQ), so garbage in the upper
 * half changes nothing. Never lifted by `allow`. */
static int add_special_mode_guards(const struct policy *pol, scmp_filter_ctx ctx, struct cordon_diag *reterr_diag)
{
	/* clang-format off */
	static const struct { const char *name; unsigned mode_arg; } modes[] = {
		{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 }, { "fchmodat2", 2 },
		{ "creat", 1 }, { "mkdir", 1 }, { "mkdirat", 2 },
		{ "mknod", 1 }, { "mknodat", 2 },
	};
	static const struct { const char *name; unsigned flags_arg, mode_arg; } opens[] = {
		{ "open", 1, 2 }, { "openat", 2, 3 },
	};
	static const uint64_t bits[] = { S_ISUID, S_ISGID };
	static const uint64_t creating[] = { O_CREAT, __O_TMPFILE };
	/* clang-format on */
	uint32_t eperm = refusal(pol, EPERM);
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(modes); i++) {
		if (name_in(modes[i].name, pol->deny, pol->n_deny) || resolve_name(modes[i].name) == __NR_SCMP_ERROR)
			continue;
		for (size_t b = 0; r >= 0 && b < ELEMENTSOF(bits); b++)
			r = add_masked(ctx, eperm, modes[i].name, modes[i].mode_arg, bits[b], bits[b], reterr_diag);
	}
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(opens); i++) {
		if (name_in(opens[i].name, pol->deny, pol->n_deny))
			continue;
		for (size_t c = 0; r >= 0 && c < ELEMENTSOF(creating); c++)
			for (size_t b = 0; r >= 0 && b < ELEMENTSOF(bits); b++) {
				struct scmp_arg_cmp cmp[2] = {
					{ .arg = opens[i].flags_arg,
					  .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = creating[c],
					  .datum_b = creating[c] },
					{ .arg = opens[i].mode_arg,
					  .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = bits[b],
					  .datum_b = bits[b] },
				};

				r = add_rule(ctx, eperm, resolve_name(opens[i].name), opens[i].name, 2, cmp,
					     reterr_diag);
			}
	}
	/* openat2's open_how (flags, mode) is in memory. ENOSYS under every
	 * action, like clone3: it is a redirect to openat, which glibc and
	 * cordon's resolver (cordon_resolve_detect) take on ENOSYS. Only in
	 * sandboxes with a read-write root or without a mount namespace:
	 * elsewhere every writable place is a private nosuid tmpfs that dies
	 * with the sandbox. */
	if (r >= 0 && (pol->opts & CORDON_SECCOMP_OPENAT2_ENOSYS) && !name_in("openat2", pol->deny, pol->n_deny))
		r = add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), resolve_name("openat2"), "openat2", 0, NULL, reterr_diag);
	return r;
}

/* TCP Fast Open (issue 11, finding 7): sendto/sendmsg/sendmmsg with
 * MSG_FASTOPEN connect from inside tcp_sendmsg, without the connect(2) path
 * where Landlock's LANDLOCK_ACCESS_NET_CONNECT_TCP check sits (the eBPF
 * connect hooks do see it). When Landlock is the only TCP layer the flag
 * answers EOPNOTSUPP under every action — what a kernel with the client
 * side of net.ipv4.tcp_fastopen off says, so runtimes fall back to
 * connect(). TCP_FASTOPEN_CONNECT is left alone: it only defers the SYN of
 * a connect(2) that Landlock has already checked, and a later sendto on
 * that socket goes to the connected peer whatever address it names
 * (tested). flags is an int: one bit is tested. */
static int add_fastopen_guards(const struct policy *pol, scmp_filter_ctx ctx, struct cordon_diag *reterr_diag)
{
	/* clang-format off */
	static const struct { const char *name; unsigned flags_arg; } sends[] = {
		{ "sendto", 3 }, { "sendmsg", 2 }, { "sendmmsg", 3 },
	};
	/* clang-format on */
	uint32_t answer = SCMP_ACT_ERRNO(EOPNOTSUPP);
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sends); i++)
		if (!name_in(sends[i].name, pol->deny, pol->n_deny))
			r = add_masked(ctx, answer, sends[i].name, sends[i].flags_arg, MSG_FASTOPEN, MSG_FASTOPEN,
				       reterr_diag);
	return r;
}

static int add_guards(const struct policy *pol, scmp_filter_ctx ctx, struct cordon_diag *reterr_diag)
{
	uint32_t eperm = refusal(pol, EPERM);
	int r = 0;

	/* clone3 passes its flags in a struct seccomp cannot read, so it
	 * could carry namespace flags unseen. ENOSYS, whatever the action:
	 * it is a redirect, not a refusal — glibc then uses clone(), whose
	 * flags the rules below do see — and kill or log here would break
	 * every pthread_create or change behaviour between audit and
	 * enforcement. */
	if (!name_in("clone3", pol->deny, pol->n_deny))
		r = add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), resolve_name("clone3"), "clone3", 0, NULL, reterr_diag);

	/* No new namespaces: a user namespace gives the connector a full
	 * capability set over fresh namespaces, the usual first step of a
	 * kernel exploit; the others would let it rebuild its view. */
	if (r >= 0 && !name_in("clone", pol->deny, pol->n_deny))
		for (size_t i = 0; r >= 0 && i < ELEMENTSOF(clone_ns_flags); i++)
			r = add_masked(ctx, eperm, "clone", 0, clone_ns_flags[i], clone_ns_flags[i], reterr_diag);
	if (r >= 0 && !name_in("unshare", pol->deny, pol->n_deny)) {
		for (size_t i = 0; r >= 0 && i < ELEMENTSOF(clone_ns_flags); i++)
			r = add_masked(ctx, eperm, "unshare", 0, clone_ns_flags[i], clone_ns_flags[i], reterr_diag);
		if (r >= 0)
			r = add_masked(ctx, eperm, "unshare", 0, CLONE_NEWTIME, CLONE_NEWTIME, reterr_diag);
	}

	if (r >= 0 && !name_in("socket", pol->deny, pol->n_deny))
		r = add_socket_guards(pol, ctx, "socket", reterr_diag);
	if (r >= 0 && !name_in("socketpair", pol->deny, pol->n_deny))
		r = add_socket_guards(pol, ctx, "socketpair", reterr_diag);

	/* TIOCSTI pushes input into a terminal (commands typed into the
	 * launcher's shell); TIOCLINUX can do the same on a VT. cmd is an
	 * unsigned int to the kernel: compare the low 32 bits only. */
	if (r >= 0 && !name_in("ioctl", pol->deny, pol->n_deny)) {
		r = add_masked(ctx, eperm, "ioctl", 1, 0xffffffffu, TIOCSTI, reterr_diag);
		if (r >= 0)
			r = add_masked(ctx, eperm, "ioctl", 1, 0xffffffffu, TIOCLINUX, reterr_diag);
	}

	/* personality: only PER_LINUX (0) and the query 0xffffffff. Refused:
	 * ADDR_NO_RANDOMIZE (ASLR off for what the connector execs),
	 * READ_IMPLIES_EXEC, other personas. The argument is an unsigned
	 * int; "neither all zeros nor all ones" is the same as "some bit i is
	 * set while bit i+1 (mod 32) is clear", which is 32 single
	 * comparisons — libseccomp allows one comparison per argument per
	 * rule, so the range 1..0xfffffffe has no shorter form. */
	if (r >= 0 && !name_in("personality", pol->deny, pol->n_deny))
		for (unsigned i = 0; r >= 0 && i < 32; i++) {
			uint64_t bit = UINT64_C(1) << i, next = UINT64_C(1) << ((i + 1) % 32);

			r = add_masked(ctx, eperm, "personality", 0, bit | next, bit, reterr_diag);
		}

	if (r >= 0)
		r = add_special_mode_guards(pol, ctx, reterr_diag);
	if (r >= 0 && (pol->opts & CORDON_SECCOMP_NO_FASTOPEN))
		r = add_fastopen_guards(pol, ctx, reterr_diag);

	/* Device nodes, whatever the connector's uid in whatever namespace.
	 * FIFOs, sockets and regular files stay allowed. mode is a umode_t;
	 * S_IFMT lies within its 16 bits. */
	if (r >= 0 && !name_in("mknod", pol->deny, pol->n_deny)) {
		r = add_masked(ctx, eperm, "mknod", 1, S_IFMT, S_IFCHR, reterr_diag);
		if (r >= 0)
			r = add_masked(ctx, eperm, "mknod", 1, S_IFMT, S_IFBLK, reterr_diag);
	}
	if (r >= 0 && !name_in("mknodat", pol->deny, pol->n_deny)) {
		r = add_masked(ctx, eperm, "mknodat", 2, S_IFMT, S_IFCHR, reterr_diag);
		if (r >= 0)
			r = add_masked(ctx, eperm, "mknodat", 2, S_IFMT, S_IFBLK, reterr_diag);
	}
	return r;
}

/* The guard filter: default ALLOW; the refused set minus `allow`, plus
 * `deny`, plus the argument guards. */
static int build_guard_filter(const struct policy *pol, scmp_filter_ctx *ret, struct cordon_diag *reterr_diag)
{
	_cleanup_(scmp_releasep) scmp_filter_ctx ctx = NULL;
	uint32_t eperm = refusal(pol, EPERM);
	int r;

	r = new_filter(pol, SCMP_ACT_ALLOW, &ctx, reterr_diag);
	if (r < 0)
		return r;

	for (size_t i = 0; i < ELEMENTSOF(refused_syscalls); i++) {
		const char *name = refused_syscalls[i];
		int nr = resolve_name(name);

		/* Unknown to libseccomp and to our table on this
		 * architecture: there is nothing to refuse. */
		if (nr == __NR_SCMP_ERROR)
			continue;
		if (name_in(name, pol->allow, pol->n_allow) || name_in(name, pol->deny, pol->n_deny))
			continue;
		r = add_rule(ctx, eperm, nr, name, 0, NULL, reterr_diag);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < pol->n_deny; i++) {
		r = add_rule(ctx, eperm, resolve_name(pol->deny[i]), pol->deny[i], 0, NULL, reterr_diag);
		if (r < 0)
			return r;
	}
	r = add_guards(pol, ctx, reterr_diag);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(ctx);
	return 0;
}

/* The strict allowlist: default = the profile's action; the strict list
 * plus `allow` are allowed (guarded syscalls too: the guard filter chained
 * behind this one still applies their guards). */
static int build_allowlist_filter(const struct policy *pol, scmp_filter_ctx *ret, struct cordon_diag *reterr_diag)
{
	_cleanup_(scmp_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	r = new_filter(pol, refusal(pol, EPERM), &ctx, reterr_diag);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(strict_syscalls); i++) {
		int nr = resolve_name(strict_syscalls[i]);

		if (nr == __NR_SCMP_ERROR)
			continue;
		r = add_rule(ctx, SCMP_ACT_ALLOW, nr, strict_syscalls[i], 0, NULL, reterr_diag);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < pol->n_allow; i++) {
		if (name_in(pol->allow[i], strict_syscalls, ELEMENTSOF(strict_syscalls)))
			continue;
		r = add_rule(ctx, SCMP_ACT_ALLOW, resolve_name(pol->allow[i]), pol->allow[i], 0, NULL, reterr_diag);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(ctx);
	return 0;
}

/* libseccomp 2.5 exports classic BPF to an fd only (seccomp_export_bpf_mem
 * is 2.6): write it to a memfd and read it back. */
static int export_filter(scmp_filter_ctx ctx, struct sock_filter **ret, size_t *ret_n, struct cordon_diag *reterr_diag)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ struct sock_filter *insns = NULL;
	struct stat st;
	size_t size, done = 0;
	int r;

	fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return cordon_diag_set(reterr_diag, errno, STEP, "memfd_create: %s", strerror(errno));
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, STEP, "seccomp_export_bpf: %s", strerror(-r));
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(reterr_diag, errno, STEP, "fstat(memfd): %s", strerror(errno));
	size = (size_t)st.st_size;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 || size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return cordon_diag_set(reterr_diag, E2BIG, STEP,
				       "libseccomp exported %zu bytes, not a loadable program", size);
	insns = malloc(size);
	if (!insns)
		return cordon_diag_set(reterr_diag, ENOMEM, STEP, "out of memory");
	while (done < size) {
		ssize_t k = pread(fd, (char *)insns + done, size - done, (off_t)done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return cordon_diag_set(reterr_diag, k < 0 ? errno : EIO, STEP,
					       "reading the exported filter: %s",
					       k < 0 ? strerror(errno) : "short read");
		done += (size_t)k;
	}
	*ret = TAKE_PTR(insns);
	*ret_n = size / sizeof(struct sock_filter);
	return 0;
}

/* Runs `first` and, where it would return ALLOW, falls through to `second`:
 * each "RET #ALLOW" of first becomes "JA <start of second>". libseccomp ends
 * every path with a RET K (never RET A), so that is all there is to patch;
 * anything else is refused rather than guessed at. */
static int chain_programs(const struct sock_filter *first, size_t n_first, const struct sock_filter *second,
			  size_t n_second, struct sock_filter **ret, size_t *ret_n, struct cordon_diag *reterr_diag)
{
	struct sock_filter *out;
	size_t n = n_first + n_second;

	if (n > BPF_MAXINSNS)
		return cordon_diag_set(reterr_diag, E2BIG, STEP, "the filter needs %zu instructions (at most %d)", n,
				       BPF_MAXINSNS);
	out = calloc(n, sizeof(*out));
	if (!out)
		return cordon_diag_set(reterr_diag, ENOMEM, STEP, "out of memory");
	memcpy(out, first, n_first * sizeof(*out));
	memcpy(out + n_first, second, n_second * sizeof(*out));
	for (size_t i = 0; i < n_first; i++) {
		if (BPF_CLASS(out[i].code) != BPF_RET)
			continue;
		if (BPF_RVAL(out[i].code) != BPF_K) {
			free(out);
			return cordon_diag_set(reterr_diag, EINVAL, STEP,
					       "unexpected RET A at instruction %zu of the allowlist", i);
		}
		if (out[i].k != SECCOMP_RET_ALLOW)
			continue;
		out[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, (uint32_t)(n_first - i - 1), 0, 0);
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

static int compile_policy(const struct policy *pol, const char hash[65], struct cordon_seccomp_program **ret,
			  struct cordon_diag *reterr_diag)
{
	_cleanup_(scmp_releasep) scmp_filter_ctx guard = NULL, allow = NULL;
	_cleanup_free_ struct sock_filter *g = NULL, *a = NULL;
	_cleanup_(programp) struct cordon_seccomp_program *prog = NULL;
	size_t n_g = 0, n_a = 0;
	unsigned char digest[crypto_hash_sha256_BYTES];
	int r;

	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return cordon_diag_set(reterr_diag, ENOMEM, STEP, "out of memory");

	r = build_guard_filter(pol, &guard, reterr_diag);
	if (r < 0)
		return r;
	r = export_filter(guard, &g, &n_g, reterr_diag);
	if (r < 0)
		return r;

	if (pol->base == CORDON_SECCOMP_STRICT) {
		r = build_allowlist_filter(pol, &allow, reterr_diag);
		if (r < 0)
			return r;
		r = export_filter(allow, &a, &n_a, reterr_diag);
		if (r < 0)
			return r;
		r = chain_programs(a, n_a, g, n_g, &prog->insns, &prog->n_insns, reterr_diag);
		if (r < 0)
			return r;
	} else {
		prog->insns = TAKE_PTR(g);
		prog->n_insns = n_g;
	}

	memcpy(prog->policy_hash, hash, 65);
	crypto_hash_sha256(digest, (const unsigned char *)prog->insns, prog->n_insns * sizeof(struct sock_filter));
	hex_encode(digest, sizeof(digest), prog->program_hash);
	*ret = TAKE_PTR(prog);
	return 0;
}

int cordon_seccomp_compile(const struct cordon_profile *p, const struct cordon_caps *caps,
			   struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag)
{
	return cordon_seccomp_compile_opts(p, caps, 0, ret, reterr_diag);
}

int cordon_seccomp_compile_opts(const struct cordon_profile *p, const struct cordon_caps *caps, unsigned opts,
				struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag)
{
	struct policy pol;
	char hash[65];
	int r;

	if (!p || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "no profile");
	r = normalize(p, caps, opts, &pol, reterr_diag);
	if (r < 0)
		return r;
	policy_hash(&pol, hash);
	r = compile_policy(&pol, hash, ret, reterr_diag);
	policy_done(&pol);
	return r;
}

/* The cache. Programs are never evicted while the process runs (callers hold
 * pointers into it), so it is bounded: a launcher or broker compiles one
 * policy per profile, far fewer than CACHE_MAX. The mutex makes concurrent
 * callers safe; the intended use is a single thread compiling before it
 * forks, and a forked child only reads the program it was handed. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cordon_seccomp_program *cache[CACHE_MAX];
static size_t n_cache;

int cordon_seccomp_compile_cached(const struct cordon_profile *p, const struct cordon_caps *caps,
				  const struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag)
{
	return cordon_seccomp_compile_cached_opts(p, caps, 0, ret, reterr_diag);
}

int cordon_seccomp_compile_cached_opts(const struct cordon_profile *p, const struct cordon_caps *caps, unsigned opts,
				       const struct cordon_seccomp_program **ret, struct cordon_diag *reterr_diag)
{
	struct cordon_seccomp_program *prog = NULL;
	struct policy pol;
	char hash[65];
	int r;

	if (!p || !ret)
		return cordon_diag_set(reterr_diag, EINVAL, STEP, "no profile");
	r = normalize(p, caps, opts, &pol, reterr_diag);
	if (r < 0)
		return r;
	policy_hash(&pol, hash);

	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < n_cache; i++)
		if (strcmp(cache[i]->policy_hash, hash) == 0) {
			prog = cache[i];
			break;
		}
	if (!prog) {
		if (n_cache >= CACHE_MAX)
			r = cordon_diag_set(reterr_diag, E2BIG, STEP, "more than %d distinct seccomp policies",
					    CACHE_MAX);
		else
			r = compile_policy(&pol, hash, &prog, reterr_diag);
		if (r >= 0)
			cache[n_cache++] = prog;
	}
	pthread_mutex_unlock(&cache_lock);
	policy_done(&pol);
	if (r < 0)
		return r;
	*ret = prog;
	return 0;
}

int cordon_seccomp_load(const struct cordon_seccomp_program *prog)
{
	struct sock_fprog fprog;

	if (!prog || !prog->insns || prog->n_insns == 0 || prog->n_insns > BPF_MAXINSNS)
		return -EINVAL;
	fprog = (struct sock_fprog){
		.len = (unsigned short)prog->n_insns,
		.filter = prog->insns,
	};
	/* No TSYNC: the child is single-threaded between clone and execve.
	 * No SPEC_ALLOW: keep the kernel's speculative-store-bypass
	 * mitigation for the confined process. The kernel refuses the call
	 * with EACCES unless no_new_privs is set (or the caller has
	 * CAP_SYS_ADMIN); the spawn sequence sets no_new_privs first. */
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0)
		return negative_errno();
	return 0;
}

void cordon_seccomp_program_free(struct cordon_seccomp_program *prog)
{
	if (!prog)
		return;
	free(prog->insns);
	free(prog);
}

void cordon_seccomp_cache_clear(void)
{
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < n_cache; i++) {
		cordon_seccomp_program_free(cache[i]);
		cache[i] = NULL;
	}
	n_cache = 0;
	pthread_mutex_unlock(&cache_lock);
}
