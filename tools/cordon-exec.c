/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-exec: cordon's first-party command connector, an MCP server on
 * stdio.
 *
 *   cordon-exec [--job-cgroup DIR] [--env-allow NAME]... ROOT[:ro]...
 *
 * run_command takes an argv array and never involves a shell; run_shell (a
 * separate tool, tier `critical` in profiles/cordon-exec.yaml) runs
 * `/bin/sh -c`. The working directory is resolved beneath a root with
 * cordon_resolve() and entered with fchdir(). The environment is rebuilt from
 * an allowlist. Every job runs as its own process tree that cannot outlive
 * its timeout, its cancellation, the revocation of the root it works in, or
 * its main process:
 *  - with --job-cgroup (a cgroup2 directory delegated to this worker by the
 *    launcher), each job gets a child cgroup, is placed there by
 *    clone3(CLONE_INTO_CGROUP) and is ended with cgroup.kill — exact, even
 *    for processes that double-fork and call setsid();
 *  - otherwise jobs run one at a time in their own process group, this
 *    process is a child subreaper, and ending a job kills the group and every
 *    orphan that was reparented to us. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "version-flag.h"
#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "mcp-server.h"
#include "parse-util.h"
#include "resolve.h"
#include "strv.h"
#include "syscall-compat.h"

#define MAX_ROOTS	   64
#define MAX_JOBS	   8
#define MAX_ARGV	   256
#define MAX_ENV_ALLOW	   64
#define DEFAULT_TIMEOUT_MS 30000ULL
#define MAX_TIMEOUT_MS	   3600000ULL
#define DEFAULT_MAX_OUTPUT (1024ULL * 1024)
#define MAX_MAX_OUTPUT	   (16ULL * 1024 * 1024)
#define MAX_STDIN	   (1024 * 1024)

struct root {
	char *path;
	int fd;
	bool revoked;
};

struct stream {
	int fd;
	char *buf;
	size_t len, cap;
	bool truncated;
};

struct job {
	bool used;
	json_t *id;
	int pidfd;
	pid_t pid;
	int cgroup_fd; /* the job's own cgroup directory, or -1 */
	char cgroup_name[64];
	size_t root;
	struct stream out, err;
	long long deadline_ms, started_ms;
	bool timed_out, killed_for_revoke;
	int stdin_fd;
	char *stdin_data;
	size_t stdin_len, stdin_off;
};

#define MAX_QUEUE 64

/* A call waiting for a job slot. */
struct queued {
	json_t *id, *args;
	bool shell;
};

struct exec {
	struct queued queue[MAX_QUEUE];
	size_t n_queue;
	struct root roots[MAX_ROOTS];
	size_t n_roots;
	const char *env_allow[MAX_ENV_ALLOW];
	size_t n_env_allow;
	int job_cgroup_fd;
	unsigned long job_seq;
	struct job jobs[MAX_JOBS];
	struct cordon_caps caps;
	struct mcp_server *srv;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t running_jobs(const struct exec *ex)
{
	size_t n = 0;

