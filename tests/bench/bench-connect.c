/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-connect: what the eBPF egress policy adds to connect().
 *
 * A child in a cgroup2 directory created for the run opens N loopback TCP
 * connections to a 127.0.0.2 listener (socket + connect + close with
 * SO_LINGER 0, so no TIME_WAIT piles up), timing each connect() and the
 * whole loop. Rounds alternate between the cgroup without and with the
 * policy attached (the allowlist holds GitHub's published ranges plus the
 * listener, so the trie has more than one entry), all in the same run.
 * Prints medians, p99 and the overhead ratio. Loopback only. Root.
 *
 * usage: bench-connect [connections-per-round (10000)] [rounds (3)] */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "netpolicy.h"
#include "bench-util.h"

static void *acceptor(void *arg)
{
	int lfd = *(int *)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		else if (errno == EBADF || errno == EINVAL)
			return NULL;
	}
}

static int find_cgroup2_mount(char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		return (size_t)snprintf(buf, size, "%s", mnt) < size ? 0 : -ENAMETOOLONG;
	}
	return -ENOENT;
}

/* In a child placed in the cgroup: n timed connects. Writes n connect()
 * latencies and then the loop's total to the pipe. */
static void child_loop(int cg_fd, int out, uint16_t port, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	uint64_t *lat = calloc(n + 1, sizeof(*lat));
	int procs = openat(cg_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	uint64_t start;

	if (!lat || procs < 0 || write(procs, "0", 1) != 1)
		_exit(2);
	inet_pton(AF_INET, "127.0.0.2", &sa.sin_addr);
	start = now_ns();
	for (size_t i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		uint64_t t0;

		if (fd < 0)
			_exit(3);
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		t0 = now_ns();
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			fprintf(stderr, "connect #%zu: %s\n", i, strerror(errno));
			_exit(4);
		}
		lat[i] = now_ns() - t0;
		close(fd);
	}
	lat[n] = now_ns() - start;
	_exit(write_all(out, lat, (n + 1) * sizeof(*lat)) < 0 ? 5 : 0);
}

/* Runs one round; appends n latencies to lat and returns the loop total. */
static int64_t round_run(int cg_fd, uint16_t port, size_t n, uint64_t *lat)
{
	int p[2], status;
	uint64_t total;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[0]);
		child_loop(cg_fd, p[1], port, n);
	}
	close(p[1]);
	ssize_t got = read_full(p[0], lat, n * sizeof(*lat));
	ssize_t got2 = read_full(p[0], &total, sizeof(total));
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	if (got != (ssize_t)(n * sizeof(*lat)) || got2 != (ssize_t)sizeof(total))
		return -EIO;
	return (int64_t)total;
}

static struct cordon_net_rule v4(const char *a, unsigned plen, uint16_t *ports)
{
	struct cordon_net_rule r = { .family = AF_INET,
				     .prefix_len = (uint8_t)plen,
				     .protocols = CORDON_PROTO_TCP,
				     .ports = ports,
				     .n_ports = 1 };
	inet_pton(AF_INET, a, r.addr);
	return r;
}

static struct cordon_net_rule v6(const char *a, unsigned plen, uint16_t *ports)
{
	struct cordon_net_rule r = { .family = AF_INET6,
				     .prefix_len = (uint8_t)plen,
				     .protocols = CORDON_PROTO_TCP,
				     .ports = ports,
				     .n_ports = 1 };
	inet_pton(AF_INET6, a, r.addr);
	return r;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	_cleanup_(cordon_netpolicy_closep) struct cordon_netpolicy_state *np = NULL;
	struct cordon_diag d = {};
	char mnt[PATH_MAX], cg[PATH_MAX];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	uint64_t *lat[2], totals[2][16];
	int lfd, cg_fd, r, rc = 1;
	pthread_t th;

