/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-jcs: throughput of what the broker does to every tools/call's
 * arguments — strict admission, RFC 8785 encoding, approval-binding HMAC —
 * on several document shapes, measured in the same run and interleaved round
 * by round:
 *
 *   jansson    plain jansson parse + dump (JSON_COMPACT), the baseline
 *   tree       cordon_canon_decode + cordon_jcs_encode + HMAC: the reference
 *              path, what every call took before the single-pass path
 *   fast       cordon_canon_bytes (single pass, no tree) + HMAC
 *   HMAC       the binding HMAC over the canonical bytes alone (the floor)
 *
 * and the same for a whole tools/call line as the gateway handles it:
 *
 *   line-tree  cordon_canon_decode(line) + cordon_tool_call_parse + HMAC
 *   line-fast  cordon_canon_decode_lifted(line) + cordon_tool_call_parse_lifted
 *              + HMAC (the gateway's path: arguments never become a tree)
 *
 * Figures are MiB/s of input text, medians over the rounds, computed from the
 * process's CPU time (the machine may be shared; single-threaded, so CPU time
 * is the time the work takes) and, in a second table, from wall time. Asserts
 * nothing about time; aborts if the two paths ever disagree on the bytes.
 *
 *   bench-jcs [ROUNDS]      (default 9 rounds)
 *
 * BENCH_JCS_DUMP=DIR also writes each shape's arguments to DIR/<shape>.json
 * (for perf, cordon-jcs, other tools). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"
#include "canon.h"
#include "crypto.h"

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- Shapes ---------------------------------------------------------------------- */

static uint64_t rng = 42;