	for (size_t i = 0; i < MAX_JOBS; i++)
		n += ex->jobs[i].used;
	return n;
}

/* Kills every process of the job. */
static void job_kill(struct exec *ex, struct job *j)
{
	if (j->cgroup_fd >= 0) {
		(void)write_small_file_at(j->cgroup_fd, "cgroup.kill", "1");
		return;
	}
	(void)sys_pidfd_send_signal(j->pidfd, SIGKILL, NULL, 0);
	(void)kill(-j->pid, SIGKILL);
	(void)ex;
}

/* Orphans of jobs are reparented to us (child subreaper). Without a job
 * cgroup, every child that is not a job leader belongs to the (single)
 * running or finished job: kill and reap it. With job cgroups, cgroup.kill
 * has already ended them: only reap the zombies. */
static void sweep_orphans(struct exec *ex)
{
	bool kill_them = ex->job_cgroup_fd < 0, again = true;
	char path[64], buf[4096];

	for (int round = 0; again && round < 100; round++) {
		char *p, *save = NULL;
		ssize_t n;

		again = false;
		snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
		n = read_small_file(path, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
			pid_t pid = (pid_t)atoi(p);
			bool leader = false;

			for (size_t i = 0; i < MAX_JOBS; i++)
				if (ex->jobs[i].used && ex->jobs[i].pid == pid)
					leader = true;
			if (leader || pid <= 0)
				continue;
			if (kill_them) {
				kill(pid, SIGKILL);
				(void)waitpid(pid, NULL, 0);
				again = true;
			} else
				(void)waitpid(pid, NULL, WNOHANG);
		}
	}
}

static json_t *stream_json(struct stream *s)
{
	json_t *v = json_stringn(s->buf ? s->buf : "", s->len);

	/* Output that is not UTF-8 is replaced rather than dropped silently. */
	if (!v) {
		for (size_t i = 0; i < s->len; i++)
			if ((unsigned char)s->buf[i] >= 0x80)
				s->buf[i] = '?';
		v = json_stringn(s->buf, s->len);
	}
	return v ? v : json_string("");
}

static void job_free(struct job *j)
{
	closep(&j->out.fd);
	closep(&j->err.fd);
	closep(&j->stdin_fd);
	closep(&j->pidfd);
	free(j->out.buf);
	free(j->err.buf);
	free(j->stdin_data);
	json_decref(j->id);
	memset(j, 0, sizeof(*j));
	j->out.fd = j->err.fd = j->stdin_fd = j->pidfd = j->cgroup_fd = -1;
}

/* The main process has exited (status from waitid): end the job, answer. */
static void job_finish(struct exec *ex, struct job *j, const siginfo_t *si, bool respond)
{
	struct mcp_call_result res = { 0 };

	/* The job ends with its main process: nothing of it lingers. */
	job_kill(ex, j);
	sweep_orphans(ex);
	if (j->cgroup_fd >= 0) {
		/* Wait (bounded) until the kernel has emptied the cgroup, then
		 * remove it. */
		for (int i = 0; i < 200; i++) {
			char ev[256];
			_cleanup_close_ int fd = openat(j->cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, ev, sizeof(ev) - 1) : -1;

			if (n > 0) {
				ev[n] = '\0';
				if (strstr(ev, "populated 0"))
					break;
			}
			usleep(1000);
		}
		closep(&j->cgroup_fd);
		(void)unlinkat(ex->job_cgroup_fd, j->cgroup_name, AT_REMOVEDIR);
	}
	/* Drain what is left in the pipes. */
	for (int s = 0; s < 2; s++) {
		struct stream *st = s ? &j->err : &j->out;

		while (st->fd >= 0) {
			char tmp[65536];
			ssize_t n = read(st->fd, tmp, sizeof(tmp));

			if (n <= 0)
				break;
			if (st->len < st->cap) {
				size_t take = (size_t)n > st->cap - st->len ? st->cap - st->len : (size_t)n;

				memcpy(st->buf + st->len, tmp, take);
				st->len += take;
				if (take < (size_t)n)
					st->truncated = true;
			} else
				st->truncated = true;
		}
	}
	if (respond) {
		if (j->killed_for_revoke) {
			mcp_error(&res, "the job was killed: the root %s was revoked", ex->roots[j->root].path);
		} else {
			res.structured = json_pack("{s:o, s:o, s:b, s:b, s:b, s:I}", "stdout", stream_json(&j->out),
						   "stderr", stream_json(&j->err), "stdout_truncated", j->out.truncated,
						   "stderr_truncated", j->err.truncated, "timed_out", j->timed_out,
						   "duration_ms", (json_int_t)(now_ms() - j->started_ms));
			if (si->si_code == CLD_EXITED)
				json_object_set_new(res.structured, "exit_code", json_integer(si->si_status));
			else {
				json_object_set_new(res.structured, "signal", json_integer(si->si_status));
				json_object_set_new(
					res.structured, "signal_name",
					json_string(sigabbrev_np(si->si_status) ? sigabbrev_np(si->si_status) : "?"));
			}
		}
		(void)mcp_server_send_tool_result(ex->srv, j->id, &res);
	}
	job_free(j);
}

static void stream_read(struct stream *st)
{
	char tmp[65536];
	ssize_t n = read(st->fd, tmp, sizeof(tmp));

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			closep(&st->fd);
		return;
	}
	if (st->len < st->cap) {
		size_t take = (size_t)n > st->cap - st->len ? st->cap - st->len : (size_t)n;

		memcpy(st->buf + st->len, tmp, take);
		st->len += take;
		if (take < (size_t)n)
			st->truncated = true;
	} else
		st->truncated = true; /* keep draining so the job never blocks on a full pipe */
}

static void drain_queue(struct exec *ex);

