/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Probe of BPF LSM programs attached per cgroup (BPF_LSM_CGROUP), which the
 * root guard (bpf/rootguard.bpf.c) needs. "bpf" in the LSM list is not
 * enough: a kernel may refuse to load trampoline-based programs (LSM,
 * fentry) altogether, so the probe really loads a two-instruction
 * path_chmod program that allows everything and attaches it, with a link,
 * to the probe's own empty cgroup2 directory, then closes both.
 *
 * Loading needs the BTF id of the hook's function (bpf_lsm_path_chmod).
 * libbpf would find it by parsing all of the kernel's BTF into an index
 * (tens of milliseconds); the probe runs at every launcher start, so it
 * walks the raw type section once instead (a few milliseconds). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "probe-util.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"
#define BTF_MAX	    (512u << 20)

/* Bytes that follow a struct btf_type of this kind, or -1 for a kind this
 * code does not know (a newer kernel's: the walk cannot go on). */
static long btf_extra(unsigned kind, unsigned vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return (long)sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * 12; /* struct btf_enum64 */
	default:
		return -1;
	}
}

int cordon_probe_btf_find_func(const void *data, size_t len, const char *name, uint32_t *ret_id)
{
	const unsigned char *base = data;
	struct btf_header h;
	size_t types, types_end, strs, strs_end, name_len;

	if (!data || !name || !ret_id)
		return -EINVAL;
	name_len = strlen(name);
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, base, sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) || h.hdr_len > len)
		return -EBADMSG;
	types = (size_t)h.hdr_len + h.type_off;
	types_end = types + h.type_len;
	strs = (size_t)h.hdr_len + h.str_off;
	strs_end = strs + h.str_len;
	if (types_end < types || types_end > len || strs_end < strs || strs_end > len)
		return -EBADMSG;

	/* Type ids count from 1 (0 is void), in section order. */
	for (size_t off = types, id = 1; off < types_end; id++) {
		struct btf_type t;
		unsigned kind, vlen;
		long extra;

		if (types_end - off < sizeof(t))
			return -EBADMSG;
		memcpy(&t, base + off, sizeof(t));
		kind = BTF_INFO_KIND(t.info);
		vlen = BTF_INFO_VLEN(t.info);
		extra = btf_extra(kind, vlen);
		if (extra < 0)
			return -EBADMSG;
		if (kind == BTF_KIND_FUNC && t.name_off < h.str_len && h.str_len - t.name_off > name_len &&
		    memcmp(base + strs + t.name_off, name, name_len + 1) == 0) {
			if (id > UINT32_MAX)
				return -EBADMSG;
			*ret_id = (uint32_t)id;
			return 0;
		}
		off += sizeof(t) + (size_t)extra;
		if (off > types_end)
			return -EBADMSG;
	}
	return -ENOENT;
}

void cordon_probe_lsm_cgroup(struct cordon_caps *c, int cg_fd)
{
	_cleanup_close_ int prog = -EBADF, link = -EBADF;
	union bpf_attr attr;
	uint32_t id = 0;
	int r;

	c->bpf_lsm_cgroup = false;
	/* Known not to run (the list was readable and has no "bpf"): no need
	 * to try. When the list is only read later (no securityfs here), the
	 * caller clears the result if "bpf" is missing after all. */
	if (c->lsm[0] && !c->bpf_lsm) {
		c->bpf_lsm_cgroup_errno = EOPNOTSUPP;
		return;
	}
	if (cg_fd < 0) {
		c->bpf_lsm_cgroup_errno = ENODEV;
		return;
	}
	{
		_cleanup_close_ int fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
		_cleanup_free_ char *copy = NULL;
		const void *btf = MAP_FAILED;
		struct stat st;
		size_t len = 0;

		/* Mapped (Linux 6.16 maps the kernel's BTF read-only, no copy),
		 * else read: the file is a few megabytes read a page per call. */
		r = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
		if (r == 0 && st.st_size > 0 && (uint64_t)st.st_size <= BTF_MAX) {
			len = (size_t)st.st_size;
			btf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		}
		if (r == 0 && btf == MAP_FAILED) {
			r = read_file_bounded(AT_FDCWD, VMLINUX_BTF, BTF_MAX, &copy, &len);
			btf = copy;
		}
		if (r >= 0)
			r = cordon_probe_btf_find_func(btf, len, "bpf_lsm_path_chmod", &id);
		if (btf != MAP_FAILED && btf != copy)
			(void)munmap((void *)btf, len);
		if (r < 0) {
			/* No kernel BTF, no such hook, or BTF we cannot walk:
			 * nothing a BPF LSM program could attach to. */
			c->bpf_lsm_cgroup_errno = r == -ENOMEM ? ENOMEM : ENOENT;
			return;
		}
	}
	prog = cordon_probe_bpf_load_allow(BPF_PROG_TYPE_LSM, BPF_LSM_CGROUP, id);
	if (prog < 0) {
		c->bpf_lsm_cgroup_errno = errno;
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (uint32_t)prog;
	attr.link_create.target_fd = (uint32_t)cg_fd;
	attr.link_create.attach_type = BPF_LSM_CGROUP;
	link = cordon_probe_sys_bpf(BPF_LINK_CREATE, &attr);
	if (link < 0) {
		c->bpf_lsm_cgroup_errno = errno;
		return;
	}
	/* Closing the link detaches the program; closing the program unloads
	 * it (both on return). */
	c->bpf_lsm_cgroup = true;
	c->bpf_lsm_cgroup_errno = 0;
}

const char *cordon_probe_lsm_cgroup_reason(const struct cordon_caps *c)
{
	if (c->bpf_lsm_cgroup)
		return "a path_chmod program was attached to a cgroup2 directory";
	switch (c->bpf_lsm_cgroup_errno) {
	case EOPNOTSUPP:
		return "\"bpf\" is not an active LSM (see lsm=)";
	case ENOENT:
		return "no kernel BTF describing the path_chmod hook";
	case ENODEV:
		return "no cgroup2 hierarchy to attach to";
	case EPERM:
		return "the kernel refuses to load BPF LSM programs (EPERM)";
	case EINVAL:
	case E2BIG:
		return "the kernel does not know BPF_LSM_CGROUP (Linux 6.0)";
	case ENOMEM:
		return "out of memory while probing";
	default:
		return "loading or attaching the program failed";
	}
}

bool cordon_probe_root_guard_notify(const struct cordon_caps *c)
{
	return c->seccomp_filter && c->seccomp_user_notif && c->pidfd_open && c->pidfd_getfd &&
	       (c->namespaces & CLONE_NEWNS) && (c->namespaces & CLONE_NEWPID);
}
