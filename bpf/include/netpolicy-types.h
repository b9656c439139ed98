/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-only */
#pragma once

/* Types shared by bpf/netpolicy.bpf.c and launcher/lib/netpolicy.c. Fixed
 * width only, no pointers, no implicit padding: both sides must agree on the
 * byte layout of every map key, map value and ring-buffer record. The BPF
 * side gets __u8..__u64 from vmlinux.h, user space from <linux/types.h>. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* clang-format off */
#define CORDON_NP_MAX_ENTRIES	16384	/* prefixes across all instances */
#define CORDON_NP_MAX_PORTS	64	/* (port, protocol) pairs per prefix */
#define CORDON_NP_RINGBUF_BYTES	(256 * 1024)

/* The fixed part of every key: family (32 bits) + cgroup id (64 bits). Every
 * entry's prefix length covers it entirely, so a lookup only ever matches
 * entries of the exact cgroup and family; the address bits that follow are
 * then matched longest-prefix first. */
#define CORDON_NP_KEY_FIXED_BITS 96

/* Protocol bits in a port entry; the same values as enum cordon_net_proto. */
#define CORDON_NP_TCP		(1u << 0)
#define CORDON_NP_UDP		(1u << 1)

/* Which hook produced a denial. */
#define CORDON_NP_HOOK_CONNECT4		1
#define CORDON_NP_HOOK_CONNECT6		2
#define CORDON_NP_HOOK_SENDMSG4		3
#define CORDON_NP_HOOK_SENDMSG6		4
#define CORDON_NP_HOOK_BIND4		5
#define CORDON_NP_HOOK_BIND6		6
#define CORDON_NP_HOOK_SOCK_CREATE	7
#define CORDON_NP_HOOK_INGRESS_LISTEN	8	/* cgroup_skb/ingress: a packet for a non-loopback listener */
#define CORDON_NP_HOOK_INGRESS_UDP	9	/* cgroup_skb/ingress: a datagram from outside the allowlist */

/* Event flags. */
#define CORDON_NP_EV_MAPPED	(1u << 0)	/* an IPv6 ::ffff:a.b.c.d address, judged as IPv4 */
/* clang-format on */

/* LPM trie key. prefixlen counts the bits after itself: 96 fixed bits plus
 * the address prefix. IPv4 addresses sit in addr[0..3], the rest is zero. */
struct cordon_np_key {
	__u32 prefixlen;
	__u32 family; /* AF_INET or AF_INET6 */
	__u64 cgroup_id;
	__u8 addr[16];
};

struct cordon_np_port {
	__u16 port;	/* host byte order */
	__u8 protocols; /* CORDON_NP_TCP | CORDON_NP_UDP */
	__u8 _pad;
};

/* The value of one prefix: every (port, protocol) pair allowed to any
 * address in it. User space merges into each prefix the pairs of every
 * less specific prefix of the same instance that contains it, so the
 * longest match alone decides (the allowlist is a union of rules). */
struct cordon_np_ports {
	__u32 n;
	__u32 _pad;
	struct cordon_np_port ports[CORDON_NP_MAX_PORTS];
};

/* One denial, as written to the ring buffer. 64 bytes. */
struct cordon_np_event {
	__u64 cgroup_id;
	__u64 time_ns;	 /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;	 /* thread group id, initial pid namespace; 0 for ingress */
	__u16 family;	 /* as judged (AF_INET for a mapped address); socket family for sock_create */
	__u16 port;	 /* host byte order; 0 for sock_create */
	__u8 addr[16];	 /* network byte order; IPv4 in addr[0..3] */
	__u16 protocol;	 /* IPPROTO_* of the socket */
	__u8 hook;	 /* CORDON_NP_HOOK_* */
	__u8 flags;	 /* CORDON_NP_EV_* */
	__u16 sock_type; /* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, ... */
	__u16 _pad;
	char comm[16]; /* task name; untrusted text, escape before printing; empty for ingress */
};
