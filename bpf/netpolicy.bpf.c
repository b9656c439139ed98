/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-only */

/* cordon's egress policy, attached to each connector instance's cgroup2
 * directory by launcher/lib/netpolicy.c.
 *
 * Everything in a cgroup these programs are attached to is policed: there is
 * no "unknown cgroup, let it through" path. A socket operation is allowed
 * only when the map holds an entry for the caller's cgroup whose prefix
 * contains the destination and whose port list names the destination port
 * for the socket's protocol. An instance with no entries (an empty
 * allowlist, or network mode "none") is denied everything, loopback
 * included: loopback is where the host's unauthenticated services live.
 *
 * These hooks sit below the syscall layer, so they also see MPTCP sockets,
 * TCP Fast Open (sendto with MSG_FASTOPEN goes through the same pre-connect
 * hook) and io_uring-submitted connects, which Landlock's TCP rules and
 * seccomp argument filters cannot judge.
 *
 * A hook that returns 0 makes the syscall fail with EPERM. Each denial is
 * reported once on the ring buffer; when the buffer is full the event is
 * counted in np_lost instead (the denial itself never depends on it). */

/* No CO-RE: every struct these programs read is a UAPI context
 * (bpf_sock_addr, bpf_sock, __sk_buff) whose accesses the verifier
 * rewrites by their fixed UAPI offsets. Without preserve_access_index the
 * object has no CO-RE relocations, so libbpf never reads the kernel's BTF
 * (~5 MB, tens of milliseconds per launcher start) to load it. */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "netpolicy-types.h"

/* clang-format off */
#define AF_INET		2
#define AF_INET6	10
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#define IPPROTO_MPTCP	262
#define TCP_LISTEN	10	/* BPF_TCP_LISTEN */
/* clang-format on */

/* "GPL" because the file is dual licensed; no GPL-only helper is used. */
char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CORDON_NP_MAX_ENTRIES);
	__type(key, struct cordon_np_key);
	__type(value, struct cordon_np_ports);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* required for LPM tries */
} np_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CORDON_NP_RINGBUF_BYTES);
} np_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} np_lost SEC(".maps");

/* cgid is the cgroup to report; task is false in softirq context, where
 * "current" is whatever task the packet interrupted. */
static __always_inline void report_as(__u64 cgid, bool task, __u16 family, const __u8 *addr, __u16 port, __u16 protocol,
				      __u16 sock_type, __u8 hook, __u8 flags)
{
	struct cordon_np_event *ev;

	ev = bpf_ringbuf_reserve(&np_events, sizeof(*ev), 0);
	if (!ev) {
		__u32 zero = 0;
		__u64 *lost = bpf_map_lookup_elem(&np_lost, &zero);

		if (lost)
			*lost += 1; /* per-CPU slot: no atomics needed */
		return;
	}
	ev->cgroup_id = cgid;
	ev->time_ns = bpf_ktime_get_ns();
	ev->pid = task ? bpf_get_current_pid_tgid() >> 32 : 0;
	ev->family = family;
	ev->port = port;
	__builtin_memcpy(ev->addr, addr, 16);
	ev->protocol = protocol;
	ev->hook = hook;
	ev->flags = flags;
	ev->sock_type = sock_type;
	ev->_pad = 0;
	if (task)
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	else
		__builtin_memset(ev->comm, 0, sizeof(ev->comm));
	bpf_ringbuf_submit(ev, 0);
}

static __always_inline void report(__u16 family, const __u8 *addr, __u16 port, __u16 protocol, __u16 sock_type,
				   __u8 hook, __u8 flags)
{
	report_as(bpf_get_current_cgroup_id(), true, family, addr, port, protocol, sock_type, hook, flags);
}

/* The protocol bit a socket's traffic is judged under; 0 for anything that
 * is neither TCP (plain or MPTCP: TCP on the wire) nor UDP. */
