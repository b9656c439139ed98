/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator socket: connections, line framing, per-request peer checks,
 * limits. The operations themselves are in operator-ops.c. */

#include "operator.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"

#define READ_CHUNK 65536

struct conn {
	struct cordon_operator *op;
	struct conn *prev, *next;
	int fd;
	struct cordon_watch *watch;
	struct cordon_timer *idle;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	bool close_after_flush;
	bool eof; /* the peer shut down its side: no more EPOLLIN/EPOLLRDHUP */
	/* A descriptor the peer passed (SCM_RIGHTS) with its request: the
	 * next request handled borrows it (backup writes into it), then it is
	 * closed. At most one is kept; any other is closed on arrival. */
	int passed_fd;
};

struct cordon_operator {
	struct cordon_daemon *d;
	struct cordon_loop *loop;
	int listen_fd;
	gid_t gid;
	struct cordon_operator_options o;
	struct cordon_watch *listen_watch;
	struct conn *conns;
	unsigned n_conns;
};

/* The peer's supplementary groups as the kernel recorded them at connect()
 * (SO_PEERGROUPS, Linux 4.13). Returns the count and a malloc'd array, or
 * -errno. */
static int peer_groups(int fd, gid_t **ret)
{
	socklen_t len = 64 * sizeof(gid_t);

	for (int attempt = 0; attempt < 4; attempt++) {
		gid_t *g = malloc(len ? len : sizeof(gid_t));

		if (!g)
			return -ENOMEM;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) == 0) {
			*ret = g;
			return (int)(len / sizeof(gid_t));
		}
		free(g);
		/* ERANGE: len now holds the size needed. */
		if (errno != ERANGE || len > 65536 * sizeof(gid_t))
			return -errno;
	}
	return -ERANGE;
}

/* Whether the group database, when it can be read, still lists the user of
 * uid in gid. 1: member; 0: readable and not a member; -errno: the database
 * cannot be consulted (no passwd entry, or the daemon's sandbox does not let
 * it read /etc), in which case the kernel credentials decide alone. */
static int database_member(uid_t uid, gid_t gid)
{
	struct passwd pw, *pwp = NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ gid_t *groups = NULL;
	long bufsize = sysconf(_SC_GETPW_R_SIZE_MAX);
	int ngroups = 64, r;

	if (bufsize <= 0 || bufsize > 1024 * 1024)
		bufsize = 16384;
	buf = malloc((size_t)bufsize);
	if (!buf)
		return -ENOMEM;
	r = getpwuid_r(uid, &pw, buf, (size_t)bufsize, &pwp);
	if (r != 0)
		return -r;
	if (!pwp)
		return -ENOENT;
	if (pw.pw_gid == gid)
		return 1;
	for (int attempt = 0; attempt < 4; attempt++) {
		int n = ngroups;
		gid_t *g = realloc(groups, (size_t)n * sizeof(gid_t));

		if (!g)
			return -ENOMEM;
		groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) >= 0) {
			for (int i = 0; i < n; i++)
				if (groups[i] == gid)
					return 1;
			return 0;
		}
		if (n <= ngroups || n > 65536)
			return -ERANGE;
		ngroups = n;
	}
	return -ERANGE;
}

int cordon_operator_peer_check(int fd, gid_t operator_gid, uid_t *ret_uid, struct cordon_op_error *err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	_cleanup_free_ gid_t *groups = NULL;
	bool in_group;
	int n, r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return cordon_op_error_set(err, errno, CORDON_OP_E_DENIED, "cannot read the peer's credentials: %s",
					   strerror(errno));
	if (len != sizeof(cred) || cred.uid == (uid_t)-1)
		return cordon_op_error_set(err, EPERM, CORDON_OP_E_DENIED, "the peer has no credentials");
	if (cred.uid == 0)
		goto ok;

	/* The kernel's record of the peer: its primary gid (SO_PEERCRED) or a
	 * supplementary group (SO_PEERGROUPS), both taken at connect() and
	 * unforgeable by the peer. These are the same credentials the kernel
	 * checked against the socket file's group permission. */
	in_group = cred.gid == operator_gid;
	if (!in_group) {
		n = peer_groups(fd, &groups);
		if (n < 0)
			return cordon_op_error_set(err, -n, CORDON_OP_E_DENIED, "cannot read the peer's groups: %s",
						   strerror(-n));
		for (int i = 0; i < n && !in_group; i++)
			in_group = groups[i] == operator_gid;
	}
	if (!in_group)
		goto denied;
	/* Revocation: a process keeps its groups until its user logs in again.
	 * When the group database can be read, it must still list the user, so
	 * removing someone from the group takes effect on their next request. */
	r = database_member(cred.uid, operator_gid);
	if (r == 0)
		goto denied;
	if (r == -ENOMEM)
		return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
ok:
	if (ret_uid)
		*ret_uid = cred.uid;
	return 0;
denied:
	return cordon_op_error_set(err, EPERM, CORDON_OP_E_DENIED,
				   "uid %u is not root and not a member of the operator group (gid %u)",
				   (unsigned)cred.uid, (unsigned)operator_gid);
}

