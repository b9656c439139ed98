/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pass 3 of the profile loader (profile.c): sandbox.network — the mode, and
 * for an allowlist its rules (CIDR prefixes, host names, ports). */
#include "profile.h"
#include "profile-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"

/* "a.b.c.d/n" or "x:y::/n"; the prefix length is required and the host bits
 * must be zero. Returns 0, -EINVAL when malformed, or -EDOM when host bits
 * are set (then `fixed` holds the network the operator probably meant). */
static int parse_cidr(const char *s, struct cordon_net_rule *rule, char *fixed, size_t fixed_size)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	uint8_t bytes[16] = {};
	size_t alen;
	unsigned prefix = 0, max, bits;
	int family;

	if (!slash)
		return -EINVAL;
	alen = (size_t)(slash - s);
	if (alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, addr, bytes) != 1)
		return -EINVAL;
	max = family == AF_INET ? 32 : 128;
	/* Decimal, no sign, no leading zeros: "/020" is not "/20". */
	slash++;
	if (slash[0] < '0' || slash[0] > '9' || (slash[0] == '0' && slash[1]))
		return -EINVAL;
	for (const char *q = slash; *q; q++) {
		if (*q < '0' || *q > '9' || q - slash >= 3)
			return -EINVAL;
		prefix = prefix * 10 + (unsigned)(*q - '0');
	}
	if (prefix > max)
		return -EINVAL;

	bits = 0;
	for (unsigned i = prefix; i < max; i++)
		bits |= bytes[i / 8] & (0x80u >> (i % 8));
	if (bits) {
		uint8_t net[16];

		memcpy(net, bytes, sizeof(net));
		for (unsigned i = prefix; i < max; i++)
			net[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
		if (!inet_ntop(family, net, addr, sizeof(addr)))
			return -EINVAL;
		snprintf(fixed, fixed_size, "%s/%u", addr, prefix);
		return -EDOM;
	}
	rule->family = family;
	memcpy(rule->addr, bytes, sizeof(rule->addr));
	rule->prefix_len = (uint8_t)prefix;
	return 0;
}

static int parse_ports(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_net_rule *rule)
{
	int r, acc = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SEQ);
	if (r < 0)
		return r;
	if (n->n_items == 0)
		return cordon_yaml_err(c, n, "must list at least 1 port");
	if (n->n_items > 65535)
		return cordon_yaml_err(c, n, "must list at most 65535 ports");
	rule->ports = calloc(n->n_items, sizeof(*rule->ports));
	if (!rule->ports)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	rule->n_ports = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		size_t m = cordon_yaml_push_index(c, i);
		uint64_t port;

		if (cordon_yaml_get_uint(c, n->items[i], 1, 65535, &port) < 0)
			acc = -EINVAL;
		else
			rule->ports[i] = (uint16_t)port;
		cordon_yaml_pop(c, m);
	}
	if (acc == 0) {
		r = cordon_yaml_check_unique(c, n, 1);
		if (r < 0)
			acc = r;
	}
	return acc;
}

