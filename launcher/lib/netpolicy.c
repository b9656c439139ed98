/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loader for bpf/netpolicy.bpf.c: allowlist → trie entries, attach/detach
 * per instance cgroup, denial events. See netpolicy.h for the contract. */

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include "../basic/cleanup.h"
#include "bpf-capture.h"
#include "cgroup.h"
#include "netpolicy.h"

#ifdef CORDON_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "netpolicy-types.h"
#include "netpolicy.skel.h"

_Static_assert(sizeof(struct cordon_netpolicy_key) == sizeof(struct cordon_np_key), "key layout");
_Static_assert(offsetof(struct cordon_netpolicy_key, family) == offsetof(struct cordon_np_key, family), "key layout");
_Static_assert(offsetof(struct cordon_netpolicy_key, cgroup_id) == offsetof(struct cordon_np_key, cgroup_id),
	       "key layout");
_Static_assert(offsetof(struct cordon_netpolicy_key, addr) == offsetof(struct cordon_np_key, addr), "key layout");
_Static_assert(CORDON_NETPOLICY_MAX_PORTS == CORDON_NP_MAX_PORTS, "port limit");
_Static_assert(CORDON_PROTO_TCP == CORDON_NP_TCP && CORDON_PROTO_UDP == CORDON_NP_UDP, "protocol bits");
_Static_assert(CORDON_NETPOLICY_HOOK_SOCK_CREATE == CORDON_NP_HOOK_SOCK_CREATE &&
		       CORDON_NETPOLICY_HOOK_INGRESS_LISTEN == CORDON_NP_HOOK_INGRESS_LISTEN &&
		       CORDON_NETPOLICY_HOOK_INGRESS_UDP == CORDON_NP_HOOK_INGRESS_UDP,
	       "hook numbers");
_Static_assert(sizeof(struct cordon_np_event) == 64, "event layout");
#endif

#define KEY_FIXED_BITS 96

static const char *const hook_names[] = {
	[CORDON_NETPOLICY_HOOK_CONNECT4] = "connect4",
	[CORDON_NETPOLICY_HOOK_CONNECT6] = "connect6",
	[CORDON_NETPOLICY_HOOK_SENDMSG4] = "sendmsg4",
	[CORDON_NETPOLICY_HOOK_SENDMSG6] = "sendmsg6",
	[CORDON_NETPOLICY_HOOK_BIND4] = "bind4",
	[CORDON_NETPOLICY_HOOK_BIND6] = "bind6",
	[CORDON_NETPOLICY_HOOK_SOCK_CREATE] = "sock_create",
	[CORDON_NETPOLICY_HOOK_INGRESS_LISTEN] = "ingress_listen",
	[CORDON_NETPOLICY_HOOK_INGRESS_UDP] = "ingress_udp",
};

const char *cordon_netpolicy_hook_to_string(enum cordon_netpolicy_hook h)
{
	if ((unsigned)h >= ELEMENTSOF(hook_names))
		return NULL;
	return hook_names[h];
}

static void mask_prefix(uint8_t addr[16], unsigned plen, unsigned total_bits)
{
	for (unsigned bit = plen; bit < total_bits; bit++)
		addr[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
}

int cordon_netpolicy_rule_key(uint64_t cgroup_id, const struct cordon_net_rule *rule,
			      struct cordon_netpolicy_key *ret_key)
{
	static const uint8_t mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct cordon_netpolicy_key key = { .cgroup_id = cgroup_id };
	unsigned plen = rule->prefix_len;

	switch (rule->family) {
	case AF_INET:
		if (plen > 32)
			return -EINVAL;
		key.family = AF_INET;
		memcpy(key.addr, rule->addr, 4);
		mask_prefix(key.addr, plen, 32);
		break;
	case AF_INET6:
		if (plen > 128)
			return -EINVAL;
		if (plen >= 96 && memcmp(rule->addr, mapped_prefix, sizeof(mapped_prefix)) == 0) {
			/* ::ffff:a.b.c.d/n is the IPv4 prefix a.b.c.d/(n-96): the
			 * programs judge mapped destinations as IPv4. */
			key.family = AF_INET;
			memcpy(key.addr, rule->addr + 12, 4);
			plen -= 96;
			mask_prefix(key.addr, plen, 32);
		} else {
			key.family = AF_INET6;
			memcpy(key.addr, rule->addr, 16);
			mask_prefix(key.addr, plen, 128);
		}
		break;
	default:
		return -EINVAL;
	}
	key.prefixlen = KEY_FIXED_BITS + plen;
	*ret_key = key;
	return 0;
}

/* ---- event formatting (no BPF needed) ---- */

static const char *family_name(int family)
{
	switch (family) {
	case AF_INET:
		return "inet";
	case AF_INET6:
		return "inet6";
	case AF_PACKET:
		return "packet";
	case AF_UNSPEC:
		return "unspec";
	default:
		return NULL;
	}
}

static const char *protocol_name(int protocol)
{
	switch (protocol) {
	case IPPROTO_IP:
		return "ip";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_RAW:
		return "raw";
	case 262:
		return "mptcp";
	default:
		return NULL;
	}
}

static const char *sock_type_name(int type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_RAW:
		return "raw";
	case SOCK_SEQPACKET:
		return "seqpacket";
	case SOCK_PACKET:
		return "packet";
	default:
		return NULL;
	}
}

