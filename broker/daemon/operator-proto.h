/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The operator protocol: newline-delimited JSON over an AF_UNIX stream
 * socket, one request per line, one response line per request, in order.
 *
 *   request   {"v":1,"id":N,"op":"approvals.list","args":{...}}
 *   success   {"v":1,"id":N,"ok":true,"result":<any>}
 *   failure   {"v":1,"id":N,"ok":false,"error":{"code":"...","message":"..."}}
 *
 * Decoding is strict: canon admission (valid UTF-8, no duplicate member
 * names, no NUL, integers within ±(2^53−1)), a line of at most
 * CORDON_OP_MAX_REQUEST bytes, nesting at most CORDON_OP_MAX_DEPTH, exactly
 * the members v, id, op and optionally args, version 1 only, an op from the
 * table below and, for that op, only its declared arguments with their
 * declared types. Anything else is refused with an error naming what and
 * where; nothing of a refused request is acted on. "id" is echoed as given
 * (null when the request was too broken to read it).
 *
 * Error codes are a fixed vocabulary (CORDON_OP_E_*): clients switch on the
 * code, humans read the message. Pure code: no I/O, no global state. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORDON_OP_VERSION      1
#define CORDON_OP_MAX_REQUEST  ((size_t)1024 * 1024) /* bytes per request line, newline excluded */
#define CORDON_OP_MAX_DEPTH    8u
#define CORDON_OP_MAX_STRING   4096 /* bytes in one string argument */
#define CORDON_OP_MAX_LIST     1024 /* elements in one list argument */
#define CORDON_OP_MAX_RESPONSE ((size_t)64 * 1024 * 1024)

/* Protocol errors. */
#define CORDON_OP_E_PARSE	"parse-error"	      /* not one admissible JSON document */
#define CORDON_OP_E_TOO_LARGE	"request-too-large"   /* above CORDON_OP_MAX_REQUEST */
#define CORDON_OP_E_INVALID	"invalid-request"     /* envelope malformed */
#define CORDON_OP_E_VERSION	"unsupported-version" /* v is not 1 */
#define CORDON_OP_E_UNKNOWN_OP	"unknown-op"
#define CORDON_OP_E_UNKNOWN_ARG "unknown-argument"
#define CORDON_OP_E_MISSING_ARG "missing-argument"
#define CORDON_OP_E_BAD_ARG	"invalid-argument"
/* Authorization and operation errors. */
#define CORDON_OP_E_DENIED    "permission-denied" /* peer is not an operator */
#define CORDON_OP_E_NOT_FOUND "not-found"
#define CORDON_OP_E_EXISTS    "already-exists"
#define CORDON_OP_E_ALREADY   "already-decided" /* not in a state the op applies to */
#define CORDON_OP_E_EXPIRED   "expired"
/* An approval a decision no longer applies to (issue 14: each says which,
 * instead of "not found" or a generic "already-decided"). */
#define CORDON_OP_E_USED	"already-used"	    /* approved and consumed by its call */
#define CORDON_OP_E_WAS_DENIED	"already-denied"    /* an operator denied it */
#define CORDON_OP_E_REVOKED	"revoked"	    /* withdrawn: policy change, relaunch, session end, ... */
#define CORDON_OP_E_CODE	"confirmation-code" /* critical approval: code missing or wrong */
#define CORDON_OP_E_STALE	"stale"		    /* what the operator saw has changed since */
#define CORDON_OP_E_GONE	"gone"
#define CORDON_OP_E_OUTSIDE	"outside-ceiling"
#define CORDON_OP_E_AMBIGUOUS	"ambiguous"
#define CORDON_OP_E_UNAVAILABLE "unavailable" /* the daemon cannot provide it now */
#define CORDON_OP_E_BUSY	"busy"	      /* connection limit */
#define CORDON_OP_E_FAILED	"failed"      /* anything else; message says what */

