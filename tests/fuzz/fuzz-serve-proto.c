/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the launcher helper's message decoder
 * (cordon_serve_decode), which reads every packet cordond sends to the
 * privileged helper. Invariants: no crash or overread (ASan), a refusal is
 * always -EBADMSG with a NUL-terminated diag, and an accepted message is
 * within every bound, re-encodes, and decodes again to the same message. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_same(const struct cordon_serve_msg *a, const struct cordon_serve_msg *b)
{
	if (a->type != b->type || a->id != b->id || a->status != b->status || a->instance != b->instance ||
	    a->wait_status != b->wait_status || a->n_roots != b->n_roots || a->diag.error != b->diag.error)
		abort();
	if (strcmp(a->connector, b->connector) || strcmp(a->tag, b->tag) || strcmp(a->diag.step, b->diag.step) ||
	    strcmp(a->diag.message, b->diag.message))
		abort();
	if (!a->json != !b->json || (a->json && strcmp(a->json, b->json)))
		abort();
	for (uint32_t i = 0; i < a->n_roots; i++)
		if (strcmp(a->roots[i].host, b->roots[i].host) || strcmp(a->roots[i].sandbox, b->roots[i].sandbox) ||
		    a->roots[i].access != b->roots[i].access)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cordon_serve_msg m, again;
	static uint8_t out[CORDON_SERVE_MAX_MSG];
	struct cordon_diag d = { 0 };
	uint8_t *copy;
	int r, n;

	if (size > CORDON_SERVE_MAX_MSG + 16)
		return 0;
	/* An exact-size copy, so any read past `size` is an ASan report. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = cordon_serve_decode(copy, size, &m, &d);
	free(copy);
	if (r < 0) {
		if (r != -EBADMSG && r != -ENOMEM)
			abort();
		if (r == -EBADMSG && (d.error != EBADMSG || !memchr(d.message, '\0', sizeof(d.message))))
			abort();
		return 0;
	}
	if (m.type == 0 || m.type >= _CORDON_SERVE_TYPE_MAX || m.n_roots > CORDON_SERVE_MAX_ROOTS || m.n_fds != 0)
		abort();
	if (m.json && strlen(m.json) > CORDON_SERVE_MAX_JSON)
		abort();
	for (uint32_t i = 0; i < m.n_roots; i++)
		if (m.roots[i].access > 2 || strlen(m.roots[i].host) >= CORDON_SERVE_MAX_STR)
			abort();
	n = cordon_serve_encode(&m, out, sizeof(out));
	if (n < 0 || (size_t)n != size)
		abort(); /* the wire format has one encoding per message */
	if (memcmp(out, data, size) != 0)
		abort();
	if (cordon_serve_decode(out, (size_t)n, &again, &d) < 0)
		abort();
	check_same(&m, &again);
	cordon_serve_msg_clear(&m);
	cordon_serve_msg_clear(&again);
	return 0;
}
