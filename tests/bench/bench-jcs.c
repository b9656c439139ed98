/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-jcs: throughput of what the broker does to every tools/call's
 * arguments — strict admission decode, RFC 8785 encode, approval-binding
 * HMAC — against plain jansson parse + dump of the same input, measured in
 * the same run. Prints medians (MiB/s of input) and the ratio; asserts
 * nothing about time.
 *
 *   bench-jcs [ROUNDS]      (default 9 rounds per size) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "canon.h"
#include "crypto.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A plausible arguments object of about `target` bytes: nested records
 * with strings (some escapes, some non-ASCII), integers, reals, booleans,
 * written by jansson in insertion (not canonical) order. */
static char *make_input(size_t target, size_t *ret_len)
{
	json_t *root = json_object(), *items = json_array();
	char *text;
	unsigned i = 0;

	json_object_set_new(root, "repository", json_string("cordon/cordon"));
	json_object_set_new(root, "dry_run", json_false());
	json_object_set_new(root, "items", items);
	for (;;) {
		char name[64];
		json_t *it = json_pack("{s:i,s:s,s:f,s:b,s:[i,i,i],s:{s:s,s:s}}", "id", i, "title",
				       "Fix the \"quoted\" path C:\\temp\\x\tand caf\xc3\xa9 \xe2\x82\xac", "score",
				       (double)i * 0.37 + 0.001, "open", i % 2, "refs", i, i + 1, i * 7, "meta", "zeta",
				       "last", "alpha", "first");

		snprintf(name, sizeof(name), "label-%u-\xf0\x9f\x98\x80", i);
		json_object_set_new(it, "label", json_string(name));
		json_array_append_new(items, it);
		i++;
		if (i % 16 == 0) {
			text = json_dumps(root, JSON_COMPACT);
			if (strlen(text) >= target) {
				*ret_len = strlen(text);
				json_decref(root);
				return text;
			}
			free(text);
		}
		if (target <= 2048) {
			text = json_dumps(root, JSON_COMPACT);
			if (strlen(text) >= target) {
				*ret_len = strlen(text);
				json_decref(root);
				return text;
			}
			free(text);
		}
	}
}

static void run_jansson(const char *in, size_t len)
{
	json_error_t e;
	json_t *v = json_loadb(in, len, JSON_REJECT_DUPLICATES, &e);
	char *out;

	if (!v)
		abort();
	out = json_dumps(v, JSON_COMPACT);
	if (!out)
		abort();
	free(out);
	json_decref(v);
}

static struct cordon_key *key;
static uint8_t fingerprint[32];

static void run_cordon(const char *in, size_t len)
{
	struct cordon_approval_fields f = {
		.session_id = "session-0123456789",
		.connector_id = "github",
		.launch_generation = 1,
		.tool_name = "create_issues",
		.tool_fingerprint = fingerprint,
		.policy_epoch = 1,
		.risk_tier = "high",
	};
	uint8_t binding[32];
	json_t *v = NULL;
	char *jcs = NULL;
	size_t jcs_len;

	if (cordon_canon_decode(in, len, NULL, &v, NULL) < 0)
		abort();
	if (cordon_jcs_encode(v, &jcs, &jcs_len) < 0)
		abort();
	f.arguments_jcs = jcs;
	f.arguments_jcs_len = jcs_len;
	if (cordon_approval_binding(key, &f, binding) < 0)
		abort();
	free(jcs);
	json_decref(v);
}

/* Median MiB/s over `rounds` rounds of enough iterations to last ~40 ms. */
static double measure(void (*fn)(const char *, size_t), const char *in, size_t len, int rounds)
{
	double *rates = calloc((size_t)rounds, sizeof(double)), med;
	unsigned iters = 1;
	double t0, t;

	/* Calibrate. */
	for (;;) {
		t0 = now();
		for (unsigned i = 0; i < iters; i++)
			fn(in, len);
		t = now() - t0;
		if (t > 0.04 || iters > (1u << 24))
			break;
		iters *= 2;
	}
	for (int r = 0; r < rounds; r++) {
		t0 = now();
		for (unsigned i = 0; i < iters; i++)
			fn(in, len);
		t = now() - t0;
		rates[r] = (double)len * iters / t / (1024.0 * 1024.0);
	}
	qsort(rates, (size_t)rounds, sizeof(double), cmp_double);
	med = rates[rounds / 2];
	free(rates);
	return med;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *label;
		size_t bytes;
	} sizes[] = { { "1 KiB", 1024 }, { "64 KiB", 64 * 1024 }, { "1 MiB", 1000 * 1024 } };
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	uint8_t k[32] = { 0 };

	if (rounds < 1)
		rounds = 1;
	if (cordon_key_new_from_bytes(k, &key) < 0) {
		fprintf(stderr, "bench-jcs: cannot set up the key\n");
		return 1;
	}
	printf("bench-jcs: median of %d rounds, MiB/s of input text\n", rounds);
	printf("%-8s %10s %22s %22s %8s\n", "size", "bytes", "jansson parse+dump", "admit+JCS+HMAC", "ratio");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len;
		char *in = make_input(sizes[i].bytes, &len);
		double base = measure(run_jansson, in, len, rounds);
		double ours = measure(run_cordon, in, len, rounds);

		/* Ratio > 1 means cordon's path takes that many times longer. */
		printf("%-8s %10zu %17.1f MiB/s %17.1f MiB/s %7.2fx\n", sizes[i].label, len, base, ours, base / ours);
		free(in);
	}
	cordon_key_free(key);
	return 0;
}
