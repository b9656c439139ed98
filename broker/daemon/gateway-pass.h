/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Resources, prompts and completions passed through to connectors whose
 * profile lets them (gateway-pass.c): calls of kind DCK_PASS, built on
 * gateway-call's call object. Used by gateway.c. */

#include <jansson.h>
#include <stdbool.h>

#include "daemon-state.h"

/* Whether any installed connector the session sees (the one it is bound
 * to, or any) passes prompts (or resources) through. */
bool pass_offered(struct dsession *s, bool prompts);
/* Serves a pass-through method; false when method is not one (or nothing
 * offers it). */
bool pass_request(struct dsession *s, const char *method, const json_t *id, const json_t *params);
/* The session ends: fan-outs in progress answer nobody. */
void pass_session_closed(struct dsession *s);