int profile_parse_network(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "mode", "allow" };
	static const char *const modes[] = { [CORDON_NET_NONE] = "none", [CORDON_NET_ALLOWLIST] = "allowlist" };
	static const char *const rule_keys[] = { "cidr", "ports", "protocol" };
	static const char *const protos[] = { "tcp", "udp", "any" };
	static const unsigned proto_bits[] = { CORDON_PROTO_TCP, CORDON_PROTO_UDP, CORDON_PROTO_ANY };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	p->net_mode = CORDON_NET_NONE;
	if (v[0]) {
		size_t m = cordon_yaml_push_key(c, "mode");

		if (v[0]->type == CORDON_YAML_SCALAR && strcmp(v[0]->value, "unrestricted") == 0)
			/* There is deliberately no way to say "any destination". */
			acc = cordon_yaml_err(
				c, v[0],
				"\"unrestricted\" does not exist: use none, or allowlist with the destinations the "
				"connector needs");
		else if (cordon_yaml_get_enum(c, v[0], modes, ELEMENTSOF(modes), &u) < 0)
			acc = -EINVAL;
		else
			p->net_mode = (enum cordon_net_mode)u;
		cordon_yaml_pop(c, m);
	}
	if (v[1]) {
		size_t m = cordon_yaml_push_key(c, "allow");

		r = cordon_yaml_expect(c, v[1], CORDON_YAML_SEQ);
		if (r >= 0 && v[1]->n_items > MAX_LIST)
			r = cordon_yaml_err(c, v[1], "must list at most %d entries", MAX_LIST);
		if (r >= 0 && v[1]->n_items > 0) {
			p->net_allow = calloc(v[1]->n_items, sizeof(*p->net_allow));
			if (!p->net_allow)
				r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r < 0) {
			acc = r;
			cordon_yaml_pop(c, m);
			goto mode_check;
		}
		p->n_net_allow = v[1]->n_items;
		for (size_t i = 0; i < v[1]->n_items; i++) {
			const struct cordon_yaml_node *e = v[1]->items[i], *rv[ELEMENTSOF(rule_keys)];
			struct cordon_net_rule *rule = &p->net_allow[i];
			size_t mi = cordon_yaml_push_index(c, i);

			rule->protocols = CORDON_PROTO_TCP;
			if (cordon_yaml_expect(c, e, CORDON_YAML_MAP) < 0) {
				acc = -EINVAL;
				cordon_yaml_pop(c, mi);
				continue;
			}
			if (cordon_yaml_map_fields(c, e, rule_keys, ELEMENTSOF(rule_keys), rv) < 0)
				acc = -EINVAL;
			if (!rv[0])
				acc = cordon_yaml_missing(c, e, "cidr");
			else {
				size_t mc = cordon_yaml_push_key(c, "cidr");
				char fixed[INET6_ADDRSTRLEN + 8];

				if (cordon_yaml_expect(c, rv[0], CORDON_YAML_SCALAR) < 0)
					acc = -EINVAL;
				else {
					r = parse_cidr(rv[0]->value, rule, fixed, sizeof(fixed));
					if (r == -EDOM)
						acc = cordon_yaml_err(c, rv[0],
								      "host bits are set in %s (the network is %s)",
								      cordon_yaml_quote(rv[0]).s, fixed);
					else if (r < 0)
						acc = cordon_yaml_err(
							c, rv[0],
							"must be an IPv4 or IPv6 network with a prefix length, like "
							"192.0.2.0/24 or 2001:db8::/32 (got %s)",
							cordon_yaml_quote(rv[0]).s);
				}
				cordon_yaml_pop(c, mc);
			}
			if (!rv[1])
				acc = cordon_yaml_missing(c, e, "ports");
			else
				CORDON_YAML_WITH_KEY(c, "ports", &acc, parse_ports(c, rv[1], rule));
			if (rv[2]) {
				r = 0;
				CORDON_YAML_WITH_KEY(c, "protocol", &r,
						     cordon_yaml_get_enum(c, rv[2], protos, ELEMENTSOF(protos), &u));
				if (r < 0)
					acc = r;
				else
					rule->protocols = proto_bits[u];
			}
			cordon_yaml_pop(c, mi);
		}
		cordon_yaml_pop(c, m);
	}
mode_check:
	if (p->net_mode == CORDON_NET_NONE && v[1] && v[1]->type == CORDON_YAML_SEQ && v[1]->n_items > 0) {
		size_t m = cordon_yaml_push_key(c, "allow");

		acc = cordon_yaml_err(c, v[1],
				      "mode none allows no destinations (set mode: allowlist or remove allow)");
		cordon_yaml_pop(c, m);
	}
	if (p->net_mode == CORDON_NET_ALLOWLIST && (!v[1] || (v[1]->type == CORDON_YAML_SEQ && v[1]->n_items == 0))) {
		size_t m = cordon_yaml_push_key(c, "mode");

		acc = cordon_yaml_err(c, v[0],
				      "an allowlist needs at least one allow entry (use mode: none for no network)");
		cordon_yaml_pop(c, m);
	}
	return acc;
}