static size_t fill_pollfds(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct exec *ex = ctx;
	long long now = now_ms();
	size_t n = 0;

	for (size_t i = 0; i < MAX_JOBS; i++) {
		struct job *j = &ex->jobs[i];
		long long left;

		if (!j->used || n + 4 > max)
			continue;
		fds[n++] = (struct pollfd){ .fd = j->pidfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = j->out.fd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = j->err.fd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = j->stdin_fd, .events = POLLOUT };
		left = j->deadline_ms - now;
		if (left < 0)
			left = 0;
		if (*timeout_ms < 0 || left < *timeout_ms)
			*timeout_ms = (int)left;
	}
	return n;
}

static void handle_pollfds(void *ctx, const struct pollfd *fds, size_t nfds)
{
	struct exec *ex = ctx;
	long long now = now_ms();

	(void)fds;
	(void)nfds;
	for (size_t i = 0; i < MAX_JOBS; i++) {
		struct job *j = &ex->jobs[i];
		siginfo_t si = { 0 };

		if (!j->used)
			continue;
		if (j->out.fd >= 0)
			stream_read(&j->out);
		if (j->err.fd >= 0)
			stream_read(&j->err);
		if (j->stdin_fd >= 0) {
			ssize_t w = j->stdin_off < j->stdin_len ? write(j->stdin_fd, j->stdin_data + j->stdin_off,
									j->stdin_len - j->stdin_off)
								: 0;

			if (w > 0)
				j->stdin_off += (size_t)w;
			if (j->stdin_off >= j->stdin_len || (w < 0 && errno != EAGAIN))
				closep(&j->stdin_fd);
		}
		if (!j->timed_out && now >= j->deadline_ms) {
			/* Timeout: the whole tree, at once; SIGTERM is not asked
			 * politely first because a job may ignore it. */
			j->timed_out = true;
			job_kill(ex, j);
		}
		if (waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid != 0)
			job_finish(ex, j, &si, true);
	}
	sweep_orphans(ex);
	drain_queue(ex);
}

static void on_notification(void *ctx, const char *method, json_t *params)
{
	struct exec *ex = ctx;

	if (strcmp(method, "notifications/cancelled") == 0) {
		json_t *rid = json_object_get(params, "requestId");

		for (size_t q = 0; rid && q < ex->n_queue;) {
			if (json_equal(ex->queue[q].id, rid)) {
				json_decref(ex->queue[q].id);
				json_decref(ex->queue[q].args);
				memmove(ex->queue + q, ex->queue + q + 1, (ex->n_queue - q - 1) * sizeof(ex->queue[0]));
				ex->n_queue--;
			} else
				q++;
		}

		for (size_t i = 0; i < MAX_JOBS; i++) {
			struct job *j = &ex->jobs[i];
			siginfo_t si = { 0 };

			if (j->used && rid && json_equal(j->id, rid)) {
				job_kill(ex, j);
				(void)waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED);
				job_finish(ex, j, &si, false); /* a cancelled request gets no response */
			}
		}
	} else if (strcmp(method, "notifications/cordon/root_revoked") == 0) {
		/* The broker revoked (or let expire) a delegated root: every job
		 * working in it dies now, and the root is unusable from now on. */
		const char *path = json_string_value(json_object_get(params, "path"));

		for (size_t r = 0; path && r < ex->n_roots; r++) {
			if (strcmp(ex->roots[r].path, path) != 0)
				continue;
			ex->roots[r].revoked = true;
			closep(&ex->roots[r].fd);
			for (size_t i = 0; i < MAX_JOBS; i++) {
				struct job *j = &ex->jobs[i];
				siginfo_t si = { 0 };

				if (j->used && j->root == r) {
					j->killed_for_revoke = true;
					job_kill(ex, j);
					(void)waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED);
					job_finish(ex, j, &si, true);
				}
			}
		}
	}
	drain_queue(ex);
}

static bool env_allowed(const struct exec *ex, const char *name)
{
	for (size_t i = 0; i < ex->n_env_allow; i++)
		if (strcmp(ex->env_allow[i], name) == 0)
			return true;
	return false;
}

