/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Default locations of cordond's sockets, shared by cordond, cordonctl and
 * the systemd unit (RuntimeDirectory=cordon gives /run/cordon). Each can be
 * overridden: cordond by its configuration, cordonctl by --socket and the
 * environment variables named here. */

#define CORDON_RUNTIME_DIR_DEFAULT "/run/cordon"

/* Operator socket: cordonctl (mode 0660, root and the operator group). */
#define CORDON_OPERATOR_SOCKET_DEFAULT CORDON_RUNTIME_DIR_DEFAULT "/operator.sock"
#define CORDON_OPERATOR_SOCKET_ENV     "CORDON_OPERATOR_SOCKET"

/* Gateway socket: MCP sessions (`cordonctl mcp` bridges stdio to it). */
#define CORDON_GATEWAY_SOCKET_DEFAULT CORDON_RUNTIME_DIR_DEFAULT "/gateway.sock"
#define CORDON_GATEWAY_SOCKET_ENV     "CORDON_GATEWAY_SOCKET"

/* HTTP: /health, /health/detail, /metrics. */
#define CORDON_HTTP_SOCKET_DEFAULT CORDON_RUNTIME_DIR_DEFAULT "/http.sock"
#define CORDON_HTTP_SOCKET_ENV	   "CORDON_HTTP_SOCKET"

/* State (SQLite database, audit signing key) under systemd's StateDirectory. */
#define CORDON_STATE_DIR_DEFAULT "/var/lib/cordon"

/* Profiles: root-owned, read by the launcher helper. */
#define CORDON_PROFILES_DIR_DEFAULT "/etc/cordon/profiles"

/* The group whose members may use the operator socket. */
#define CORDON_OPERATOR_GROUP_DEFAULT "cordon-operators"

/* The uid and gid cordond drops to when started as root without --user: a
 * private id that no user database entry names and no other service runs
 * as, so nothing but cordond can open its database and signing key (the
 * shared `nobody` would let any other nobody process do both). It sits just
 * below the launcher's dynamic connector range (1879048192 and up). */
#define CORDON_BROKER_PRIVATE_ID 1879048191u