static __always_inline __u8 proto_bit(__u32 type, __u32 protocol)
{
	if (type == SOCK_STREAM && (protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
		return CORDON_NP_TCP;
	if (type == SOCK_DGRAM && protocol == IPPROTO_UDP)
		return CORDON_NP_UDP;
	return 0;
}

/* True when the caller's cgroup may reach addr:port with protocol bit pbit.
 * The key's fixed part (family, cgroup id) is always matched in full, so the
 * trie returns the longest prefix of this instance only. */
static __always_inline bool allowed_for(__u64 cgid, __u32 family, const __u8 *addr, __u16 port, __u8 pbit)
{
	struct cordon_np_key key = {};
	struct cordon_np_ports *val;

	if (!pbit || port == 0)
		return false;
	key.prefixlen = CORDON_NP_KEY_FIXED_BITS + (family == AF_INET ? 32 : 128);
	key.family = family;
	key.cgroup_id = cgid;
	__builtin_memcpy(key.addr, addr, 16);

	val = bpf_map_lookup_elem(&np_allow, &key);
	if (!val)
		return false;
	for (__u32 i = 0; i < CORDON_NP_MAX_PORTS; i++) {
		if (i >= val->n)
			break;
		if (val->ports[i].port == port && (val->ports[i].protocols & pbit))
			return true;
	}
	return false;
}

static __always_inline bool allowed(__u32 family, const __u8 *addr, __u16 port, __u8 pbit)
{
	return allowed_for(bpf_get_current_cgroup_id(), family, addr, port, pbit);
}

/* Reads the IPv6 address of a sock_addr context (the user-supplied one) into
 * addr and, when it is an IPv4-mapped address (::ffff:a.b.c.d), rewrites it
 * to the IPv4 form so it is judged by the IPv4 rules: the kernel sends such
 * traffic as IPv4, and a v6 socket must not be a way around them. Returns
 * the family to judge under. */
static __always_inline __u32 load_addr6(const struct bpf_sock_addr *ctx, __u8 *addr, __u8 *flags)
{
	__u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1], w2 = ctx->user_ip6[2], w3 = ctx->user_ip6[3];

	if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0x0000ffff)) {
		__builtin_memset(addr, 0, 16);
		__builtin_memcpy(addr, &w3, 4);
		*flags |= CORDON_NP_EV_MAPPED;
		return AF_INET;
	}
	__builtin_memcpy(addr, &w0, 4);
	__builtin_memcpy(addr + 4, &w1, 4);
	__builtin_memcpy(addr + 8, &w2, 4);
	__builtin_memcpy(addr + 12, &w3, 4);
	return AF_INET6;
}

static __always_inline int judge4(struct bpf_sock_addr *ctx, __u8 hook)
{
	__u8 addr[16] = {};
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 type = ctx->type, protocol = ctx->protocol;

	__builtin_memcpy(addr, &ip, 4);
	if (allowed(AF_INET, addr, port, proto_bit(type, protocol)))
		return 1;
	report(AF_INET, addr, port, protocol, type, hook, 0);
	return 0;
}

static __always_inline int judge6(struct bpf_sock_addr *ctx, __u8 hook)
{
	__u8 addr[16], flags = 0;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 type = ctx->type, protocol = ctx->protocol;
	__u32 family = load_addr6(ctx, addr, &flags);

	if (allowed(family, addr, port, proto_bit(type, protocol)))
		return 1;
	report(family, addr, port, protocol, type, hook, flags);
	return 0;
}

SEC("cgroup/connect4")
int cordon_connect4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx, CORDON_NP_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int cordon_connect6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx, CORDON_NP_HOOK_CONNECT6);
}

/* Unconnected UDP sends (sendto/sendmsg with a destination); connected UDP
 * sockets were judged at connect(). */
SEC("cgroup/sendmsg4")
int cordon_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx, CORDON_NP_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int cordon_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx, CORDON_NP_HOOK_SENDMSG6);
}

/* A connector in the host network namespace must not listen on the host's
 * interfaces, nor pick a fixed port another service expects: an explicit
 * bind() is allowed only to port 0 (the kernel picks one) on a loopback
 * address. Outgoing connections bind implicitly and are not affected. */
SEC("cgroup/bind4")
int cordon_bind4(struct bpf_sock_addr *ctx)
{
	__u8 addr[16] = {};
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	if (port == 0 && (bpf_ntohl(ip) >> 24) == 127)
		return 1;
	__builtin_memcpy(addr, &ip, 4);
	report(AF_INET, addr, port, ctx->protocol, ctx->type, CORDON_NP_HOOK_BIND4, 0);
	return 0;
}

SEC("cgroup/bind6")
int cordon_bind6(struct bpf_sock_addr *ctx)
{
	__u8 addr[16], flags = 0;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 family = load_addr6(ctx, addr, &flags);
	bool loopback;

	if (family == AF_INET) {
		loopback = addr[0] == 127;
	} else {
		__u64 hi, lo;

		__builtin_memcpy(&hi, addr, 8);
		__builtin_memcpy(&lo, addr + 8, 8);
		loopback = hi == 0 && lo == bpf_cpu_to_be64(1); /* ::1 */
	}
	if (port == 0 && loopback)
		return 1;
	report(family, addr, port, ctx->protocol, ctx->type, CORDON_NP_HOOK_BIND6, flags);
	return 0;
}

/* A second layer under seccomp: of the inet socket kinds only TCP (plain or
 * MPTCP) and UDP are allowed. Raw sockets would let a connector forge any
 * packet past every hook above; ICMP "ping" sockets, SCTP and UDP-Lite have
 * no connect/sendmsg hook coverage here. */
SEC("cgroup/sock_create")
int cordon_sock_create(struct bpf_sock *ctx)
{
	__u8 addr[16] = {};
	__u32 family = ctx->family, type = ctx->type, protocol = ctx->protocol;

	if ((family == AF_INET || family == AF_INET6) && proto_bit(type, protocol))
		return 1;
	report(family, addr, 0, protocol, type, CORDON_NP_HOOK_SOCK_CREATE, 0);
	return 0;
}

/* Reads a socket's local address into addr (IPv4-mapped as IPv4); returns
 * the family, or 0 for another family. Sets *loopback. */
