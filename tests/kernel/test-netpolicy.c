/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The eBPF egress policy against the real kernel: a child placed in a cgroup2
 * directory this test creates tries each operation; the parent asserts the
 * outcome, the events, and that nothing is left attached afterwards.
 *
 * Traffic goes to loopback only (127.0.0.2, 127.0.0.3, 127.0.0.1, ::1),
 * to listeners this test opens. Never any other address. */

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <linux/io_uring.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "netpolicy.h"
#include "syscall-compat.h"
#include "test-support.h"

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

#define N_CG	   2
#define MAX_EVENTS 64

struct fixture {
	struct cordon_netpolicy_state *np;
	char cg_path[N_CG][PATH_MAX];
	int cg_fd[N_CG];
	struct cordon_netpolicy_attachment *att[N_CG];
	pid_t child;

	uint16_t p1, p2, u, u2;
	int tcp_a_p1, tcp_a_p2, tcp_b_p1, tcp_b_p2, tcp6_p1; /* a = 127.0.0.2, b = 127.0.0.3 */
	int udp_b_u, udp_a_u2;

	struct cordon_netpolicy_event ev[MAX_EVENTS];
	size_t n_ev;
};

static struct fixture *F; /* for the children */

/* ---- helpers used in the children (no cmocka asserts there) ---- */

#define EXPECT(expr, want)                                                                                             \
	do {                                                                                                           \
		long _v = (long)(expr), _w = (long)(want);                                                             \
		if (_v != _w) {                                                                                        \
			fprintf(stderr, "child %s:%d: %s = %ld (%s), want %ld\n", __FILE__, __LINE__, #expr, _v,       \
				_v < 0 ? strerror((int)-_v) : "", _w);                                                 \
			fflush(stderr);                                                                                \
			_exit(97);                                                                                     \
		}                                                                                                      \
	} while (0)

static socklen_t make_addr(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			abort();
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
		abort();
	return sizeof(*s4);
}

static int family_of(const char *addr)
{
	return strchr(addr, ':') ? AF_INET6 : AF_INET;
}

/* connect() on a fresh socket; 0 or -errno. */
static int try_connect(int type, int protocol, const char *addr, uint16_t port)
{
	_cleanup_close_ int fd = socket(family_of(addr), type | SOCK_CLOEXEC, protocol);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);

	if (fd < 0)
		return -errno;
	return connect(fd, (struct sockaddr *)&ss, len) < 0 ? -errno : 0;
}

/* sendto() on a fresh UDP socket; bytes sent or -errno. */
static long try_sendto(int family, const char *addr, uint16_t port, const char *msg)
{
	_cleanup_close_ int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&ss, len);
	return n < 0 ? -errno : n;
}

static int try_bind(int family, int type, const char *addr, uint16_t port)
{
	_cleanup_close_ int fd = socket(family, type | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);

	if (fd < 0)
		return -errno;
	return bind(fd, (struct sockaddr *)&ss, len) < 0 ? -errno : 0;
}

static int try_socket(int family, int type, int protocol)
{
	int fd = socket(family, type | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* TCP Fast Open: sendto(MSG_FASTOPEN) connects without connect(). */
static long try_fastopen(const char *addr, uint16_t port)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = sendto(fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
	return n < 0 ? -errno : n;
}

/* connect() submitted through io_uring (raw syscalls, no liburing): the
 * request may run in an io-wq worker thread, below the syscall layer that
 * seccomp and Landlock see. Returns the completion's result. */
static int try_uring_connect(const char *addr, uint16_t port)
{
	struct io_uring_params p = {};
	_cleanup_close_ int ring = -EBADF, fd = -EBADF;
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);
	size_t sq_sz, cq_sz, sqe_sz;
	uint8_t *sq, *cq;
	struct io_uring_sqe *sqes;
	unsigned tail, idx;
	int res;

	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -errno;
	fd = socket(family_of(addr), SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		return -ENOTSUP;
	sq_sz = cq_sz = sq_sz > cq_sz ? sq_sz : cq_sz;
	sqe_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -errno;
	cq = sq;
	sqes = mmap(NULL, sqe_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sqes == MAP_FAILED) {
		res = -errno;
		munmap(sq, sq_sz);
		return res;
	}

	tail = *(unsigned *)(sq + p.sq_off.tail);
	idx = tail & *(unsigned *)(sq + p.sq_off.ring_mask);
	memset(&sqes[idx], 0, sizeof(sqes[idx]));
	sqes[idx].opcode = IORING_OP_CONNECT;
	sqes[idx].fd = fd;
	sqes[idx].addr = (uint64_t)(uintptr_t)&ss;
	sqes[idx].off = len; /* addr2: the address length */
	((unsigned *)(sq + p.sq_off.array))[idx] = idx;
	__atomic_store_n((unsigned *)(sq + p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);

	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		res = -errno;
	} else {
		unsigned head = __atomic_load_n((unsigned *)(cq + p.cq_off.head), __ATOMIC_ACQUIRE);
		struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);

		res = cqes[head & *(unsigned *)(cq + p.cq_off.ring_mask)].res;
	}
	munmap(sqes, sqe_sz);
	munmap(sq, sq_sz);
	return res;
}

/* ---- parent helpers ---- */

static int find_cgroup2_mount(char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64];

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if ((size_t)snprintf(buf, size, "%s", mnt) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}

/* A listener on addr:port (port 0 = ephemeral); returns the fd and writes
 * the port. */
static int listener(int type, const char *addr, uint16_t *port)
{
	int fd = socket(family_of(addr), type | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, *port);

	assert_true(fd >= 0);
	if (family_of(addr) == AF_INET6)
		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 64), 0);
	len = sizeof(ss);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* Opens TCP listeners on 127.0.0.2 and 127.0.0.3 at the same two ports P1
 * and P2 plus [::1]:P1, and UDP listeners 127.0.0.3:U and 127.0.0.2:U2. A
 * refused connect must be the policy, never a missing listener. */
