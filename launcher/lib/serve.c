/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The server of the privileged launcher helper of cordond
 * (`cordon-launch --serve FD --profiles DIR`, docs/privsep.md); the verb
 * (launcher/cli/verb-serve.c) only parses its arguments, sets the process
 * up and calls cordon_server_run().
 *
 * cordond starts it over a SOCK_SEQPACKET socketpair while still privileged
 * and then drops its own privileges. The helper does one thing: build
 * sandboxes. It parses no MCP and opens no database; it reads only the
 * serve-proto messages (launcher/lib/serve-proto.h) and the profiles in its
 * own directory. It trusts nothing in a request:
 *  - the profiles in force are those cordond put in force with PROFILES
 *    (at its start and at each reload it accepted): a map of connector id
 *    to the SHA-256 of the file cordond validated. The helper reads each
 *    `<DIR>/<id>.yaml` itself, from a directory and file that only root can
 *    write (when running as root), parses it and keeps it only when its
 *    bytes hash to what cordond named; one that fails refuses the whole
 *    set and the previous one stays in force. A profile whose id and hash
 *    are already in force is kept as parsed, without reading the disk;
 *  - a spawn names a connector whose profile is in force, and the instance
 *    is built from that parsed copy: a file broken (or changed) on disk
 *    after cordond refused a reload never reaches a new instance, and
 *    running instances keep the sandbox they were built with;
 *  - every extra root is re-checked beneath the profile's ceiling by the
 *    kernel (openat2 RESOLVE_BENEATH + dev/ino), never by string prefix;
 *  - CONFIG_READ returns the bytes of the configuration file named on the
 *    helper's command line at its start (`--config FILE`, absolute), never
 *    a file a request names, read with the profiles' rules (no symlink, a
 *    regular file, directory and file writable only by root, a size bound):
 *    cordond, sandboxed to its own directories after it dropped its
 *    privileges, re-reads its configuration at a reload through this, so a
 *    file replaced by rename (editors, dpkg conffiles) is seen;
 *  - malformed messages are answered with -EBADMSG (or dropped when they do
 *    not even name a request) and never end the loop.
 *
 * Signals (the signalfd of the options): SIGTERM and SIGINT stop the
 * helper, killing every instance; SIGHUP is logged and ignored, so that a
 * SIGHUP to cordond's whole process group (a terminal, `kill -HUP -PGID`)
 * reloads cordond and leaves the helper and its connectors running.
 *
 * Lifetimes: PR_SET_PDEATHSIG(SIGKILL) ties the helper to cordond; every
 * sandbox init has PR_SET_PDEATHSIG(SIGKILL) towards the helper and is pid 1
 * of its pid namespace, so killing the helper (even with SIGKILL) kills every
 * connector; EOF on the socket (cordond is gone) kills every instance, removes
 * their cgroups and exits 0.
 *
 * A library: it never logs. What the helper should log (a send that failed,
 * a malformed request, a signal) goes to the options' log callback, once,
 * with the text the helper prints. */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "fd-util.h"
#include "hex-util.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "probe.h"
#include "profile.h"
#include "serve-proto.h"
#include "spawn.h"

/* Bounds: instances one helper runs at once (each holds a pidfd, a sync
 * socket, cgroup fds), and how many malformed messages are logged one by one
 * before the log only counts them. */
#define MAX_INSTANCES	    512u
#define MALFORMED_LOG_BURST 20u
/* Denial events forwarded per turn of the loop: a connector that hammers
 * a denied address cannot keep the helper from its other work (what is
 * left waits in the ring buffer for the next turn; when that is full the
 * kernel counts the loss and the denial itself still happens). */
#define NET_EVENTS_PER_TURN 256

struct slot {
	uint32_t id;
	uint64_t cgroup_id; /* what the instance's denial events carry */
	struct cordon_instance *inst;
};

struct cordon_server {
	int sock;
	int sigfd;
	int profiles_fd;
	const char *profiles_dir;
	const char *config_path; /* NULL: CONFIG_READ is refused */
	char **env;
	void (*log)(enum log_level level, int error, const char *message, void *userdata);
	void *userdata;
	struct cordon_caps caps;
	bool caps_fresh; /* the start-up probe has not been handed out yet */
	struct slot slots[MAX_INSTANCES];
	size_t n_slots;
	uint32_t next_id;
	unsigned long n_malformed;
	struct cordon_netpolicy_state *np; /* the egress policy of every instance, NULL when unavailable */
	unsigned n_events_turn;
	struct cordon_profile **inforce; /* the profiles in force (PROFILES), sorted by nothing */
	size_t n_inforce;
};

/* Hands one line to the log callback (the helper's edge logs it). Returns
 * -|error| like log_internal() does, or 0. */
static int server_log(struct cordon_server *s, enum log_level level, int error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int server_log(struct cordon_server *s, enum log_level level, int error, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (s->log) {
		va_start(ap, fmt);
		(void)vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		s->log(level, error, msg, s->userdata);
	}
	return error > 0 ? -error : error;
}

/* Untrusted text in a diag or log line: replace anything unprintable. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

static bool tag_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return s[0] != '-';
}

static struct slot *slot_find(struct cordon_server *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].id == id)
			return &s->slots[i];
	return NULL;
}

static uint32_t slot_new_id(struct cordon_server *s)
{
	/* Ids are never 0 and never reused while in use; wrap-around after
	 * 2^32 spawns only needs to skip live ones. */
	for (;;) {
		uint32_t id = ++s->next_id;

		if (id != 0 && !slot_find(s, id))
			return id;
	}
}

