/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a connector can never plant a setuid/setgid file, a device
 * node or a security/trusted xattr on the host through a read-write root,
 * and never change the special bits or the owner of the root directory
 * itself (issue 11, finding 1).
 *
 * The critical case of the review: a read-write root owned by uid 0 (the
 * demo's layout). It is id-mapped, so the connector acts as the root's
 * owner — uid 0 — for the files in it, and before the fix `chmod 4755` on a
 * copied shell left a root-owned setuid binary on the host. Here, from
 * inside a real sandbox (cordon_spawn, the plant-probe helper copied in),
 * under the default and the strict seccomp base:
 *  - chmod/fchmod/fchmodat/fchmodat2 with 04755/02755/06755 (and with
 *    garbage in the upper half of the mode register), chmod 02755 of a
 *    directory, open/openat/creat O_CREAT and openat O_TMPFILE with
 *    04755/02755, mkdir/mkdirat with 02755/04755, mknod/mknodat of a
 *    regular file with 04755/02755 -> EPERM;
 *  - mknod of a character and a block device -> EPERM;
 *  - setxattr security.capability, lsetxattr trusted.x, fsetxattr
 *    security.foo, setxattr user.x, setxattrat security.capability ->
 *    EPERM (the whole set family is refused);
 *  - openat2, with O_CREAT 04755 or a plain read -> ENOSYS (its mode is
 *    in a struct seccomp cannot read; the sandbox has a read-write root);
 *  - the root directory: chmod 02755/04755 and fchmod 02775 -> EPERM,
 *    chown to 65534, fchown to 0:0 and chgrp to 65534 -> EPERM from the
 *    root guard (test-connector-cannot-chmod-its-root-directory), which
 *    refuses every chown of the root before the id mapping is consulted;
 *    where the kernel cannot run the guard, EOVERFLOW (the id-mapped mount
 *    maps the owner's uid and gid only, so no other id can be written
 *    through it);
 *  - the allowed cases work: create 0644, chmod 0644, mkdir 0755, a FIFO
 *    (default base; strict does not list mknod: EPERM).
 * The same with the root given to an ordinary uid (65533) and no opt-in.
 * A read-write root owned by uid 0 whose profile entry does not say
 * allow_uid0_owner: true is refused at launch (EPERM, step "policy").
 * Host side after each run: no file under the root has S_ISUID or S_ISGID,
 * none is a device node, the created file carries no xattr, and the root
 * directory keeps its mode (0755) and owner (0:0).
 * Layer: libcordon spawn + seccomp, real kernel. */
#include <dirent.h>
#include <sys/xattr.h>

#include "sec-sbx.h"

struct want {
	const char *name;
	int err;
};

/* clang-format off */
static const struct want wants[] = {
	{ "create-0644", 0 },		{ "chmod-0644", 0 },
	{ "mkdir-0755", 0 },		{ "mknod-fifo", 0 },
	{ "chmod-4755", EPERM },	{ "chmod-2755", EPERM },
	{ "chmod-raw-4755", EPERM },	{ "fchmod-4755", EPERM },
	{ "fchmod-2755", EPERM },	{ "fchmodat-6755", EPERM },
	{ "fchmodat2-4755", EPERM },	{ "fchmod-4755-high", EPERM },
	{ "chmod-dir-2755", EPERM },	{ "open-creat-4755", EPERM },
	{ "openat-creat-2755", EPERM },	{ "creat-4755", EPERM },
	{ "openat-tmpfile-4755", EPERM }, { "mkdir-2755", EPERM },
	{ "mkdirat-4755", EPERM },	{ "mknod-reg-4755", EPERM },
	{ "mknodat-reg-2755", EPERM },	{ "mknod-chr", EPERM },
	{ "mknodat-blk", EPERM },	{ "openat2-creat-4755", ENOSYS },
	{ "openat2-read", ENOSYS },
	{ "setxattr-security-capability", EPERM }, { "lsetxattr-trusted", EPERM },
	{ "fsetxattr-security-foo", EPERM }, { "setxattr-user", EPERM },
	{ "setxattrat-security-capability", EPERM },
	{ "root-open", 0 },		{ "root-chmod-2755", EPERM },
	{ "root-chmod-4755", EPERM },	{ "root-fchmod-2775", EPERM },
	/* The root guard refuses (EPERM); without it, the id-mapped mount
	 * maps the owner's ids only: any other id is not representable
	 * there (EOVERFLOW, see unguarded()). */
	{ "root-chown-65534", EPERM },	{ "root-fchown-0", EPERM },
	{ "root-chgrp-65534", EPERM },
};
/* clang-format on */

/* What the kernel answers to `name` where the root guard does not run. */
static int unguarded(const char *name, int err)
{
	if (strcmp(name, "root-chown-65534") == 0 || strcmp(name, "root-fchown-0") == 0 ||
	    strcmp(name, "root-chgrp-65534") == 0)
		return EOVERFLOW;
	return err;
}

/* The errno plant-probe printed for `name`, or -1 when the line is missing. */
static int printed(const char *out, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ' ')
			return atoi(l + n + 1);
	return -1;
}