static void open_listeners(struct fixture *f)
{
	for (int attempt = 0; attempt < 50; attempt++) {
		f->p1 = 0;
		f->tcp_a_p1 = listener(SOCK_STREAM, "127.0.0.2", &f->p1);
		assert_true(f->tcp_a_p1 >= 0);
		f->tcp_b_p1 = listener(SOCK_STREAM, "127.0.0.3", &f->p1);
		f->tcp6_p1 = f->tcp_b_p1 >= 0 ? listener(SOCK_STREAM, "::1", &f->p1) : -1;
		if (f->tcp_b_p1 >= 0 && f->tcp6_p1 >= 0)
			break;
		closep(&f->tcp_a_p1);
		closep(&f->tcp_b_p1);
		f->tcp_a_p1 = f->tcp_b_p1 = -1;
	}
	assert_true(f->tcp6_p1 >= 0);
	for (int attempt = 0; attempt < 50; attempt++) {
		f->p2 = 0;
		f->tcp_a_p2 = listener(SOCK_STREAM, "127.0.0.2", &f->p2);
		assert_true(f->tcp_a_p2 >= 0);
		f->tcp_b_p2 = listener(SOCK_STREAM, "127.0.0.3", &f->p2);
		if (f->tcp_b_p2 >= 0)
			break;
		closep(&f->tcp_a_p2);
		f->tcp_a_p2 = -1;
	}
	assert_true(f->tcp_b_p2 >= 0);
	f->u = f->u2 = 0;
	f->udp_b_u = listener(SOCK_DGRAM, "127.0.0.3", &f->u);
	f->udp_a_u2 = listener(SOCK_DGRAM, "127.0.0.2", &f->u2);
	assert_true(f->udp_b_u >= 0 && f->udp_a_u2 >= 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct cordon_diag d = {};
	char mnt[PATH_MAX];
	int r;

	cordon_test_require_root();
	assert_non_null(f);
	for (int i = 0; i < N_CG; i++)
		f->cg_fd[i] = -1;
	f->tcp_a_p1 = f->tcp_a_p2 = f->tcp_b_p1 = f->tcp_b_p2 = f->tcp6_p1 = f->udp_b_u = f->udp_a_u2 = -1;

	r = cordon_netpolicy_open(&f->np, &d);
	if (r == -EOPNOTSUPP)
		cordon_test_skip("built without BPF (CORDON_BPF=OFF)");
	if (r < 0)
		fail_msg("cordon_netpolicy_open: %d %s", r, d.message);

	r = find_cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0)
		cordon_test_skip("no cgroup2 mount (%s)", strerror(-r));
	for (int i = 0; i < N_CG; i++) {
		assert_true((size_t)snprintf(f->cg_path[i], sizeof(f->cg_path[i]), "%s/cordon-test-netpolicy-%d-%d",
					     mnt, (int)getpid(), i) < sizeof(f->cg_path[i]));
		assert_int_equal(mkdir(f->cg_path[i], 0755), 0);
		f->cg_fd[i] = open(f->cg_path[i], O_DIRECTORY | O_RDONLY | O_CLOEXEC);
		assert_true(f->cg_fd[i] >= 0);
	}
	open_listeners(f);
	F = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	if (f->child > 0) {
		(void)kill(f->child, SIGKILL);
		(void)cordon_test_wait(f->child);
	}
	for (int i = 0; i < N_CG; i++)
		(void)cordon_netpolicy_detach(f->np, f->att[i]);
	cordon_netpolicy_close(f->np);
	for (int i = 0; i < N_CG; i++) {
		closep(&f->cg_fd[i]);
		if (f->cg_path[i][0] && rmdir(f->cg_path[i]) < 0)
			fprintf(stderr, "rmdir %s: %s\n", f->cg_path[i], strerror(errno));
	}
	closep(&f->tcp_a_p1);
	closep(&f->tcp_a_p2);
	closep(&f->tcp_b_p1);
	closep(&f->tcp_b_p2);
	closep(&f->tcp6_p1);
	closep(&f->udp_b_u);
	closep(&f->udp_a_u2);
	free(f);
	F = NULL;
	return 0;
}