static bool env_name_valid(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Builds the job's environment: PATH and HOME fixed, then allowlisted names
 * inherited from our environment, then the caller's values for allowlisted
 * names. Anything else is an error naming the variable. */
static char **build_env(struct exec *ex, json_t *env, const char *home, struct mcp_call_result *res)
{
	size_t cap = 3 + ex->n_env_allow * 2 + 1, n = 0;
	char **envp = calloc(cap, sizeof(char *));
	const char *key;
	json_t *v;

	if (!envp) {
		mcp_error(res, "out of memory");
		return NULL;
	}
	if (asprintf(&envp[n++], "PATH=/usr/local/bin:/usr/bin:/bin") < 0 || asprintf(&envp[n++], "HOME=%s", home) < 0)
		goto oom;
	for (size_t i = 0; i < ex->n_env_allow; i++) {
		const char *val = getenv(ex->env_allow[i]);

		if (val && !json_object_get(env, ex->env_allow[i]) &&
		    asprintf(&envp[n++], "%s=%s", ex->env_allow[i], val) < 0)
			goto oom;
	}
	if (env && !json_is_object(env)) {
		mcp_error(res, "argument 'env': must be an object of strings");
		goto fail;
	}
	json_object_foreach(env, key, v)
	{
		if (!env_name_valid(key) || !env_allowed(ex, key)) {
			mcp_error(res, "argument 'env.%s': not in the environment allowlist", key);
			goto fail;
		}
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
			mcp_error(res, "argument 'env.%s': must be a string without NUL", key);
			goto fail;
		}
		if (n + 1 >= cap || asprintf(&envp[n++], "%s=%s", key, json_string_value(v)) < 0)
			goto oom;
	}
	return envp;
oom:
	mcp_error(res, "out of memory");
fail:
	for (size_t i = 0; i < cap; i++)
		free(envp[i]);
	free(envp);
	return NULL;
}