	if (n == 0 || n > 1000000 || rounds < 1 || rounds > 16) {
		fprintf(stderr, "usage: bench-connect [connections 1..1000000] [rounds 1..16]\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-connect: needs root\n");
		return 77;
	}
	r = cordon_netpolicy_open(&np, &d);
	if (r < 0) {
		fprintf(stderr, "bench-connect: %s\n", d.message);
		return r == -EOPNOTSUPP ? 77 : 1;
	}
	if (find_cgroup2_mount(mnt, sizeof(mnt)) < 0) {
		fprintf(stderr, "bench-connect: no cgroup2 mount\n");
		return 77;
	}
	if ((size_t)snprintf(cg, sizeof(cg), "%s/cordon-bench-connect-%d", mnt, (int)getpid()) >= sizeof(cg)) {
		fprintf(stderr, "bench-connect: cgroup path too long\n");
		return 1;
	}
	if (mkdir(cg, 0755) < 0 || (cg_fd = open(cg, O_DIRECTORY | O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "bench-connect: %s: %s\n", cg, strerror(errno));
		return 1;
	}

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.2", &sa.sin_addr);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) < 0) {
		fprintf(stderr, "bench-connect: listener: %s\n", strerror(errno));
		goto out_cg;
	}
	pthread_create(&th, NULL, acceptor, &lfd);

	uint16_t port = ntohs(sa.sin_port), https[] = { 443 }, lport[] = { port };
	/* GitHub's published ranges (docs/network.md) plus the listener. */
	struct cordon_net_rule rules[] = {
		v4("140.82.112.0", 20, https),	v4("143.55.64.0", 20, https), v4("192.30.252.0", 22, https),
		v4("185.199.108.0", 22, https), v6("2a0a:a440::", 29, https), v6("2606:50c0::", 32, https),
		v4("127.0.0.2", 32, lport),
	};

	lat[0] = calloc(n * (size_t)rounds, sizeof(uint64_t));
	lat[1] = calloc(n * (size_t)rounds, sizeof(uint64_t));
	if (!lat[0] || !lat[1])
		goto out_listen;

	/* Warm-up, unmeasured. */
	if (round_run(cg_fd, port, n < 1000 ? n : 1000, lat[0]) < 0) {
		fprintf(stderr, "bench-connect: warm-up failed\n");
		goto out_listen;
	}
	for (int i = 0; i < rounds; i++) {
		struct cordon_netpolicy_attachment *a = NULL;
		int64_t t;

		t = round_run(cg_fd, port, n, lat[0] + (size_t)i * n);
		if (t < 0)
			goto out_listen;
		totals[0][i] = (uint64_t)t;

		r = cordon_netpolicy_attach(np, cg_fd, rules, ELEMENTSOF(rules), &a, &d);
		if (r < 0) {
			fprintf(stderr, "bench-connect: attach: %s\n", d.message);
			goto out_listen;
		}
		t = round_run(cg_fd, port, n, lat[1] + (size_t)i * n);
		(void)cordon_netpolicy_detach(np, a);
		if (t < 0)
			goto out_listen;
		totals[1][i] = (uint64_t)t;
	}

	size_t all = n * (size_t)rounds;
	double med[2], p99[2], loop[2];
	for (int m = 0; m < 2; m++) {
		qsort(lat[m], all, sizeof(uint64_t), cmp_u64);
		qsort(totals[m], (size_t)rounds, sizeof(uint64_t), cmp_u64);
		med[m] = (double)lat[m][all / 2] / 1000.0;
		p99[m] = (double)lat[m][all * 99 / 100] / 1000.0;
		loop[m] = (double)totals[m][rounds / 2] / 1e6;
	}
	printf("bench-connect: %zu loopback TCP connections x %d rounds per mode, alternating, same run\n", n, rounds);
	printf("  %-22s connect() median %7.2f us  p99 %7.2f us  loop median %8.1f ms\n", "no policy", med[0], p99[0],
	       loop[0]);
	printf("  %-22s connect() median %7.2f us  p99 %7.2f us  loop median %8.1f ms\n", "policy (7 prefixes)", med[1],
	       p99[1], loop[1]);
	printf("  overhead: connect() median x%.3f (%+.1f%%), loop x%.3f (%+.1f%%); target < 5%%\n", med[1] / med[0],
	       (med[1] / med[0] - 1) * 100, loop[1] / loop[0], (loop[1] / loop[0] - 1) * 100);
	rc = 0;

out_listen:
	shutdown(lfd, SHUT_RDWR);
	close(lfd); /* the acceptor sees EBADF/EINVAL and returns */
	pthread_join(th, NULL);
	free(lat[0]);
	free(lat[1]);
out_cg:
	close(cg_fd);
	if (rmdir(cg) < 0)
		fprintf(stderr, "bench-connect: rmdir %s: %s\n", cg, strerror(errno));
	return rc;
}