/* Runs fn in a child placed in cgroup idx; asserts it exited 0. */
static void run_in_cgroup(struct fixture *f, int idx, void (*fn)(void))
{
	int status;

	f->child = fork();
	assert_true(f->child >= 0);
	if (f->child == 0) {
		_cleanup_close_ int procs = openat(f->cg_fd[idx], "cgroup.procs", O_WRONLY | O_CLOEXEC);

		alarm(30);
		EXPECT(procs >= 0, 1);
		EXPECT(write(procs, "0", 1), 1);
		fn();
		_exit(0);
	}
	status = cordon_test_wait(f->child);
	f->child = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static int collect(const struct cordon_netpolicy_event *ev, void *userdata)
{
	struct fixture *f = userdata;

	if (f->n_ev >= MAX_EVENTS)
		return -ENOBUFS;
	f->ev[f->n_ev++] = *ev;
	return 0;
}

static void drain_events(struct fixture *f)
{
	f->n_ev = 0;
	assert_true(cordon_netpolicy_poll_events(f->np, collect, f) >= 0);
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void expect_event(const struct fixture *f, size_t i, uint64_t cgid, enum cordon_netpolicy_hook hook, int family,
			 const char *addr, uint16_t port, int protocol, int sock_type, bool mapped)
{
	const struct cordon_netpolicy_event *ev;
	uint8_t want[16] = { 0 };

	assert_true(i < f->n_ev);
	ev = &f->ev[i];
	if (addr)
		assert_int_equal(inet_pton(family, addr, want), 1);
	if (ev->hook != hook || ev->family != family || ev->port != port || ev->protocol != protocol ||
	    ev->sock_type != sock_type || ev->mapped != mapped || ev->cgroup_id != cgid ||
	    memcmp(ev->addr, want, 16) != 0) {
		char line[CORDON_NETPOLICY_EVENT_LINE_MAX];
		(void)cordon_netpolicy_event_format(ev, line, sizeof(line));
		fail_msg("event %zu is %s; want hook %s family %d addr %s port %u protocol %d type %d mapped %d cgroup "
			 "%llu",
			 i, line, cordon_netpolicy_hook_to_string(hook), family, addr ? addr : "-", port, protocol,
			 sock_type, mapped, (unsigned long long)cgid);
	}
}

static void expect_attached(const struct fixture *f, int idx, uint32_t want)
{
	static const enum bpf_attach_type types[] = {
		BPF_CGROUP_INET4_CONNECT,    BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
		BPF_CGROUP_UDP6_SENDMSG,     BPF_CGROUP_INET4_BIND,    BPF_CGROUP_INET6_BIND,
		BPF_CGROUP_INET_SOCK_CREATE, BPF_CGROUP_INET_INGRESS,
	};

	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		uint32_t ids[8], cnt = ELEMENTSOF(ids), flags = 0;

		assert_int_equal(bpf_prog_query(f->cg_fd[idx], types[i], 0, &flags, ids, &cnt), 0);
		if (cnt != want)
			fail_msg("attach type %d: %u programs on the cgroup, want %u", types[i], cnt, want);
	}
}

static uint64_t cgid_of(const struct fixture *f, int idx)
{
	struct stat st;

	assert_int_equal(fstat(f->cg_fd[idx], &st), 0);
	return st.st_ino;
}

static void attach(struct fixture *f, int idx, const struct cordon_net_rule *rules, size_t n)
{
	struct cordon_diag d = {};
	int r = cordon_netpolicy_attach(f->np, f->cg_fd[idx], rules, n, &f->att[idx], &d);

	if (r < 0)
		fail_msg("attach: %d %s", r, d.message);
	assert_int_equal(cordon_netpolicy_attachment_cgroup_id(f->att[idx]), cgid_of(f, idx));
}

static struct cordon_net_rule v4rule(const char *addr, unsigned plen, unsigned protocols, uint16_t *ports, size_t n)
{
	struct cordon_net_rule r = {
		.family = AF_INET, .prefix_len = (uint8_t)plen, .protocols = protocols, .ports = ports, .n_ports = n
	};
	assert_int_equal(inet_pton(AF_INET, addr, r.addr), 1);
	return r;
}

/* 0 when nothing is waiting on a UDP listener after a short wait. */
static ssize_t udp_received(int fd, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	(void)poll(&p, 1, 100);
	n = recv(fd, buf, size - 1, MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/* ---- the main scenario: allow only 127.0.0.2:P1/tcp (and 127.0.0.2:U2/udp) ---- */

static void child_allowlist(void)
{
	struct fixture *f = F;

	/* Allowed. */
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", f->p1), 0);
	EXPECT(try_connect(SOCK_STREAM, 0, "::ffff:127.0.0.2", f->p1), 0); /* mapped, judged as IPv4 */
	EXPECT(try_sendto(AF_INET, "127.0.0.2", f->u2, "allow"), 5);
	EXPECT(try_connect(SOCK_STREAM, IPPROTO_MPTCP, "127.0.0.2", f->p1), 0);
	EXPECT(try_bind(AF_INET, SOCK_STREAM, "127.0.0.1", 0), 0);
	EXPECT(try_bind(AF_INET6, SOCK_STREAM, "::1", 0), 0);
	EXPECT(try_bind(AF_INET6, SOCK_DGRAM, "::ffff:127.0.0.1", 0), 0);

	/* Denied: each one event, in this order (see test_allowlist). */
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", f->p2), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", f->p1), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, 0, "::1", f->p1), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, 0, "::ffff:127.0.0.3", f->p1), -EPERM);
	EXPECT(try_sendto(AF_INET, "127.0.0.3", f->u, "deny4"), -EPERM);
	EXPECT(try_sendto(AF_INET6, "::ffff:127.0.0.3", f->u, "deny6"), -EPERM);
	EXPECT(try_connect(SOCK_DGRAM, 0, "127.0.0.3", f->u), -EPERM);
	EXPECT(try_sendto(AF_INET, "127.0.0.2", f->p1, "wrongproto"), -EPERM); /* P1 is TCP only */
	EXPECT(try_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), -EPERM);
	EXPECT(try_socket(AF_INET6, SOCK_RAW, IPPROTO_RAW), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, IPPROTO_MPTCP, "127.0.0.3", f->p1), -EPERM);
	EXPECT(try_fastopen("127.0.0.3", f->p1), -EPERM);
	EXPECT(try_uring_connect("127.0.0.3", f->p1), -EPERM);
	EXPECT(try_uring_connect("127.0.0.2", f->p1), 0);
	EXPECT(try_bind(AF_INET, SOCK_STREAM, "0.0.0.0", 0), -EPERM);
	EXPECT(try_bind(AF_INET, SOCK_STREAM, "127.0.0.1", f->p2), -EPERM);
	EXPECT(try_bind(AF_INET6, SOCK_STREAM, "::", 0), -EPERM);
	EXPECT(try_bind(AF_INET, SOCK_DGRAM, "127.0.0.2", 0), 0); /* all of 127/8 is loopback */
}