/* Finds argv0 on PATH (the job's fixed PATH) when it has no slash. */
static int find_exec(const char *name, char *out, size_t size)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };

	if (strchr(name, '/')) {
		if ((size_t)snprintf(out, size, "%s", name) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
		if ((size_t)snprintf(out, size, "%s/%s", dirs[i], name) >= size)
			continue;
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static int start_job(struct exec *ex, json_t *id, char **argv, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed_keys[] = { "argv",	  "command",	"cwd",	 "env",
						    "timeout_ms", "max_output", "stdin", NULL };
	_cleanup_close_ int cwd_fd = -EBADF, cg_fd = -EBADF;
	unsigned long long timeout = DEFAULT_TIMEOUT_MS, max_output = DEFAULT_MAX_OUTPUT;
	const char *cwd = NULL, *input = NULL;
	struct cordon_resolve_how how = { .open_flags = O_PATH | O_DIRECTORY };
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, in[2] = { -1, -1 };
	char exe[PATH_MAX], **envp = NULL;
	struct job *j = NULL;
	size_t root = 0;
	const char *rel = ".";
	pid_t pid;
	int pidfd = -1, r;

	if (mcp_args_only(args, allowed_keys, res) < 0 || mcp_arg_string(args, "cwd", false, &cwd, res) < 0 ||
	    mcp_arg_uint(args, "timeout_ms", false, MAX_TIMEOUT_MS, &timeout, res) < 0 ||
	    mcp_arg_uint(args, "max_output", false, MAX_MAX_OUTPUT, &max_output, res) < 0 ||
	    mcp_arg_string(args, "stdin", false, &input, res) < 0)
		return -1;
	if (timeout == 0)
		return mcp_error(res, "argument 'timeout_ms': must be at least 1");
	if (input && strlen(input) > MAX_STDIN)
		return mcp_error(res, "argument 'stdin': larger than %d bytes", MAX_STDIN);
	for (size_t i = 0; i < MAX_JOBS; i++)
		if (!ex->jobs[i].used && !j)
			j = &ex->jobs[i];
	/* Without a job cgroup, one job at a time keeps the orphan sweep exact;
	 * the caller queues the call. */
	if (!j || (ex->job_cgroup_fd < 0 && running_jobs(ex) > 0))
		return -EBUSY;

	/* Working directory: beneath a root, by fd. */
	if (cwd) {
		bool found = false;

		if (cwd[0] != '/') {
			rel = cwd;
			found = true;
		} else
			for (size_t i = 0; i < ex->n_roots; i++)
				if (path_is_beneath(cwd, ex->roots[i].path) &&
				    (!found || strlen(ex->roots[i].path) > strlen(ex->roots[root].path))) {
					root = i;
					found = true;
				}
		if (!found)
			return mcp_error(res, "argument 'cwd': %s is not beneath any root", cwd);
		if (cwd[0] == '/')
			rel = strcmp(ex->roots[root].path, "/") == 0 ? cwd : cwd + strlen(ex->roots[root].path);
	}
	if (ex->roots[root].revoked)
		return mcp_error(res, "argument 'cwd': the root %s has been revoked", ex->roots[root].path);
	r = cordon_resolve(ex->roots[root].fd, rel, &how, &ex->caps, &cwd_fd);
	if (r == -EXDEV)
		return mcp_error(res, "argument 'cwd': %s leaves its root", cwd);
	if (r < 0)
		return mcp_error(res, "argument 'cwd': %s: %s", cwd ? cwd : ex->roots[root].path, strerror(-r));

	if (find_exec(argv[0], exe, sizeof(exe)) < 0)
		return mcp_error(res, "argument 'argv[0]': %s: command not found", argv[0]);
	envp = build_env(ex, json_object_get(args, "env"), cwd ? cwd : ex->roots[root].path, res);
	if (!envp)
		return -1;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	/* Only our ends are non-blocking: the job's stdout/stderr/stdin stay
	 * blocking, as programs expect (a non-blocking stdout makes a large
	 * write fail with EAGAIN in the job). */
	if ((r = fd_set_nonblock(out[0], 1)) < 0 || (r = fd_set_nonblock(err[0], 1)) < 0 ||
	    (r = fd_set_nonblock(in[1], 1)) < 0)
		goto fail;

	if (ex->job_cgroup_fd >= 0) {
		snprintf(j->cgroup_name, sizeof(j->cgroup_name), "job-%lu", ++ex->job_seq);
		if (mkdirat(ex->job_cgroup_fd, j->cgroup_name, 0755) < 0) {
			r = -errno;
			goto fail;
		}
		cg_fd = openat(ex->job_cgroup_fd, j->cgroup_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg_fd < 0) {
			r = -errno;
			(void)unlinkat(ex->job_cgroup_fd, j->cgroup_name, AT_REMOVEDIR);
			goto fail;
		}
	}

	{
		struct clone_args ca = {
			.flags = CLONE_PIDFD | (cg_fd >= 0 ? CLONE_INTO_CGROUP : 0),
			.pidfd = (uint64_t)(uintptr_t)&pidfd,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)(cg_fd >= 0 ? cg_fd : 0),
		};

		pid = (pid_t)sys_clone3(&ca, sizeof(ca));
		if (pid < 0 && (errno == ENOSYS || errno == EPERM) && cg_fd < 0) {
			/* clone3 refused (e.g. by a seccomp policy): fork + pidfd_open. */
			pid = fork();
			if (pid > 0)
				pidfd = sys_pidfd_open(pid, 0);
		}
	}
	if (pid < 0) {
		r = -errno;
		goto fail_cg;
	}
	if (pid == 0) {
		/* Child: own process group, pipes on 0-2, nothing else open. */
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		(void)setpgid(0, 0);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(126);
		if (fchdir(cwd_fd) < 0)
			_exit(126);
		(void)sys_close_range(3, ~0U, 0);
		execve(exe, argv, envp);
		_exit(127);
	}
	if (pidfd < 0) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		r = -EIO;
		goto fail_cg;
	}
	(void)setpgid(pid, pid); /* also from the parent: no race with the first kill */
	close(out[1]);
	close(err[1]);
	close(in[0]);
	j->used = true;
	j->id = json_incref(id);
	j->pid = pid;
	j->pidfd = pidfd;
	j->cgroup_fd = TAKE_FD(cg_fd);
	j->root = root;
	j->out = (struct stream){ .fd = out[0], .buf = malloc(max_output ? max_output : 1), .cap = max_output };
	j->err = (struct stream){ .fd = err[0], .buf = malloc(max_output ? max_output : 1), .cap = max_output };
	j->stdin_fd = in[1];
	if (input) {
		j->stdin_data = strdup(input);
		j->stdin_len = strlen(input);
	} else
		closep(&j->stdin_fd); /* EOF on stdin right away */
	j->started_ms = now_ms();
	j->deadline_ms = j->started_ms + (long long)timeout;
	strv_free(envp);
	if (!j->out.buf || !j->err.buf) {
		siginfo_t si = { 0 };

		job_kill(ex, j);
		(void)waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED);
		job_finish(ex, j, &si, false);
		return mcp_error(res, "out of memory");
	}
	return MCP_DEFERRED;