/* A profile (or its directory) must be writable only by its owner, and that
 * owner must be root when the helper runs as root: otherwise whoever can
 * write it could widen a connector's sandbox through the helper. */
int cordon_server_check_owner_mode(const struct stat *st, const char *what, const char *path, struct cordon_diag *d)
{
	uid_t me = geteuid();

	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return cordon_diag_set(d, EPERM, "profile",
				       "%s '%s' is group- or world-writable (mode %04o); only its owner may write it",
				       what, path, (unsigned)(st->st_mode & 07777));
	if (me == 0 && st->st_uid != 0)
		return cordon_diag_set(d, EPERM, "profile", "%s '%s' is owned by uid %u, not root", what, path,
				       (unsigned)st->st_uid);
	if (me != 0 && st->st_uid != 0 && st->st_uid != me)
		return cordon_diag_set(d, EPERM, "profile", "%s '%s' is owned by uid %u, neither root nor uid %u", what,
				       path, (unsigned)st->st_uid, (unsigned)me);
	return 0;
}

/* Reads <DIR>/<id>.yaml through one fd that was checked (no symlink, a
 * regular file, owner and mode) and parses exactly those bytes with the
 * profile loader, so the checked file is the loaded file. */
static int load_profile(struct cordon_server *s, const char *id, struct cordon_profile **ret, struct cordon_diag *d)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	char name[80], path[PATH_MAX + 96];
	struct stat st;
	size_t len = 0;
	int r;

	if (fstat(s->profiles_fd, &st) < 0)
		return cordon_diag_set(d, errno, "profile", "profiles directory '%s': %m", s->profiles_dir);
	r = cordon_server_check_owner_mode(&st, "profiles directory", s->profiles_dir, d);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "%s.yaml", id);
	snprintf(path, sizeof(path), "%s/%s", s->profiles_dir, name);
	fd = openat(s->profiles_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return cordon_diag_set(d, ENOENT, "profile", "no profile for connector '%s' (%s)", id, path);
		if (errno == ELOOP)
			return cordon_diag_set(d, ELOOP, "profile", "profile '%s' is a symlink; refusing it", path);
		return cordon_diag_set(d, errno, "profile", "profile '%s': %m", path);
	}
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(d, errno, "profile", "profile '%s': %m", path);
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, "profile", "profile '%s' is not a regular file", path);
	r = cordon_server_check_owner_mode(&st, "profile", path, d);
	if (r < 0)
		return r;
	if (st.st_size > CORDON_PROFILE_MAX_BYTES)
		return cordon_diag_set(d, EFBIG, "profile", "profile '%s' is larger than %d bytes", path,
				       CORDON_PROFILE_MAX_BYTES);
	buf = malloc(CORDON_PROFILE_MAX_BYTES + 1);
	if (!buf)
		return cordon_diag_set(d, ENOMEM, "profile", "out of memory");
	{
		ssize_t n = read_full(fd, buf, CORDON_PROFILE_MAX_BYTES + 1);

		if (n < 0)
			return cordon_diag_set(d, (int)-n, "profile", "reading '%s': %s", path, strerror((int)-n));
		if (n > CORDON_PROFILE_MAX_BYTES)
			return cordon_diag_set(d, EFBIG, "profile", "profile '%s' is larger than %d bytes", path,
					       CORDON_PROFILE_MAX_BYTES);
		len = (size_t)n;
	}
	r = cordon_profile_parse(id, path, buf, len, ret, d);
	if (r < 0 && d && d->step[0] == '\0')
		snprintf(d->step, sizeof(d->step), "profile");
	return r;
}

/* The helper's own configuration file, re-read for cordond at a reload
 * (CONFIG_READ). The path is fixed at start (cordon_server_options); the
 * file is checked like a profile, since whoever could write it could change
 * what cordond enforces (approval waits, shares, retention). */
static int config_fail(struct cordon_diag *d, int r)
{
	if (d)
		snprintf(d->step, sizeof(d->step), "config");
	return r;
}