static void test_allowlist(void **state)
{
	struct fixture *f = *state;
	uint16_t tcp_ports[] = { f->p1 }, udp_ports[] = { f->u2 };
	struct cordon_net_rule rules[] = {
		v4rule("127.0.0.2", 32, CORDON_PROTO_TCP, tcp_ports, 1),
		v4rule("127.0.0.2", 32, CORDON_PROTO_UDP, udp_ports, 1),
	};
	uint64_t cg = cgid_of(f, 0), t0, t1;
	char buf[64], line[CORDON_NETPOLICY_EVENT_LINE_MAX];
	size_t i = 0;

	drain_events(f);
	expect_attached(f, 0, 0);
	attach(f, 0, rules, ELEMENTSOF(rules));
	expect_attached(f, 0, 1);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cg), 1); /* one prefix, both rules merged */

	/* The test runner, in another cgroup, is not policed. */
	assert_int_equal(try_connect(SOCK_STREAM, 0, "127.0.0.3", f->p1), 0);
	assert_int_equal(try_sendto(AF_INET, "127.0.0.3", f->u, "runner"), 6);
	assert_int_equal(udp_received(f->udp_b_u, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "runner");

	t0 = mono_now();
	run_in_cgroup(f, 0, child_allowlist);
	t1 = mono_now();

	/* The events fd signals readiness. */
	struct pollfd p = { .fd = cordon_netpolicy_events_fd(f->np), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 1000), 1);

	/* Nothing from the denied sends arrived; the allowed one did. */
	assert_int_equal(udp_received(f->udp_b_u, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(udp_received(f->udp_a_u2, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "allow");

	drain_events(f);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.2", f->p2, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT6, AF_INET6, "::1", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT6, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     true);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_SENDMSG4, AF_INET, "127.0.0.3", f->u, IPPROTO_UDP, SOCK_DGRAM,
		     false);
	/* A UDPv6 send to a mapped address is handed to the IPv4 UDP code
	 * before the IPv6 hook runs: sendmsg4 judges it, as IPv4. */
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_SENDMSG4, AF_INET, "127.0.0.3", f->u, IPPROTO_UDP, SOCK_DGRAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->u, IPPROTO_UDP, SOCK_DGRAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_SENDMSG4, AF_INET, "127.0.0.2", f->p1, IPPROTO_UDP, SOCK_DGRAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_SOCK_CREATE, AF_INET, NULL, 0, IPPROTO_ICMP, SOCK_RAW, false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_SOCK_CREATE, AF_INET6, NULL, 0, IPPROTO_RAW, SOCK_RAW, false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_BIND4, AF_INET, "0.0.0.0", 0, IPPROTO_TCP, SOCK_STREAM, false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_BIND4, AF_INET, "127.0.0.1", f->p2, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, i++, cg, CORDON_NETPOLICY_HOOK_BIND6, AF_INET6, "::", 0, IPPROTO_TCP, SOCK_STREAM, false);
	assert_int_equal(f->n_ev, i); /* exactly one event per denial, none for the runner */
	for (i = 0; i < f->n_ev; i++) {
		assert_true(f->ev[i].time_ns >= t0 && f->ev[i].time_ns <= t1);
		assert_true(f->ev[i].pid > 0 && f->ev[i].pid != (uint32_t)getpid());
		assert_true(cordon_netpolicy_event_format(&f->ev[i], line, sizeof(line)) > 0);
	}
	assert_int_equal(cordon_netpolicy_events_lost(f->np), 0);

	/* Detach: no program left on the cgroup, no entry left in the map,
	 * and a process in that cgroup is no longer policed. */
	assert_int_equal(cordon_netpolicy_detach(f->np, f->att[0]), 0);
	f->att[0] = NULL;
	expect_attached(f, 0, 0);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cg), 0);
}