/* Name for a known value, else the number as a string: each field keeps
 * one JSON type. */
static json_t *name_or_number(const char *name, int v)
{
	char num[16];

	if (name)
		return json_string(name);
	(void)snprintf(num, sizeof(num), "%d", v);
	return json_string(num);
}

static int format_time(uint64_t mono_ns, char *buf, size_t size)
{
	struct timespec now_real, now_mono;
	struct tm tm;
	int64_t real_ns, delta;
	time_t sec;

	if (clock_gettime(CLOCK_REALTIME, &now_real) < 0 || clock_gettime(CLOCK_MONOTONIC, &now_mono) < 0)
		return -errno;
	/* The event carries the monotonic clock (all BPF has); convert with
	 * the current offset between the two clocks. */
	delta = (int64_t)now_mono.tv_sec * 1000000000 + now_mono.tv_nsec - (int64_t)mono_ns;
	real_ns = (int64_t)now_real.tv_sec * 1000000000 + now_real.tv_nsec - delta;
	sec = (time_t)(real_ns / 1000000000);
	if (!gmtime_r(&sec, &tm))
		return -EOVERFLOW;
	if (strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return -ENOBUFS;
	size_t n = strlen(buf);
	if ((size_t)snprintf(buf + n, size - n, ".%09lldZ", (long long)(real_ns % 1000000000)) >= size - n)
		return -ENOBUFS;
	return 0;
}

int cordon_netpolicy_event_format(const struct cordon_netpolicy_event *ev, char *buf, size_t size)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_free_ char *s = NULL;
	char addr[INET6_ADDRSTRLEN] = "", comm[sizeof(ev->comm)], when[64];
	const char *hook = cordon_netpolicy_hook_to_string(ev->hook);
	size_t len;
	int r;

	/* comm is chosen by the denied process: keep printable ASCII only, so
	 * the line stays one line and valid UTF-8 whatever it holds. */
	for (size_t i = 0; i < sizeof(comm); i++) {
		unsigned char c = (unsigned char)ev->comm[i];
		comm[i] = c == 0 ? 0 : (c >= 0x20 && c < 0x7f ? (char)c : '?');
		if (c == 0)
			break;
	}
	comm[sizeof(comm) - 1] = 0;

	if (ev->family == AF_INET || ev->family == AF_INET6)
		if (!inet_ntop(ev->family, ev->addr, addr, sizeof(addr)))
			return -errno;
	r = format_time(ev->time_ns, when, sizeof(when));
	if (r < 0)
		return r;

	o = json_object();
	if (!o)
		return -ENOMEM;
	if (json_object_set_new(o, "event", json_string("net-deny")) < 0 ||
	    json_object_set_new(o, "hook", name_or_number(hook, (int)ev->hook)) < 0 ||
	    json_object_set_new(o, "cgroup_id", json_integer((json_int_t)ev->cgroup_id)) < 0 ||
	    json_object_set_new(o, "pid", json_integer(ev->pid)) < 0 ||
	    json_object_set_new(o, "comm", json_string(comm)) < 0 ||
	    json_object_set_new(o, "family", name_or_number(family_name(ev->family), ev->family)) < 0 ||
	    json_object_set_new(o, "addr", json_string(addr)) < 0 ||
	    json_object_set_new(o, "port", json_integer(ev->port)) < 0 ||
	    json_object_set_new(o, "protocol", name_or_number(protocol_name(ev->protocol), ev->protocol)) < 0 ||
	    json_object_set_new(o, "sock_type", name_or_number(sock_type_name(ev->sock_type), ev->sock_type)) < 0 ||
	    json_object_set_new(o, "mapped", json_boolean(ev->mapped)) < 0 ||
	    json_object_set_new(o, "time", json_string(when)) < 0 ||
	    json_object_set_new(o, "mono_ns", json_integer((json_int_t)ev->time_ns)) < 0)
		return -ENOMEM;

	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	if (len >= size)
		return -ENOBUFS;
	memcpy(buf, s, len + 1);
	return (int)len;
}