fail_cg:
	if (cg_fd >= 0) {
		closep(&cg_fd);
		(void)unlinkat(ex->job_cgroup_fd, j->cgroup_name, AT_REMOVEDIR);
	}
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	strv_free(envp);
	return mcp_error(res, "starting the job: %s", strerror(-r));
}

static int enqueue(struct exec *ex, json_t *id, json_t *args, bool shell, struct mcp_call_result *res)
{
	if (ex->n_queue == MAX_QUEUE)
		return mcp_error(res, "too many calls waiting for a job slot (%d)", MAX_QUEUE);
	ex->queue[ex->n_queue++] =
		(struct queued){ .id = json_incref(id), .args = json_deep_copy(args), .shell = shell };
	return MCP_DEFERRED;
}

/* Starts the job now, or queues the call when no job slot is free. */
static int start_or_queue(struct exec *ex, json_t *id, char **argv, json_t *args, bool shell,
			  struct mcp_call_result *res)
{
	int r = start_job(ex, id, argv, args, res);

	if (r == -EBUSY)
		return enqueue(ex, id, args, shell, res);
	return r;
}

static int tool_run_command(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	struct exec *ex = ctx;
	json_t *jargv = json_object_get(args, "argv"), *v;
	char *argv[MAX_ARGV + 1];
	size_t i;

	if (json_object_get(args, "command"))
		return mcp_error(res, "argument 'command': run_command takes 'argv' (no shell); see run_shell");
	if (!json_is_array(jargv) || json_array_size(jargv) == 0 || json_array_size(jargv) > MAX_ARGV)
		return mcp_error(res, "argument 'argv': must be an array of 1 to %d strings", MAX_ARGV);
	json_array_foreach(jargv, i, v)
	{
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return mcp_error(res, "argument 'argv[%zu]': must be a string without NUL", i);
		argv[i] = (char *)json_string_value(v);
	}
	argv[i] = NULL;
	if (!argv[0][0])
		return mcp_error(res, "argument 'argv[0]': must not be empty");
	return start_or_queue(ex, id, argv, args, false, res);
}

static int tool_run_shell(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	struct exec *ex = ctx;
	const char *command = NULL;
	char *argv[4];

	if (json_object_get(args, "argv"))
		return mcp_error(res, "argument 'argv': run_shell takes 'command'");
	if (mcp_arg_string(args, "command", true, &command, res) < 0)
		return -1;
	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)command;
	argv[3] = NULL;
	return start_or_queue(ex, id, argv, args, true, res);
}

/* Starts queued calls while slots are free, in arrival order. */
static void drain_queue(struct exec *ex)
{
	while (ex->n_queue > 0 && (ex->job_cgroup_fd >= 0 ? running_jobs(ex) < MAX_JOBS : running_jobs(ex) == 0)) {
		struct queued q = ex->queue[0];
		struct mcp_call_result res = { 0 };
		int r;

		memmove(ex->queue, ex->queue + 1, (ex->n_queue - 1) * sizeof(ex->queue[0]));
		ex->n_queue--;
		r = q.shell ? tool_run_shell(ex, q.id, q.args, &res) : tool_run_command(ex, q.id, q.args, &res);
		if (r != MCP_DEFERRED)
			(void)mcp_server_send_tool_result(ex->srv, q.id, &res);
		json_decref(q.id);
		json_decref(q.args);
	}
}

/* clang-format off */
#define COMMON_PROPS \
	"\"cwd\":{\"type\":\"string\",\"description\":\"Working directory beneath a root (default: the first root)\"}," \
	"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"Variables from the server's allowlist\"}," \
	"\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600000}," \
	"\"max_output\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":16777216}," \
	"\"stdin\":{\"type\":\"string\"}"
#define RESULT_SCHEMA \
	"{\"type\":\"object\",\"properties\":{\"exit_code\":{\"type\":\"integer\"},\"signal\":{\"type\":\"integer\"}," \
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},\"stdout_truncated\":{\"type\":\"boolean\"}," \
	"\"stderr_truncated\":{\"type\":\"boolean\"},\"timed_out\":{\"type\":\"boolean\"},\"duration_ms\":{\"type\":\"integer\"}}," \
	"\"required\":[\"stdout\",\"stderr\",\"timed_out\"]}"