int cordon_server_read_config(const char *path, char **ret, size_t *ret_len, struct cordon_diag *d)
{
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	_cleanup_free_ char *dir = NULL, *buf = NULL;
	const char *base;
	struct stat st;
	ssize_t n;
	int r;

	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX)
		return cordon_diag_set(d, EINVAL, "config", "the configuration path must be absolute");
	base = strrchr(path, '/') + 1;
	if (!*base)
		return cordon_diag_set(d, EINVAL, "config", "configuration '%s' names a directory", path);
	dir = base - path > 1 ? strndup(path, (size_t)(base - path - 1)) : strdup("/");
	if (!dir)
		return cordon_diag_set(d, ENOMEM, "config", "out of memory");
	/* The directory first: one that another user can write lets that user
	 * put any file in place of this one. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return cordon_diag_set(d, errno, "config", "configuration directory '%s': %m", dir);
	if (fstat(dfd, &st) < 0)
		return cordon_diag_set(d, errno, "config", "configuration directory '%s': %m", dir);
	r = cordon_server_check_owner_mode(&st, "configuration directory", dir, d);
	if (r < 0)
		return config_fail(d, r);
	fd = openat(dfd, base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return cordon_diag_set(d, ELOOP, "config", "configuration '%s' is a symlink; refusing it",
					       path);
		return cordon_diag_set(d, errno, "config", "configuration '%s': %m", path);
	}
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(d, errno, "config", "configuration '%s': %m", path);
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, "config", "configuration '%s' is not a regular file", path);
	r = cordon_server_check_owner_mode(&st, "configuration", path, d);
	if (r < 0)
		return config_fail(d, r);
	if (st.st_size > (off_t)CORDON_SERVE_MAX_CONFIG)
		return cordon_diag_set(d, EFBIG, "config", "configuration '%s' is larger than %u bytes", path,
				       CORDON_SERVE_MAX_CONFIG);
	buf = malloc(CORDON_SERVE_MAX_CONFIG + 1);
	if (!buf)
		return cordon_diag_set(d, ENOMEM, "config", "out of memory");
	/* One more byte than the bound: a file that grew after fstat() is
	 * still refused, never cut. */
	n = read_full(fd, buf, CORDON_SERVE_MAX_CONFIG + 1);
	if (n < 0)
		return cordon_diag_set(d, (int)-n, "config", "reading '%s': %s", path, strerror((int)-n));
	if (n > (ssize_t)CORDON_SERVE_MAX_CONFIG)
		return cordon_diag_set(d, EFBIG, "config", "configuration '%s' is larger than %u bytes", path,
				       CORDON_SERVE_MAX_CONFIG);
	if (memchr(buf, '\0', (size_t)n))
		return cordon_diag_set(d, EINVAL, "config", "configuration '%s' contains a NUL byte", path);
	buf[n] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = (size_t)n;
	return 0;
}

static struct cordon_profile *inforce_find(struct cordon_server *s, const char *id)
{
	for (size_t i = 0; i < s->n_inforce; i++)
		if (strcmp(s->inforce[i]->id, id) == 0)
			return s->inforce[i];
	return NULL;
}

static bool in_set(struct cordon_profile *const *v, size_t n, const struct cordon_profile *p)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

static int send_or_lost(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	int r = cordon_serve_send(s->sock, m);

	if (r < 0 && r != -EMSGSIZE && r != -EINVAL && r != -ENOMEM)
		(void)server_log(s, LOG_LEVEL_WARNING, r, "sending %s to cordond", cordon_serve_type_name(m->type));
	return r;
}

static int reply_error(struct cordon_server *s, uint16_t type, uint32_t id, int error, const struct cordon_diag *d)
{
	struct cordon_serve_msg rep;

	cordon_serve_msg_init(&rep, type, id);
	rep.status = -error;
	if (d)
		rep.diag = *d;
	rep.diag.error = error;
	if (rep.diag.step[0] == '\0')
		snprintf(rep.diag.step, sizeof(rep.diag.step), "serve");
	return send_or_lost(s, &rep);
}

static int handle_probe(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	_cleanup_free_ char *json = NULL;
	struct cordon_serve_msg rep;
	struct cordon_diag d = { 0 };
	int r;

	/* The start-up probe answers the first request (cordond's start-up
	 * handshake); every later request probes the kernel again. */
	if (!s->caps_fresh) {
		struct cordon_caps caps;

		r = cordon_probe(&caps);
		if (r < 0) {
			cordon_diag_set(&d, -r, "probe", "probing the kernel failed: %s", strerror(-r));
			return reply_error(s, CORDON_SERVE_PROBE_REPLY, m->id, -r, &d);
		}
		s->caps = caps;
	}
	s->caps_fresh = false;
	json = cordon_probe_to_json(&s->caps);
	if (!json) {
		cordon_diag_set(&d, ENOMEM, "probe", "out of memory");
		return reply_error(s, CORDON_SERVE_PROBE_REPLY, m->id, ENOMEM, &d);
	}
	cordon_serve_msg_init(&rep, CORDON_SERVE_PROBE_REPLY, m->id);
	rep.json = json;
	r = send_or_lost(s, &rep);
	if (r == -EMSGSIZE || r == -EINVAL) {
		cordon_diag_set(&d, -r, "probe", "the capability report does not fit in a message");
		return reply_error(s, CORDON_SERVE_PROBE_REPLY, m->id, -r, &d);
	}
	return r;
}

/* The credential values an instance is started with, for the broker to
 * scrub from the instance's stderr (issue 11 finding 10a: cordond itself
 * cannot read credential files once it has dropped its privileges, so a
 * rotated file's new value must come from here). Read before and after the
 * spawn, so a file rotated in between contributes both values. A value
 * longer than a stderr line (4 KiB) cannot appear whole in one and is left
 * out, and at most 16 KiB of values are sent (the reply's JSON is bounded).
 * The broker uses them only for scrubbing, which is log hygiene, not a
 * boundary. */
#define SCRUB_VALUE_MAX 4096
#define SCRUB_TOTAL_MAX (16 * 1024)

