/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Path resolution beneath a root directory fd, never by string prefix.
 *
 * The primary path is openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
 * (and RESOLVE_NO_SYMLINKS unless the root allows in-root symlinks). Where
 * openat2 is missing or refuses the flags (the probe's caps say so), the
 * fallback walks the path one component at a time with
 * openat(O_PATH | O_NOFOLLOW) from held directory fds, so a concurrent rename
 * or symlink swap can never redirect it outside the root.
 *
 * Guarantees, on both paths:
 *  - absolute paths are taken relative to the root; "" and "/" name the root;
 *  - ".." that would leave the root fails with EXDEV; ".." inside it works;
 *  - a symlink fails with ELOOP unless CORDON_RESOLVE_SYMLINKS is set; then
 *    relative targets are followed beneath the root (at most 40 hops, else
 *    ELOOP) and absolute targets fail with EXDEV;
 *  - magic links (/proc/<pid>/root, /proc/<pid>/fd/N) are never followed;
 *  - with CORDON_RESOLVE_NO_XDEV, crossing a mount point fails with EXDEV;
 *  - a regular file with more than one hard link is never opened for
 *    writing (EMLINK): a hard link planted in the root must not write through
 *    to a file outside it; O_TRUNC is applied only after that check. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe.h"

enum {
	CORDON_RESOLVE_SYMLINKS = 1 << 0, /* follow in-root symlinks (still beneath) */
	CORDON_RESOLVE_NO_XDEV = 1 << 1,  /* refuse mount point crossings */
};

struct cordon_resolve_how {
	int open_flags; /* O_RDONLY, O_WRONLY|O_CREAT|O_EXCL, O_PATH|O_DIRECTORY, ... */
	mode_t mode;	/* with O_CREAT */
	unsigned flags; /* CORDON_RESOLVE_* */
};

/* Opens `path` beneath root_fd as `how` says. caps selects the mechanism:
 * openat2 when caps->openat2_beneath, else the fallback walk (tests pass a
 * modified caps to force it). O_CLOEXEC and O_NOCTTY are always added.
 * Returns 0 and writes *ret_fd, or -errno. */
int cordon_resolve(int root_fd, const char *path, const struct cordon_resolve_how *how, const struct cordon_caps *caps,
		   int *ret_fd);

/* Resolves the parent directory of `path` beneath root_fd (O_PATH |
 * O_DIRECTORY) and returns it with the final component, for race-free
 * creation and replacement relative to the parent fd (mkdirat, unlinkat,
 * renameat2, linkat). The final component is never "", "." or "..": such a
 * path (or the root itself) gives -EINVAL. *ret_name is malloc'd.
 * Returns 0 or -errno. */
int cordon_resolve_parent(int root_fd, const char *path, unsigned flags, const struct cordon_caps *caps,
			  int *ret_dir_fd, char **ret_name);

/* Fills caps->openat2 and caps->openat2_beneath by asking the kernel
 * whether openat2 refuses a ".." escape (for programs that run inside a
 * sandbox and cannot run the full probe, such as cordon-fs and
 * cordon-exec). Leaves every other field alone. */
void cordon_resolve_detect(struct cordon_caps *caps);

/* True when caps say openat2's beneath resolution works on this kernel. */
bool cordon_resolve_has_openat2(const struct cordon_caps *caps);
