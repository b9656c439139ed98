/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The broker's side of the launcher helper (launcher-client.h,
 * docs/privsep.md).
 *
 * cordon_launcher_client_fd() is an epoll fd that holds the helper socket
 * and an eventfd: events read while a synchronous request waited for its
 * reply are queued in memory, where the socket's readability no longer
 * shows them, so the eventfd is raised for them and the event loop still
 * wakes up and calls dispatch(). Helper loss is also queued that way, so
 * handlers only ever run from dispatch(), never from inside a request. */
#include "launcher-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

/* Bounds: how long a request waits for its reply (a spawn builds a whole
 * sandbox; a stuck helper must not hang cordond forever), how long free()
 * lets the helper tear its instances down before SIGKILL, and how many
 * events may queue before the helper counts as misbehaving. */
#define REQUEST_TIMEOUT_MS 60000
#define START_TIMEOUT_MS   30000
#define FREE_TIMEOUT_MS	   10000
#define LOST_REAP_MS	   1000
#define MAX_QUEUED_EVENTS  4096u

struct event {
	uint16_t type;
	uint32_t instance;
	int wait_status;
	json_t *json;
	struct event *next;
};

struct cordon_launcher_client {
	int sock;
	int epfd;
	int evfd;
	int pidfd;
	pid_t pid;
	bool alive;	    /* false once EOF, a protocol error or an I/O error was seen */
	bool lost_reported; /* helper_lost was delivered */
	bool reaped;
	int helper_status;
	struct cordon_diag lost_why;
	uint32_t next_id;
	struct cordon_launcher_handlers h;
	struct event *head, *tail;
	size_t n_events;
};

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void raise_eventfd(struct cordon_launcher_client *lc)
{
	uint64_t one = 1;

	(void)!write(lc->evfd, &one, sizeof(one));
}

static void drain_eventfd(struct cordon_launcher_client *lc)
{
	uint64_t v;

	(void)!read(lc->evfd, &v, sizeof(v));
}

/* Waits up to ms for the helper to exit and reaps it. Returns true when
 * it was reaped (or was already). */
static bool reap_helper(struct cordon_launcher_client *lc, int ms)
{
	int st;
	pid_t r;

	if (lc->reaped)
		return true;
	if (ms > 0 && lc->pidfd >= 0) {
		struct pollfd p = { .fd = lc->pidfd, .events = POLLIN };

		while (poll(&p, 1, ms) < 0 && errno == EINTR)
			;
	}
	do
		r = waitpid(lc->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == lc->pid) {
		lc->helper_status = st;
		lc->reaped = true;
	} else if (r < 0 && errno == ECHILD) {
		/* Someone else reaped it (SIGCHLD ignored): it is gone. */
		lc->helper_status = -1;
		lc->reaped = true;
	}
	return lc->reaped;
}

/* Marks the helper lost (once) and raises the eventfd so dispatch() will
 * deliver helper_lost. */
static void mark_lost(struct cordon_launcher_client *lc, int error, const char *what)
{
	if (!lc->alive)
		return;
	lc->alive = false;
	cordon_diag_set(&lc->lost_why, error, "launcher", "%s", what);
	raise_eventfd(lc);
}

static void lost_diag_add_status(struct cordon_launcher_client *lc)
{
	char extra[64] = "";
	size_t n;

	if (!reap_helper(lc, LOST_REAP_MS))
		return;
	if (lc->helper_status < 0)
		return;
	if (WIFEXITED(lc->helper_status))
		snprintf(extra, sizeof(extra), " (helper exited with status %d)", WEXITSTATUS(lc->helper_status));
	else if (WIFSIGNALED(lc->helper_status))
		snprintf(extra, sizeof(extra), " (helper killed by signal %d)", WTERMSIG(lc->helper_status));
	n = strlen(lc->lost_why.message);
	if (n + strlen(extra) < sizeof(lc->lost_why.message))
		memcpy(lc->lost_why.message + n, extra, strlen(extra) + 1);
}

