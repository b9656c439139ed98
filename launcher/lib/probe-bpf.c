/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The probe's raw bpf(2) calls, shared by probe.c (cgroup sock_addr) and
 * probe-lsm.c (BPF_LSM_CGROUP): the syscall and an allow-everything
 * program loader. */
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "probe-util.h"

int cordon_probe_sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Raw bpf() rather than libbpf's bpf_prog_load(): libbpf may raise
 * RLIMIT_MEMLOCK on older kernels, an effect that would outlive the probe. */
int cordon_probe_bpf_load_allow(uint32_t prog_type, uint32_t attach_type, uint32_t attach_btf_id)
{
	/* clang-format off */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	/* clang-format on */
	static const char license[] = "GPL";
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = prog_type;
	attr.expected_attach_type = attach_type;
	attr.attach_btf_id = attach_btf_id;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = ELEMENTSOF(insns);
	attr.license = (uint64_t)(uintptr_t)license;
	/* A recognisable name, so a test can prove none is left loaded. */
	memcpy(attr.prog_name, CORDON_PROBE_BPF_NAME, sizeof(CORDON_PROBE_BPF_NAME));
	return cordon_probe_sys_bpf(BPF_PROG_LOAD, &attr);
}