#ifdef CORDON_HAVE_BPF

/* ---- allowlist → trie entries ---- */

struct entry {
	struct cordon_np_key key;
	struct cordon_np_ports own;    /* pairs from rules with exactly this prefix */
	struct cordon_np_ports merged; /* own + every containing prefix's pairs */
};

static int add_pair(struct cordon_np_ports *p, uint16_t port, uint8_t protocols)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->ports[i].port == port) {
			p->ports[i].protocols |= protocols;
			return 0;
		}
	if (p->n >= CORDON_NP_MAX_PORTS)
		return -E2BIG;
	p->ports[p->n++] = (struct cordon_np_port){ .port = port, .protocols = protocols };
	return 0;
}

/* True when prefix a (shorter or equal) contains prefix b. */
static bool prefix_contains(const struct cordon_np_key *a, const struct cordon_np_key *b)
{
	unsigned abits = a->prefixlen - KEY_FIXED_BITS;

	if (a->family != b->family || a->prefixlen > b->prefixlen)
		return false;
	for (unsigned bit = 0; bit < abits; bit++) {
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));
		if ((a->addr[bit / 8] & m) != (b->addr[bit / 8] & m))
			return false;
	}
	return true;
}

static int cmp_port(const void *a, const void *b)
{
	const struct cordon_np_port *x = a, *y = b;
	return (int)x->port - (int)y->port;
}