static void scrub_values_freep(json_t **p)
{
	size_t i;
	json_t *v;

	if (!*p)
		return;
	json_array_foreach(*p, i, v)
	{
		explicit_bzero((char *)json_string_value(v), json_string_length(v));
	}
	json_decref(*p);
}

static void free_wipep(char **p)
{
	if (*p) {
		explicit_bzero(*p, strlen(*p));
		free(*p);
	}
}

static void add_scrub_values(json_t *vals, const struct cordon_profile *p, size_t *total)
{
	for (size_t i = 0; vals && i < p->n_credentials; i++) {
		_cleanup_free_ char *buf = NULL;
		size_t len = 0, j;
		json_t *v;
		bool dup = false;

		if (read_file_bounded(AT_FDCWD, p->credentials[i].file, SCRUB_VALUE_MAX, &buf, &len) < 0)
			continue;
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		if (len >= 4 && !memchr(buf, '\0', len) && *total + len <= SCRUB_TOTAL_MAX) {
			json_array_foreach(vals, j, v)
			{
				dup = dup || strcmp(json_string_value(v), buf) == 0;
			}
			if (!dup && json_array_append_new(vals, json_stringn(buf, len)) == 0)
				*total += len;
		}
		explicit_bzero(buf, len);
	}
}

/* The report the broker gets: the instance's enforcement report plus the
 * helper's instance id, the sandbox init's host pid (and, in a spawn reply,
 * the SHA-256 of the profile it was built from, and "scrub_values", which
 * the broker removes at once). */
static char *report_json(const struct cordon_instance *inst, uint32_t id, const char *profile_sha256,
			 json_t *scrub_values)
{
	json_t *o = json_deep_copy(cordon_instance_report(inst));
	char *s;

	if (!o)
		return NULL;
	if (json_object_set_new(o, "instance", json_integer(id)) < 0 ||
	    json_object_set_new(o, "pid", json_integer(cordon_instance_pid(inst))) < 0 ||
	    (profile_sha256 && json_object_set_new(o, "profile_sha256", json_string(profile_sha256)) < 0) ||
	    (scrub_values && json_object_set(o, "scrub_values", scrub_values) < 0)) {
		json_decref(o);
		return NULL;
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s && strlen(s) > CORDON_SERVE_MAX_JSON) {
		free(s);
		return NULL;
	}
	return s;
}