static void queue_event(struct cordon_launcher_client *lc, struct cordon_serve_msg *m)
{
	struct event *e;
	json_t *j = NULL;

	if (lc->n_events >= MAX_QUEUED_EVENTS) {
		mark_lost(lc, EOVERFLOW, "the launcher helper sent more events than the broker can queue");
		return;
	}
	if (m->json && m->json[0]) {
		j = json_loads(m->json, JSON_REJECT_DUPLICATES, NULL);
		if (!j || !json_is_object(j)) {
			json_decref(j);
			j = json_object();
		}
	} else
		j = json_object();
	e = calloc(1, sizeof(*e));
	if (!e || !j) {
		free(e);
		json_decref(j);
		return; /* Out of memory: the event is lost, the instance is not. */
	}
	*e = (struct event){ .type = m->type, .instance = m->instance, .wait_status = m->wait_status, .json = j };
	if (lc->tail)
		lc->tail->next = e;
	else
		lc->head = e;
	lc->tail = e;
	lc->n_events++;
	raise_eventfd(lc);
}

/* Reads one packet if one is ready within timeout_ms. Returns 1 with *m
 * filled, 0 on timeout, or -errno (the helper is then marked lost). */
static int read_one(struct cordon_launcher_client *lc, int timeout_ms, struct cordon_serve_msg *m)
{
	struct pollfd p = { .fd = lc->sock, .events = POLLIN };
	struct cordon_diag d = { 0 };
	int r;

	if (!lc->alive)
		return -ECONNRESET;
	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	r = cordon_serve_recv(lc->sock, m, &d);
	if (r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN) {
		mark_lost(lc, ECONNRESET, "the launcher helper closed its socket");
		return -ECONNRESET;
	}
	if (r == -EBADMSG) {
		/* The helper is privileged and ours: a malformed message from
		 * it means it is broken, not that a request was bad. */
		char what[sizeof(d.message) + 48];

		snprintf(what, sizeof(what), "protocol error from the launcher helper: %s", d.message);
		mark_lost(lc, EBADMSG, what);
		return -EBADMSG;
	}
	if (r < 0)
		return r;
	return 1;
}

/* Sends a request and waits for the reply with the same id and the
 * expected type; events that arrive meanwhile are queued. */
static int request(struct cordon_launcher_client *lc, struct cordon_serve_msg *req, uint16_t reply_type, int timeout_ms,
		   struct cordon_serve_msg *ret, struct cordon_diag *d)
{
	uint64_t deadline;
	struct timespec ts;
	int r;

	if (!lc->alive)
		return cordon_diag_set(d, ECONNRESET, "launcher", "the launcher helper is gone");
	req->id = ++lc->next_id;
	if (req->id == 0)
		req->id = ++lc->next_id;
	r = cordon_serve_send(lc->sock, req);
	if (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN) {
		mark_lost(lc, -r, "the launcher helper closed its socket");
		return cordon_diag_set(d, ECONNRESET, "launcher", "the launcher helper is gone");
	}
	if (r < 0)
		return cordon_diag_set(d, -r, "launcher", "sending the %s request: %s",
				       cordon_serve_type_name(req->type), strerror(-r));

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + (uint64_t)timeout_ms;
	for (;;) {
		struct cordon_serve_msg m;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
		if (now >= deadline)
			return cordon_diag_set(d, ETIMEDOUT, "launcher",
					       "no reply from the launcher helper to %s within %d ms",
					       cordon_serve_type_name(req->type), timeout_ms);
		r = read_one(lc, (int)(deadline - now), &m);
		if (r == 0)
			continue;
		if (r < 0)
			return cordon_diag_set(d, -r, "launcher", "%s",
					       lc->alive ? strerror(-r) : lc->lost_why.message);
		if (m.type == CORDON_SERVE_EXITED || m.type == CORDON_SERVE_NET_DENIED) {
			queue_event(lc, &m);
			cordon_serve_msg_clear(&m);
			continue;
		}
		if (m.id != req->id || m.type != reply_type) {
			/* A late reply to a request that timed out: drop it. */
			cordon_serve_msg_clear(&m);
			continue;
		}
		*ret = m;
		return 0;
	}
}