static void child_unpoliced(void)
{
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", F->p1), 0);
}

static void test_detach_restores(void **state)
{
	struct fixture *f = *state;

	attach(f, 0, NULL, 0);
	assert_int_equal(cordon_netpolicy_detach(f->np, f->att[0]), 0);
	f->att[0] = NULL;
	expect_attached(f, 0, 0);
	drain_events(f);
	run_in_cgroup(f, 0, child_unpoliced);
	drain_events(f);
	assert_int_equal(f->n_ev, 0);
}

/* ---- an empty allowlist denies everything, loopback included ---- */

static void child_empty(void)
{
	struct fixture *f = F;

	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", f->p1), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, 0, "::1", f->p1), -EPERM);
	EXPECT(try_sendto(AF_INET, "127.0.0.2", f->u2, "x"), -EPERM);
	EXPECT(try_bind(AF_INET, SOCK_STREAM, "127.0.0.1", 0), 0);
}

static void test_empty_allowlist_denies_all(void **state)
{
	struct fixture *f = *state;
	uint64_t cg = cgid_of(f, 0);
	char buf[16];

	attach(f, 0, NULL, 0);
	expect_attached(f, 0, 1);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cg), 0);
	drain_events(f);
	run_in_cgroup(f, 0, child_empty);
	drain_events(f);
	assert_int_equal(f->n_ev, 3);
	expect_event(f, 0, cg, CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.2", f->p1, IPPROTO_TCP, SOCK_STREAM,
		     false);
	expect_event(f, 1, cg, CORDON_NETPOLICY_HOOK_CONNECT6, AF_INET6, "::1", f->p1, IPPROTO_TCP, SOCK_STREAM, false);
	expect_event(f, 2, cg, CORDON_NETPOLICY_HOOK_SENDMSG4, AF_INET, "127.0.0.2", f->u2, IPPROTO_UDP, SOCK_DGRAM,
		     false);
	assert_int_equal(udp_received(f->udp_a_u2, buf, sizeof(buf)), -EAGAIN);
}

/* ---- entries are per cgroup: two instances, two allowlists ---- */

static void child_cg0(void)
{
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", F->p1), 0);
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", F->p1), -EPERM);
}

static void child_cg1(void)
{
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", F->p1), 0);
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", F->p1), -EPERM);
}

static void test_per_cgroup(void **state)
{
	struct fixture *f = *state;
	uint16_t ports[] = { f->p1 };
	struct cordon_net_rule r0 = v4rule("127.0.0.2", 32, CORDON_PROTO_TCP, ports, 1);
	struct cordon_net_rule r1 = v4rule("127.0.0.3", 32, CORDON_PROTO_TCP, ports, 1);
	struct cordon_diag d = {};
	struct cordon_netpolicy_attachment *dup = NULL;

	attach(f, 0, &r0, 1);
	attach(f, 1, &r1, 1);
	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r1, 1, &dup, &d), -EEXIST);
	assert_null(dup);
	drain_events(f);
	run_in_cgroup(f, 0, child_cg0);
	run_in_cgroup(f, 1, child_cg1);
	drain_events(f);
	assert_int_equal(f->n_ev, 2);
	expect_event(f, 0, cgid_of(f, 0), CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.3", f->p1, IPPROTO_TCP,
		     SOCK_STREAM, false);
	expect_event(f, 1, cgid_of(f, 1), CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.2", f->p1, IPPROTO_TCP,
		     SOCK_STREAM, false);

	/* Detaching one leaves the other whole. */
	assert_int_equal(cordon_netpolicy_detach(f->np, f->att[1]), 0);
	f->att[1] = NULL;
	expect_attached(f, 1, 0);
	expect_attached(f, 0, 1);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cgid_of(f, 0)), 1);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cgid_of(f, 1)), 0);
	run_in_cgroup(f, 0, child_cg0);
}

/* ---- the allowlist is a union: a longer prefix does not hide a shorter one ---- */

static void child_union(void)
{
	struct fixture *f = F;

	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", f->p1), 0); /* /32 rule */
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", f->p2), 0); /* /8 rule, through the /32 entry */
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", f->p2), 0); /* /8 rule */
	EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.3", f->p1), -EPERM);
	EXPECT(try_connect(SOCK_STREAM, 0, "::1", f->p1), 0); /* IPv6 rule */
	EXPECT(try_connect(SOCK_STREAM, 0, "::ffff:127.0.0.3", f->p2), 0);
	EXPECT(try_connect(SOCK_STREAM, 0, "::ffff:127.0.0.3", f->p1), -EPERM);
}