static void conn_free(struct conn *c)
{
	struct cordon_operator *op = c->op;

	cordon_loop_unwatch(c->watch);
	cordon_loop_timer_cancel(c->idle);
	closep(&c->fd);
	closep(&c->passed_fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		op->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	op->n_conns--;
	free(c->in);
	free(c->out);
	free(c);
}

static void idle_expired(struct cordon_loop *loop, void *userdata)
{
	struct conn *c = userdata;

	(void)loop;
	c->idle = NULL; /* fired: the loop frees it */
	conn_free(c);
}

static int arm_idle(struct conn *c)
{
	cordon_loop_timer_cancel(c->idle);
	c->idle = NULL;
	return cordon_loop_timer(c->op->loop, c->op->o.idle_timeout_ms, idle_expired, c, &c->idle);
}

static int queue(struct conn *c, char *line, size_t len)
{
	if (c->out_len - c->out_off + len > c->op->o.max_pending_output) {
		free(line);
		return -ENOBUFS;
	}
	if (c->out_off == c->out_len) {
		free(c->out);
		c->out = line;
		c->out_len = len;
		c->out_off = 0;
		return 0;
	}
	{
		size_t pending = c->out_len - c->out_off;
		char *n = malloc(pending + len);

		if (!n) {
			free(line);
			return -ENOMEM;
		}
		memcpy(n, c->out + c->out_off, pending);
		memcpy(n + pending, line, len);
		free(line);
		free(c->out);
		c->out = n;
		c->out_len = pending + len;
		c->out_off = 0;
	}
	return 0;
}

static int queue_error(struct conn *c, const json_t *id, const struct cordon_op_error *e)
{
	char *line;
	size_t len;
	int r = cordon_op_response_error(id, e, &line, &len);

	return r < 0 ? r : queue(c, line, len);
}

static void handle_line(struct conn *c, const char *line, size_t len)
{
	struct cordon_op_request req = {};
	struct cordon_op_error e = {};
	json_t *result = NULL;
	uid_t uid;
	int r;

	/* The peer check comes before decoding: a non-operator learns nothing,
	 * not even whether its request was well-formed. */
	r = cordon_operator_peer_check(c->fd, c->op->gid, &uid, &e);
	if (r < 0) {
		closep(&c->passed_fd);
		(void)queue_error(c, NULL, &e);
		return;
	}
	r = cordon_op_request_decode(line, len, &req, &e);
	if (r < 0) {
		closep(&c->passed_fd); /* it came with this request */
		(void)queue_error(c, req.id, &e);
		cordon_op_request_done(&req);
		return;
	}
	{
		struct cordon_actor actor = cordon_actor_operator(uid, CORDON_OPERATOR_CHANNEL);
		char *out;
		size_t out_len;

		req.fd = c->passed_fd;
		r = cordon_operator_execute(c->op->d, &actor, &req, &result, &e);
		closep(&c->passed_fd); /* one request's: never reused by the next */
		if (r < 0)
			r = queue_error(c, req.id, &e);
		else {
			r = cordon_op_response_ok(req.id, result, &out, &out_len);
			if (r >= 0)
				r = queue(c, out, out_len);
			if (r == -ENOBUFS) {
				cordon_op_error_set(&e, ENOBUFS, CORDON_OP_E_FAILED,
						    "response larger than the connection's output limit");
				r = queue_error(c, req.id, &e);
			}
		}
		json_decref(result);
	}
	cordon_op_request_done(&req);
	if (r < 0)
		c->close_after_flush = true;
}

static void update_events(struct conn *c)
{
	uint32_t ev = 0;

	if (c->out_off < c->out_len)
		ev |= EPOLLOUT;
	else if (!c->close_after_flush && !c->eof)
		ev |= EPOLLIN; /* not read while responses are pending: back-pressure */
	if (!c->eof)
		ev |= EPOLLRDHUP;
	(void)cordon_loop_watch_modify(c->watch, ev);
}

/* Writes what it can. Returns 0, or -errno when the connection is dead. */
static int flush(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->out_off += (size_t)n;
	}
	return 0;
}

/* Processes complete lines in the input buffer, one at a time: the next
 * line runs only once the previous response has been written out, so a
 * client that does not read cannot make the server buffer without bound.
 * Returns 0, or -errno when the connection is dead. */