static int handle_spawn(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	const struct cordon_profile *p;
	_cleanup_(cordon_instance_freep) struct cordon_instance *inst = NULL;
	_cleanup_(free_wipep) char *json = NULL;
	struct cordon_fs_entry roots[CORDON_SERVE_MAX_ROOTS];
	struct cordon_launch_policy pol;
	struct cordon_serve_msg rep;
	struct cordon_diag d = { 0 };
	char pbuf[80];
	uint32_t id;
	int r, fds[3] = { -EBADF, -EBADF, -EBADF };
	_cleanup_(scrub_values_freep) json_t *scrub = NULL;
	size_t scrub_total = 0;

	if (!connector_id_is_valid(m->connector)) {
		cordon_diag_set(&d, EINVAL, "request", "'%s' is not a valid connector id ([a-z0-9][a-z0-9-]{0,31})",
				printable(m->connector, pbuf, sizeof(pbuf)));
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EINVAL, &d);
	}
	if (m->tag[0] && !tag_is_valid(m->tag)) {
		cordon_diag_set(&d, EINVAL, "request", "instance tag '%s' is not valid ([a-z0-9-], at most 63 bytes)",
				printable(m->tag, pbuf, sizeof(pbuf)));
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EINVAL, &d);
	}
	if (s->n_slots >= MAX_INSTANCES) {
		cordon_diag_set(&d, EBUSY, "request", "the helper already runs %u instances (its limit)",
				MAX_INSTANCES);
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EBUSY, &d);
	}
	if (m->n_roots > CORDON_SERVE_MAX_ROOTS) { /* the decoder refuses this too */
		cordon_diag_set(&d, E2BIG, "request", "too many roots");
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, E2BIG, &d);
	}

	p = inforce_find(s, m->connector);
	if (!p) {
		cordon_diag_set(&d, ENOENT, "profile",
				"no profile for connector '%s' is in force (cordond has not put %s/%s.yaml in force)",
				m->connector, s->profiles_dir, m->connector);
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, ENOENT, &d);
	}

	/* Every extra root is re-checked here against the ceiling of the
	 * profile in force, on disk by the kernel (RESOLVE_BENEATH, no
	 * symlinks, dev/ino), whatever the broker claims; cordon_spawn() then
	 * opens it the same way and mounts exactly that inode. */
	for (uint32_t i = 0; i < m->n_roots; i++) {
		const struct cordon_serve_root *sr = &m->roots[i];

		if (!path_is_absolute_canonical(sr->host)) {
			cordon_diag_set(&d, EINVAL, "root", "root %u: host path '%s' is not absolute and canonical", i,
					printable(sr->host, pbuf, sizeof(pbuf)));
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EINVAL, &d);
		}
		if (sr->sandbox[0] && !path_is_absolute_canonical(sr->sandbox)) {
			cordon_diag_set(&d, EINVAL, "root", "root %u: sandbox path '%s' is not absolute and canonical",
					i, printable(sr->sandbox, pbuf, sizeof(pbuf)));
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EINVAL, &d);
		}
		if (sr->access > CORDON_ACCESS_READ_WRITE) {
			cordon_diag_set(&d, EINVAL, "root", "root %u: unknown access %u", i, sr->access);
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EINVAL, &d);
		}
		if (p->n_ceiling == 0) {
			cordon_diag_set(&d, EPERM, "root",
					"root '%s' refused: profile '%s' has no ceiling, so no root can be added",
					sr->host, p->id);
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EPERM, &d);
		}
		r = cordon_spawn_check_beneath_ceiling(p, sr->host, &d);
		if (r < 0) {
			if (r == -EPERM)
				cordon_diag_set(&d, EPERM, "root",
						"root '%s' refused: not beneath the ceiling of profile '%s' (checked "
						"on disk, symlinks refused)",
						sr->host, p->id);
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, -r, &d);
		}
		/* A delegated root never shadows the system view (a tree mounted
		 * at /usr or /lib would replace the binaries and libraries the
		 * profile vetted), inside or around it. */
		for (size_t j = 0; j < p->n_fs_system; j++) {
			const char *at = sr->sandbox[0] ? sr->sandbox : sr->host;
			const char *sys = p->fs_system[j].at ? p->fs_system[j].at : p->fs_system[j].path;

			if (path_is_beneath(at, sys) || path_is_beneath(sys, at)) {
				cordon_diag_set(&d, EPERM, "root",
						"root %u: sandbox path '%s' overlaps the system path '%s'", i,
						printable(at, pbuf, sizeof(pbuf)), sys);
				return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, EPERM, &d);
			}
		}
		roots[i] = (struct cordon_fs_entry){
			.path = (char *)sr->host,
			.at = sr->sandbox[0] ? (char *)sr->sandbox : NULL,
			.access = (enum cordon_fs_access)sr->access,
		};
	}

	pol = (struct cordon_launch_policy){
		.profile = p,
		.extra_roots = roots,
		.n_extra_roots = m->n_roots,
		.env_source = s->env,
		.instance_name = m->tag[0] ? m->tag : NULL,
		.stdio = CORDON_STDIO_PIPES,
		.netpolicy = s->np,
	};
	scrub = json_array();
	add_scrub_values(scrub, p, &scrub_total);
	r = cordon_spawn(&pol, &s->caps, &inst, &d);
	if (r < 0)
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, -r, &d);
	add_scrub_values(scrub, p, &scrub_total);

	id = slot_new_id(s);
	json = report_json(inst, id, p->sha256, scrub);
	if (!json) {
		cordon_diag_set(&d, ENOMEM, "report", "the enforcement report could not be serialised within %u bytes",
				CORDON_SERVE_MAX_JSON);
		return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, ENOMEM, &d);
	}
	for (int i = 0; i < 3; i++)
		fds[i] = cordon_instance_take_stdio(inst, i);
	cordon_serve_msg_init(&rep, CORDON_SERVE_SPAWN_REPLY, m->id);
	rep.instance = id;
	rep.json = json;
	memcpy(rep.fds, fds, sizeof(fds));
	rep.n_fds = 3;
	r = send_or_lost(s, &rep);
	/* The helper keeps no end of the connector's stdio: EOF on the
	 * connector's stdin must follow the broker's close alone. */
	for (int i = 0; i < 3; i++)
		closep(&fds[i]);
	if (r < 0) {
		/* The broker never got the instance: kill it (cleanup) and say
		 * why if the socket still works. */
		if (r == -EMSGSIZE || r == -EINVAL || r == -ENOMEM) {
			cordon_diag_set(&d, -r, "serve", "the spawn reply does not fit in a message");
			return reply_error(s, CORDON_SERVE_SPAWN_REPLY, m->id, -r, &d);
		}
		return r;
	}
	s->slots[s->n_slots++] =
		(struct slot){ .id = id, .cgroup_id = cordon_instance_cgroup_id(inst), .inst = TAKE_PTR(inst) };
	return 0;
}

/* PROFILES: the set cordond puts in force, {"<id>": "<sha256>"}. Parsed
 * strictly (an object of at most CORDON_SERVE_MAX_PROFILES valid ids, each
 * to 64 lower-case hex digits). Each profile is taken from the set in
 * force when its id and hash are there already, else read and parsed from
 * disk (load_profile(): owner, mode, no symlink) and kept only when its
 * bytes hash to the named value. All or nothing: the first profile that
 * fails is named in the reply and the set in force does not change. */
static int profiles_reply(struct cordon_server *s, const struct cordon_serve_msg *m, const char *connector, int error,
			  const struct cordon_diag *d)
{
	_cleanup_free_ char *json = NULL;
	struct cordon_serve_msg rep;

	cordon_serve_msg_init(&rep, CORDON_SERVE_PROFILES_REPLY, m->id);
	rep.status = -error;
	if (error) {
		rep.diag = *d;
		rep.diag.error = error;
		if (rep.diag.step[0] == '\0')
			snprintf(rep.diag.step, sizeof(rep.diag.step), "profile");
	}
	if (connector) {
		json_t *o = json_pack("{s:s}", "connector", connector);

		json = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
	}
	rep.json = json;
	return send_or_lost(s, &rep);
}

