/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-fs: read_file and write_file of 4 KiB, 1 MiB and 16 MiB through
 * cordon-fs end to end over MCP stdio (the request line, the server's parse,
 * resolver, file I/O and fsync, the JSON response through the pipe), and the
 * same requests against @modelcontextprotocol/server-filesystem run as
 * `node DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
 * ROOT`, with plain file I/O as the baseline, all interleaved in one run.
 *
 * The client builds no jansson tree for a response: it frames lines itself
 * and checks each with json-scan (the whole line well formed, strings strictly
 * checked, the id the one it sent), then decodes the content string in place
 * and compares its length and a checksum with the file's. For writes it
 * checks the server's reply and afterwards the file on disk.
 *
 * server-filesystem comes from CORDON_E2E_NODE_DIR, else BUILD/tests/e2e/node
 * (what tests/e2e/npm-setup installs; tests/bench/run installs it there when
 * node and npm exist). Without node or the package the column is skipped and
 * the reason printed. CORDON_BENCH_FS_BASELINE=/path/to/another/cordon-fs adds
 * that binary as a third server (before/after figures in one interleaved
 * run). Prints medians and ratios; asserts nothing about time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "json-scan.h"
#include "mcp-client.h"
#include "test-support.h"

enum { ROUNDS = 5, N_SERVERS = 3 };

struct server {
	const char *label;
	const char *read_tool;
	const char *const *read_content; /* where a read's text is in the response */
	bool absolute_paths;
	bool says_bytes; /* write_file's answer has structuredContent.bytes */
	bool up;
	char why[256]; /* when not up: why */
	struct mcp_peer p;
	long next_id;
	char *buf; /* response framing: buf[off..len) not yet consumed */
	size_t off, len, cap;
	bool failed;	     /* a request failed; no further figures */
	char fail_what[256]; /* what happened, for the report */
};

struct bench_case {
	const char *name;
	size_t size;
	int per_round;
};

static const char *const cordon_content[] = { "result", "structuredContent", "content", NULL };
static const char *const sfs_content[] = { "result", "content", "0", "text", NULL };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time (ns) the server's threads and this process have used: on a
 * machine shared with other work, CPU time per call moves much less than
 * wall time. Threads are summed from /proc/PID/task/TID/schedstat (node
 * runs several). */
static double cpu_s(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	struct timespec ts;
	double total = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	total = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return total;
	while ((de = readdir(d))) {
		char f[128];
		unsigned long long ns;
		FILE *fp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		fp = fopen(f, "re");
		if (!fp)
			continue;
		if (fscanf(fp, "%llu", &ns) == 1)
			total += (double)ns / 1e9;
		fclose(fp);
	}
	closedir(d);
	return total;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A checksum of content bytes (64-bit words, multiply-rotate), fast enough
 * not to matter next to the transfer. */
static uint64_t checksum(const char *s, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0xc4ceb9fe1a85ec53ull;
	return h;
}

/* Text content: lines of 63 letters and a newline (escaped once in a JSON
 * string, twice in cordon-fs's text copy of structuredContent). */
static char *make_content(size_t size)
{
	char *buf = malloc(size);

	if (!buf)
		abort();
	for (size_t i = 0; i < size; i++)
		buf[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	return buf;
}

/* The JSON string text (no quotes) of content made by make_content(). */
static char *escape_content(const char *c, size_t n, size_t *ret_len)
{
	char *e = malloc(2 * n + 1), *o = e;

	if (!e)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else {
			*o++ = c[i];
		}
	}
	*ret_len = (size_t)(o - e);
	return e;
}

static void write_file_plain(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write_all(fd, data, n) < 0 || close(fd) < 0) {
		perror(path);
		exit(1);
	}
}

/* Baseline read: open + read the whole file. */
static double plain_read(const char *path, size_t size, int n, char *buf)
{
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read_full(fd, buf, size) != (ssize_t)size) {
			perror("read");
			exit(1);
		}
		close(fd);
	}
	return (now_s() - t0) / n;
}

/* Baseline write: what cordon-fs does to store a file (temporary file,
 * write, fsync, rename, fsync of the directory). */