static void test_union_of_prefixes(void **state)
{
	struct fixture *f = *state;
	uint16_t p1[] = { f->p1 }, p2[] = { f->p2 };
	struct cordon_net_rule rules[3] = {
		v4rule("127.0.0.0", 8, CORDON_PROTO_TCP, p2, 1),
		v4rule("127.0.0.2", 32, CORDON_PROTO_ANY, p1, 1),
		{ .family = AF_INET6, .prefix_len = 128, .protocols = CORDON_PROTO_TCP, .ports = p1, .n_ports = 1 },
	};

	assert_int_equal(inet_pton(AF_INET6, "::1", rules[2].addr), 1);
	attach(f, 0, rules, 3);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cgid_of(f, 0)), 3);
	drain_events(f);
	run_in_cgroup(f, 0, child_union);
	drain_events(f);
	assert_int_equal(f->n_ev, 2);
}

/* ---- invalid input attaches nothing ---- */

static void test_invalid_rules(void **state)
{
	struct fixture *f = *state;
	uint16_t zero[] = { 0 }, many[CORDON_NETPOLICY_MAX_PORTS + 1];
	struct cordon_net_rule r = v4rule("127.0.0.2", 32, CORDON_PROTO_TCP, zero, 1);
	struct cordon_netpolicy_attachment *a = NULL;
	struct cordon_diag d = {};
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int tmpfd = -EBADF;

	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r, 1, &a, &d), -EINVAL);
	assert_non_null(strstr(d.message, "rule 0"));
	r.ports = NULL;
	r.n_ports = 0;
	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r, 1, &a, &d), -EINVAL);
	r.ports = many;
	r.n_ports = ELEMENTSOF(many);
	for (size_t i = 0; i < ELEMENTSOF(many); i++)
		many[i] = (uint16_t)(1000 + i);
	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r, 1, &a, &d), -E2BIG);
	r.n_ports = 1;
	r.protocols = 4;
	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r, 1, &a, &d), -EINVAL);
	r.protocols = CORDON_PROTO_TCP;
	r.prefix_len = 33;
	assert_int_equal(cordon_netpolicy_attach(f->np, f->cg_fd[0], &r, 1, &a, &d), -EINVAL);
	assert_null(a);
	expect_attached(f, 0, 0);
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cgid_of(f, 0)), 0);

	/* Not a cgroup2 directory. */
	tmp = cordon_test_mkdtemp("netpolicy");
	tmpfd = open(tmp, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(tmpfd >= 0);
	assert_int_equal(cordon_netpolicy_attach(f->np, tmpfd, NULL, 0, &a, &d), -EMEDIUMTYPE);
	assert_int_equal(rmdir(tmp), 0);
	assert_null(a);
}

/* A failure after the entries are written rolls them back: the fd of a
 * cgroup directory that was removed passes the cgroup2 checks, but the
 * kernel refuses to attach to a dead cgroup. */
static void test_attach_failure_rolls_back(void **state)
{
	struct fixture *f = *state;
	uint16_t ports[] = { f->p1 };
	struct cordon_net_rule r = v4rule("127.0.0.2", 32, CORDON_PROTO_TCP, ports, 1);
	struct cordon_netpolicy_attachment *a = NULL;
	struct cordon_diag d = {};
	char dead[PATH_MAX + 8];
	_cleanup_close_ int dead_fd = -EBADF;
	struct stat st;
	int ret;

	assert_true((size_t)snprintf(dead, sizeof(dead), "%s-dead", f->cg_path[0]) < sizeof(dead));
	assert_int_equal(mkdir(dead, 0755), 0);
	dead_fd = open(dead, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(dead_fd >= 0);
	assert_int_equal(rmdir(dead), 0);
	assert_int_equal(fstat(dead_fd, &st), 0);

	ret = cordon_netpolicy_attach(f->np, dead_fd, &r, 1, &a, &d);
	if (ret == 0)
		(void)cordon_netpolicy_detach(f->np, a);
	assert_int_equal(ret, -ENOENT);
	assert_non_null(strstr(d.message, "attaching"));
	assert_int_equal(cordon_netpolicy_count_entries(f->np, st.st_ino), 0);

	/* A live cgroup is then attached normally. */
	attach(f, 0, &r, 1);
	expect_attached(f, 0, 1);
}

/* ---- mode "none": the policy holds inside a new network namespace too ---- */

static int own_loopback_connect(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	_cleanup_close_ int ctl = -EBADF, lfd = -EBADF;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	if (unshare(CLONE_NEWNET) < 0)
		return -1000 - errno;
	ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ctl < 0 || ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0)
		return -2000 - errno;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0)
		return -3000 - errno;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) < 0)
		return -4000 - errno;
	return try_connect(SOCK_STREAM, 0, "127.0.0.1", ntohs(sa.sin_port));
}

static void child_netns_policed(void)
{
	EXPECT(own_loopback_connect(), -EPERM);
}

static void child_netns_unpoliced(void)
{
	EXPECT(own_loopback_connect(), 0);
}

static void test_empty_netns_still_policed(void **state)
{
	struct fixture *f = *state;

	attach(f, 0, NULL, 0);
	drain_events(f);
	run_in_cgroup(f, 0, child_netns_policed);
	run_in_cgroup(f, 1, child_netns_unpoliced); /* the same steps succeed without the policy */
	drain_events(f);
	assert_int_equal(f->n_ev, 1);
	expect_event(f, 0, cgid_of(f, 0), CORDON_NETPOLICY_HOOK_CONNECT4, AF_INET, "127.0.0.1", f->ev[0].port,
		     IPPROTO_TCP, SOCK_STREAM, false);
}