enum cordon_op_arg_type {
	CORDON_OP_ARG_STRING,
	CORDON_OP_ARG_BOOL,
	CORDON_OP_ARG_UINT,	   /* integer 0..max */
	CORDON_OP_ARG_STRING_LIST, /* array of strings, up to CORDON_OP_MAX_LIST */
};

struct cordon_op_arg_spec {
	const char *name;
	enum cordon_op_arg_type type;
	bool required;
	uint64_t max; /* UINT: largest value; STRING: 0 = CORDON_OP_MAX_STRING */
};

#define CORDON_OP_MAX_ARGS 4

struct cordon_op_spec {
	const char *name;
	bool mutates; /* changes state (documentation, metrics) */
	struct cordon_op_arg_spec args[CORDON_OP_MAX_ARGS];
};

/* The op table, terminated by an entry with name NULL. */
extern const struct cordon_op_spec cordon_op_table[];

/* Looks an op up by name; NULL when unknown. */
const struct cordon_op_spec *cordon_op_lookup(const char *name);

struct cordon_op_error {
	const char *code; /* CORDON_OP_E_* */
	char message[256];
};

/* Sets e (if non-NULL) and returns -error (a positive errno), like
 * cordon_diag_set(). */
int cordon_op_error_set(struct cordon_op_error *e, int error, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

struct cordon_op_request {
	json_t *id; /* the request's id (a new reference), NULL when unreadable */
	const struct cordon_op_spec *op;
	json_t *args; /* owned; always an object ({} when absent) */
	/* A descriptor passed with the request (SCM_RIGHTS; operator.c), or
	 * -1. Borrowed: the connection closes it after the request. Only
	 * "backup" uses one. */
	int fd;
};

/* Decodes one request line (buf[0..len), without the newline). On success
 * fills *ret (release with cordon_op_request_done) and returns 0. On failure
 * returns -EINVAL/-EMSGSIZE/-EPROTO/-ENOSYS, fills err, and still writes
 * ret->id when the id could be read (so the error response can echo it);
 * everything else in *ret is empty. */
int cordon_op_request_decode(const char *buf, size_t len, struct cordon_op_request *ret, struct cordon_op_error *err);
void cordon_op_request_done(struct cordon_op_request *r);

/* Argument accessors (the request was validated: types are as declared).
 * Absent optional arguments give the fallback. */
const char *cordon_op_arg_string(const struct cordon_op_request *r, const char *name);
bool cordon_op_arg_bool(const struct cordon_op_request *r, const char *name, bool fallback);
uint64_t cordon_op_arg_uint(const struct cordon_op_request *r, const char *name, uint64_t fallback);
const json_t *cordon_op_arg_list(const struct cordon_op_request *r, const char *name);

/* Encodes a response line (with the trailing newline) into a malloc'd
 * buffer. result is borrowed (NULL encodes null). Returns 0 or -ENOMEM. */
int cordon_op_response_ok(const json_t *id, const json_t *result, char **ret, size_t *ret_len);
int cordon_op_response_error(const json_t *id, const struct cordon_op_error *e, char **ret, size_t *ret_len);

/* Client side: encodes a request line (with newline). args borrowed, may be
 * NULL. Returns 0, -EINVAL (unknown op), -ENOMEM. */
int cordon_op_request_encode(uint64_t id, const char *op, const json_t *args, char **ret, size_t *ret_len);

/* Client side: decodes a response line strictly (same admission, size
 * CORDON_OP_MAX_RESPONSE). On success returns 0 and writes *ret_ok, a new
 * reference to the result (ok) or to the error object {"code","message"}
 * (not ok). Checks that the id equals expected_id. Returns -EBADMSG and
 * fills err otherwise. */
int cordon_op_response_decode(const char *buf, size_t len, uint64_t expected_id, bool *ret_ok, json_t **ret,
			      struct cordon_op_error *err);

/* Maps a broker-core -errno to an error code (EPERM -> permission-denied,
 * ENOENT -> not-found, ...). */
const char *cordon_op_errno_code(int error);