static int handle_profiles(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	struct cordon_profile **next = NULL;
	struct cordon_diag d = { 0 };
	size_t n = 0, n_read = 0;
	const char *id;
	json_t *set, *v;
	char pbuf[80];
	int r;

	set = json_loads(m->json ? m->json : "", JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(set) || json_object_size(set) > CORDON_SERVE_MAX_PROFILES) {
		json_decref(set);
		cordon_diag_set(&d, EINVAL, "request", "the profile set is not a JSON object of at most %u profiles",
				CORDON_SERVE_MAX_PROFILES);
		return profiles_reply(s, m, NULL, EINVAL, &d);
	}
	next = calloc(json_object_size(set) + 1, sizeof(*next));
	if (!next) {
		json_decref(set);
		cordon_diag_set(&d, ENOMEM, "profile", "out of memory");
		return profiles_reply(s, m, NULL, ENOMEM, &d);
	}
	json_object_foreach(set, id, v)
	{
		const char *want = json_string_value(v);
		struct cordon_profile *cur = NULL;

		r = 0;
		if (!connector_id_is_valid(id))
			r = cordon_diag_set(&d, EINVAL, "request",
					    "'%s' is not a valid connector id ([a-z0-9][a-z0-9-]{0,31})",
					    printable(id, pbuf, sizeof(pbuf)));
		else if (!want || !hex_is_lower_n(want, 64))
			r = cordon_diag_set(&d, EINVAL, "request",
					    "profile %s: the hash is not 64 lower-case hex digits", id);
		if (r < 0)
			goto fail;
		cur = inforce_find(s, id);
		if (cur && strcmp(cur->sha256, want) == 0)
			/* Unchanged: the copy in force is these very bytes
			 * (shared by both sets until one is freed). */
			next[n] = cur;
		else {
			r = load_profile(s, id, &next[n], &d);
			n_read++;
			if (r >= 0 && strcmp(next[n]->sha256, want) != 0) {
				cordon_profile_free(next[n]);
				next[n] = NULL;
				r = cordon_diag_set(&d, ESTALE, "profile",
						    "%s/%s.yaml changed on disk since cordond read it; reload again",
						    s->profiles_dir, id);
			}
		}
		if (r < 0)
			goto fail;
		n++;
	}
	/* Accepted: the new set replaces the old one; what it took over is
	 * not freed with the old. */
	for (size_t i = 0; i < s->n_inforce; i++)
		if (!in_set(next, n, s->inforce[i]))
			cordon_profile_free(s->inforce[i]);
	free(s->inforce);
	s->inforce = next;
	s->n_inforce = n;
	(void)server_log(s, LOG_LEVEL_INFO, 0, "%zu profile(s) in force (%zu read from %s)", n, n_read,
			 s->profiles_dir);
	json_decref(set);
	return profiles_reply(s, m, NULL, 0, NULL);
fail:
	(void)server_log(s, LOG_LEVEL_WARNING, 0, "profile set refused (the previous one stays in force): %s",
			 d.message);
	for (size_t i = 0; i < n; i++)
		if (!in_set(s->inforce, s->n_inforce, next[i]))
			cordon_profile_free(next[i]);
	free(next);
	r = profiles_reply(s, m, connector_id_is_valid(id) ? id : NULL, d.error ? d.error : EINVAL, &d);
	json_decref(set);
	return r;
}

static int handle_config_read(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	_cleanup_free_ char *buf = NULL;
	struct cordon_serve_msg rep;
	struct cordon_diag d = { 0 };
	size_t len = 0;
	int r;

	if (!s->config_path) {
		cordon_diag_set(&d, ENOENT, "config", "the launcher helper was started without --config");
		return reply_error(s, CORDON_SERVE_CONFIG_READ_REPLY, m->id, ENOENT, &d);
	}
	r = cordon_server_read_config(s->config_path, &buf, &len, &d);
	if (r < 0) {
		(void)server_log(s, LOG_LEVEL_WARNING, 0, "configuration not handed to cordond: %s", d.message);
		return reply_error(s, CORDON_SERVE_CONFIG_READ_REPLY, m->id, -r, &d);
	}
	cordon_serve_msg_init(&rep, CORDON_SERVE_CONFIG_READ_REPLY, m->id);
	rep.json = buf;
	return send_or_lost(s, &rep);
}

static int handle_kill(struct cordon_server *s, const struct cordon_serve_msg *m)
{
	struct cordon_serve_msg rep;
	struct cordon_diag d = { 0 };
	struct slot *sl = slot_find(s, m->instance);
	int r;

	if (!sl) {
		cordon_diag_set(&d, ENOENT, "kill", "no instance %u", m->instance);
		return reply_error(s, CORDON_SERVE_KILL_REPLY, m->id, ENOENT, &d);
	}
	/* SIGKILL to the sandbox's init, pid 1 of its pid namespace: the
	 * kernel then kills every process in the namespace. The cgroup is
	 * killed and removed as well when the exit is collected, which also
	 * covers a kernel without pid namespaces. */
	r = cordon_instance_signal(sl->inst, SIGKILL);
	if (r < 0 && r != -ESRCH) {
		cordon_diag_set(&d, -r, "kill", "signalling instance %u: %s", m->instance, strerror(-r));
		return reply_error(s, CORDON_SERVE_KILL_REPLY, m->id, -r, &d);
	}
	cordon_serve_msg_init(&rep, CORDON_SERVE_KILL_REPLY, m->id);
	rep.instance = m->instance;
	return send_or_lost(s, &rep);
}

