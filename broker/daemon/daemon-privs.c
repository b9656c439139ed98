/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's privilege phases.
 *
 * 1. privileged: resolve the user and groups, create the state and runtime
 *    directories owned by the run user (the database must be owned by the
 *    uid that opens it), start the launcher helper (it keeps the privileges
 *    needed to sandbox connectors, so it must be forked before we lose
 *    them), bind the sockets (runtime directories like /run are root-owned,
 *    and the operator socket's group ownership needs chown).
 * 2. drop: setgroups to none, setresgid/setresuid to the run user (all three
 *    ids so no saved id can regain root), clear every capability set incl.
 *    bounding and ambient (libcap-ng), then PR_SET_NO_NEW_PRIVS so no exec
 *    can regain privileges.
 * 3. self-sandbox: Landlock limits the filesystem to the state and runtime
 *    directories (read-write) and the profiles directory (read-only), denies
 *    TCP bind/connect (the HTTP listener is already bound) and scopes
 *    abstract sockets and signals. A broker compromised through a parsing bug
 *    then cannot read credentials, profiles of other systems or the helper's
 *    files, and cannot connect anywhere.
 * Only after that does the daemon open the database and read any traffic. */
#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon-private.h"
#include "parse-util.h"
#include "paths.h"
#include "landlock-uapi.h"

int privs_resolve(struct cordon_daemon *d, struct cordon_diag *diag)
{
	d->run_uid = geteuid();
	d->run_gid = getegid();
	d->operator_gid = 0;
	d->gateway_gid = (gid_t)-1;
	if (!d->cfg.user && geteuid() == 0) {
		/* A private id: the files cordond creates (0600) are then
		 * readable by cordond alone. Refuse if the user database names
		 * the id: then it is somebody's, and --user must say whose. */
		if (getpwuid(CORDON_BROKER_PRIVATE_ID) || getgrgid(CORDON_BROKER_PRIVATE_ID))
			return cordon_diag_set(diag, EEXIST, "user",
					       "the private id %u is in the user database; give --user",
					       CORDON_BROKER_PRIVATE_ID);
		d->run_uid = CORDON_BROKER_PRIVATE_ID;
		d->run_gid = CORDON_BROKER_PRIVATE_ID;
	}
	if (d->cfg.user) {
		struct passwd *pw = getpwnam(d->cfg.user);

		if (!pw)
			return cordon_diag_set(diag, ENOENT, "user", "user '%s' does not exist", d->cfg.user);
		/* nobody is shared by unrelated services: every one of them could
		 * open a database and key owned by it. */
		if (pw->pw_uid == 65534 || !strcmp(d->cfg.user, "nobody"))
			return cordon_diag_set(
				diag, EPERM, "user",
				"user '%s' is shared by other services and could open cordond's database; "
				"give a dedicated user, or no --user for cordond's private id",
				d->cfg.user);
		if (geteuid() != 0 && pw->pw_uid != geteuid())
			return cordon_diag_set(diag, EPERM, "user",
					       "cannot switch to user '%s' without root; run as root or drop --user",
					       d->cfg.user);
		d->run_uid = pw->pw_uid;
		d->run_gid = pw->pw_gid;
	}
	if (d->cfg.operator_group) {
		struct group *gr = getgrnam(d->cfg.operator_group);

		if (!gr)
			return cordon_diag_set(diag, ENOENT, "user", "operator group '%s' does not exist",
					       d->cfg.operator_group);
		d->operator_gid = gr->gr_gid;
	} else
		d->operator_gid = geteuid() == 0 ? 0 : getegid();
	if (d->cfg.gateway_group) {
		struct group *gr = getgrnam(d->cfg.gateway_group);

		if (!gr)
			return cordon_diag_set(diag, ENOENT, "user", "gateway group '%s' does not exist",
					       d->cfg.gateway_group);
		d->gateway_gid = gr->gr_gid;
	}
	return 0;
}

/* Creates dir (mode) or checks it: it must be a directory, not a symlink,
 * owned by uid, with no group/other write bit. */
static int ensure_dir(const char *path, mode_t mode, uid_t uid, gid_t gid, struct cordon_diag *diag)
{
	struct stat st;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return cordon_diag_set(diag, errno, "state", "cannot create '%s': %m", path);
	if (lstat(path, &st) < 0)
		return cordon_diag_set(diag, errno, "state", "cannot stat '%s': %m", path);
	if (!S_ISDIR(st.st_mode))
		return cordon_diag_set(diag, ENOTDIR, "state", "'%s' is not a directory", path);
	if (geteuid() == 0 && (st.st_uid != uid || st.st_gid != gid)) {
		/* As root: give the directory to the run user (a fresh state
		 * directory created by a newcomer's shell is root's). */
		if (lchown(path, uid, gid) < 0)
			return cordon_diag_set(diag, errno, "state", "cannot chown '%s': %m", path);
	} else if (st.st_uid != uid)
		return cordon_diag_set(diag, EPERM, "state", "'%s' is owned by uid %u, not %u", path,
				       (unsigned)st.st_uid, (unsigned)uid);
	if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0)
		return cordon_diag_set(diag, errno, "state", "cannot chmod '%s': %m", path);
	return 0;
}

