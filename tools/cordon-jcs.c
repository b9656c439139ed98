/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-jcs: canonical JSON (RFC 8785) and tool fingerprints on the command
 * line, so operators can compare what the broker hashes across machines.
 *
 *   cordon-jcs [--max-bytes N] < doc.json
 *       Admits one JSON document (the broker's rules) and writes its
 *       canonical bytes to stdout, with no trailing newline (pipe it into
 *       sha256sum to hash exactly what the broker hashes). Exit 0; on an
 *       admission error prints it to stderr and exits 1.
 *   cordon-jcs --fingerprint [--max-bytes N] < tool.json
 *       Prints the tool-definition fingerprint as 64 hex digits and a
 *       newline. Input is either the tool object exactly as the server
 *       listed it in tools/list (it has a "name"), meaning "no server
 *       instructions", or a wrapper {"tool": {...}, "instructions": "..."}
 *       (no "name" at the top level; "instructions" optional, a string).
 * Usage errors exit 2. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "version-flag.h"
#include "canon.h"
#include "cleanup.h"
#include "crypto.h"
#include "fd-util.h"
#include "log.h"
#include "parse-util.h"
#include "hex-util.h"

static void usage(FILE *f)
{
	fputs("Usage: cordon-jcs [--fingerprint] [--max-bytes N] < input.json\n"
	      "  Prints the RFC 8785 canonical form of one JSON document (no trailing newline),\n"
	      "  or with --fingerprint the tool-definition fingerprint (hex). Input is\n"
	      "  admitted strictly: invalid UTF-8, lone surrogates, NUL, duplicate member\n"
	      "  names, nesting deeper than 64, integers beyond +-(2^53-1) and input larger\n"
	      "  than N bytes (default 1 MiB; K/M/G suffixes allowed) are errors (exit 1).\n"
	      "  --fingerprint input: a tool object as listed by tools/list, or\n"
	      "  {\"tool\": {...}, \"instructions\": \"...\"} to include server instructions.\n",
	      f);
}

static int fingerprint(const json_t *doc)
{
	const json_t *tool = doc, *instr = NULL;
	uint8_t fp[CORDON_HASH_LEN];
	char hex[2 * CORDON_HASH_LEN + 1];
	int r;

	if (!json_is_object(doc)) {
		log_error("--fingerprint: input must be a JSON object");
		return 1;
	}
	if (!json_object_get(doc, "name") && json_object_get(doc, "tool")) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)doc, key,
				    v) if (strcmp(key, "tool") != 0 && strcmp(key, "instructions") != 0)
		{
			log_error("--fingerprint: unknown member \"%s\" in the {\"tool\",\"instructions\"} wrapper",
				  key);
			return 1;
		}
		tool = json_object_get(doc, "tool");
		instr = json_object_get(doc, "instructions");
		if (!json_is_object(tool)) {
			log_error("--fingerprint: \"tool\" must be an object");
			return 1;
		}
		if (instr && !json_is_string(instr)) {
			log_error("--fingerprint: \"instructions\" must be a string");
			return 1;
		}
	}
	r = cordon_tool_fingerprint(tool, instr ? json_string_value(instr) : NULL, fp);
	if (r < 0) {
		log_error_errno(r, "--fingerprint: cannot fingerprint the tool definition");
		return 1;
	}
	hex_encode(fp, sizeof(fp), hex);
	printf("%s\n", hex);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fingerprint", no_argument, NULL, 'f' },
		{ "max-bytes", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct cordon_canon_limits lim;
	struct cordon_diag d = {};
	bool want_fp = false;
	_cleanup_free_ char *in = NULL, *out = NULL;
	json_auto_t *doc = NULL;
	ssize_t n;
	size_t out_len;
	int c, r;

	cordon_version_flag(argc, argv, "cordon-jcs");
	log_set_program("cordon-jcs");
	cordon_canon_limits_default(&lim);
	while ((c = getopt_long(argc, argv, "fm:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'f':
			want_fp = true;
			break;
		case 'm': {
			uint64_t v;

			if (parse_size(optarg, &v) < 0 || v == 0 || v > ((uint64_t)1 << 30)) {
				log_error("--max-bytes: expected a size from 1 to 1G, got '%s'", optarg);
				return 2;
			}
			lim.max_bytes = (size_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	/* Read one byte more than allowed, to tell "at the limit" from "over". */
	in = malloc(lim.max_bytes + 1);
	if (!in) {
		log_error("out of memory");
		return 1;
	}
	n = read_full(STDIN_FILENO, in, lim.max_bytes + 1);
	if (n < 0) {
		log_error_errno((int)n, "reading standard input");
		return 1;
	}
	if ((size_t)n > lim.max_bytes) {
		log_error("input exceeds the limit of %zu bytes (--max-bytes)", lim.max_bytes);
		return 1;
	}

	if (want_fp) {
		r = cordon_canon_decode(in, (size_t)n, &lim, &doc, &d);
		if (r < 0) {
			log_error("%s", d.message);
			return 1;
		}
		return fingerprint(doc);
	}

	/* The broker's single-pass path (no tree), the one tools/call
	 * arguments take; same bytes and errors as decode + encode. */
	r = cordon_canon_bytes(in, (size_t)n, &lim, &out, &out_len, &d);
	if (r < 0) {
		log_error("%s", d.message);
		return 1;
	}
	if (write_all(STDOUT_FILENO, out, out_len) < 0) {
		log_error_errno(-errno, "writing standard output");
		return 1;
	}
	return 0;
}