/* An instance's init ended: collect it, tear the sandbox down (cgroup kill
 * and removal), then tell the broker. */
static int reap(struct cordon_server *s, size_t i)
{
	struct slot sl = s->slots[i];
	_cleanup_free_ char *json = NULL;
	struct cordon_serve_msg ev;
	int st = 0, r;

	r = cordon_instance_wait(sl.inst, &st);
	if (r < 0)
		(void)server_log(s, LOG_LEVEL_WARNING, r, "collecting instance %u", sl.id);
	json = report_json(sl.inst, sl.id, NULL, NULL);
	cordon_instance_free(sl.inst);
	s->slots[i] = s->slots[--s->n_slots];

	cordon_serve_msg_init(&ev, CORDON_SERVE_EXITED, 0);
	ev.instance = sl.id;
	ev.wait_status = st;
	ev.json = json ? json : (char *)"{}";
	return send_or_lost(s, &ev);
}

static bool is_request_type(uint16_t t)
{
	return t == CORDON_SERVE_PROBE || t == CORDON_SERVE_SPAWN || t == CORDON_SERVE_KILL ||
	       t == CORDON_SERVE_PROFILES || t == CORDON_SERVE_CONFIG_READ;
}

static void report_malformed(struct cordon_server *s, const struct cordon_diag *d)
{
	s->n_malformed++;
	if (s->n_malformed <= MALFORMED_LOG_BURST || s->n_malformed % 1000 == 0)
		(void)server_log(s, LOG_LEVEL_WARNING, 0, "malformed request #%lu from cordond: %s", s->n_malformed,
				 d->message);
}

int cordon_server_handle_one(struct cordon_server *s, short revents)
{
	struct cordon_serve_msg m;
	struct cordon_diag d = { 0 };
	uint8_t hdr[16];
	uint16_t htype = 0;
	uint32_t hid = 0;
	ssize_t n;
	int r;

	/* Peek at the header first: if the packet does not decode, the reply
	 * still carries the request id (and type) the sender used. */
	do
		n = recv(s->sock, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		return server_log(s, LOG_LEVEL_WARNING, -errno, "reading from cordond");
	}
	if (n == 0 && (revents & (POLLHUP | POLLERR)))
		return -ECONNRESET;
	if (n >= 12 && hdr[0] == 0x43 && hdr[1] == 0x44 && hdr[2] == 0x4e && hdr[3] == 0x31) {
		htype = (uint16_t)(hdr[4] | hdr[5] << 8);
		hid = (uint32_t)hdr[8] | (uint32_t)hdr[9] << 8 | (uint32_t)hdr[10] << 16 | (uint32_t)hdr[11] << 24;
	}

	r = cordon_serve_recv(s->sock, &m, &d);
	if (r == -ECONNRESET) {
		if (revents & (POLLHUP | POLLERR))
			return r;
		/* An empty packet from a live peer: malformed, not EOF. */
		cordon_diag_set(&d, EBADMSG, "serve", "malformed message: empty packet");
		report_malformed(s, &d);
		return 0;
	}
	if (r == -EBADMSG) {
		report_malformed(s, &d);
		if (!is_request_type(htype))
			return 0; /* not even a request header: nothing to answer */
		r = reply_error(s, (uint16_t)(htype + 1), hid, EBADMSG, &d);
		return r == -EMSGSIZE || r == -EINVAL ? 0 : r;
	}
	if (r == -ENOMEM || r == -EAGAIN || r == -EINTR)
		return 0;
	if (r < 0)
		return server_log(s, LOG_LEVEL_WARNING, r, "reading from cordond");

	switch (m.type) {
	case CORDON_SERVE_PROBE:
		r = handle_probe(s, &m);
		break;
	case CORDON_SERVE_SPAWN:
		r = handle_spawn(s, &m);
		break;
	case CORDON_SERVE_KILL:
		r = handle_kill(s, &m);
		break;
	case CORDON_SERVE_PROFILES:
		r = handle_profiles(s, &m);
		break;
	case CORDON_SERVE_CONFIG_READ:
		r = handle_config_read(s, &m);
		break;
	default:
		cordon_diag_set(&d, EBADMSG, "serve", "malformed message: a %s message is not a request",
				cordon_serve_type_name(m.type));
		report_malformed(s, &d);
		r = 0;
		break;
	}
	cordon_serve_msg_clear(&m);
	/* A reply that could not be encoded was answered with an error
	 * already; only a broken socket ends the loop. */
	if (r == -EMSGSIZE || r == -EINVAL || r == -ENOMEM)
		r = 0;
	return r;
}

/* cordond is gone (or we were told to stop): every connector dies with it. */
/* One denial of the egress policy: to the broker as NET_DENIED with the
 * instance it belongs to (0 when no live instance has that cgroup, e.g. a
 * cgroup a connector made below its own) and the event as one JSON object
 * (cordon_netpolicy_event_format(); comm is escaped there). */