/* The helper's diag from a failed reply, errno set from its status. */
static int reply_status(const struct cordon_serve_msg *m, struct cordon_diag *d)
{
	int e = -m->status;

	if (m->status >= 0)
		return 0;
	if (d) {
		*d = m->diag;
		d->error = e;
		d->step[sizeof(d->step) - 1] = '\0';
		d->message[sizeof(d->message) - 1] = '\0';
	}
	return -e;
}

int cordon_launcher_client_probe(struct cordon_launcher_client *lc, json_t **ret_caps, struct cordon_diag *d)
{
	struct cordon_serve_msg req, rep;
	json_error_t jerr;
	json_t *j;
	int r;

	cordon_serve_msg_init(&req, CORDON_SERVE_PROBE, 0);
	r = request(lc, &req, CORDON_SERVE_PROBE_REPLY, REQUEST_TIMEOUT_MS, &rep, d);
	if (r < 0)
		return r;
	r = reply_status(&rep, d);
	if (r >= 0) {
		j = json_loads(rep.json ? rep.json : "", JSON_REJECT_DUPLICATES, &jerr);
		if (!j || !json_is_object(j)) {
			json_decref(j);
			r = cordon_diag_set(d, EBADMSG, "launcher",
					    "the helper's capability report is not a JSON object");
		} else
			*ret_caps = j;
	}
	cordon_serve_msg_clear(&rep);
	return r;
}

int cordon_launcher_client_profiles(struct cordon_launcher_client *lc, struct cordon_profile *const *ps, size_t n,
				    char *ret_failed, size_t size, struct cordon_diag *reterr_diag)
{
	struct cordon_serve_msg req, rep;
	_cleanup_free_ char *json = NULL;
	json_t *set = json_object(), *j;
	int r;

	if (ret_failed && size)
		ret_failed[0] = '\0';
	if (n > CORDON_SERVE_MAX_PROFILES) {
		json_decref(set);
		return cordon_diag_set(reterr_diag, E2BIG, "launcher", "%zu profiles (at most %u)", n,
				       CORDON_SERVE_MAX_PROFILES);
	}
	for (size_t i = 0; set && i < n; i++)
		if (json_object_set_new(set, ps[i]->id, json_string(ps[i]->sha256)) < 0) {
			json_decref(set);
			set = NULL;
		}
	json = set ? json_dumps(set, JSON_COMPACT) : NULL;
	json_decref(set);
	if (!json)
		return cordon_diag_set(reterr_diag, ENOMEM, "launcher", "out of memory");
	cordon_serve_msg_init(&req, CORDON_SERVE_PROFILES, 0);
	req.json = json; /* borrowed for the send */
	r = request(lc, &req, CORDON_SERVE_PROFILES_REPLY, REQUEST_TIMEOUT_MS, &rep, reterr_diag);
	if (r < 0)
		return r;
	r = reply_status(&rep, reterr_diag);
	if (r < 0 && ret_failed && size && rep.json && rep.json[0]) {
		j = json_loads(rep.json, JSON_REJECT_DUPLICATES, NULL);
		if (json_is_string(json_object_get(j, "connector")))
			snprintf(ret_failed, size, "%s", json_string_value(json_object_get(j, "connector")));
		json_decref(j);
	}
	cordon_serve_msg_clear(&rep);
	return r;
}

int cordon_launcher_client_config_read(struct cordon_launcher_client *lc, char **ret, size_t *ret_len,
				       struct cordon_diag *reterr_diag)
{
	struct cordon_serve_msg req, rep;
	size_t len;
	int r;

	cordon_serve_msg_init(&req, CORDON_SERVE_CONFIG_READ, 0);
	r = request(lc, &req, CORDON_SERVE_CONFIG_READ_REPLY, REQUEST_TIMEOUT_MS, &rep, reterr_diag);
	if (r < 0)
		return r;
	r = reply_status(&rep, reterr_diag);
	if (r >= 0 && !rep.json)
		r = cordon_diag_set(reterr_diag, EBADMSG, "launcher", "the configuration reply carries no file");
	if (r >= 0 && (len = strlen(rep.json)) > CORDON_SERVE_MAX_CONFIG)
		r = cordon_diag_set(reterr_diag, EBADMSG, "launcher",
				    "the configuration reply holds %zu bytes (at most %u)", len,
				    CORDON_SERVE_MAX_CONFIG);
	if (r < 0) {
		cordon_serve_msg_clear(&rep);
		return r;
	}
	*ret = TAKE_PTR(rep.json);
	*ret_len = len;
	cordon_serve_msg_clear(&rep);
	return 0;
}