static int build_entries(uint64_t cgid, const struct cordon_net_rule *rules, size_t n_rules, struct entry **ret,
			 size_t *ret_n, struct cordon_diag *d)
{
	_cleanup_free_ struct entry *e = NULL;
	size_t n = 0;
	int r;

	if (n_rules > CORDON_NETPOLICY_MAX_RULES)
		return cordon_diag_set(d, E2BIG, "netpolicy", "%zu network rules, at most %d per connector", n_rules,
				       CORDON_NETPOLICY_MAX_RULES);
	if (n_rules > 0) {
		e = calloc(n_rules, sizeof(*e));
		if (!e)
			return -ENOMEM;
	}

	for (size_t i = 0; i < n_rules; i++) {
		const struct cordon_net_rule *rule = &rules[i];
		struct cordon_netpolicy_key k;
		unsigned protocols = rule->protocols ? rule->protocols : CORDON_PROTO_TCP; /* documented default */
		size_t j;

		r = cordon_netpolicy_rule_key(cgid, rule, &k);
		if (r < 0)
			return cordon_diag_set(d, EINVAL, "netpolicy", "network rule %zu: bad family %d or prefix /%u",
					       i, rule->family, rule->prefix_len);
		if (protocols & ~(unsigned)CORDON_PROTO_ANY)
			return cordon_diag_set(d, EINVAL, "netpolicy", "network rule %zu: unknown protocol bits 0x%x",
					       i, protocols);
		if (rule->n_ports == 0 || !rule->ports)
			return cordon_diag_set(d, EINVAL, "netpolicy", "network rule %zu: no ports", i);

		for (j = 0; j < n; j++)
			if (memcmp(&e[j].key, &k, sizeof(k)) == 0)
				break;
		if (j == n)
			memcpy(&e[n++].key, &k, sizeof(k));
		for (size_t p = 0; p < rule->n_ports; p++) {
			if (rule->ports[p] == 0)
				return cordon_diag_set(d, EINVAL, "netpolicy", "network rule %zu: port 0", i);
			if (add_pair(&e[j].own, rule->ports[p], (uint8_t)protocols) < 0)
				return cordon_diag_set(d, E2BIG, "netpolicy",
						       "network rule %zu: more than %d ports for one prefix", i,
						       CORDON_NP_MAX_PORTS);
		}
	}

	/* The trie answers with the longest matching prefix only, but the
	 * allowlist is a union: fold every containing prefix's pairs into each
	 * entry so that answer is complete. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			if (!prefix_contains(&e[j].key, &e[i].key))
				continue;
			for (uint32_t p = 0; p < e[j].own.n; p++)
				if (add_pair(&e[i].merged, e[j].own.ports[p].port, e[j].own.ports[p].protocols) < 0)
					return cordon_diag_set(d, E2BIG, "netpolicy",
							       "more than %d port/protocol pairs reach one prefix",
							       CORDON_NP_MAX_PORTS);
		}
		qsort(e[i].merged.ports, e[i].merged.n, sizeof(e[i].merged.ports[0]), cmp_port);
	}

	*ret = TAKE_PTR(e);
	*ret_n = n;
	return 0;
}

/* ---- loaded object ---- */

enum { N_PROGS = 8 };

struct cordon_netpolicy_attachment {
	uint64_t cgroup_id;
	struct cordon_np_key *keys; /* the entries written, deleted exactly at detach */
	size_t n_keys;
	struct bpf_link *links[N_PROGS];
	struct cordon_netpolicy_attachment *next;
};

struct cordon_netpolicy_state {
	struct cordon_netpolicy *skel;
	struct ring_buffer *rb;
	struct cordon_netpolicy_attachment *attachments;
	struct cordon_cgroup_group *group;	       /* the launcher's group, policed as a whole */
	struct cordon_netpolicy_attachment *group_att; /* its links (also in attachments) */
	int group_error;			       /* why the group could not be set up, once */
	cordon_netpolicy_event_fn fn;		       /* valid during poll_events only */
	void *userdata;
};

DEFINE_CLEANUP(skel_destroyp, struct cordon_netpolicy *, cordon_netpolicy__destroy)

static struct bpf_program *prog_at(struct cordon_netpolicy *skel, int i)
{
	struct bpf_program *progs[N_PROGS] = {
		skel->progs.cordon_connect4,	skel->progs.cordon_connect6, skel->progs.cordon_sendmsg4,
		skel->progs.cordon_sendmsg6,	skel->progs.cordon_bind4,    skel->progs.cordon_bind6,
		skel->progs.cordon_sock_create, skel->progs.cordon_ingress,
	};
	return progs[i];
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct cordon_netpolicy_state *np = ctx;
	const struct cordon_np_event *raw = data;
	struct cordon_netpolicy_event ev = {};

	if (size < sizeof(*raw))
		return 0; /* not ours; never happens with this program */
	ev.cgroup_id = raw->cgroup_id;
	ev.time_ns = raw->time_ns;
	ev.pid = raw->pid;
	ev.family = raw->family;
	memcpy(ev.addr, raw->addr, sizeof(ev.addr));
	ev.port = raw->port;
	ev.protocol = raw->protocol;
	ev.sock_type = raw->sock_type;
	ev.mapped = raw->flags & CORDON_NP_EV_MAPPED;
	ev.hook = (enum cordon_netpolicy_hook)raw->hook;
	memcpy(ev.comm, raw->comm, sizeof(ev.comm));
	ev.comm[sizeof(ev.comm) - 1] = 0;
	return np->fn ? np->fn(&ev, np->userdata) : 0;
}

int cordon_netpolicy_open(struct cordon_netpolicy_state **ret, struct cordon_diag *reterr_diag)
{
	_cleanup_(skel_destroyp) struct cordon_netpolicy *skel = NULL;
	_cleanup_free_ struct cordon_netpolicy_state *np = NULL;
	libbpf_print_fn_t old;
	int r;

	np = calloc(1, sizeof(*np));
	if (!np)
		return -ENOMEM;

	old = cordon_bpf_capture_begin(false);
	skel = cordon_netpolicy__open();
	r = skel ? cordon_netpolicy__load(skel) : -errno;
	cordon_bpf_capture_end(old);
	if (!skel)
		return cordon_diag_set(reterr_diag, -r, "netpolicy", "opening the BPF object: %s", strerror(-r));
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "netpolicy", "loading the BPF programs: %s%s%s", strerror(-r),
				       cordon_bpf_captured()[0] ? ": " : "", cordon_bpf_captured());

	np->rb = ring_buffer__new(bpf_map__fd(skel->maps.np_events), on_event, np, NULL);
	if (!np->rb) {
		r = negative_errno();
		return cordon_diag_set(reterr_diag, -r, "netpolicy", "ring buffer: %s", strerror(-r));
	}
	np->skel = TAKE_PTR(skel);
	*ret = TAKE_PTR(np);
	return 0;
}