static const struct mcp_tool tools[] = {
	{ "run_command", "Run a command", "Run a program with an argv array (no shell). The job and everything it starts end with its timeout.",
	  "{\"type\":\"object\",\"properties\":{\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":256}," COMMON_PROPS "},"
	  "\"required\":[\"argv\"],\"additionalProperties\":false}",
	  RESULT_SCHEMA, false, true, tool_run_command },
	{ "run_shell", "Run a shell command", "Run a command line with /bin/sh -c. Shell syntax is interpreted: prefer run_command.",
	  "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}," COMMON_PROPS "},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}",
	  RESULT_SCHEMA, false, true, tool_run_shell },
};
/* clang-format on */

int main(int argc, char **argv)
{
	static struct exec ex = { .job_cgroup_fd = -1 };
	static struct mcp_server srv = {
		.name = "cordon-exec",
		.version = CORDON_VERSION,
		.instructions = "Runs commands in the roots given at start. run_command takes an argv array and "
				"never uses a shell.",
		.tools = tools,
		.n_tools = ELEMENTSOF(tools),
		.fill_pollfds = fill_pollfds,
		.handle_pollfds = handle_pollfds,
		.on_notification = on_notification,
	};
	static const char *const default_env[] = { "LANG", "LC_ALL", "TZ", "TERM" };
	int r;

	cordon_version_flag(argc, argv, "cordon-exec");
	log_set_program(argv[0]);
	srv.ctx = &ex;
	ex.srv = &srv;
	for (size_t i = 0; i < MAX_JOBS; i++)
		ex.jobs[i].out.fd = ex.jobs[i].err.fd = ex.jobs[i].stdin_fd = ex.jobs[i].pidfd = ex.jobs[i].cgroup_fd =
			-1;
	for (size_t i = 0; i < ELEMENTSOF(default_env); i++)
		ex.env_allow[ex.n_env_allow++] = default_env[i];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--job-cgroup") == 0 && i + 1 < argc) {
			ex.job_cgroup_fd = open(argv[++i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (ex.job_cgroup_fd < 0)
				return log_error_errno(-errno, "--job-cgroup '%s'", argv[i]), 2;
			continue;
		}
		if (strcmp(a, "--env-allow") == 0 && i + 1 < argc) {
			if (!env_name_valid(argv[i + 1]) || ex.n_env_allow == MAX_ENV_ALLOW) {
				log_error("--env-allow '%s': not a variable name (or too many)", argv[i + 1]);
				return 2;
			}
			ex.env_allow[ex.n_env_allow++] = argv[++i];
			continue;
		}
		if (a[0] == '-') {
			log_error("unknown option '%s'", a);
			return 2;
		}
		if (ex.n_roots == MAX_ROOTS || !path_is_absolute_canonical(a)) {
			log_error("root '%s': must be an absolute canonical path (at most %d roots)", a, MAX_ROOTS);
			return 2;
		}
		ex.roots[ex.n_roots].path = argv[i];
		ex.roots[ex.n_roots].fd = open(a, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (ex.roots[ex.n_roots].fd < 0)
			return log_error_errno(-errno, "root '%s'", a), 2;
		ex.n_roots++;
	}
	if (ex.n_roots == 0) {
		log_error("usage: cordon-exec [--job-cgroup DIR] [--env-allow NAME]... ROOT...");
		return 2;
	}
	cordon_resolve_detect(&ex.caps);
	signal(SIGPIPE, SIG_IGN);
	/* Orphans of a job are reparented to us, not to init, so the sweep
	 * can find and end them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return log_error_errno(-errno, "PR_SET_CHILD_SUBREAPER"), 1;
	r = mcp_server_run(&srv, STDIN_FILENO, STDOUT_FILENO);
	for (size_t q = 0; q < ex.n_queue; q++) {
		json_decref(ex.queue[q].id);
		json_decref(ex.queue[q].args);
	}
	for (size_t i = 0; i < MAX_JOBS; i++)
		if (ex.jobs[i].used) {
			siginfo_t si = { 0 };

			job_kill(&ex, &ex.jobs[i]);
			(void)waitid(P_PIDFD, (id_t)ex.jobs[i].pidfd, &si, WEXITED);
			job_finish(&ex, &ex.jobs[i], &si, false);
		}
	if (r < 0)
		return log_error_errno(r, "serving MCP on stdio"), 1;
	return 0;
}