static unsigned ri(unsigned n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng >> 33) % n);
}

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		if (!t->p)
			abort();
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void putf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct text *t, const char *fmt, ...)
{
	char b[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	put(t, b, (size_t)n);
}

/* Records: nested objects with strings (some escapes, some non-ASCII),
 * integers, reals, booleans, written by jansson in insertion (not canonical)
 * order. The shape this bench always had. */
static void shape_records(struct text *t, size_t target)
{
	json_t *root = json_object(), *items = json_array();
	char *s;

	json_object_set_new(root, "repository", json_string("cordon/cordon"));
	json_object_set_new(root, "dry_run", json_false());
	json_object_set_new(root, "items", items);
	for (unsigned i = 0;; i++) {
		char name[64];
		json_t *it = json_pack("{s:i,s:s,s:f,s:b,s:[i,i,i],s:{s:s,s:s}}", "id", i, "title",
				       "Fix the \"quoted\" path C:\\temp\\x\tand caf\xc3\xa9 \xe2\x82\xac", "score",
				       (double)i * 0.37 + 0.001, "open", i % 2, "refs", i, i + 1, i * 7, "meta", "zeta",
				       "last", "alpha", "first");

		snprintf(name, sizeof(name), "label-%u-\xf0\x9f\x98\x80", i);
		json_object_set_new(it, "label", json_string(name));
		json_array_append_new(items, it);
		if (i % 16 == 15 || target <= 2048) {
			s = json_dumps(root, JSON_COMPACT);
			if (strlen(s) >= target)
				break;
			free(s);
		}
	}
	put(t, s, strlen(s));
	free(s);
	json_decref(root);
}

/* One large string: a file's content for a write tool (prose with newlines,
 * quotes, backslashes, tabs and some non-ASCII, all escaped as JSON needs). */
static void shape_string(struct text *t, size_t target)
{
	static const char *const lines[] = {
		"The quick brown fox jumps over the lazy dog; \\\"quoted\\\" words and a tab\\there.\\n",
		"    if (x < 0) return -EINVAL; /* C:\\\\temp\\\\file */\\n",
		("Caf\xc3\xa9 cr\xc3\xa8me br\xc3\xbbl\xc3\xa9\x65\x20\xe2\x82\xac 12.50 \xf0\x9f\x98\x80 na\xc3\xafve "
		 "r\xc3\xa9sum\xc3\xa9\\n"),
		"A plain line of ASCII text without anything special in it at all, quite long.\\n",
	};

	puts_(t, "{\"path\":\"/home/user/notes.md\",\"content\":\"");
	while (t->len < target - 40) {
		const char *l = lines[ri(4)];

		put(t, l, strlen(l));
	}
	puts_(t, "\",\"create\":true}");
}

/* Many small keys: one flat object, names not in canonical order. */
static void shape_keys(struct text *t, size_t target)
{
	puts_(t, "{");
	/* i × an odd constant is a bijection: names are unique, order random. */
	for (unsigned i = 0; t->len < target; i++)
		if (ri(3))
			putf(t, "%s\"field_%08x\":%u", i ? "," : "", i * 2654435761u, ri(1000));
		else
			putf(t, "%s\"f%x\":\"v%u\"", i ? "," : "", i * 2654435761u, i);
	puts_(t, "}");
}

/* Number-heavy: series of measurements, integers and reals with up to 15
 * significant digits, as people and most programs write them. */
static void shape_numbers(struct text *t, size_t target)
{
	puts_(t, "{\"unit\":\"ms\",\"series\":[");
	for (unsigned i = 0; t->len < target; i++) {
		put(t, i ? ",[" : "[", i ? 2 : 1);
		for (unsigned j = 0; j < 16; j++) {
			if (j)
				puts_(t, ",");
			switch (ri(4)) {
			case 0:
				putf(t, "%d", (int)ri(2000000) - 1000000);
				break;
			case 1:
				putf(t, "%.2f", (double)ri(1000000) / 100.0);
				break;
			case 2:
				putf(t, "%.6g", (double)ri(1000000) * 1e-9);
				break;
			default:
				putf(t, "-%u.%03u", ri(100), ri(1000));
			}
		}
		puts_(t, "]");
	}
	puts_(t, "]}");
}

/* Full-precision doubles (17 significant digits, as JSON.stringify writes
 * random doubles): every one takes the strtod + shortest-digits search. */
static void shape_doubles(struct text *t, size_t target)
{
	puts_(t, "{\"values\":[");
	for (unsigned i = 0; t->len < target; i++)
		putf(t, "%s%.17g", i ? "," : "", (double)ri(1u << 30) / (double)(1 + ri(1u << 30)));
	puts_(t, "]}");
}

/* Deep nesting within the limit: records nested 58 levels (62 in a
 * tools/call line, whose limit is 64), objects and arrays alternating, names
 * out of order. */
static void shape_deep(struct text *t, size_t target)
{
	puts_(t, "{\"items\":[");
	for (unsigned i = 0; t->len < target; i++) {
		if (i)
			puts_(t, ",");
		for (unsigned d = 0; d < 58; d++)
			if (d % 2)
				puts_(t, "[");
			else
				putf(t, "{\"z%u\":%u,\"a\":", d, i);
		puts_(t, "\"leaf\"");
		for (unsigned d = 58; d-- > 0;)
			put(t, d % 2 ? "]" : "}", 1);
	}
	puts_(t, "]}");
}

/* ---- Paths ------------------------------------------------------------------------ */

static _Noreturn void die(const char *what, const struct cordon_diag *d)
{
	fprintf(stderr, "bench-jcs: %s failed: %s\n", what, d->message);
	abort();
}

static struct cordon_key *key;
static uint8_t fingerprint[32];
static struct cordon_canon_limits lim = { .max_bytes = 4u << 20 };

static void binding(const char *jcs, size_t len)
{
	struct cordon_approval_fields f = {
		.session_id = "session-0123456789",
		.connector_id = "github",
		.launch_generation = 1,
		.tool_name = "create_issues",
		.tool_fingerprint = fingerprint,
		.policy_epoch = 1,
		.risk_tier = "high",
		.arguments_jcs = jcs,
		.arguments_jcs_len = len,
	};
	uint8_t b[32];

	if (cordon_approval_binding(key, &f, b) < 0)
		abort();
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

static void run_tree(const char *in, size_t len)
{
	json_t *v = NULL;
	char *jcs = NULL;
	size_t jcs_len;

	if (cordon_canon_decode(in, len, &lim, &v, NULL) < 0 || cordon_jcs_encode(v, &jcs, &jcs_len) < 0)
		abort();
	binding(jcs, jcs_len);
	free(jcs);
	json_decref(v);
}

static void run_fast(const char *in, size_t len)
{
	char *jcs = NULL;
	size_t jcs_len;

	if (cordon_canon_bytes(in, len, &lim, &jcs, &jcs_len, NULL) < 0)
		abort();
	binding(jcs, jcs_len);
	free(jcs);
}

static const char *hmac_jcs;
static size_t hmac_jcs_len;

static void run_hmac(const char *in, size_t len)
{
	(void)in, (void)len;
	binding(hmac_jcs, hmac_jcs_len);
}

static void run_line_tree(const char *in, size_t len)
{
	struct cordon_tool_call c = {};
	struct cordon_diag d = {};
	json_t *msg = NULL;

	if (cordon_canon_decode(in, len, &lim, &msg, &d) < 0 ||
	    cordon_tool_call_parse(json_object_get(msg, "params"), &c, &d) < 0)
		die("line-tree", &d);
	binding(c.arguments_jcs, c.arguments_jcs_len);
	cordon_tool_call_done(&c);
	json_decref(msg);
}

static void run_line_fast(const char *in, size_t len)
{
	struct cordon_canon_lifted l;
	struct cordon_tool_call c = {};
	struct cordon_diag d = {};
	json_t *msg = NULL;

	if (cordon_canon_decode_lifted(in, len, &lim, "params", "arguments", &msg, &l, &d) < 0 || !l.jcs ||
	    cordon_tool_call_parse_lifted(json_object_get(msg, "params"), &l.jcs, l.jcs_len, &c, &d) < 0)
		die("line-fast", &d);
	binding(c.arguments_jcs, c.arguments_jcs_len);
	cordon_tool_call_done(&c);
	cordon_canon_lifted_done(&l);
	json_decref(msg);
}

/* ---- Measurement ------------------------------------------------------------------- */

#define NFN 6

struct rates {
	double cpu[NFN], wall[NFN];
};

/* Medians over `rounds` rounds; in each round every function runs for about
 * 40 ms, one after the other (interleaved, so load changes hit all alike). */
static void measure(void (*const fn[NFN])(const char *, size_t), const char *const in[NFN], const size_t len[NFN],
		    size_t unit, int rounds, struct rates *ret)
{
	unsigned iters[NFN];
	double *cpu = calloc((size_t)rounds * NFN, sizeof(double)),
	       *wall = calloc((size_t)rounds * NFN, sizeof(double));

	if (!cpu || !wall)
		abort();
	for (int k = 0; k < NFN; k++) {
		iters[k] = 1;
		for (;;) {
			double t0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

			for (unsigned i = 0; i < iters[k]; i++)
				fn[k](in[k], len[k]);
			if (clock_s(CLOCK_PROCESS_CPUTIME_ID) - t0 > 0.04 || iters[k] > (1u << 24))
				break;
			iters[k] *= 2;
		}
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NFN; k++) {
			double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
			/* Rates are per byte of the arguments text (a line's
			 * envelope is not counted). */
			double mib = (double)unit * iters[k] / (1024.0 * 1024.0);

			for (unsigned i = 0; i < iters[k]; i++)
				fn[k](in[k], len[k]);
			cpu[k * rounds + r] = mib / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
			wall[k * rounds + r] = mib / (clock_s(CLOCK_MONOTONIC) - w0);
		}
	for (int k = 0; k < NFN; k++) {
		qsort(cpu + k * rounds, (size_t)rounds, sizeof(double), cmp_double);
		qsort(wall + k * rounds, (size_t)rounds, sizeof(double), cmp_double);
		ret->cpu[k] = cpu[k * rounds + rounds / 2];
		ret->wall[k] = wall[k * rounds + rounds / 2];
	}
	free(cpu);
	free(wall);
}

/* The tools/call line the gateway would read for these arguments. */
static char *make_line(const char *args, size_t len, size_t *ret_len)
{
	struct text t = {};

	puts_(&t, "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"tools/"
		  "call\",\"params\":{\"name\":\"github__create_issues\",");
	puts_(&t, "\"arguments\":");
	put(&t, args, len);
	puts_(&t, ",\"_meta\":{\"progressToken\":\"p-17\"}}}");
	*ret_len = t.len;
	return t.p;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *label;
		void (*make)(struct text *, size_t);
		size_t bytes;
	} shapes[] = {
		{ "records 1K", shape_records, 1024 },	  { "records 64K", shape_records, 64 * 1024 },
		{ "records 1M", shape_records, 1 << 20 }, { "string 1M", shape_string, 1 << 20 },
		{ "keys 1M", shape_keys, 1 << 20 },	  { "numbers 1M", shape_numbers, 1 << 20 },
		{ "doubles 1M", shape_doubles, 1 << 20 }, { "deep 1M", shape_deep, 1 << 20 },
	};
	void (*const fns[NFN])(const char *, size_t) = { run_jansson, run_tree,	     run_fast,
							 run_hmac,    run_line_tree, run_line_fast };
	struct rates res[sizeof(shapes) / sizeof(shapes[0])];
	size_t sizes[sizeof(shapes) / sizeof(shapes[0])];
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	uint8_t k[32] = { 0 };

	if (rounds < 1)
		rounds = 1;
	if (cordon_key_new_from_bytes(k, &key) < 0) {
		fprintf(stderr, "bench-jcs: cannot set up the key\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct text t = {};
		char *a = NULL, *b = NULL, *line;
		size_t al, bl, line_len;
		const char *in[NFN];
		size_t len[NFN];

		shapes[i].make(&t, shapes[i].bytes);
		/* The two paths must agree before they are timed. */
		if (cordon_canon_bytes(t.p, t.len, &lim, &a, &al, NULL) < 0 ||
		    cordon_canon_bytes_reference(t.p, t.len, &lim, &b, &bl, NULL) < 0 || al != bl ||
		    memcmp(a, b, al) != 0) {
			fprintf(stderr, "bench-jcs: %s: the paths disagree\n", shapes[i].label);
			return 1;
		}
		if (getenv("BENCH_JCS_DUMP")) {
			char path[512];
			FILE *df;

			snprintf(path, sizeof(path), "%s/%s.json", getenv("BENCH_JCS_DUMP"), shapes[i].label);
			for (char *c = path + strlen(getenv("BENCH_JCS_DUMP")) + 1; *c; c++)
				if (*c == ' ')
					*c = '-';
			df = fopen(path, "w");
			if (!df || fwrite(t.p, 1, t.len, df) != t.len || fclose(df) != 0) {
				fprintf(stderr, "bench-jcs: cannot write %s\n", path);
				return 1;
			}
		}
		line = make_line(t.p, t.len, &line_len);
		hmac_jcs = a;
		hmac_jcs_len = al;
		for (int f = 0; f < NFN; f++) {
			in[f] = f >= 4 ? line : t.p;
			len[f] = f >= 4 ? line_len : t.len;
		}
		measure(fns, in, len, t.len, rounds, &res[i]);
		sizes[i] = t.len;
		free(a);
		free(b);
		free(line);
		free(t.p);
	}
	cordon_key_free(key);

	for (int w = 0; w < 2; w++) {
		printf("bench-jcs: median of %d interleaved rounds, MiB/s of arguments text, by %s time\n", rounds,
		       w ? "wall" : "CPU");
		printf("%-12s %8s %8s %8s %8s %8s %9s %9s %10s\n", "shape", "bytes", "jansson", "tree", "fast", "HMAC",
		       "line-tree", "line-fast", "fast/tree");
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			const double *r = w ? res[i].wall : res[i].cpu;

			printf("%-12s %8zu %8.1f %8.1f %8.1f %8.1f %9.1f %9.1f %9.1fx\n", shapes[i].label, sizes[i],
			       r[0], r[1], r[2], r[3], r[4], r[5], r[2] / r[1]);
		}
		if (!w)
			printf("\n");
	}
	return 0;
}