static int process_input(struct conn *c)
{
	size_t start = 0;
	int r = 0;

	while (!c->close_after_flush) {
		char *nl;

		r = flush(c);
		if (r < 0 || c->out_off < c->out_len)
			break;
		nl = memchr(c->in + start, '\n', c->in_len - start);
		if (!nl)
			break;
		handle_line(c, c->in + start, (size_t)(nl - (c->in + start)));
		start = (size_t)(nl - c->in) + 1;
		(void)arm_idle(c);
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (r >= 0 && !c->close_after_flush && c->in_len > CORDON_OP_MAX_REQUEST) {
		struct cordon_op_error e;

		cordon_op_error_set(&e, EMSGSIZE, CORDON_OP_E_TOO_LARGE,
				    "request line longer than %zu bytes; closing the connection",
				    CORDON_OP_MAX_REQUEST);
		(void)queue_error(c, NULL, &e);
		c->close_after_flush = true;
		c->in_len = 0;
	}
	if (r >= 0)
		r = flush(c);
	return r;
}

/* recv() that also takes a descriptor the peer passed (SCM_RIGHTS, close-
 * on-exec): kept in c->passed_fd when none is pending, else closed. The
 * kernel closes any beyond the one the control buffer holds. */
static ssize_t recv_passing_fd(struct conn *c, size_t room)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = {};
	struct iovec iov = { .iov_base = c->in + c->in_len, .iov_len = room };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		int fd;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&fd, CMSG_DATA(h), sizeof(fd));
		if (c->passed_fd < 0)
			c->passed_fd = fd;
		else
			close(fd);
	}
	return n;
}

static void conn_event(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;

	(void)loop;
	(void)fd;
	if ((revents & EPOLLIN) && !c->eof && c->in_len <= CORDON_OP_MAX_REQUEST) {
		/* At most the limit plus one byte is buffered: enough to know a
		 * line is too long. */
		size_t room = CORDON_OP_MAX_REQUEST + 1 - c->in_len;
		ssize_t n;

		if (room > READ_CHUNK)
			room = READ_CHUNK;
		n = recv_passing_fd(c, room);
		if (n == 0)
			c->eof = true;
		else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			conn_free(c);
			return;
		} else if (n > 0)
			c->in_len += (size_t)n;
	} else if (revents & (EPOLLHUP | EPOLLRDHUP))
		c->eof = true; /* nothing more will be read from it */
	if (process_input(c) < 0 || (revents & EPOLLERR)) {
		conn_free(c);
		return;
	}
	if (c->out_off == c->out_len && (c->close_after_flush || c->eof)) {
		conn_free(c);
		return;
	}
	update_events(c);
}

static void listen_event(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct cordon_operator *op = userdata;

	(void)loop;
	(void)revents;
	for (int i = 0; i < 16; i++) {
		_cleanup_close_ int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c;

		if (cfd < 0)
			return;
		if (op->n_conns >= op->o.max_connections) {
			static const char busy[] = "{\"v\":1,\"id\":null,\"ok\":false,\"error\":{\"code\":\"busy\","
						   "\"message\":\"too many operator connections\"}}\n";

			(void)send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		c->in = malloc(CORDON_OP_MAX_REQUEST + 1);
		if (!c->in) {
			free(c);
			return;
		}
		c->op = op;
		c->fd = -EBADF;
		c->passed_fd = -EBADF;
		if (cordon_loop_watch(op->loop, cfd, EPOLLIN | EPOLLRDHUP, conn_event, c, &c->watch) < 0) {
			free(c->in);
			free(c);
			continue;
		}
		c->fd = TAKE_FD(cfd);
		c->next = op->conns;
		if (op->conns)
			op->conns->prev = c;
		op->conns = c;
		op->n_conns++;
		if (arm_idle(c) < 0)
			conn_free(c);
	}
}

int cordon_operator_start_opts(struct cordon_daemon *d, int listen_fd, gid_t operator_gid,
			       const struct cordon_operator_options *o, struct cordon_operator **ret)
{
	struct cordon_operator *op;
	int r;

	if (!d || listen_fd < 0 || !ret)
		return -EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->d = d;
	op->loop = cordon_daemon_loop(d);
	op->listen_fd = listen_fd;
	op->gid = operator_gid;
	/* accept4() runs in a loop until EAGAIN. */
	r = fcntl(listen_fd, F_GETFL);
	if (r < 0 || fcntl(listen_fd, F_SETFL, r | O_NONBLOCK) < 0) {
		r = -errno;
		free(op);
		return r;
	}
	if (o)
		op->o = *o;
	if (!op->o.max_connections)
		op->o.max_connections = 32;
	if (!op->o.idle_timeout_ms)
		op->o.idle_timeout_ms = 60000;
	if (!op->o.max_pending_output)
		op->o.max_pending_output = CORDON_OP_MAX_RESPONSE;
	r = cordon_loop_watch(op->loop, listen_fd, EPOLLIN, listen_event, op, &op->listen_watch);
	if (r < 0) {
		free(op);
		return r;
	}
	*ret = op;
	return 0;
}

int cordon_operator_start(struct cordon_daemon *d, int listen_fd, gid_t operator_gid, struct cordon_operator **ret)
{
	return cordon_operator_start_opts(d, listen_fd, operator_gid, NULL, ret);
}

void cordon_operator_free(struct cordon_operator *op)
{
	if (!op)
		return;
	while (op->conns)
		conn_free(op->conns);
	cordon_loop_unwatch(op->listen_watch);
	free(op);
}
