/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's privilege phases.
 *
 * 1. privileged: resolve the user and groups, create the state and runtime
 *    directories owned by the run user (the database must be owned by the
 *    uid that opens it), start the launcher helper (it keeps the privileges
 *    needed to sandbox connectors, so it must be forked before we lose
 *    them), bind the sockets (runtime directories like /run are root-owned,
 *    and the operator socket's group ownership needs chown).
 * 2. drop: libcordon's privilege drop (launcher/lib/privdrop.h, the one a
 *    sandboxed connector gets): as root the bounding set, locked
 *    securebits, no supplementary groups, setresgid/setresuid to the run
 *    user (all three ids so no saved id can regain root); then every
 *    capability set incl. ambient (libcap-ng); then PR_SET_NO_NEW_PRIVS so
 *    no exec can regain privileges.
 * 3. self-sandbox: libcordon's Landlock (launcher/lib/landlock.h) limits the
 *    filesystem to the state and runtime directories (read-write, no
 *    execute, devices, FIFOs or sockets) and the profiles directory
 *    (read-only), denies TCP bind/connect (the HTTP listener is already
 *    bound; with an approval webhook, connect to its one port only) and
 *    scopes abstract sockets and signals. A broker compromised
 *    through a parsing bug then cannot read credentials, profiles of other
 *    systems or the helper's files, and cannot connect anywhere.
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
#include "landlock-uapi.h"
#include "landlock.h"
#include "parse-util.h"
#include "paths.h"
#include "privdrop.h"
#include "webhook.h"

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
	/* libcordon's drop (privdrop.h), as a sandboxed connector's: as root
	 * the bounding set, locked securebits, groups, gid and uid (all three
	 * ids, so no saved id can regain root); then, as any user, the
	 * effective, permitted, inheritable and ambient sets, so a broker
	 * told to run as root (tests) still holds no capability. */
	const struct cordon_privdrop pd = {
		.uid = d->run_uid, .gid = d->run_gid, .cap_last = cordon_cap_last(), .ids = geteuid() == 0
	};
	const char *step = NULL, *what = NULL;
	int r;

	/* Initialises libcap-ng's per-thread state (privdrop.h). */
	capng_clear(CAPNG_SELECT_BOTH);
	r = cordon_privdrop(&pd, &step, &what);
	if (r < 0)
		return cordon_diag_set(diag, -r, "privileges", "%s: %s: %s", step, what, strerror(-r));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_diag_set(diag, errno, "privileges", "no_new_privs: %m");
	if (geteuid() != d->run_uid || getuid() != d->run_uid)
		return cordon_diag_set(diag, EPERM, "privileges", "uid did not change");
	return 0;
}

static int add_path(int rfd, const struct cordon_landlock_masks *handled, const char *path, uint64_t access,
		    struct cordon_diag *diag)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
	int r;

	if (fd < 0)
		return cordon_diag_set(diag, errno, "landlock", "cannot open '%s': %m", path);
	r = cordon_landlock_allow_fd(rfd, handled, fd, access);
	if (r < 0)
		return cordon_diag_set(diag, -r, "landlock", "cannot add a rule for '%s': %s", path, strerror(-r));
	return 0;
}

