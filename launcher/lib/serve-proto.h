/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The protocol between cordond (unprivileged) and its launcher helper
 * (`cordon-launch --serve FD`, privileged), in the OpenBSD privsep style:
 * typed, length-checked messages over a SOCK_SEQPACKET socketpair, one
 * message per packet, fds by SCM_RIGHTS. The helper trusts nothing in a
 * request: PROFILES names, by id and SHA-256, the profiles cordond validated
 * and puts in force; the helper reads each from its own root-owned profile
 * directory, parses it itself and accepts the set only when every file's
 * bytes hash to what cordond named (all or nothing). A SPAWN names a
 * connector whose profile is in force at the helper (the copy it parsed,
 * never re-read), and every extra root is re-checked against that
 * profile's ceiling on disk, so a compromised broker cannot widen a
 * connector beyond a profile root wrote. CONFIG_READ carries nothing: the
 * helper answers with the bytes of the one configuration file it was
 * started with (`--config FILE` on its command line, set by cordond while
 * still privileged), read with the checks it applies to profiles; no
 * request can name another file.
 *
 * Wire format (all integers little-endian):
 *   header:  u32 magic "CDN1" | u16 type | u16 flags (0) | u32 request id | u32 payload length
 *   payload: a sequence of fields, each u32 length + bytes (strings carry no
 *            NUL; integers are 4- or 8-byte fields)
 * A message is at most CORDON_SERVE_MAX_MSG bytes; fields, roots and fds are
 * bounded below. Decoding rejects anything else with a diag naming the field. */

#include <stddef.h>
#include <stdint.h>

#include "../basic/diag.h"

#define CORDON_SERVE_MAGIC     0x314e4443u /* "CDN1" */
#define CORDON_SERVE_MAX_MSG   (256u * 1024)
#define CORDON_SERVE_MAX_STR   4096u
#define CORDON_SERVE_MAX_JSON  (192u * 1024)
#define CORDON_SERVE_MAX_ROOTS 32u
#define CORDON_SERVE_MAX_FDS   4u
/* Profiles one PROFILES message puts in force (each entry is about 100
 * bytes of JSON: well within CORDON_SERVE_MAX_JSON). */
#define CORDON_SERVE_MAX_PROFILES 1024u
/* The largest configuration file CONFIG_READ returns: cordond's config
 * loader's own bound (broker/daemon/daemon-config.c, CONFIG_MAX_BYTES). */
#define CORDON_SERVE_MAX_CONFIG (64u * 1024)

enum cordon_serve_type {
	CORDON_SERVE_PROBE = 1,	     /* broker -> helper: the capability report */
	CORDON_SERVE_PROBE_REPLY,    /* json */
	CORDON_SERVE_SPAWN,	     /* connector, tag, roots */
	CORDON_SERVE_SPAWN_REPLY,    /* status, diag, instance, json report; fds: stdin, stdout, stderr */
	CORDON_SERVE_KILL,	     /* instance */
	CORDON_SERVE_KILL_REPLY,     /* status */
	CORDON_SERVE_EXITED,	     /* helper -> broker, unsolicited: instance, wait status, json report */
	CORDON_SERVE_NET_DENIED,     /* helper -> broker, unsolicited: instance, json event */
	CORDON_SERVE_PROFILES,	     /* broker -> helper: json {"<id>": "<sha256 hex>", ...}, the whole set in force */
	CORDON_SERVE_PROFILES_REPLY, /* status, diag, json {"connector": id} naming the profile refused */
	CORDON_SERVE_CONFIG_READ,    /* broker -> helper: no payload; the bytes of the helper's --config file */
	CORDON_SERVE_CONFIG_READ_REPLY, /* status, diag, json: the file's text (no NUL, at most CORDON_SERVE_MAX_CONFIG)
					 */
	_CORDON_SERVE_TYPE_MAX,
};

struct cordon_serve_root {
	char host[CORDON_SERVE_MAX_STR];
	char sandbox[CORDON_SERVE_MAX_STR];
	uint32_t access; /* enum cordon_fs_access */
};

/* A message, small enough for the stack (the roots, up to 256 KiB, are not
 * inside it). In a decoded message strings are NUL-terminated copies, and
 * json and roots point to malloc'd buffers owned by the message
 * (cordon_serve_msg_clear() frees them). A message being sent only borrows
 * json, roots and fds: the sender keeps them and does not clear it. */
struct cordon_serve_msg {
	uint16_t type;
	uint32_t id;
	int32_t status;			 /* replies: 0 or -errno */
	uint32_t instance;		 /* SPAWN_REPLY, KILL, EXITED, NET_DENIED */
	int32_t wait_status;		 /* EXITED */
	char connector[64];		 /* SPAWN */
	char tag[64];			 /* SPAWN: instance tag for the cgroup name, [a-z0-9-] */
	struct cordon_serve_root *roots; /* SPAWN: n_roots of them; NULL when none */
	uint32_t n_roots;		 /* at most CORDON_SERVE_MAX_ROOTS */
	struct cordon_diag diag;	 /* replies with status < 0 */
	char *json; /* PROFILES, the replies (CONFIG_READ_REPLY: the file), EXITED, NET_DENIED; NULL otherwise */
	int fds[CORDON_SERVE_MAX_FDS];
	unsigned n_fds;
};

void cordon_serve_msg_init(struct cordon_serve_msg *m, uint16_t type, uint32_t id);

/* Frees the json and roots buffers and closes any fds still held. */
void cordon_serve_msg_clear(struct cordon_serve_msg *m);

/* Encodes m into buf (at most size bytes). Returns the length or -errno
 * (-EMSGSIZE when it does not fit, -EINVAL for an invalid field). */
int cordon_serve_encode(const struct cordon_serve_msg *m, uint8_t *buf, size_t size);

/* Decodes exactly len bytes into *ret (initialised by this call). Returns 0,
 * or -EBADMSG with the diag naming what is wrong. Never reads past len. */
int cordon_serve_decode(const uint8_t *buf, size_t len, struct cordon_serve_msg *ret, struct cordon_diag *diag);

/* Sends m (and m->fds[0..n_fds) by SCM_RIGHTS) as one packet. The fds stay
 * owned by the caller. Returns 0 or -errno. */
int cordon_serve_send(int sock, const struct cordon_serve_msg *m);

/* Receives one packet and decodes it; received fds land in ret->fds (owned
 * by the message). A packet that was truncated, carries more fds than the
 * type allows, or fails to decode is an error (-EBADMSG) and its fds are
 * closed. Returns 0, -ECONNRESET at EOF, or -errno. */
int cordon_serve_recv(int sock, struct cordon_serve_msg *ret, struct cordon_diag *diag);

const char *cordon_serve_type_name(uint16_t type);
