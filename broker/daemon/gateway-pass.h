/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Resources, prompts and completions passed through to connectors whose
 * profile lets them (gateway-pass.c): calls of kind DCK_PASS, built on
 * gateway-call's call object. Used by gateway.c. */

#include <jansson.h>
#include <stdbool.h>

#include "daemon-state.h"

/* Lists toward the client: items per page. */
#define PASS_PAGE_SIZE 100
/* A fan-out list follows each connector's nextCursor for at most this many
 * pages and items per connector. */
#define PASS_UPSTREAM_PAGES_MAX 32
#define PASS_UPSTREAM_ITEMS_MAX 5000
/* Resource subscriptions per session. */
#define PASS_SUBS_MAX 256
/* ... and at most this many bytes of answers (on the wire) per connector. */
#define PASS_UPSTREAM_BYTES_MAX (8u << 20)

/* Whether any installed connector the session sees (the one it is bound
 * to, or any) passes prompts (or resources) through. */
bool pass_offered(struct dsession *s, bool prompts);
/* Serves a pass-through method; false when method is not one (or nothing
 * offers it). */
bool pass_request(struct dsession *s, const char *method, const json_t *id, const json_t *params);
/* Adds resources, prompts and completions to an initialize answer's
 * capabilities, with resources.subscribe, resources.listChanged and
 * prompts.listChanged when a connector the session sees announced them. */
void pass_capabilities(struct dsession *s, json_t *caps);
/* A list's first page: items (stolen) become the session's snapshot of
 * the list named key ("tools", "prompts", "resources",
 * "resourceTemplates"). */
void pass_page_first(struct dsession *s, const json_t *id, const char *key, json_t *items);
/* When params has a cursor: answers with that page of the snapshot, or
 * -32602 "unknown cursor", and returns true; false when there is none. */
bool pass_page_next(struct dsession *s, const json_t *id, const json_t *params, const char *key);
/* notifications/resources/updated from an instance of connector that
 * serves s: relayed when s subscribed to that URI. */
void pass_resource_updated(struct dsession *s, const char *connector, const json_t *params);
/* The session ends: fan-outs in progress answer nobody, its subscriptions
 * end, what it kept here is freed. */
void pass_session_closed(struct dsession *s);