/* Deletes every entry of cgid. Keys are collected first: deleting while
 * walking would restart the walk. */
static int delete_entries(struct cordon_netpolicy_state *np, uint64_t cgid)
{
	int fd = bpf_map__fd(np->skel->maps.np_allow);
	_cleanup_free_ struct cordon_np_key *doomed = NULL;
	struct cordon_np_key key, next;
	size_t n = 0;
	int r = 0;

	doomed = calloc(CORDON_NP_MAX_ENTRIES, sizeof(*doomed));
	if (!doomed)
		return -ENOMEM;
	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		if (next.cgroup_id == cgid && n < CORDON_NP_MAX_ENTRIES)
			doomed[n++] = next;
		key = next;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, &doomed[i]) < 0 && errno != ENOENT && r == 0)
			r = -errno;
	return r;
}

/* Deletes exactly these keys; a key already gone is fine. */
static int delete_keys(struct cordon_netpolicy_state *np, const struct cordon_np_key *keys, size_t n)
{
	int fd = bpf_map__fd(np->skel->maps.np_allow), r = 0;

	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, &keys[i]) < 0 && errno != ENOENT && r == 0)
			r = -errno;
	return r;
}

int cordon_netpolicy_count_entries(const struct cordon_netpolicy_state *np, uint64_t cgroup_id)
{
	int fd = bpf_map__fd(np->skel->maps.np_allow);
	struct cordon_np_key key, next;
	int n = 0;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		if (next.cgroup_id == cgroup_id)
			n++;
		key = next;
	}
	return n;
}

static void destroy_links(struct cordon_netpolicy_attachment *a, int *first_error)
{
	for (int i = 0; i < N_PROGS; i++) {
		if (!a->links[i])
			continue;
		/* Detach explicitly: the program is off the cgroup when this
		 * returns, whoever else may still hold the link. */
		if (bpf_link__detach(a->links[i]) < 0 && first_error && *first_error == 0)
			*first_error = negative_errno();
		(void)bpf_link__destroy(a->links[i]);
		a->links[i] = NULL;
	}
}

static int cgroup_id_of(int cgroup_fd, uint64_t *ret)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(cgroup_fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (fstatfs(cgroup_fd, &sfs) < 0)
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	/* On cgroup2 the directory's inode number is the cgroup id that
	 * bpf_get_current_cgroup_id() returns. */
	*ret = st.st_ino;
	return 0;
}

static int attach_impl(struct cordon_netpolicy_state *np, int cgroup_fd, const struct cordon_net_rule *rules,
		       size_t n_rules, bool links, struct cordon_netpolicy_attachment **ret,
		       struct cordon_diag *reterr_diag)
{
	_cleanup_free_ struct cordon_netpolicy_attachment *a = NULL;
	_cleanup_free_ struct entry *e = NULL;
	_cleanup_free_ struct cordon_np_key *keys = NULL;
	libbpf_print_fn_t old;
	size_t n = 0;
	uint64_t cgid = 0;
	int fd, r;

