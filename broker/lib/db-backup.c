/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Online backup of the database with SQLite's backup API, into a
 * descriptor the caller opened (the operator's file, passed over the
 * operator socket: the broker itself may write only in its state
 * directory). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "db-private.h"

/* Copies every byte of in (from offset 0) to out. Returns bytes or -errno. */
static int64_t copy_fd(int in, int out)
{
	char buf[65536];
	int64_t total = 0;

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return total;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			off += w;
		}
		total += n;
	}
}

/* Backs up db into tmp (a new file), one step: the copy is one read
 * transaction of the source, so it is the database as of one commit. */
static int backup_into(struct cordon_db *db, const char *tmp, struct cordon_diag *diag)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	int rc;

	rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close_v2(dst);
		return cordon_diag_set(diag, EIO, "backup", "opening the copy: %s", sqlite3_errstr(rc));
	}
	b = sqlite3_backup_init(dst, "main", db->sql, "main");
	if (!b) {
		cordon_diag_set(diag, EIO, "backup", "starting the backup: %s", sqlite3_errmsg(dst));
		sqlite3_close_v2(dst);
		return -EIO;
	}
	rc = sqlite3_backup_step(b, -1);
	(void)sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		cordon_diag_set(diag, EIO, "backup", "copying the pages: %s", sqlite3_errstr(rc));
		sqlite3_close_v2(dst);
		return -EIO;
	}
	rc = sqlite3_close_v2(dst);
	if (rc != SQLITE_OK)
		return cordon_diag_set(diag, EIO, "backup", "closing the copy: %s", sqlite3_errstr(rc));
	return 0;
}

int cordon_db_backup_to_fd(struct cordon_db *db, int out_fd, uint64_t *ret_bytes, struct cordon_diag *diag)
{
	_cleanup_close_ int tfd = -EBADF;
	const char *path = sqlite3_db_filename(db->sql, "main");
	char tmp[4096], journal[4200];
	struct stat st;
	int64_t n;
	int fl, r;

	if (db->in_tx && !db->batch_open)
		return cordon_diag_set(diag, EBUSY, "backup", "a transaction is open");
	/* The decisions answered in the open group-commit batch belong in the
	 * copy: commit them first. */
	r = db_batch_flush(db);
	if (r < 0)
		return cordon_diag_set(diag, -r, "backup", "committing the open batch: %s", db->last_error);
	/* The target: a new, empty regular file opened for writing. */
	fl = fcntl(out_fd, F_GETFL);
	if (fl < 0 || fstat(out_fd, &st) < 0)
		return cordon_diag_set(diag, EBADF, "backup", "the target descriptor is not usable: %m");
	if (!S_ISREG(st.st_mode) || st.st_size != 0 || ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR))
		return cordon_diag_set(diag, EINVAL, "backup", "the target must be a new, empty file open for writing");
	if (!path || !*path || (size_t)snprintf(tmp, sizeof(tmp), "%s-backup", path) >= sizeof(tmp))
		return cordon_diag_set(diag, ENAMETOOLONG, "backup", "database path too long");
	snprintf(journal, sizeof(journal), "%s-journal", tmp);
	/* A copy left by a crash during an earlier backup: only the broker
	 * writes in its state directory, so it is ours. */
	(void)unlink(tmp);
	(void)unlink(journal);
	tfd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0)
		return cordon_diag_set(diag, errno, "backup", "cannot create '%s': %m", tmp);
	r = backup_into(db, tmp, diag);
	if (r >= 0) {
		n = copy_fd(tfd, out_fd);
		if (n < 0)
			r = cordon_diag_set(diag, (int)-n, "backup", "writing the backup: %s", strerror((int)-n));
		else if (fsync(out_fd) < 0)
			r = cordon_diag_set(diag, errno, "backup", "fsync of the backup: %m");
		else if (ret_bytes)
			*ret_bytes = (uint64_t)n;
	}
	(void)unlink(tmp);
	(void)unlink(journal);
	return r;
}