/* ---- a full ring buffer loses events, never denials ---- */

#define FLOOD 6000

static void child_flood(void)
{
	for (int i = 0; i < FLOOD; i++)
		EXPECT(try_connect(SOCK_STREAM, 0, "127.0.0.2", F->p1), -EPERM);
}

static int count_only(const struct cordon_netpolicy_event *ev, void *userdata)
{
	(*(size_t *)userdata)++;
	return 0;
}

static void test_ringbuf_full_counts_lost(void **state)
{
	struct fixture *f = *state;
	size_t delivered = 0;
	int r;

	attach(f, 0, NULL, 0);
	run_in_cgroup(f, 0, child_flood);
	r = cordon_netpolicy_poll_events(f->np, count_only, &delivered);
	assert_true(r >= 0);
	assert_int_equal((size_t)r, delivered);
	assert_true(delivered > 0 && delivered < FLOOD);
	assert_int_equal(delivered + cordon_netpolicy_events_lost(f->np), FLOOD);
}

/* ---- listen() without bind(): the listener exists, nothing reaches it ---- */

/* Non-blocking connect; 1 when it completed within ms, 0 when it did not. */
static int connect_completes(const char *addr, uint16_t port, int ms)
{
	_cleanup_close_ int fd = socket(family_of(addr), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, addr, port);
	struct pollfd p = { .events = POLLOUT };
	int err = 0;
	socklen_t elen = sizeof(err);

	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&ss, len) == 0)
		return 1;
	assert_int_equal(errno, EINPROGRESS);
	p.fd = fd;
	if (poll(&p, 1, ms) == 0)
		return 0;
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen), 0);
	assert_int_equal(err, 0);
	return 1;
}

static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void test_unbound_listener_unreachable(void **state)
{
	struct fixture *f = *state;
	int to_parent[2], to_child[2];
	uint16_t ports[3];
	uint64_t cg = cgid_of(f, 0);
	char go = 'x';

	attach(f, 0, NULL, 0);
	drain_events(f);
	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	f->child = fork();
	assert_true(f->child >= 0);
	if (f->child == 0) {
		_cleanup_close_ int procs = openat(f->cg_fd[0], "cgroup.procs", O_WRONLY | O_CLOEXEC);
		int a, b, c;
		uint16_t p[3];

		alarm(30);
		EXPECT(procs >= 0, 1);
		EXPECT(write(procs, "0", 1), 1);
		a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  /* wildcard, implicit bind */
		c = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0); /* [::], implicit bind */
		b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  /* 127.0.0.1:0, explicit */
		struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		EXPECT(a >= 0 && b >= 0 && c >= 0, 1);
		EXPECT(listen(a, 4), 0);
		EXPECT(listen(c, 4), 0);
		EXPECT(bind(b, (struct sockaddr *)&lo, sizeof(lo)), 0);
		EXPECT(listen(b, 4), 0);
		p[0] = local_port(a);
		p[1] = local_port(b);
		p[2] = local_port(c);
		EXPECT(write(to_parent[1], p, sizeof(p)), sizeof(p));
		EXPECT(read(to_child[0], &go, 1), 1);
		_exit(0);
	}
	close(to_parent[1]);
	close(to_child[0]);
	assert_int_equal(read(to_parent[0], ports, sizeof(ports)), sizeof(ports));
	close(to_parent[0]);

	assert_int_equal(connect_completes("127.0.0.2", ports[0], 300), 0); /* SYN dropped */
	assert_int_equal(connect_completes("::1", ports[2], 300), 0);
	assert_int_equal(connect_completes("127.0.0.1", ports[1], 2000), 1); /* loopback listener */

	assert_int_equal(write(to_child[1], &go, 1), 1);
	close(to_child[1]);
	int status = cordon_test_wait(f->child);
	f->child = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	drain_events(f);
	assert_int_equal(f->n_ev, 2);
	expect_event(f, 0, cg, CORDON_NETPOLICY_HOOK_INGRESS_LISTEN, AF_INET, "0.0.0.0", ports[0], IPPROTO_TCP,
		     SOCK_STREAM, false);
	expect_event(f, 1, cg, CORDON_NETPOLICY_HOOK_INGRESS_LISTEN, AF_INET6, "::", ports[2], IPPROTO_TCP, SOCK_STREAM,
		     false);
	assert_int_equal(f->ev[0].pid, 0);
	assert_string_equal(f->ev[0].comm, "");
}

/* ---- datagrams reach an implicitly bound UDP socket only from the allowlist ---- */