	if (!np || cgroup_fd < 0 || (n_rules > 0 && !rules))
		return -EINVAL;
	r = cgroup_id_of(cgroup_fd, &cgid);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "netpolicy", "not a cgroup2 directory: %s", strerror(-r));
	for (struct cordon_netpolicy_attachment *i = np->attachments; i; i = i->next)
		if (i->cgroup_id == cgid)
			return cordon_diag_set(reterr_diag, EEXIST, "netpolicy", "cgroup %llu is already policed",
					       (unsigned long long)cgid);

	r = build_entries(cgid, rules, n_rules, &e, &n, reterr_diag);
	if (r < 0)
		return r;

	a = calloc(1, sizeof(*a));
	keys = n ? calloc(n, sizeof(*keys)) : NULL;
	if (!a || (n && !keys))
		return -ENOMEM;
	a->cgroup_id = cgid;
	for (size_t i = 0; i < n; i++)
		keys[i] = e[i].key;

	/* Entries first, programs second: the instance is never policed by
	 * an incomplete allowlist (a missing entry would deny, not allow, but
	 * a half-filled list would deny spuriously). */
	/* No stale entry of this cgroup can be in the map: the maps are this
	 * object's own, cgroup ids are never reused within a boot, and every
	 * attachment removes exactly the keys it wrote (scanning the whole
	 * map instead would cost a syscall per entry of every instance). */
	fd = bpf_map__fd(np->skel->maps.np_allow);
	for (size_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &e[i].key, &e[i].merged, BPF_ANY) < 0) {
			r = negative_errno();
			(void)delete_keys(np, keys, i);
			return cordon_diag_set(reterr_diag, -r, "netpolicy", "writing allowlist entry %zu: %s", i,
					       strerror(-r));
		}

	old = cordon_bpf_capture_begin(false); /* libbpf would print attach failures */
	for (int i = 0; links && i < N_PROGS; i++) {
		struct bpf_program *prog = prog_at(np->skel, i);

		a->links[i] = bpf_program__attach_cgroup(prog, cgroup_fd);
		if (!a->links[i]) {
			r = negative_errno();
			cordon_bpf_capture_end(old);
			destroy_links(a, NULL);
			(void)delete_keys(np, keys, n);
			return cordon_diag_set(reterr_diag, -r, "netpolicy", "attaching %s to cgroup %llu: %s",
					       bpf_program__section_name(prog), (unsigned long long)cgid, strerror(-r));
		}
	}
	cordon_bpf_capture_end(old);

	a->keys = TAKE_PTR(keys);
	a->n_keys = n;
	a->next = np->attachments;
	np->attachments = a;
	*ret = TAKE_PTR(a);
	return 0;
}

int cordon_netpolicy_attach(struct cordon_netpolicy_state *np, int cgroup_fd, const struct cordon_net_rule *rules,
			    size_t n_rules, struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag)
{
	return attach_impl(np, cgroup_fd, rules, n_rules, true, ret, reterr_diag);
}

int cordon_netpolicy_attach_entries(struct cordon_netpolicy_state *np, int cgroup_fd,
				    const struct cordon_net_rule *rules, size_t n_rules,
				    struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag)
{
	uint64_t cgid;
	int r;

	if (!np || !np->group)
		return cordon_diag_set(reterr_diag, ENOENT, "netpolicy", "no policed group");
	r = cgroup_id_of(cgroup_fd, &cgid);
	if (r < 0)
		return cordon_diag_set(reterr_diag, -r, "netpolicy", "not a cgroup2 directory: %s", strerror(-r));
	if (cgid == np->group_att->cgroup_id)
		return cordon_diag_set(reterr_diag, EINVAL, "netpolicy", "the group itself takes no entries");
	return attach_impl(np, cgroup_fd, rules, n_rules, false, ret, reterr_diag);
}

int cordon_netpolicy_group_setup(struct cordon_netpolicy_state *np, const struct cordon_caps *caps,
				 struct cordon_diag *reterr_diag)
{
	_cleanup_(cordon_cgroup_group_freep) struct cordon_cgroup_group *g = NULL;
	struct cordon_netpolicy_attachment *a = NULL;
	int r;

	if (!np || !caps)
		return -EINVAL;
	if (np->group)
		return 0;
	if (np->group_error)
		return cordon_diag_set(reterr_diag, np->group_error, "netpolicy", "no policed group (failed before)");
	r = cordon_cgroup_group_new(caps, &g, reterr_diag);
	if (r >= 0)
		r = attach_impl(np, cordon_cgroup_group_fd(g), NULL, 0, true, &a, reterr_diag);
	if (r < 0) {
		np->group_error = -r;
		return r;
	}
	np->group = TAKE_PTR(g);
	np->group_att = a;
	return 0;
}

const struct cordon_cgroup_group *cordon_netpolicy_group(const struct cordon_netpolicy_state *np)
{
	return np ? np->group : NULL;
}

bool cordon_netpolicy_is_idle(const struct cordon_netpolicy_state *np)
{
	return !np || !np->attachments || (np->attachments == np->group_att && !np->group_att->next);
}

uint64_t cordon_netpolicy_attachment_cgroup_id(const struct cordon_netpolicy_attachment *a)
{
	return a->cgroup_id;
}