static double plain_write(const char *dir, const char *data, size_t size, int n)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	double t0 = now_s();

	snprintf(tmp, sizeof(tmp), "%s/.plain-tmp", dir);
	snprintf(dst, sizeof(dst), "%s/plain-out", dir);
	for (int i = 0; i < n; i++) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), dfd;

		if (fd < 0 || write_all(fd, data, size) < 0 || fsync(fd) < 0 || close(fd) < 0 || rename(tmp, dst) < 0) {
			perror("plain write");
			exit(1);
		}
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	return (now_s() - t0) / n;
}

static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* The next line from the server (without its newline), or NULL on EOF, an
 * I/O error or timeout_ms without a byte. The buffer doubles, the search
 * for the newline resumes where it stopped: linear in the line's length. */
static char *next_line(struct server *s, size_t *ret_len, int timeout_ms)
{
	size_t scanned = s->off;

	for (;;) {
		char *nl = memchr(s->buf + scanned, '\n', s->len - scanned);
		struct pollfd pfd = { .fd = s->p.from, .events = POLLIN };
		ssize_t n;

		if (nl) {
			char *line = s->buf + s->off;

			*ret_len = (size_t)(nl - line);
			s->off = (size_t)(nl - s->buf) + 1;
			return line;
		}
		scanned = s->len;
		if (s->off > 0 && s->len - s->off < s->cap / 2) {
			memmove(s->buf, s->buf + s->off, s->len - s->off);
			s->len -= s->off;
			scanned -= s->off;
			s->off = 0;
		}
		if (s->len == s->cap) {
			size_t ncap = s->cap ? s->cap * 2 : 1 << 16;
			char *nb = realloc(s->buf, ncap);

			if (!nb)
				return NULL;
			s->buf = nb;
			s->cap = ncap;
		}
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return NULL;
		n = read(s->p.from, s->buf + s->len, s->cap - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		s->len += (size_t)n;
	}
}

static void fail(struct server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct server *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->fail_what, sizeof(s->fail_what), fmt, ap);
	va_end(ap);
	s->failed = true;
}

/* Sends one tools/call (the arguments' JSON text in three pieces, so a
 * 16 MiB content is not copied into a request buffer) and waits for its
 * response; skips anything that is not the response (server notifications
 * or requests). Returns the response line, checked well formed, with the
 * spans of paths[0..n) in spans, or NULL after fail(). */
static char *call(struct server *s, const char *tool, const char *args_head, const char *body, size_t body_len,
		  const char *args_tail, const char *const *const *paths, size_t n_paths, struct json_span *spans,
		  size_t *ret_len)
{
	const char *const id_path[] = { "id", NULL }, *const method_path[] = { "method", NULL },
			  *const err_path[] = { "result", "isError", NULL },
			  *const rpc_err_path[] = { "error", "message", NULL };
	const char *const *all[JSON_SCAN_MAX_PATHS];
	struct json_span sp[JSON_SCAN_MAX_PATHS];
	char head[1024], idtext[32];
	struct iovec iov[3];
	long id = ++s->next_id;
	int r;

	snprintf(head, sizeof(head),
		 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
		 "\"arguments\":%s",
		 id, tool, args_head);
	iov[0] = (struct iovec){ .iov_base = head, .iov_len = strlen(head) };
	iov[1] = (struct iovec){ .iov_base = (void *)body, .iov_len = body_len };
	iov[2] = (struct iovec){ .iov_base = (void *)args_tail, .iov_len = strlen(args_tail) };
	r = writev_all(s->p.to, iov, 3);
	if (r < 0) {
		fail(s, "writing the request: %s (the server closed its stdin)", strerror(-r));
		return NULL;
	}
	snprintf(idtext, sizeof(idtext), "%ld", id);
	all[0] = id_path;
	all[1] = method_path;
	all[2] = err_path;
	all[3] = rpc_err_path;
	for (size_t k = 0; k < n_paths; k++)
		all[4 + k] = paths[k];
	for (;;) {
		size_t len;
		char *line = next_line(s, &len, 120000);

		if (!line) {
			fail(s, "no response (end of its output, or 120 s without a byte)");
			return NULL;
		}
		r = json_scan_paths(line, len, all, 4 + n_paths, 64, sp);
		if (r < 0) {
			fail(s, "a malformed response line (%zu bytes): %s", len, strerror(-r));
			return NULL;
		}
		if (sp[1].first) /* a notification or a request from the server */
			continue;
		if (sp[0].len != strlen(idtext) || memcmp(line + sp[0].offset, idtext, sp[0].len) != 0)
			continue;
		if (sp[3].first) {
			fail(s, "JSON-RPC error: %.*s", (int)(sp[3].len > 200 ? 200 : sp[3].len), line + sp[3].offset);
			return NULL;
		}
		if (sp[2].first == 't') {
			fail(s, "tool error (isError true), a %zu-byte response", len);
			return NULL;
		}
		memcpy(spans, sp + 4, n_paths * sizeof(*spans));
		*ret_len = len;
		return line;
	}
}