int cordon_launcher_client_spawn(struct cordon_launcher_client *lc, const char *connector, const char *tag,
				 const struct cordon_serve_root *roots, size_t n_roots, struct cordon_launched *ret,
				 struct cordon_diag *reterr_diag)
{
	struct cordon_serve_msg req, rep;
	json_t *j;
	int r;

	if (!connector || strlen(connector) >= sizeof(req.connector) || (tag && strlen(tag) >= sizeof(req.tag)))
		return cordon_diag_set(reterr_diag, EINVAL, "launcher", "connector id or tag too long");
	if (n_roots > CORDON_SERVE_MAX_ROOTS)
		return cordon_diag_set(reterr_diag, E2BIG, "launcher", "%zu roots (at most %u)", n_roots,
				       CORDON_SERVE_MAX_ROOTS);
	cordon_serve_msg_init(&req, CORDON_SERVE_SPAWN, 0);
	snprintf(req.connector, sizeof(req.connector), "%s", connector);
	snprintf(req.tag, sizeof(req.tag), "%s", tag ? tag : "");
	/* Borrowed for the send (the request is not cleared). */
	req.roots = n_roots > 0 ? (struct cordon_serve_root *)roots : NULL;
	req.n_roots = (uint32_t)n_roots;

	r = request(lc, &req, CORDON_SERVE_SPAWN_REPLY, REQUEST_TIMEOUT_MS, &rep, reterr_diag);
	if (r < 0)
		return r;
	r = reply_status(&rep, reterr_diag);
	if (r >= 0 && rep.n_fds != 3)
		r = cordon_diag_set(reterr_diag, EBADMSG, "launcher", "the spawn reply carries %u fds, not 3",
				    rep.n_fds);
	if (r < 0) {
		cordon_serve_msg_clear(&rep);
		return r;
	}
	j = json_loads(rep.json ? rep.json : "", JSON_REJECT_DUPLICATES, NULL);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		j = json_object();
	}
	*ret = (struct cordon_launched){
		.instance = rep.instance,
		.stdin_fd = TAKE_FD(rep.fds[0]),
		.stdout_fd = TAKE_FD(rep.fds[1]),
		.stderr_fd = TAKE_FD(rep.fds[2]),
		.report = j,
	};
	rep.n_fds = 0;
	cordon_serve_msg_clear(&rep);
	return 0;
}

int cordon_launcher_client_kill(struct cordon_launcher_client *lc, uint32_t instance, struct cordon_diag *d)
{
	struct cordon_serve_msg req, rep;
	int r;

	cordon_serve_msg_init(&req, CORDON_SERVE_KILL, 0);
	req.instance = instance;
	r = request(lc, &req, CORDON_SERVE_KILL_REPLY, REQUEST_TIMEOUT_MS, &rep, d);
	if (r < 0)
		return r;
	r = reply_status(&rep, d);
	cordon_serve_msg_clear(&rep);
	return r;
}