int privs_sandbox_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag)
{
	/* The state and runtime directories: read, write, create and remove
	 * files and directories, symlinks, rename (refer) and truncate, as
	 * SQLite and the socket files need; never execute, device nodes,
	 * device ioctls, FIFOs or sockets (the sockets are bound before this
	 * domain applies). The profiles directory: read only. The spawner's
	 * own directories (a test spawner that executes in process): read and
	 * execute, or the read-write set. */
	const uint64_t rw = cordon_landlock_fs_access(CORDON_ACCESS_READ_WRITE) &
			    ~(uint64_t)(LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO);
	const uint64_t ro = cordon_landlock_fs_access(CORDON_ACCESS_READ);
	const uint64_t rx = cordon_landlock_fs_access(CORDON_ACCESS_READ_EXEC);
	struct cordon_landlock_masks want, handled;
	_cleanup_close_ int rfd = -EBADF;
	int abi, r;

	abi = cordon_landlock_abi();
	if (abi < 0) {
		/* Best effort: a kernel without Landlock still gets the
		 * privilege drop; health reports the broker unconfined. */
		*ret_report = json_pack("{s:s, s:s}", "landlock", "unavailable", "reason", strerror(-abi));
		return 0;
	}
	/* Handle every right, TCP bind and connect, and the scopes of
	 * abstract sockets and signals this ABI knows: none is granted
	 * beyond the rules below, so TCP bind/connect (the HTTP listener is
	 * already bound) and signals or abstract sockets leaving the domain
	 * are denied. */
	want = cordon_landlock_abi_masks(abi);
	r = cordon_landlock_ruleset_new(abi, &want, &handled, &rfd);
	if (r < 0)
		return cordon_diag_set(diag, -r, "landlock", "create_ruleset: %s", strerror(-r));
	if ((r = add_path(rfd, &handled, d->cfg.state_dir, rw, diag)) < 0)
		return r;
	if (strcmp(d->cfg.runtime_dir, d->cfg.state_dir) != 0 &&
	    (r = add_path(rfd, &handled, d->cfg.runtime_dir, rw, diag)) < 0)
		return r;
	if ((r = add_path(rfd, &handled, d->cfg.profiles_dir, ro, diag)) < 0)
		return r;
	/* The --config file: a reload gets its bytes from the launcher
	 * helper, which reads it at the path cordond started with (a file
	 * replaced by rename included), so cordond itself needs no access.
	 * Only a spawner without that (a test's in-process spawner) has
	 * cordond read it: this one file, read only (by its inode: a file
	 * that replaces it is not covered), never its directory, where
	 * credentials may live. */
	if (d->config_path && !d->spawner.config_read) {
		r = cordon_landlock_allow_path(rfd, &handled, d->config_path, LANDLOCK_ACCESS_FS_READ_FILE);
		if (r < 0)
			return cordon_diag_set(diag, -r, "landlock", "cannot add a rule for '%s': %s", d->config_path,
					       strerror(-r));
	}
	for (const char *const *p = d->spawner.sandbox_exec; p && *p; p++)
		if ((r = add_path(rfd, &handled, *p, rx, diag)) < 0)
			return r;
	for (const char *const *p = d->spawner.sandbox_rw; p && *p; p++)
		if ((r = add_path(rfd, &handled, *p, rw, diag)) < 0)
			return r;
	/* The approval webhook (webhook.h): TCP connect to its one port, and
	 * no other (its address is on the loopback, checked by the config). */
	if (d->webhook && handled.net) {
		r = cordon_landlock_allow_port(rfd, &handled, cordon_webhook_port(d->webhook),
					       LANDLOCK_ACCESS_NET_CONNECT_TCP);
		if (r < 0)
			return cordon_diag_set(diag, -r, "landlock", "cannot allow the webhook's port %u: %s",
					       (unsigned)cordon_webhook_port(d->webhook), strerror(-r));
	}
	r = cordon_landlock_restrict(rfd);
	if (r < 0)
		return cordon_diag_set(diag, -r, "landlock", "restrict_self: %s", strerror(-r));
	*ret_report = json_pack("{s:s, s:i, s:[sss], s:b, s:b}", "landlock", "enforced", "abi", abi, "paths",
				d->cfg.state_dir, d->cfg.runtime_dir, d->cfg.profiles_dir, "tcp_denied",
				handled.net != 0, "scoped", handled.scoped != 0);
	if (*ret_report && d->webhook && handled.net)
		json_object_set_new(*ret_report, "tcp_connect_port", json_integer(cordon_webhook_port(d->webhook)));
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