static double mcp_read(struct server *s, const char *path, const char *want, size_t size, int n)
{
	const char *const *paths[] = { s->read_content };
	char args[PATH_MAX + 64];
	uint64_t sum = checksum(want, size);
	double t0;

	snprintf(args, sizeof(args), "{\"path\":\"%s\"}}}\n", path);
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		struct json_span sp;
		size_t len;
		char *line = call(s, s->read_tool, args, "", 0, "", paths, 1, &sp, &len);
		ssize_t got;

		if (!line)
			return -1;
		if (sp.first != '"') {
			fail(s, "read: the response has no content string");
			return -1;
		}
		got = json_string_decode(line + sp.offset, sp.len, line + sp.offset);
		if (got != (ssize_t)size || checksum(line + sp.offset, (size_t)got) != sum) {
			fail(s, "read: %zd bytes of content, or a different checksum, for a %zu-byte file", got, size);
			return -1;
		}
	}
	return (now_s() - t0) / n;
}

static double mcp_write(struct server *s, const char *path, const char *esc, size_t esc_len, size_t size, int n)
{
	const char *const bytes_path[] = { "result", "structuredContent", "bytes", NULL };
	const char *const *paths[] = { bytes_path };
	char head[PATH_MAX + 64], want[32];
	double t0;

	snprintf(head, sizeof(head), "{\"path\":\"%s\",\"content\":\"", path);
	snprintf(want, sizeof(want), "%zu", size);
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		struct json_span sp;
		size_t len;
		char *line = call(s, "write_file", head, esc, esc_len, "\"}}}\n", paths, 1, &sp, &len);

		if (!line)
			return -1;
		/* cordon-fs says how many bytes it stored; server-filesystem
		 * answers with a sentence, and the file is checked below. */
		if (s->says_bytes && (sp.len != strlen(want) || memcmp(line + sp.offset, want, sp.len) != 0)) {
			fail(s, "write: the response does not say %s bytes", want);
			return -1;
		}
	}
	return (now_s() - t0) / n;
}

