/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The approval webhook (issue 14, Notifications): cordond POSTs one small
 * JSON body per approval event (requested, approved, denied, expired,
 * revoked) to an http:// URL on the loopback, so that a chat bridge or a
 * pager can tell operators that a call is waiting.
 *
 * The source of events is the audit log itself: every tick reads the
 * approval records appended since the last one (a cursor over seq), so no
 * path that creates or ends an approval needs to know about the webhook and
 * none is missed. The body is approval_event_json()'s object (the same
 * `cordonctl approvals watch --json` prints): identifiers and fixed words
 * only — the audit record's fields plus the approval's display code and
 * expiry — and NEVER an argument value (the operator sees those with
 * `approvals show`).
 *
 * Each request carries X-Cordon-Timestamp (unix seconds) and
 * X-Cordon-Signature: sha256=<hex HMAC-SHA-256(secret, timestamp "." body)>.
 * Delivery never blocks the loop: a non-blocking connect, send and receive
 * of the status line under a per-attempt deadline; at most
 * CORDON_WEBHOOK_ATTEMPTS attempts with doubling back-off; a bounded queue
 * that drops its oldest body when full. Only http:// to 127.0.0.0/8 is
 * accepted: cordond has no TLS client, and the body is not to cross a
 * network in clear (a local relay forwards it: docs/operator-guide.md). */

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "webhook-url.h"

struct cordon_loop;
struct cordon_db;
struct cordon_daemon;
struct cordon_webhook;

#define CORDON_WEBHOOK_URL_MAX	   256
#define CORDON_WEBHOOK_QUEUE	   64	/* bodies waiting; the oldest is dropped beyond */
#define CORDON_WEBHOOK_ATTEMPTS	   3	/* per body */
#define CORDON_WEBHOOK_BACKOFF_MS  1000 /* before the 2nd attempt; doubles */
#define CORDON_WEBHOOK_DEADLINE_MS 5000 /* per attempt: connect, send, status line */
#define CORDON_WEBHOOK_SECRET_MIN  16
#define CORDON_WEBHOOK_SECRET_MAX  1024

/* Reads the secret file (call while privileged: it should be root-owned
 * and 0600 or 0400; refused when group or others may read or write it)
 * and checks the URL. Returns 0 and writes *ret, or -errno with diag. */
int cordon_webhook_new(const char *url, const char *secret_path, struct cordon_webhook **ret, struct cordon_diag *diag);
void cordon_webhook_free(struct cordon_webhook *w);

/* The TCP port cordond must be allowed to connect to (Landlock). */
uint16_t cordon_webhook_port(const struct cordon_webhook *w);

/* Starts delivering on loop, from the records after the audit log's
 * current end (approvals never survive a restart: recovery revokes them).
 * Deliveries are counted in d's metrics from then on. Returns 0 or -errno. */
int cordon_webhook_start(struct cordon_webhook *w, struct cordon_daemon *d);

/* Reads the approval records appended since the last call and queues one
 * body for each (cordond's tick). */
void cordon_webhook_tick(struct cordon_webhook *w, struct cordon_daemon *d);

/* Queues one body (a JSON object's text, copied). Public for the tests. */
int cordon_webhook_enqueue(struct cordon_webhook *w, const char *body, const char *event);
/* The i-th body waiting (0: the oldest), or NULL; and how many wait. For
 * the tests. */
const char *cordon_webhook_queued(const struct cordon_webhook *w, unsigned i, unsigned *ret_n);

/* hex HMAC-SHA-256(secret, timestamp "." body) into ret (65 bytes). */
void cordon_webhook_sign(const uint8_t *secret, size_t secret_len, const char *timestamp, const char *body,
			 size_t body_len, char ret[static 65]);