/* Nothing below `path` is setuid, setgid or a device; returns the count. */
static int host_scan(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int bad = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		assert_int_equal(lstat(p, &st), 0);
		if ((st.st_mode & (S_ISUID | S_ISGID)) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			fprintf(stderr, "host: %s has mode 0%o\n", p, (unsigned)st.st_mode);
			bad++;
		}
		if (S_ISDIR(st.st_mode))
			bad += host_scan(p);
	}
	closedir(d);
	return bad;
}

/* The profile's /data entry. */
static struct cordon_fs_entry *data_root(struct cordon_profile *p)
{
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if (strcmp(p->fs_roots[i].at, "/data") == 0)
			return &p->fs_roots[i];
	fail_msg("no /data root");
	return NULL;
}

/* owner 0: the review's layout, a read-write root owned by uid 0, with the
 * profile's explicit opt-in (the fixture's profile sets it). Otherwise the
 * root is given to `owner` first and the opt-in is cleared. */
static void run_plant(const char *seccomp, bool strict, uid_t owner)
{
	struct sbx *s = sbx_new("plant");
	struct sbx_opts o = { .seccomp = seccomp };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	struct stat before, after;
	char inside[PATH_MAX], plain[PATH_MAX], list[256];
	int r;

	sec_sbx_install(s, "plant-probe", inside, sizeof(inside));
	p = sbx_profile(s, &o);
	assert_true(data_root(p)->allow_uid0_owner);
	if (owner != 0) {
		assert_int_equal(chown(s->root, owner, owner), 0);
		data_root(p)->allow_uid0_owner = false;
	}
	assert_int_equal(stat(s->root, &before), 0);
	assert_int_equal(before.st_uid, owner);
	assert_int_equal(before.st_mode & 07777, 0755);

	char *argv[] = { inside, "plant", "/data", NULL };
	r = sbx_spawn(p, &s->caps, argv, &res, &d);
	if (r < 0)
		fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_exited(res.status, 0);
	for (size_t i = 0; i < ELEMENTSOF(wants); i++) {
		int want = wants[i].err, got = printed(res.out, wants[i].name);

		if (strict && strcmp(wants[i].name, "mknod-fifo") == 0)
			want = EPERM; /* mknod is not on the strict list */
		if (strcmp(sbx_state(res.report, "root_guard"), "enforced") != 0)
			want = unguarded(wants[i].name, want);
		if (got != want)
			fprintf(stderr, "%s: errno %d, want %d\n", wants[i].name, got, want);
		assert_int_equal(got, want);
	}

	/* Host side. */
	assert_int_equal(host_scan(s->root), 0);
	assert_int_equal(stat(s->root, &after), 0);
	assert_int_equal(after.st_mode, before.st_mode);
	assert_int_equal(after.st_uid, before.st_uid);
	assert_int_equal(after.st_gid, before.st_gid);
	snprintf(plain, sizeof(plain), "%s/plain", s->root);
	assert_int_equal(stat(plain, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0644);
	assert_int_equal(after.st_uid, owner); /* the root's owner, through the id-mapped mount */
	assert_int_equal(llistxattr(plain, list, sizeof(list)), 0);

	sbx_result_done(&res);
	cordon_profile_free(p);
	sbx_free(s);
}

static void test_uid0_root_default_base(void **state)
{
	(void)state;
	run_plant("{base: default, action: errno}", false, 0);
}

static void test_uid0_root_strict_base(void **state)
{
	(void)state;
	run_plant("{base: strict, action: errno}", true, 0);
}

/* "The same with a root owned by an ordinary user gives a setuid-owner
 * binary": the same attempts, the same answers. */
static void test_user_owned_root(void **state)
{
	(void)state;
	run_plant("{base: default, action: errno}", false, 65533);
}

/* A read-write root owned by uid 0 without the profile's opt-in is refused
 * before anything exists: EPERM, step "policy", the message names the path
 * and the key, and the root stays empty. */
static void test_uid0_root_without_opt_in_refused(void **state)
{
	struct sbx *s = sbx_new("plant-refused");
	struct cordon_profile *p = sbx_profile(s, NULL);
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[] = { (char *)"/opt/cordon-test/sandbox-probe", (char *)"exit", (char *)"0", NULL };
	char want[PATH_MAX + 64];
	DIR *dir;
	int n = 0;

	(void)state;
	data_root(p)->allow_uid0_owner = false;
	assert_int_equal(sbx_spawn(p, &s->caps, argv, &res, &d), -EPERM);
	assert_int_equal(d.error, EPERM);
	assert_string_equal(d.step, "policy");
	snprintf(want, sizeof(want), "read-write root '%s' is owned by uid 0", s->root);
	assert_non_null(strstr(d.message, want));
	assert_non_null(strstr(d.message, "allow_uid0_owner: true"));
	dir = opendir(s->root);
	assert_non_null(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	assert_int_equal(n, 2); /* . and .. */
	cordon_profile_free(p);
	sbx_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uid0_root_default_base),
		cmocka_unit_test(test_uid0_root_strict_base),
		cmocka_unit_test(test_user_owned_root),
		cmocka_unit_test(test_uid0_root_without_opt_in_refused),
	};

	cordon_test_require_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
