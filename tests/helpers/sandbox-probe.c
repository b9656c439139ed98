/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox-probe: runs INSIDE a cordon sandbox and performs exactly one named
 * attempt per invocation, e.g. `sandbox-probe read /etc/shadow`.
 *
 * Exit status: 0 when the attempt succeeded, else the errno it failed with
 * (so a test asserts the exact errno); attempts the sandbox answers with a
 * signal (SIGSYS for foreign syscall ABIs, SIGKILL for the OOM killer) end
 * the process by that signal. One line on stdout says what happened.
 * Special attempts exit 0/1 for a yes/no question (documented per attempt). */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <termios.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static int report(const char *what, long r)
{
	int e = r < 0 ? errno : 0;

	printf("%s: %s (errno %d)\n", what, e ? strerror(e) : "ok", e);
	fflush(stdout);
	return e;
}

static int do_read(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return report("open", -1);
	if (read(fd, buf, sizeof(buf)) < 0)
		return report("read", -1);
	close(fd);
	return report("read", 0);
}

static int do_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return report("open", -1);
	if (write(fd, "cordon\n", 7) != 7)
		return report("write", -1);
	close(fd);
	return report("write", 0);
}

static int do_listdir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return report("opendir", -1);
	while (readdir(d))
		;
	closedir(d);
	return report("opendir", 0);
}

static void *thread_main(void *arg)
{
	return arg;
}

static long host_pid(const char *s)
{
	return strtol(s, NULL, 10);
}