int cordon_launcher_client_dispatch(struct cordon_launcher_client *lc)
{
	unsigned budget = 256; /* bound one call; the eventfd stays raised for the rest */

	drain_eventfd(lc);
	/* Read what is ready now, without blocking. */
	while (lc->alive && budget-- > 0) {
		struct cordon_serve_msg m;
		int r = read_one(lc, 0, &m);

		if (r <= 0)
			break;
		if (m.type == CORDON_SERVE_EXITED || m.type == CORDON_SERVE_NET_DENIED)
			queue_event(lc, &m);
		/* else: a late reply to a timed-out request; dropped. */
		cordon_serve_msg_clear(&m);
	}
	/* Deliver. A handler may call requests (which may queue more), so
	 * take one event at a time. */
	while (lc->head) {
		struct event *e = lc->head;

		lc->head = e->next;
		if (!lc->head)
			lc->tail = NULL;
		lc->n_events--;
		if (e->type == CORDON_SERVE_EXITED && lc->h.exited)
			lc->h.exited(lc->h.userdata, e->instance, e->wait_status, e->json);
		else if (e->type == CORDON_SERVE_NET_DENIED && lc->h.net_denied)
			lc->h.net_denied(lc->h.userdata, e->instance, e->json);
		json_decref(e->json);
		free(e);
	}
	if (!lc->alive) {
		if (!lc->lost_reported) {
			lc->lost_reported = true;
			lost_diag_add_status(lc);
			if (lc->h.helper_lost)
				lc->h.helper_lost(lc->h.userdata, &lc->lost_why);
		}
		return lc->lost_why.error > 0 ? -lc->lost_why.error : -ECONNRESET;
	}
	if (budget == (unsigned)-1)
		raise_eventfd(lc);
	return 0;
}

int cordon_launcher_client_fd(const struct cordon_launcher_client *lc)
{
	return lc->epfd;
}

pid_t cordon_launcher_client_pid(const struct cordon_launcher_client *lc)
{
	return lc->pid;
}

bool cordon_launcher_client_alive(const struct cordon_launcher_client *lc)
{
	return lc->alive;
}

/* In the forked child: only async-signal-safe calls. Puts the helper's
 * socket at fd 3, /dev/null on stdin, closes everything else (so no fd
 * cordond holds, a database or a listening socket, reaches the privileged
 * helper), resets signals and execs. On failure the errno goes to the
 * CLOEXEC error pipe. */