int privs_prepare_dirs(struct cordon_daemon *d, struct cordon_diag *diag)
{
	int r;

	/* State: database, -wal/-shm, the audit signing key: nobody else reads it. */
	/* 0700, or 0711 when the runtime directory (and so the gateway socket
	 * every local client may use) lives beneath it: others may then pass
	 * through to run/ but still list and open nothing (every file is 0600). */
	r = ensure_dir(d->cfg.state_dir, path_is_beneath(d->cfg.runtime_dir, d->cfg.state_dir) ? 0711 : 0700,
		       d->run_uid, d->run_gid, diag);
	if (r < 0)
		return r;
	/* Runtime: sockets; others need to traverse it to reach gateway.sock. */
	r = ensure_dir(d->cfg.runtime_dir, 0755, d->run_uid, d->run_gid, diag);
	if (r < 0)
		return r;
	/* When the state directory was just given to another user, files in it
	 * made by an earlier run as that user are fine; files owned by someone
	 * else are refused later by cordon_db_open's ownership check. */
	return 0;
}

int unix_listen(const char *path, mode_t mode, uid_t uid, gid_t gid, int *ret_fd, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = -EBADF;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cordon_diag_set(diag, ENAMETOOLONG, "socket", "'%s' is too long for a socket path", path);
	strcpy(sa.sun_path, path);
	/* A stale socket from a crashed run: remove it, but never anything else. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return cordon_diag_set(diag, EEXIST, "socket", "'%s' exists and is not a socket", path);
		if (unlink(path) < 0)
			return cordon_diag_set(diag, errno, "socket", "cannot remove stale '%s': %m", path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return cordon_diag_set(diag, errno, "socket", "socket: %m");
	/* umask-independent: bind with everything masked, then set the mode. */
	mode_t old = umask(0777);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return cordon_diag_set(diag, errno, "socket", "cannot bind '%s': %m", path);
	if (geteuid() == 0 && chown(path, uid, gid) < 0)
		return cordon_diag_set(diag, errno, "socket", "cannot chown '%s': %m", path);
	if (chmod(path, mode) < 0)
		return cordon_diag_set(diag, errno, "socket", "cannot chmod '%s': %m", path);
	if (listen(fd, 512) < 0)
		return cordon_diag_set(diag, errno, "socket", "cannot listen on '%s': %m", path);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int privs_drop(struct cordon_daemon *d, struct cordon_diag *diag)
{
	if (geteuid() == 0) {
		/* The bounding and ambient sets first: changing the bounding set
		 * needs CAP_SETPCAP, which the uid change below takes away. */
		capng_clear(CAPNG_SELECT_ALL);
		if (capng_apply(CAPNG_SELECT_BOUNDS) < 0)
			return cordon_diag_set(diag, EPERM, "privileges", "cannot clear the capability bounding set");
#ifdef CAPNG_SELECT_AMBIENT
		(void)capng_apply(CAPNG_SELECT_AMBIENT);
#endif
		/* Supplementary groups next: after setresuid we could not. */
		if (setgroups(0, NULL) < 0)
			return cordon_diag_set(diag, errno, "privileges", "setgroups: %m");
		if (setresgid(d->run_gid, d->run_gid, d->run_gid) < 0)
			return cordon_diag_set(diag, errno, "privileges", "setresgid(%u): %m", (unsigned)d->run_gid);
		if (setresuid(d->run_uid, d->run_uid, d->run_uid) < 0)
			return cordon_diag_set(diag, errno, "privileges", "setresuid(%u): %m", (unsigned)d->run_uid);
	}
	/* Effective, permitted and inheritable: a broker that was told to run
	 * as root (tests) still holds no capability. */
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_BOTH) < 0)
		return cordon_diag_set(diag, EPERM, "privileges", "cannot clear capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_diag_set(diag, errno, "privileges", "no_new_privs: %m");
	if (geteuid() != d->run_uid || getuid() != d->run_uid)
		return cordon_diag_set(diag, EPERM, "privileges", "uid did not change");
	return 0;
}

