/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The eBPF egress policy (bpf/netpolicy.bpf.c), seen from the launcher.
 *
 * One loaded policy object per launcher process; one attachment per
 * connector instance cgroup:
 *
 *   cordon_netpolicy_open()     load and verify the programs, once
 *   cordon_netpolicy_attach()   fill the instance's allowlist, then attach
 *                               every program to its cgroup2 directory
 *                               (before the connector runs an instruction)
 *   cordon_netpolicy_events_fd() / cordon_netpolicy_poll_events()
 *                               denial events, for the launcher's poll loop
 *   cordon_netpolicy_detach()   detach every program, remove the entries
 *   cordon_netpolicy_close()    detaches what is left, unloads
 *
 * Lifecycle: the programs are attached with BPF links owned by this
 * process's file descriptors, not pinned. If the launcher process dies, the
 * kernel destroys the links and the policy is gone, so the launcher must
 * make sure its connectors die with it (PDEATHSIG and cgroup.kill of the
 * instance cgroups; a restarted launcher kills stale instance cgroups):
 * no connector ever outlives its network policy. The link and map fds are
 * O_CLOEXEC; a clone'd child must still close them (close_range) before it
 * runs connector code.
 *
 * Not thread-safe: one thread (the launcher's event loop) uses a given
 * object. libbpf's process-wide print callback is swapped while loading and
 * attaching, so libbpf's messages end up in the diag, not on stderr.
 *
 * Built with CORDON_BPF=OFF (no clang/bpftool), every call that needs the
 * programs returns -EOPNOTSUPP; the key conversion and the event formatter
 * still work. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../basic/diag.h"
#include "profile.h"

struct cordon_netpolicy_state;
struct cordon_netpolicy_attachment;

/* Same values as CORDON_NP_HOOK_* in bpf/include/netpolicy-types.h. */
enum cordon_netpolicy_hook {
	CORDON_NETPOLICY_HOOK_CONNECT4 = 1,
	CORDON_NETPOLICY_HOOK_CONNECT6 = 2,
	CORDON_NETPOLICY_HOOK_SENDMSG4 = 3,
	CORDON_NETPOLICY_HOOK_SENDMSG6 = 4,
	CORDON_NETPOLICY_HOOK_BIND4 = 5,
	CORDON_NETPOLICY_HOOK_BIND6 = 6,
	CORDON_NETPOLICY_HOOK_SOCK_CREATE = 7,
	CORDON_NETPOLICY_HOOK_INGRESS_LISTEN = 8, /* a connection request for a non-loopback listener, dropped */
	CORDON_NETPOLICY_HOOK_INGRESS_UDP = 9,	  /* a datagram from outside the UDP allowlist, dropped */
};

/* One denial. */
struct cordon_netpolicy_event {
	uint64_t cgroup_id; /* the denied process's cgroup2 id */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	uint32_t pid;	    /* thread group id in the initial pid namespace; 0 for ingress_* */
	int family;	    /* AF_INET or AF_INET6 as judged (a mapped ::ffff:a.b.c.d is
			     * AF_INET with mapped=true); for sock_create the socket's family;
			     * ingress_listen: the listener's address; ingress_udp: the
			     * datagram's source (AF_UNSPEC when it could not be parsed) */
	uint8_t addr[16];   /* network byte order; IPv4 in addr[0..3]; zero for sock_create */
	uint16_t port;	    /* host byte order; 0 for sock_create */
	int protocol;	    /* IPPROTO_* of the socket */
	int sock_type;	    /* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, ... */
	bool mapped;
	enum cordon_netpolicy_hook hook;
	char comm[16]; /* NUL-terminated task name: untrusted text; empty for ingress_* */
};

/* Same layout as struct cordon_np_key in bpf/include/netpolicy-types.h
 * (checked at compile time when BPF is built). */
struct cordon_netpolicy_key {
	uint32_t prefixlen; /* 96 + address prefix length */
	uint32_t family;
	uint64_t cgroup_id;
	uint8_t addr[16];
};

#define CORDON_NETPOLICY_MAX_RULES	1024 /* per instance */
#define CORDON_NETPOLICY_MAX_PORTS	64   /* (port, protocol) pairs per prefix, after merging */
#define CORDON_NETPOLICY_EVENT_LINE_MAX 512

/* Loads and verifies the programs and creates the maps. Returns 0 and
 * writes *ret, or -errno (-EOPNOTSUPP when built without BPF, -EPERM
 * without CAP_BPF/CAP_SYS_ADMIN) with reterr_diag naming the step. */
int cordon_netpolicy_open(struct cordon_netpolicy_state **ret, struct cordon_diag *reterr_diag);

/* Detaches every attachment still held (as cordon_netpolicy_detach) and
 * unloads. NULL is a no-op. */
void cordon_netpolicy_close(struct cordon_netpolicy_state *np);

static inline void cordon_netpolicy_closep(struct cordon_netpolicy_state **np)
{
	if (*np)
		cordon_netpolicy_close(*np);
}

/* Polices the cgroup2 directory cgroup_fd (O_DIRECTORY, on a cgroup2 mount)
 * with the allowlist rules[0..n_rules): writes the map entries first, then
 * attaches all eight programs (connect4/6, sendmsg4/6, bind4/6, sock_create,
 * cgroup_skb ingress) with BPF links. n_rules == 0 denies everything: pass
 * 0 for network mode "none" (the policy is attached in every mode). A rule
 * with protocols == 0 allows TCP (the profile's default). The cgroup
 * id is read from the directory itself. On failure nothing stays attached
 * and no entry stays in the map. Returns 0 and writes *ret, or -errno:
 * -EINVAL for an invalid rule (the diag names its index), -E2BIG for too
 * many rules or port pairs, -EEXIST when this object already polices that
 * cgroup, -ENOTDIR/-EMEDIUMTYPE when cgroup_fd is not a cgroup2 directory. */
int cordon_netpolicy_attach(struct cordon_netpolicy_state *np, int cgroup_fd, const struct cordon_net_rule *rules,
			    size_t n_rules, struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag);

/* ---- Policing a launcher's group once ----------------------------------
 *
 * Programs attached to a cgroup2 directory run for every descendant, and
 * each lookup is keyed by the calling task's own cgroup id. So the
 * programs can be attached ONCE, to the launcher's own group directory
 * (cordon_cgroup_group_new(): <base>/cordon/g-<pid>-<start>, holding only
 * this launcher's instances), and each instance then only gets its map
 * entries (cordon_netpolicy_attach_entries()). A cgroup in the group
 * without entries -- the group itself, a sub-cgroup a connector made, an
 * instance in mode none -- is denied everything, exactly like an instance
 * policed by its own attachment with an empty allowlist.
 *
 * cordon_netpolicy_group_setup() creates the group and attaches the
 * programs to it, once per policy object; a failure is remembered (and
 * returned again) so the caller falls back to per-instance attachment.
 * The group belongs to np and goes with cordon_netpolicy_close(), after
 * every instance attachment. */
struct cordon_caps;
struct cordon_cgroup_group;

int cordon_netpolicy_group_setup(struct cordon_netpolicy_state *np, const struct cordon_caps *caps,
				 struct cordon_diag *reterr_diag);

/* The policed group, or NULL before a successful group_setup(). */
const struct cordon_cgroup_group *cordon_netpolicy_group(const struct cordon_netpolicy_state *np);

/* Writes the allowlist entries of an instance cgroup inside the policed
 * group, without attaching anything (the group's programs already run for
 * it). Same rules, errors and detach as cordon_netpolicy_attach(); -ENOENT
 * without a group. Write them before the instance runs connector code:
 * until then it is denied everything. */
int cordon_netpolicy_attach_entries(struct cordon_netpolicy_state *np, int cgroup_fd,
				    const struct cordon_net_rule *rules, size_t n_rules,
				    struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag);

/* True when np holds no attachment besides its group's (nothing would
 * lose its policy if np were closed now). */
bool cordon_netpolicy_is_idle(const struct cordon_netpolicy_state *np);

/* The cgroup id the attachment polices (what events carry). */
uint64_t cordon_netpolicy_attachment_cgroup_id(const struct cordon_netpolicy_attachment *a);

/* Destroys the attachment's links (the programs are detached when this
 * returns), then deletes every map entry of its cgroup, and frees a.
 * Returns 0 or the first -errno; a is freed either way. NULL is a no-op. */
int cordon_netpolicy_detach(struct cordon_netpolicy_state *np, struct cordon_netpolicy_attachment *a);

/* An fd that becomes readable (epoll/poll POLLIN) when denial events are
 * waiting. Owned by np. */
int cordon_netpolicy_events_fd(const struct cordon_netpolicy_state *np);

/* Called once per event; a negative return stops the poll and is returned. */
typedef int (*cordon_netpolicy_event_fn)(const struct cordon_netpolicy_event *ev, void *userdata);

/* Delivers every event waiting now, without blocking. Returns the number
 * delivered or -errno. */
int cordon_netpolicy_poll_events(struct cordon_netpolicy_state *np, cordon_netpolicy_event_fn fn, void *userdata);

/* Events dropped because the ring buffer was full (the denials themselves
 * still happened). */
uint64_t cordon_netpolicy_events_lost(const struct cordon_netpolicy_state *np);

/* Number of map entries currently held for cgroup_id (tests, health). */
int cordon_netpolicy_count_entries(const struct cordon_netpolicy_state *np, uint64_t cgroup_id);

/* Converts one profile rule into its trie key for cgroup_id: host bits
 * cleared, an IPv4-mapped IPv6 prefix (::ffff:0:0/96 or longer) becomes the
 * IPv4 prefix it is. Returns 0 and writes *ret_key, or -EINVAL (unknown
 * family, prefix too long). */
int cordon_netpolicy_rule_key(uint64_t cgroup_id, const struct cordon_net_rule *rule,
			      struct cordon_netpolicy_key *ret_key);

/* One line, no newline, JSON object:
 *   {"event":"net-deny","hook":"connect4","cgroup_id":123,"pid":45,"comm":"node",
 *    "family":"inet","addr":"127.0.0.3","port":8080,"protocol":"tcp",
 *    "mapped":false,"time":"2026-11-29T21:03:04.123456789Z","mono_ns":...}
 * comm is JSON-escaped. Returns the length written (excluding the NUL), or
 * -ENOBUFS when size is too small (CORDON_NETPOLICY_EVENT_LINE_MAX always
 * suffices), -ENOMEM. */
int cordon_netpolicy_event_format(const struct cordon_netpolicy_event *ev, char *buf, size_t size);

const char *cordon_netpolicy_hook_to_string(enum cordon_netpolicy_hook h);
