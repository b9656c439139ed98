/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mcp-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"

int mcp_peer_start(struct mcp_peer *p, char *const argv[])
{
	int in[2], out[2];

	memset(p, 0, sizeof(*p));
	p->next_id = 1;
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = in[1];
	p->from = out[0];
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *mcp_peer_read(struct mcp_peer *p, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;

	for (;;) {
		/* Scan only what is new since the last read: a long message
		 * arrives in many chunks. */
		char *nl =
			p->buf && p->len > p->scanned ? memchr(p->buf + p->scanned, '\n', p->len - p->scanned) : NULL;
		struct pollfd pfd = { .fd = p->from, .events = POLLIN };
		ssize_t n;
		long left;

		if (nl) {
			size_t ll = (size_t)(nl - p->buf);
			json_t *v = json_loadb(p->buf, ll, JSON_REJECT_DUPLICATES, NULL);

			memmove(p->buf, nl + 1, p->len - ll - 1);
			p->len -= ll + 1;
			p->scanned = 0;
			if (v)
				return v;
			continue;
		}
		p->scanned = p->len;
		left = deadline - now_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return NULL;
		if (p->len == p->cap) {
			size_t ncap = p->cap ? p->cap * 2 : 65536;
			char *nb = realloc(p->buf, ncap);

			if (!nb)
				return NULL;
			p->buf = nb;
			p->cap = ncap;
		}
		n = read(p->from, p->buf + p->len, p->cap - p->len);
		if (n <= 0)
			return NULL;
		p->len += (size_t)n;
	}
}

static int send_msg(struct mcp_peer *p, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	int r;

	if (!s)
		return -ENOMEM;
	r = write_all(p->to, s, strlen(s));
	if (r >= 0)
		r = write_all(p->to, "\n", 1);
	free(s);
	return r;
}

int mcp_peer_send_raw(struct mcp_peer *p, const char *data, size_t len)
{
	return write_all(p->to, data, len);
}

json_t *mcp_peer_request(struct mcp_peer *p, const char *method, json_t *params, int timeout_ms)
{
	long id = p->next_id++;
	json_t *msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", (json_int_t)id, "method", method);
	long deadline = now_ms() + timeout_ms;

	if (params)
		json_object_set_new(msg, "params", params);
	if (send_msg(p, msg) < 0) {
		json_decref(msg);
		return NULL;
	}
	json_decref(msg);
	for (;;) {
		long left = deadline - now_ms();
		json_t *v = left > 0 ? mcp_peer_read(p, (int)left) : NULL;

		if (!v)
			return NULL;
		if (json_integer_value(json_object_get(v, "id")) == id && !json_object_get(v, "method"))
			return v;
		json_decref(v);
	}
}

json_t *mcp_peer_initialize(struct mcp_peer *p, const char *version)
{
	json_t *r = mcp_peer_request(p, "initialize",
				     json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", version, "capabilities",
					       "clientInfo", "name", "cordon-test", "version", "1"),
				     10000);
	json_t *note = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized");
	json_t *res;

	if (!r) {
		json_decref(note);
		return NULL;
	}
	send_msg(p, note);
	json_decref(note);
	res = json_incref(json_object_get(r, "result"));
	json_decref(r);
	return res;
}

json_t *mcp_peer_call(struct mcp_peer *p, const char *tool, json_t *args, int timeout_ms)
{
	json_t *r =
		mcp_peer_request(p, "tools/call", json_pack("{s:s, s:o}", "name", tool, "arguments", args), timeout_ms);
	json_t *res;

	if (!r)
		return NULL;
	res = json_incref(json_object_get(r, "result"));
	json_decref(r);
	return res;
}

int mcp_peer_stop(struct mcp_peer *p, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	int status;

	if (p->to >= 0)
		close(p->to);
	p->to = -1;
	for (;;) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid)
			break;
		if (r < 0)
			return -errno;
		if (now_ms() > deadline) {
			kill(p->pid, SIGKILL);
			if (waitpid(p->pid, &status, 0) < 0)
				return -errno;
			break;
		}
		usleep(2000);
	}
	if (p->from >= 0)
		close(p->from);
	p->from = -1;
	free(p->buf);
	p->buf = NULL;
	return status;
}