int cordon_netpolicy_detach(struct cordon_netpolicy_state *np, struct cordon_netpolicy_attachment *a)
{
	int r = 0, k;

	if (!a)
		return 0;
	for (struct cordon_netpolicy_attachment **p = &np->attachments; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			break;
		}
	/* Programs off first, entries second: never a moment where the
	 * programs run against a partly cleared allowlist. */
	destroy_links(a, &r);
	k = delete_keys(np, a->keys, a->n_keys);
	if (k < 0)
		k = delete_entries(np, a->cgroup_id); /* be thorough when exactness failed */
	if (k < 0 && r == 0)
		r = k;
	free(a->keys);
	free(a);
	return r;
}

void cordon_netpolicy_close(struct cordon_netpolicy_state *np)
{
	if (!np)
		return;
	/* Instances first, the group's links last: programs stay on the group
	 * while anything below it may still run. */
	while (np->attachments && np->attachments != np->group_att)
		(void)cordon_netpolicy_detach(np, np->attachments);
	while (np->attachments && np->attachments->next)
		(void)cordon_netpolicy_detach(np, np->attachments->next);
	if (np->group_att)
		(void)cordon_netpolicy_detach(np, np->group_att);
	cordon_cgroup_group_free(np->group);
	ring_buffer__free(np->rb);
	cordon_netpolicy__destroy(np->skel);
	free(np);
}

int cordon_netpolicy_events_fd(const struct cordon_netpolicy_state *np)
{
	return ring_buffer__epoll_fd(np->rb);
}

int cordon_netpolicy_poll_events(struct cordon_netpolicy_state *np, cordon_netpolicy_event_fn fn, void *userdata)
{
	int r;

	np->fn = fn;
	np->userdata = userdata;
	r = ring_buffer__consume(np->rb);
	np->fn = NULL;
	np->userdata = NULL;
	return r;
}

uint64_t cordon_netpolicy_events_lost(const struct cordon_netpolicy_state *np)
{
	_cleanup_free_ uint64_t *v = NULL;
	int ncpu = libbpf_num_possible_cpus();
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(np->skel->maps.np_lost), &zero, v) < 0)
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

#else /* !CORDON_HAVE_BPF */

int cordon_netpolicy_attach_entries(struct cordon_netpolicy_state *np, int cgroup_fd,
				    const struct cordon_net_rule *rules, size_t n_rules,
				    struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "netpolicy", "built without BPF support (CORDON_BPF=OFF)");
}

int cordon_netpolicy_group_setup(struct cordon_netpolicy_state *np, const struct cordon_caps *caps,
				 struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "netpolicy", "built without BPF support (CORDON_BPF=OFF)");
}

const struct cordon_cgroup_group *cordon_netpolicy_group(const struct cordon_netpolicy_state *np)
{
	return NULL;
}

bool cordon_netpolicy_is_idle(const struct cordon_netpolicy_state *np)
{
	return true;
}

int cordon_netpolicy_open(struct cordon_netpolicy_state **ret, struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "netpolicy", "built without BPF support (CORDON_BPF=OFF)");
}

void cordon_netpolicy_close(struct cordon_netpolicy_state *np)
{
}

int cordon_netpolicy_attach(struct cordon_netpolicy_state *np, int cgroup_fd, const struct cordon_net_rule *rules,
			    size_t n_rules, struct cordon_netpolicy_attachment **ret, struct cordon_diag *reterr_diag)
{
	return cordon_diag_set(reterr_diag, EOPNOTSUPP, "netpolicy", "built without BPF support (CORDON_BPF=OFF)");
}

uint64_t cordon_netpolicy_attachment_cgroup_id(const struct cordon_netpolicy_attachment *a)
{
	return 0;
}

int cordon_netpolicy_detach(struct cordon_netpolicy_state *np, struct cordon_netpolicy_attachment *a)
{
	return a ? -EOPNOTSUPP : 0;
}

int cordon_netpolicy_events_fd(const struct cordon_netpolicy_state *np)
{
	return -EOPNOTSUPP;
}

int cordon_netpolicy_poll_events(struct cordon_netpolicy_state *np, cordon_netpolicy_event_fn fn, void *userdata)
{
	return -EOPNOTSUPP;
}

uint64_t cordon_netpolicy_events_lost(const struct cordon_netpolicy_state *np)
{
	return 0;
}

int cordon_netpolicy_count_entries(const struct cordon_netpolicy_state *np, uint64_t cgroup_id)
{
	return -EOPNOTSUPP;
}

#endif