static int on_net_event(const struct cordon_netpolicy_event *e, void *userdata)
{
	struct cordon_server *s = userdata;
	char line[CORDON_NETPOLICY_EVENT_LINE_MAX];
	struct cordon_serve_msg m;
	int r;

	if (s->n_events_turn >= NET_EVENTS_PER_TURN)
		return -EAGAIN; /* the rest stays in the ring for the next turn */
	s->n_events_turn++;
	r = cordon_netpolicy_event_format(e, line, sizeof(line));
	if (r < 0)
		return 0;
	cordon_serve_msg_init(&m, CORDON_SERVE_NET_DENIED, 0);
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].cgroup_id && s->slots[i].cgroup_id == e->cgroup_id) {
			m.instance = s->slots[i].id;
			break;
		}
	m.json = line;
	r = send_or_lost(s, &m);
	/* A broken socket ends the loop through the next read; here only
	 * stop this turn. */
	return r < 0 && r != -EMSGSIZE && r != -EINVAL && r != -ENOMEM ? r : 0;
}

static void forward_net_events(struct cordon_server *s)
{
	int r;

	if (!s->np)
		return;
	s->n_events_turn = 0;
	r = cordon_netpolicy_poll_events(s->np, on_net_event, s);
	if (r < 0 && r != -EAGAIN)
		(void)server_log(s, LOG_LEVEL_WARNING, r, "reading egress denial events");
}

static void shutdown_all(struct cordon_server *s)
{
	for (size_t i = 0; i < s->n_slots; i++)
		(void)cordon_instance_signal(s->slots[i].inst, SIGKILL);
	for (size_t i = 0; i < s->n_slots; i++)
		cordon_instance_free(s->slots[i].inst);
	s->n_slots = 0;
}

int cordon_server_run(struct cordon_server *s)
{
	struct pollfd *pfd = calloc(3 + MAX_INSTANCES, sizeof(*pfd));
	int r;

	if (!pfd)
		return server_log(s, LOG_LEVEL_ERROR, -ENOMEM, "out of memory");
	for (;;) {
		size_t n = s->n_slots;

		pfd[0] = (struct pollfd){ .fd = s->sock, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
		/* poll() ignores a negative fd: no policy, no events. */
		pfd[2] = (struct pollfd){ .fd = s->np ? cordon_netpolicy_events_fd(s->np) : -1, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			pfd[3 + i] = (struct pollfd){ .fd = cordon_instance_pidfd(s->slots[i].inst), .events = POLLIN };
		r = poll(pfd, 3 + n, -1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = server_log(s, LOG_LEVEL_ERROR, -errno, "poll");
			break;
		}
		/* Denial events before exits: an event of an instance that
		 * then ended is still attributed to it (reading an empty ring
		 * costs no syscall). */
		forward_net_events(s);
		/* Exits next, in reverse so removing slot i (swap with the
		 * last) never moves a slot that is still to be checked. */
		r = 0;
		for (size_t i = n; i-- > 0;)
			if (pfd[3 + i].revents && r >= 0)
				r = reap(s, i);
		if (r < 0 && r != -EMSGSIZE && r != -EINVAL && r != -ENOMEM)
			break;
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo == SIGHUP) {
				/* Meant for cordond (a SIGHUP to its process
				 * group reaches us too): cordond reloads and
				 * tells us what is in force; we go on. */
				(void)server_log(
					s, LOG_LEVEL_INFO, 0,
					"signal SIGHUP from pid %u: ignored (cordond reloads; the instances go on)",
					si.ssi_pid);
			} else {
				(void)server_log(s, LOG_LEVEL_INFO, 0, "signal %u: killing every instance and exiting",
						 si.ssi_signo);
				r = 0;
				break;
			}
		}
		if (pfd[0].revents) {
			r = cordon_server_handle_one(s, pfd[0].revents);
			if (r < 0)
				break;
		}
	}
	free(pfd);
	shutdown_all(s);
	/* EOF from cordond is the normal way to stop. */
	return r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN ? 0 : r;
}

int cordon_server_new(const struct cordon_server_options *opts, struct cordon_server **ret)
{
	struct cordon_server *s;

	if (!opts || !ret || opts->sock < 0 || opts->profiles_fd < 0 || !opts->profiles_dir || !opts->caps ||
	    (opts->config_path && opts->config_path[0] != '/'))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sock = opts->sock;
	s->sigfd = opts->sigfd;
	s->profiles_fd = opts->profiles_fd;
	s->profiles_dir = opts->profiles_dir;
	s->config_path = opts->config_path;
	s->env = opts->env;
	s->log = opts->log;
	s->userdata = opts->userdata;
	s->caps = *opts->caps;
	s->caps_fresh = true;
	s->np = opts->netpolicy;
	*ret = s;
	return 0;
}

void cordon_server_free(struct cordon_server *s)
{
	if (!s)
		return;
	shutdown_all(s);
	for (size_t i = 0; i < s->n_inforce; i++)
		cordon_profile_free(s->inforce[i]);
	free(s->inforce);
	free(s);
}