static __always_inline __u32 local_addr(const struct bpf_sock *sk, __u8 *addr, __u8 *flags, bool *loopback)
{
	if (sk->family == AF_INET) {
		__u32 ip = sk->src_ip4;

		__builtin_memcpy(addr, &ip, 4);
		*loopback = (bpf_ntohl(ip) >> 24) == 127;
		return AF_INET;
	}
	if (sk->family == AF_INET6) {
		__u32 w0 = sk->src_ip6[0], w1 = sk->src_ip6[1], w2 = sk->src_ip6[2], w3 = sk->src_ip6[3];

		if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0x0000ffff)) {
			*flags |= CORDON_NP_EV_MAPPED;
			__builtin_memcpy(addr, &w3, 4);
			*loopback = (bpf_ntohl(w3) >> 24) == 127;
			return AF_INET;
		}
		__builtin_memcpy(addr, &w0, 4);
		__builtin_memcpy(addr + 4, &w1, 4);
		__builtin_memcpy(addr + 8, &w2, 4);
		__builtin_memcpy(addr + 12, &w3, 4);
		*loopback = w0 == 0 && w1 == 0 && w2 == 0 && w3 == bpf_htonl(1);
		return AF_INET6;
	}
	return 0;
}

/* Source address and UDP source port of the datagram in skb (whose data
 * starts at the network header). Returns the family, or 0 when the packet
 * is not plain UDP over IPv4/IPv6 (IPv6 extension headers included: such a
 * packet is dropped, not guessed at). */
static __always_inline __u32 udp_source(struct __sk_buff *skb, __u8 *addr, __u16 *port)
{
	__u8 b0, proto;
	__u16 sport;
	__u32 l4;

	if (bpf_skb_load_bytes(skb, 0, &b0, 1) < 0)
		return 0;
	if ((b0 >> 4) == 4) {
		if (bpf_skb_load_bytes(skb, 9, &proto, 1) < 0 || proto != IPPROTO_UDP)
			return 0;
		if (bpf_skb_load_bytes(skb, 12, addr, 4) < 0)
			return 0;
		l4 = (b0 & 0x0f) * 4;
		if (l4 < 20 || bpf_skb_load_bytes(skb, l4, &sport, 2) < 0)
			return 0;
		*port = bpf_ntohs(sport);
		return AF_INET;
	}
	if ((b0 >> 4) == 6) {
		if (bpf_skb_load_bytes(skb, 6, &proto, 1) < 0 || proto != IPPROTO_UDP)
			return 0;
		if (bpf_skb_load_bytes(skb, 8, addr, 16) < 0)
			return 0;
		if (bpf_skb_load_bytes(skb, 40, &sport, 2) < 0)
			return 0;
		*port = bpf_ntohs(sport);
		return AF_INET6;
	}
	return 0;
}

/* Inbound traffic the bind hooks cannot see, judged per received packet on
 * the instance's sockets (dropping returns 0; the sender sees silence):
 *
 * - listen() on a socket that was never bound binds it implicitly to the
 *   wildcard address, without running the bind hooks, and neither seccomp
 *   nor Landlock sees that either. The listener can exist, but a packet for
 *   it (a connection request) is dropped unless it is bound to loopback.
 * - An unconnected UDP socket is bound implicitly to the wildcard address
 *   by its first send, and would then receive datagrams from anyone: a
 *   datagram is accepted only from an address and port the allowlist lets
 *   the instance send UDP to (its resolver's replies, say), unless the
 *   socket was bound explicitly to loopback.
 *
 * Packets of established TCP connections are not affected: those exist
 * only with allowed peers or through loopback listeners. */
SEC("cgroup_skb/ingress")
int cordon_ingress(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;
	__u8 addr[16] = {}, flags = 0;
	__u32 family;
	__u16 port;
	bool loopback = false;

	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return 1;

	if (sk->type == SOCK_STREAM) {
		if (sk->state != TCP_LISTEN)
			return 1;
		family = local_addr(sk, addr, &flags, &loopback);
		if (!family || loopback)
			return 1;
		report_as(bpf_skb_cgroup_id(skb), false, family, addr, sk->src_port, sk->protocol, sk->type,
			  CORDON_NP_HOOK_INGRESS_LISTEN, flags);
		return 0;
	}

	if (sk->type == SOCK_DGRAM && sk->protocol == IPPROTO_UDP) {
		__u64 cgid = bpf_skb_cgroup_id(skb);

		family = local_addr(sk, addr, &flags, &loopback);
		if (!family || loopback)
			return 1;
		__builtin_memset(addr, 0, sizeof(addr));
		flags = 0;
		port = 0;
		family = udp_source(skb, addr, &port);
		if (family && allowed_for(cgid, family, addr, port, CORDON_NP_UDP))
			return 1;
		report_as(cgid, false, family, addr, port, sk->protocol, sk->type, CORDON_NP_HOOK_INGRESS_UDP, 0);
		return 0;
	}
	return 1;
}
