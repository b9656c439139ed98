/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs in the sandbox's child after clone3, so async-signal-safe only: it is
 * part of the object the unit test check-spawn-child-async-signal-safe
 * inspects. */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cap-ng.h>
#include <linux/securebits.h>

#include "fd-util.h"
#include "parse-util.h"

int cordon_cap_last(void)
{
	static int cached = -1;
	char buf[16];
	uint64_t v;
	int last = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (last >= 0)
		return last;
	if (read_small_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0 && parse_u64(buf, &v) >= 0 && v < 64)
		last = (int)v;
	else
		return 63;
	__atomic_store_n(&cached, last, __ATOMIC_RELAXED);
	return last;
}

static int fail(const char *step, const char *what, const char **ret_step, const char **ret_what)
{
	int e = errno > 0 ? errno : EPERM;

	*ret_step = step;
	*ret_what = what;
	return -e;
}

int cordon_privdrop(const struct cordon_privdrop *p, const char **ret_step, const char **ret_what)
{
	/* 1. Bounding set first. prctl() directly: libcap-ng's bounding-set
	 * path rereads /proc through stdio, which is not async-signal-safe.
	 * Without CAP_SETPCAP (a process that keeps its ids) it stays. */
	for (int cap = 0; cap <= p->cap_last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) {
			if (!p->ids && errno == EPERM)
				break;
			return fail("capabilities", "clearing the bounding set", ret_step, ret_what);
		}
	if (p->ids) {
		/* 2. Locked securebits. */
		if (prctl(PR_SET_SECUREBITS,
			  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
				  SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
				  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
			  0, 0, 0) < 0)
			return fail("capabilities", "locking securebits", ret_step, ret_what);
		/* 3. Groups, gid, uid. */
		if (setgroups(0, NULL) < 0)
			return fail("user", "clearing supplementary groups", ret_step, ret_what);
		if (setresgid(p->gid, p->gid, p->gid) < 0)
			return fail("user", "setresgid", ret_step, ret_what);
		if (setresuid(p->uid, p->uid, p->uid) < 0)
			return fail("user", "setresuid", ret_step, ret_what);
	}
	/* 4. libcap-ng's state may be a parent's (a child after clone): aim it
	 * at this process, clear it, apply (capset with empty E, P, I). */
	capng_setpid((int)getpid());
	capng_clear(CAPNG_SELECT_BOTH);
	errno = 0;
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return fail("capabilities", "clearing capability sets (libcap-ng)", ret_step, ret_what);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail("capabilities", "clearing the ambient set", ret_step, ret_what);
	return 0;
}