_noreturn_ static void child_exec(int sock, int errfd, const char *binary, char *const argv[])
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int e, s2, nul;

	s2 = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 11);
	if (s2 < 0 || errfd < 0)
		goto fail;
	if (dup2(s2, 3) < 0)
		goto fail;
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0 || dup2(nul, 0) < 0)
		goto fail;
	if (syscall(SYS_close_range, 4, (unsigned)errfd - 1, 0) < 0 ||
	    syscall(SYS_close_range, (unsigned)errfd + 1, ~0U, 0) < 0)
		goto fail;
	for (int sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execv(binary, argv);
fail:
	e = errno;
	(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

int cordon_launcher_client_start(const char *launch_binary, const char *profiles_dir,
				 const struct cordon_launcher_handlers *handlers, struct cordon_launcher_client **ret,
				 struct cordon_diag *reterr_diag)
{
	return cordon_launcher_client_start_config(launch_binary, profiles_dir, NULL, handlers, ret, reterr_diag);
}

int cordon_launcher_client_start_config(const char *launch_binary, const char *profiles_dir, const char *config_path,
					const struct cordon_launcher_handlers *handlers,
					struct cordon_launcher_client **ret, struct cordon_diag *reterr_diag)
{
	struct cordon_launcher_client *lc;
	struct cordon_serve_msg req, rep;
	int sv[2] = { -EBADF, -EBADF }, ep[2] = { -EBADF, -EBADF };
	char *argv[8];
	pid_t pid;
	int r, e = 0;
	ssize_t n;

	if (!launch_binary || launch_binary[0] != '/' || !profiles_dir || !profiles_dir[0])
		return cordon_diag_set(reterr_diag, EINVAL, "launcher",
				       "the launcher binary must be an absolute path and a profiles directory given");
	if (config_path && config_path[0] != '/')
		return cordon_diag_set(reterr_diag, EINVAL, "launcher", "the configuration path '%s' is not absolute",
				       config_path);
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return cordon_diag_set(reterr_diag, ENOMEM, "launcher", "out of memory");
	lc->sock = lc->epfd = lc->evfd = lc->pidfd = -EBADF;
	if (handlers)
		lc->h = *handlers;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		r = cordon_diag_set(reterr_diag, errno, "launcher", "socketpair: %m");
		goto fail;
	}
	/* Room for the largest message the protocol allows in one packet (a
	 * unix SOCK_SEQPACKET send fails with EMSGSIZE above the send buffer,
	 * whose default is below CORDON_SERVE_MAX_MSG). */
	for (int i = 0; i < 2; i++)
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &(int){ CORDON_SERVE_MAX_MSG + 4096 }, sizeof(int));
	argv[0] = (char *)launch_binary;
	argv[1] = (char *)"--serve";
	argv[2] = (char *)"3";
	argv[3] = (char *)"--profiles";
	argv[4] = (char *)profiles_dir;
	argv[5] = config_path ? (char *)"--config" : NULL;
	argv[6] = (char *)config_path;
	argv[7] = NULL;

	pid = fork();
	if (pid < 0) {
		r = cordon_diag_set(reterr_diag, errno, "launcher", "fork: %m");
		goto fail;
	}
	if (pid == 0)
		child_exec(sv[1], ep[1], launch_binary, argv);
	lc->pid = pid;
	lc->pidfd = sys_pidfd_open(pid);
	closep(&sv[1]);
	closep(&ep[1]);
	lc->sock = TAKE_FD(sv[0]);
	do
		n = read(ep[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	closep(&ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		(void)reap_helper(lc, FREE_TIMEOUT_MS);
		r = cordon_diag_set(reterr_diag, e, "launcher", "cannot execute %s: %s", launch_binary, strerror(e));
		goto fail;
	}
	lc->alive = true;

	lc->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	lc->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (lc->evfd < 0 || lc->epfd < 0) {
		r = cordon_diag_set(reterr_diag, errno, "launcher", "eventfd/epoll: %m");
		goto fail;
	}
	if (epoll_ctl(lc->epfd, EPOLL_CTL_ADD, lc->sock, &(struct epoll_event){ .events = EPOLLIN }) < 0 ||
	    epoll_ctl(lc->epfd, EPOLL_CTL_ADD, lc->evfd, &(struct epoll_event){ .events = EPOLLIN }) < 0) {
		r = cordon_diag_set(reterr_diag, errno, "launcher", "epoll_ctl: %m");
		goto fail;
	}

	/* Handshake: the helper answers its first PROBE from the probe it ran
	 * at start-up, so this costs no second probe and proves it serves. */
	cordon_serve_msg_init(&req, CORDON_SERVE_PROBE, 0);
	r = request(lc, &req, CORDON_SERVE_PROBE_REPLY, START_TIMEOUT_MS, &rep, reterr_diag);
	if (r < 0) {
		if (!lc->alive) {
			/* It exited during start-up (bad profiles directory,
			 * failed probe...): its log line says why. */
			lost_diag_add_status(lc);
			r = cordon_diag_set(reterr_diag, ECONNRESET, "launcher",
					    "the launcher helper did not start: %s", lc->lost_why.message);
		}
		goto fail;
	}
	r = reply_status(&rep, reterr_diag);
	cordon_serve_msg_clear(&rep);
	if (r < 0)
		goto fail;
	*ret = lc;
	return 0;

fail:
	closep(&sv[0]);
	closep(&sv[1]);
	closep(&ep[0]);
	closep(&ep[1]);
	lc->alive = false;
	cordon_launcher_client_free(lc);
	return r < 0 ? r : -EIO;
}

void cordon_launcher_client_free(struct cordon_launcher_client *lc)
{
	if (!lc)
		return;
	/* EOF tells the helper to kill every instance and exit. */
	closep(&lc->sock);
	if (lc->pid > 0 && !reap_helper(lc, FREE_TIMEOUT_MS)) {
		if (lc->pidfd >= 0)
			(void)syscall(SYS_pidfd_send_signal, lc->pidfd, SIGKILL, NULL, 0);
		else
			(void)kill(lc->pid, SIGKILL);
		while (waitpid(lc->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	closep(&lc->pidfd);
	closep(&lc->epfd);
	closep(&lc->evfd);
	while (lc->head) {
		struct event *e = lc->head;

		lc->head = e->next;
		json_decref(e->json);
		free(e);
	}
	free(lc);
}