static bool file_is(const char *path, const char *want, size_t size)
{
	char *buf = malloc(size + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && buf && read_full(fd, buf, size + 1) == (ssize_t)size && memcmp(buf, want, size) == 0;

	if (fd >= 0)
		close(fd);
	free(buf);
	return ok;
}

static void start(struct server *s, char *const argv[])
{
	json_t *init;

	if (mcp_peer_start(&s->p, argv) < 0) {
		snprintf(s->why, sizeof(s->why), "cannot start %s", argv[0]);
		return;
	}
	init = mcp_peer_initialize(&s->p, "2025-06-18");
	if (!init) {
		snprintf(s->why, sizeof(s->why), "no answer to initialize");
		mcp_peer_stop(&s->p, 5000);
		return;
	}
	json_decref(init);
	s->next_id = 1000;
	/* Bytes the harness read past the initialize response stay with it;
	 * the next lines are read here. */
	if (s->p.len > 0) {
		s->buf = malloc(s->p.len);
		memcpy(s->buf, s->p.buf, s->p.len);
		s->len = s->cap = s->p.len;
		s->p.len = 0;
	}
	s->up = true;
}

static void print_cell(const struct server *s, double t, double cpu, double base, double mib)
{
	if (!s->up)
		printf(" %38s", "-");
	else if (t < 0)
		printf(" %38s", "failed");
	else
		printf(" %8.1f ms %6.1f %5.1fx %8.1f ms %6.1f", t * 1e3, mib / t, t / base, cpu * 1e3, mib / cpu);
}

int main(int argc, char **argv)
{
	static const struct bench_case cases[] = {
		{ "4k", 4096, 50 },
		{ "1m", 1024 * 1024, 4 },
		{ "16m", 16u * 1024 * 1024, 2 },
	};
	char *base = cordon_test_mkdtemp("bench-fs"), bin[PATH_MAX], sfs[PATH_MAX], rp[PATH_MAX], wp[PATH_MAX];
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	const char *tools = cordon_test_env("CORDON_TOOLS_DIR", "build/tools");
	const char *baseline = getenv("CORDON_BENCH_FS_BASELINE");
	struct server sv[N_SERVERS] = {
		{ .label = "cordon-fs", .read_tool = "read_file", .read_content = cordon_content, .says_bytes = true },
		{ .label = "server-filesystem",
		  .read_tool = "read_text_file",
		  .read_content = sfs_content,
		  .absolute_paths = true },
		{ .label = "cordon-fs baseline",
		  .read_tool = "read_file",
		  .read_content = cordon_content,
		  .says_bytes = true },
	};
	char node_default[PATH_MAX];

	snprintf(bin, sizeof(bin), "%s/cordon-fs", tools);
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "bench-fs: %s not found (set CORDON_TOOLS_DIR)\n", bin);
		return 1;
	}
	{
		char *cargv[] = { bin, (char *)"--max-read", (char *)"16M", base, NULL };

		start(&sv[0], cargv);
		if (!sv[0].up) {
			fprintf(stderr, "bench-fs: cordon-fs: %s\n", sv[0].why);
			return 1;
		}
	}
	/* BUILD/tests/e2e/node, from CORDON_TOOLS_DIR = BUILD/tools. */
	snprintf(node_default, sizeof(node_default), "%s/../tests/e2e/node", tools);
	if (!node_dir)
		node_dir = node_default;
	snprintf(sfs, sizeof(sfs), "%s/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", node_dir);
	if (access("/usr/bin/node", X_OK) < 0)
		snprintf(sv[1].why, sizeof(sv[1].why), "/usr/bin/node not found");
	else if (access(sfs, R_OK) < 0)
		snprintf(sv[1].why, sizeof(sv[1].why), "%s not found (run tests/e2e/npm-setup %s)", sfs, node_dir);
	else {
		char *nargv[] = { (char *)"/usr/bin/node", sfs, base, NULL };

		start(&sv[1], nargv);
	}
	if (!baseline)
		snprintf(sv[2].why, sizeof(sv[2].why), "CORDON_BENCH_FS_BASELINE not set");
	else {
		char *bargv[] = { (char *)baseline, (char *)"--max-read", (char *)"16M", base, NULL };

		start(&sv[2], bargv);
	}

	printf("bench-fs: read_file / write_file end to end over MCP stdio (client frames and scans, no jansson),\n"
	       "median of %d interleaved rounds. Server cells: wall ms per call, MiB/s, ratio to plain I/O;\n"
	       "CPU ms per call (the server's threads + this client) and MiB/s by that CPU time\n",
	       ROUNDS);
	for (int k = 0; k < N_SERVERS; k++)
		if (!sv[k].up && (k < 2 || baseline))
			printf("  %s: skipped: %s\n", sv[k].label, sv[k].why);
	printf("  (cases: 4k 1m 16m, or those named on the command line)\n");
	printf("  %-9s %-22s  %-38s %-38s %s\n", "case", "plain I/O", sv[0].label, sv[1].label,
	       baseline ? sv[2].label : "");
	for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
		const struct bench_case *bc = &cases[c];
		bool want = argc < 2;
		double mib = (double)bc->size / (1024.0 * 1024.0);
		char *content = make_content(bc->size), *scratch = malloc(bc->size);
		size_t esc_len;
		char *esc = escape_content(content, bc->size, &esc_len);
		char file[PATH_MAX];

		for (int a = 1; a < argc; a++)
			want = want || strcmp(argv[a], bc->name) == 0;
		if (!want) {
			free(content);
			free(scratch);
			free(esc);
			continue;
		}
		snprintf(file, sizeof(file), "%s/in-%s", base, bc->name);
		write_file_plain(file, content, bc->size);
		for (int op = 0; op < 2; op++) {
			double tb[ROUNDS], ts[N_SERVERS][ROUNDS], tc[N_SERVERS][ROUNDS], mb, ms[N_SERVERS],
				mc[N_SERVERS];

			for (int r = 0; r < ROUNDS; r++) {
				tb[r] = op == 0 ? plain_read(file, bc->size, bc->per_round, scratch)
						: plain_write(base, content, bc->size, bc->per_round);
				for (int k = 0; k < N_SERVERS; k++) {
					struct server *s = &sv[k];

					double c0;

					ts[k][r] = -1;
					if (!s->up || s->failed)
						continue;
					c0 = cpu_s(s->p.pid);
					if (op == 0) {
						snprintf(rp, sizeof(rp), "%s%sin-%s", s->absolute_paths ? base : "",
							 s->absolute_paths ? "/" : "", bc->name);
						ts[k][r] = mcp_read(s, rp, content, bc->size, bc->per_round);
					} else {
						snprintf(wp, sizeof(wp), "%s%sout-%s-%d", s->absolute_paths ? base : "",
							 s->absolute_paths ? "/" : "", bc->name, k);
						ts[k][r] = mcp_write(s, wp, esc, esc_len, bc->size, bc->per_round);
					}
					tc[k][r] = (cpu_s(s->p.pid) - c0) / bc->per_round;
					if (s->failed)
						fprintf(stderr, "bench-fs: %s: %s %s: %s\n", s->label,
							op ? "write" : "read", bc->name, s->fail_what);
				}
			}
			qsort(tb, ROUNDS, sizeof(double), cmp);
			mb = tb[ROUNDS / 2];
			for (int k = 0; k < N_SERVERS; k++) {
				bool all = true;

				for (int r = 0; r < ROUNDS; r++)
					all = all && ts[k][r] >= 0;
				qsort(ts[k], ROUNDS, sizeof(double), cmp);
				qsort(tc[k], ROUNDS, sizeof(double), cmp);
				ms[k] = all ? ts[k][ROUNDS / 2] : -1;
				mc[k] = all ? tc[k][ROUNDS / 2] : -1;
			}
			/* A write is only counted when the file holds what was sent. */
			for (int k = 0; op == 1 && k < N_SERVERS; k++) {
				char out[PATH_MAX];

				snprintf(out, sizeof(out), "%s/out-%s-%d", base, bc->name, k);
				if (ms[k] >= 0 && !file_is(out, content, bc->size)) {
					fail(&sv[k], "write %s: the file does not hold the content sent", bc->name);
					fprintf(stderr, "bench-fs: %s: %s\n", sv[k].label, sv[k].fail_what);
					ms[k] = -1;
				}
			}
			printf("  %-3s %-5s %9.1f ms %6.1f     ", bc->name, op ? "write" : "read", mb * 1e3, mib / mb);
			for (int k = 0; k < N_SERVERS; k++)
				if (k < 2 || baseline)
					print_cell(&sv[k], ms[k], mc[k], mb, mib);
			printf("\n");
			fflush(stdout);
		}
		free(content);
		free(scratch);
		free(esc);
	}
	for (int k = 0; k < N_SERVERS; k++) {
		if (sv[k].failed)
			printf("  %s: stopped after a failure: %s\n", sv[k].label, sv[k].fail_what);
		if (sv[k].up) {
			int st = mcp_peer_stop(&sv[k].p, 5000);

			if (st >= 0 && (sv[k].failed || !(WIFEXITED(st) && WEXITSTATUS(st) == 0)))
				printf("  %s: exit status %s %d\n", sv[k].label, WIFSIGNALED(st) ? "signal" : "code",
				       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
		free(sv[k].buf);
	}
	cordon_test_rm_rf(base);
	free(base);
	return 0;
}