static void test_udp_ingress_only_from_allowlist(void **state)
{
	struct fixture *f = *state;
	uint16_t uports[] = { f->u2 };
	struct cordon_net_rule r = v4rule("127.0.0.2", 32, CORDON_PROTO_UDP, uports, 1);
	int to_parent[2], to_child[2];
	uint16_t child_port[2], stranger_port = 0;
	uint64_t cg = cgid_of(f, 0);
	_cleanup_close_ int stranger = listener(SOCK_DGRAM, "127.0.0.3", &stranger_port);
	struct sockaddr_storage ss;
	socklen_t len;
	char buf[64], go = 'x';
	int status;

	assert_true(stranger >= 0);
	attach(f, 0, &r, 1);
	drain_events(f);
	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	f->child = fork();
	assert_true(f->child >= 0);
	if (f->child == 0) {
		_cleanup_close_ int procs = openat(f->cg_fd[0], "cgroup.procs", O_WRONLY | O_CLOEXEC);
		struct sockaddr_storage dst, lo;
		socklen_t dlen = make_addr(&dst, "127.0.0.2", f->u2), llen = make_addr(&lo, "127.0.0.1", 0);
		uint16_t p[2];
		char rb[64];
		int implicit, bound;

		alarm(30);
		EXPECT(procs >= 0, 1);
		EXPECT(write(procs, "0", 1), 1);
		implicit = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		bound = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		EXPECT(implicit >= 0 && bound >= 0, 1);
		EXPECT(sendto(implicit, "hello", 5, 0, (struct sockaddr *)&dst, dlen), 5); /* binds 0.0.0.0:port */
		EXPECT(bind(bound, (struct sockaddr *)&lo, llen), 0);
		p[0] = local_port(implicit);
		p[1] = local_port(bound);
		EXPECT(write(to_parent[1], p, sizeof(p)), sizeof(p));
		EXPECT(read(to_child[0], &go, 1), 1);
		/* The allowed peer's reply arrived; the stranger's datagram did not. */
		EXPECT(recv(implicit, rb, sizeof(rb), MSG_DONTWAIT), 5);
		EXPECT(memcmp(rb, "reply", 5), 0);
		EXPECT(recv(implicit, rb, sizeof(rb), MSG_DONTWAIT), -1);
		EXPECT(errno, EAGAIN);
		/* A socket bound explicitly to loopback hears loopback peers. */
		EXPECT(recv(bound, rb, sizeof(rb), MSG_DONTWAIT), 5);
		EXPECT(memcmp(rb, "local", 5), 0);
		_exit(0);
	}
	close(to_parent[1]);
	close(to_child[0]);
	assert_int_equal(read(to_parent[0], child_port, sizeof(child_port)), sizeof(child_port));
	close(to_parent[0]);

	/* The allowed peer (127.0.0.2:U2) got "hello" and answers. */
	len = sizeof(ss);
	assert_int_equal(recvfrom(f->udp_a_u2, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &len), 5);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), child_port[0]);
	/* The stranger first, so an accepted stranger would be read first. */
	len = make_addr(&ss, "127.0.0.1", child_port[0]);
	assert_int_equal(sendto(stranger, "stranger", 8, 0, (struct sockaddr *)&ss, len), 8);
	assert_int_equal(sendto(f->udp_a_u2, "reply", 5, 0, (struct sockaddr *)&ss, len), 5);
	len = make_addr(&ss, "127.0.0.1", child_port[1]);
	assert_int_equal(sendto(stranger, "local", 5, 0, (struct sockaddr *)&ss, len), 5);

	assert_int_equal(write(to_child[1], &go, 1), 1);
	close(to_child[1]);
	status = cordon_test_wait(f->child);
	f->child = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	drain_events(f);
	assert_int_equal(f->n_ev, 1);
	expect_event(f, 0, cg, CORDON_NETPOLICY_HOOK_INGRESS_UDP, AF_INET, "127.0.0.3", stranger_port, IPPROTO_UDP,
		     SOCK_DGRAM, false);
}

/* ---- teardown may remove the cgroup before detaching ---- */

static void test_detach_after_rmdir(void **state)
{
	struct fixture *f = *state;
	uint16_t ports[] = { f->p1 };
	struct cordon_net_rule r = v4rule("127.0.0.2", 32, CORDON_PROTO_TCP, ports, 1);
	uint64_t cg = cgid_of(f, 0);

	attach(f, 0, &r, 1);
	run_in_cgroup(f, 0, child_cg0); /* the child has exited: the cgroup is empty */
	assert_int_equal(rmdir(f->cg_path[0]), 0);
	f->cg_path[0][0] = 0;
	assert_int_equal(cordon_netpolicy_detach(f->np, f->att[0]), 0);
	f->att[0] = NULL;
	assert_int_equal(cordon_netpolicy_count_entries(f->np, cg), 0);
}

/* ---- close() detaches whatever is still attached ---- */

static void test_close_detaches(void **state)
{
	struct fixture *f = *state;
	struct cordon_diag d = {};

	attach(f, 0, NULL, 0);
	attach(f, 1, NULL, 0);
	cordon_netpolicy_close(f->np);
	f->att[0] = f->att[1] = NULL;
	expect_attached(f, 0, 0);
	expect_attached(f, 1, 0);
	assert_int_equal(cordon_netpolicy_open(&f->np, &d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowlist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detach_restores, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_allowlist_denies_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_union_of_prefixes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_failure_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_netns_still_policed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ringbuf_full_counts_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbound_listener_unreachable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_ingress_only_from_allowlist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detach_after_rmdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_detaches, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