static uint64_t fs_all(int abi)
{
	uint64_t a = (1ULL << 13) - 1; /* ABI 1: execute .. make_sym */

	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

static int add_path(int rfd, const char *path, uint64_t access, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
	struct cordon_landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = -1 };

	if (fd < 0)
		return cordon_diag_set(diag, errno, "landlock", "cannot open '%s': %m", path);
	pb.parent_fd = fd;
	if (sys_landlock_add_rule(rfd, CORDON_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return cordon_diag_set(diag, errno, "landlock", "cannot add a rule for '%s': %m", path);
	return 0;
}

int privs_sandbox_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag)
{
	struct cordon_landlock_ruleset_attr attr = {};
	_cleanup_close_ int rfd = -EBADF;
	size_t size;
	uint64_t all, ro;
	int abi, r;

	abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		/* Best effort: a kernel without Landlock still gets the
		 * privilege drop; health reports the broker unconfined. */
		*ret_report = json_pack("{s:s, s:s}", "landlock", "unavailable", "reason", strerror(errno));
		return 0;
	}
	all = fs_all(abi);
	/* read_file | read_dir only. */
	ro = (1ULL << 2) | (1ULL << 3);
	attr.handled_access_fs = all;
	size = offsetof(struct cordon_landlock_ruleset_attr, handled_access_net);
	if (abi >= 4) {
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
		size = offsetof(struct cordon_landlock_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rfd = sys_landlock_create_ruleset(&attr, size, 0);
	if (rfd < 0)
		return cordon_diag_set(diag, errno, "landlock", "create_ruleset: %m");
	/* The state and runtime directories: everything but execute, device
	 * ioctls and special files. */
	uint64_t rw = all & ~((1ULL << 0) /* execute */ | (1ULL << 9) /* make_char */ | (1ULL << 10) /* make_block */ |
			      (1ULL << 11) /* make_fifo */);
	if (abi >= 5)
		rw &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if ((r = add_path(rfd, d->cfg.state_dir, rw, diag)) < 0)
		return r;
	if (strcmp(d->cfg.runtime_dir, d->cfg.state_dir) != 0 && (r = add_path(rfd, d->cfg.runtime_dir, rw, diag)) < 0)
		return r;
	if ((r = add_path(rfd, d->cfg.profiles_dir, ro, diag)) < 0)
		return r;
	for (const char *const *p = d->spawner.sandbox_exec; p && *p; p++)
		if ((r = add_path(rfd, *p, ro | (1ULL << 0), diag)) < 0)
			return r;
	for (const char *const *p = d->spawner.sandbox_rw; p && *p; p++)
		if ((r = add_path(rfd, *p, rw, diag)) < 0)
			return r;
	if (sys_landlock_restrict_self(rfd, 0) < 0)
		return cordon_diag_set(diag, errno, "landlock", "restrict_self: %m");
	*ret_report = json_pack("{s:s, s:i, s:[sss], s:b, s:b}", "landlock", "enforced", "abi", abi, "paths",
				d->cfg.state_dir, d->cfg.runtime_dir, d->cfg.profiles_dir, "tcp_denied", abi >= 4,
				"scoped", abi >= 6);
	return 0;
}

/* sd_notify(3) by hand: datagrams to $NOTIFY_SOCKET (a path or, with a
 * leading '@', an abstract name). The socket is connected before the
 * Landlock domain applies, because the domain scopes abstract sockets: a
 * connect from inside it to systemd's abstract socket would be refused,
 * while sends on an already connected socket are not. Returns the fd or -1. */
int sd_notify_open(void)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	_cleanup_close_ int fd = -EBADF;

	if (!e || !*e || strlen(e) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, e, strlen(e));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(e));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0)
		return -1;
	return TAKE_FD(fd);
}

void sd_notify_send(int fd, const char *state)
{
	if (fd >= 0)
		(void)send(fd, state, strlen(state), MSG_NOSIGNAL);
}
