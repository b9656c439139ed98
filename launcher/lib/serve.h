/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The launcher helper's server: answers cordond's serve-proto requests
 * (serve-proto.h) on one SOCK_SEQPACKET socket, re-checking every spawn
 * against the profile on disk, and reports instance exits and egress
 * denials. `cordon-launch --serve` sets the process up (PDEATHSIG, signals,
 * the profiles directory, the start-up probe, the egress policy) and runs
 * it; tests drive cordon_server_handle_one() over a socketpair.
 *
 * The server never logs: lines for the helper's log go to opts->log. */

#include <sys/stat.h>

#include "../basic/diag.h"
#include "../basic/log.h"
#include "netpolicy.h"
#include "probe.h"

struct cordon_server;

struct cordon_server_options {
	int sock;		  /* SOCK_SEQPACKET to cordond; not closed by the server */
	int profiles_fd;	  /* O_DIRECTORY of the profiles directory; not closed */
	const char *profiles_dir; /* its path, for diags */
	/* The one configuration file CONFIG_READ returns (absolute; NULL:
	 * CONFIG_READ is refused). Fixed for the server's life: no request
	 * names a file. Borrowed. */
	const char *config_path;
	/* The start-up probe: the answer to the first PROBE (cordond's
	 * handshake) and the capabilities every spawn is planned with;
	 * later PROBEs probe the kernel again. Copied. */
	const struct cordon_caps *caps;
	struct cordon_netpolicy_state *netpolicy; /* every instance's egress policy; NULL: none; not closed */
	char **env;				  /* the environment connectors' variables come from */
	int sigfd;				  /* a signalfd that stops cordon_server_run(); -EBADF: none */
	/* Lines the helper logs (a failed send, a malformed request, a
	 * signal); NULL drops them. error is a -errno or 0. */
	void (*log)(enum log_level level, int error, const char *message, void *userdata);
	void *userdata;
};

/* Returns 0 and writes *ret, -EINVAL for a missing option, or -ENOMEM. */
int cordon_server_new(const struct cordon_server_options *opts, struct cordon_server **ret);

/* Kills every instance still running and frees s. NULL is a no-op. */
void cordon_server_free(struct cordon_server *s);

/* Handles one packet waiting on the socket (revents as poll() returned
 * them): a request is answered, a malformed one gets -EBADMSG (or nothing
 * when not even its header names a request). Returns 0 to keep serving,
 * or -errno when cordond is gone (-ECONNRESET at EOF, or a broken socket). */
int cordon_server_handle_one(struct cordon_server *s, short revents);

/* Serves until cordond closes the socket or sigfd fires, then kills every
 * instance. Returns 0 on that normal end, else -errno. */
int cordon_server_run(struct cordon_server *s);

/* Reads the configuration file at path (absolute) as CONFIG_READ does: its
 * directory and the file must pass cordon_server_check_owner_mode(), the
 * file is opened without following a symlink, must be a regular file of at
 * most CORDON_SERVE_MAX_CONFIG bytes and hold no NUL byte. Returns 0 and
 * writes *ret (malloc'd, NUL-terminated) and *ret_len, or -errno with the
 * diag (step "config") naming the file and the rule it broke. */
int cordon_server_read_config(const char *path, char **ret, size_t *ret_len, struct cordon_diag *d);

/* A profile (or its directory) must be writable only by its owner, and
 * that owner must be root when the helper runs as root. Returns 0, or
 * -EPERM with the diag naming what (`what` and `path`) is wrong. */
int cordon_server_check_owner_mode(const struct stat *st, const char *what, const char *path, struct cordon_diag *d);