static int tcp_connect(const char *addr, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return report("socket", -1);
	inet_pton(AF_INET, addr, &sa.sin_addr);
	return report("connect", connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
}

static int unix_abstract_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return report("socket", -1);
	if (n + 1 > sizeof(sa.sun_path))
		n = sizeof(sa.sun_path) - 1;
	memcpy(sa.sun_path + 1, name, n);
	return report("connect",
		      connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
}

static int caps_all_zero(void)
{
	static const char *const sets[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char line[256];
	int zero = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return report("fopen", -1);
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < 5; i++)
			if (strncmp(line, sets[i], strlen(sets[i])) == 0) {
				printf("%s", line);
				if (strtoull(line + strlen(sets[i]), NULL, 16) == 0)
					zero++;
			}
	fclose(f);
	return zero == 5 ? 0 : 1;
}

/* Exit 0 when the view's mount table is exactly the sandbox's: "/" is the
 * cordon-root tmpfs, every mount lies beneath it, and neither the host's
 * mounts nor the launcher's base mount (beneath the root) are listed. */
static int do_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int roots = 0, bad = 0;

	if (!f)
		return 2;
	while (fgets(line, sizeof(line), f)) {
		char root[1024], at[1024], *dash = strstr(line, " - ");
		char fstype[64] = "", source[256] = "";

		printf("%s", line);
		if (sscanf(line, "%*d %*d %*s %1023s %1023s", root, at) != 2 || !dash ||
		    sscanf(dash + 3, "%63s %255s", fstype, source) != 2) {
			bad++;
			continue;
		}
		if (strcmp(at, "/") == 0) {
			roots++;
			if (strcmp(source, "cordon-root") != 0 || strcmp(root, "/") != 0)
				bad++;
		}
		if (at[0] != '/' || strcmp(source, "cordon-base") == 0)
			bad++;
	}
	fclose(f);
	return roots == 1 && bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "";
	const char *x = argc > 2 ? argv[2] : "";
	const char *y = argc > 3 ? argv[3] : "";

	if (strcmp(a, "read") == 0)
		return do_read(x);
	if (strcmp(a, "write") == 0)
		return do_write(x);
	if (strcmp(a, "listdir") == 0)
		return do_listdir(x);
	if (strcmp(a, "symlink") == 0) /* symlink TARGET LINK */
		return report("symlink", symlink(x, y));
	if (strcmp(a, "hardlink") == 0) /* hardlink EXISTING NEW */
		return report("link", link(x, y));
	if (strcmp(a, "rename") == 0)
		return report("rename", rename(x, y));
	if (strcmp(a, "exec") == 0) {
		execl(x, x, (char *)NULL);
		return report("execl", -1);
	}
	if (strcmp(a, "ptrace") == 0)
		return report("ptrace", syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, host_pid(x), 0, 0));
	if (strcmp(a, "vmread") == 0) {
		char buf[8];
		struct iovec l = { buf, sizeof(buf) }, r = { (void *)0x400000, sizeof(buf) };

		return report("process_vm_readv", process_vm_readv((pid_t)host_pid(x), &l, 1, &r, 1, 0));
	}
	if (strcmp(a, "kcmp") == 0)
		return report("kcmp", syscall(SYS_kcmp, getpid(), host_pid(x), 0 /* KCMP_FILE */, 0, 0));
	if (strcmp(a, "kill") == 0)
		return report("kill", kill((pid_t)host_pid(x), 0));
	if (strcmp(a, "mount") == 0)
		return report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
	if (strcmp(a, "unshare-user") == 0)
		return report("unshare", unshare(CLONE_NEWUSER));
	if (strcmp(a, "clone-user") == 0) {
		long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0, 0, 0, 0);

		if (r == 0)
			_exit(0);
		return report("clone", r < 0 ? -1 : 0);
	}
	if (strcmp(a, "clone3-user") == 0) {
		struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
		long r = syscall(__NR_clone3, &ca, sizeof(ca));

		if (r == 0)
			_exit(0);
		return report("clone3", r < 0 ? -1 : 0);
	}
	if (strcmp(a, "setns") == 0) {
		int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return report("open ns", -1);
		return report("setns", setns(fd, 0));
	}
	if (strcmp(a, "bpf") == 0) {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = 4;
		attr.max_entries = 1;
		return report("bpf", syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
	}
	if (strcmp(a, "perf") == 0) {
		struct perf_event_attr pa = { .type = PERF_TYPE_SOFTWARE,
					      .size = sizeof(pa),
					      .config = PERF_COUNT_SW_CPU_CLOCK,
					      .exclude_kernel = 1 };

		return report("perf_event_open", syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0));
	}
	if (strcmp(a, "io_uring") == 0) {
		char params[120];

		memset(params, 0, sizeof(params));
		return report("io_uring_setup", syscall(__NR_io_uring_setup, 4, params));
	}
	if (strcmp(a, "keyctl") == 0)
		return report("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	if (strcmp(a, "userfaultfd") == 0)
		return report("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
	if (strcmp(a, "open_by_handle_at") == 0) {
		char h[64];

		memset(h, 0, sizeof(h));
		return report("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, h, O_RDONLY));
	}
	if (strcmp(a, "raw-socket") == 0)
		return report("socket", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	if (strcmp(a, "packet-socket") == 0)
		return report("socket", socket(AF_PACKET, SOCK_RAW, 0));
	if (strcmp(a, "tcp-connect") == 0)
		return tcp_connect(x, y);
	if (strcmp(a, "udp-send") == 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(y)) };
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return report("socket", -1);
		inet_pton(AF_INET, x, &sa.sin_addr);
		return report("sendto", sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -1 : 0);
	}
	if (strcmp(a, "unix-abstract") == 0)
		return unix_abstract_connect(x);
	if (strcmp(a, "int80") == 0) {
		long r;

		/* i386 getpid through the compat entry: the filter kills. */
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
		printf("int80 returned %ld\n", r);
		return 0;
	}
	if (strcmp(a, "x32") == 0) {
		long r = syscall(__X32_SYSCALL_BIT | 39 /* getpid */);

		return report("x32 getpid", r);
	}
	if (strcmp(a, "tiocsti") == 0) {
		char c = 'x';

		return report("ioctl TIOCSTI", ioctl(0, TIOCSTI, &c));
	}
	if (strcmp(a, "env") == 0) { /* exit 1 when the variable is visible */
		const char *v = getenv(x);

		printf("env %s: %s\n", x, v ? "visible" : "absent");
		return v ? 1 : 0;
	}
	if (strcmp(a, "env-equals") == 0) { /* exit 0 when NAME has VALUE */
		const char *v = getenv(x);

		return v && strcmp(v, y) == 0 ? 0 : 1;
	}
	if (strcmp(a, "fd") == 0)
		return report("fcntl", fcntl(atoi(x), F_GETFD));
	if (strcmp(a, "forkbomb") == 0) {
		for (int n = 0;; n++) {
			pid_t p = fork();

			if (p == 0) {
				pause();
				_exit(0);
			}
			if (p < 0) {
				printf("fork stopped after %d children\n", n);
				return report("fork", -1);
			}
			if (n > 100000)
				return report("fork", 0);
		}
	}
	if (strcmp(a, "membomb") == 0) {
		size_t chunk = 16 << 20;

		for (size_t total = 0; total < ((size_t)8 << 30); total += chunk) {
			char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return report("mmap", -1);
			memset(p, 1, chunk);
		}
		return report("membomb survived", 0);
	}
	if (strcmp(a, "rlimits") == 0) { /* exit 0 when core is 0/0 and nofile is X/X */
		struct rlimit core, nf;

		if (getrlimit(RLIMIT_CORE, &core) < 0 || getrlimit(RLIMIT_NOFILE, &nf) < 0)
			return report("getrlimit", -1);
		printf("core %llu/%llu nofile %llu/%llu\n", (unsigned long long)core.rlim_cur,
		       (unsigned long long)core.rlim_max, (unsigned long long)nf.rlim_cur,
		       (unsigned long long)nf.rlim_max);
		return core.rlim_cur == 0 && core.rlim_max == 0 && nf.rlim_cur == strtoull(x, NULL, 10) &&
				       nf.rlim_max == strtoull(x, NULL, 10)
			       ? 0
			       : 1;
	}
	if (strcmp(a, "session") == 0) { /* exit 0 when not a session leader of a tty session */
		pid_t sid = getsid(0);
		int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);

		printf("sid %d pid %d tty %s\n", (int)sid, (int)getpid(), fd >= 0 ? "yes" : "no");
		return fd < 0 && sid != getpid() ? 0 : 1;
	}
	if (strcmp(a, "hostname") == 0) {
		char h[64] = "";

		gethostname(h, sizeof(h) - 1);
		printf("%s\n", h);
		return strcmp(h, x) == 0 ? 0 : 1;
	}
	if (strcmp(a, "mounts") == 0)
		return do_mounts();
	if (strcmp(a, "caps") == 0) /* exit 0 when all five sets are zero */
		return caps_all_zero();
	if (strcmp(a, "nnp") == 0) /* exit 0 when no_new_privs is 1 */
		return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 1;
	if (strcmp(a, "ids") == 0) { /* prints uid gid and groups count */
		printf("%u %u %d\n", (unsigned)getuid(), (unsigned)getgid(), getgroups(0, NULL));
		return 0;
	}
	if (strcmp(a, "fork") == 0) {
		int st;
		pid_t p = fork();

		if (p == 0)
			_exit(7);
		if (p < 0 || waitpid(p, &st, 0) != p)
			return report("fork", -1);
		return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 1;
	}
	if (strcmp(a, "threads") == 0) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			if ((errno = pthread_create(&t[i], NULL, thread_main, NULL)) != 0)
				return report("pthread_create", -1);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (strcmp(a, "sleep") == 0) {
		sleep((unsigned)atoi(x));
		return 0;
	}
	if (strcmp(a, "exit") == 0)
		return atoi(x);
	if (strcmp(a, "echo") == 0) { /* copy stdin to stdout */
		char buf[4096];
		ssize_t n;

		while ((n = read(0, buf, sizeof(buf))) > 0)
			if (write(1, buf, (size_t)n) != n)
				return report("write", -1);
		return 0;
	}
	fprintf(stderr, "sandbox-probe: unknown attempt '%s'\n", a);
	return 200;
}
