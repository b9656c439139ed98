/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-audit-verify: verifies the broker's audit log.
 *
 *   cordon-audit-verify DATABASE VERIFIER-KEY [ORIGIN]
 *
 * VERIFIER-KEY is the C2SP note verifier key "<name>+<key id>+<base64>"
 * (the public half of the broker's signing key). Prints one report line
 * (PASS / GAP / DUPLICATE / BREAK / BAD-SIG / TRUNCATION / MISSING-CHECKPOINT, see
 * docs/authorization.md) and exits 0 for PASS, 1 for any other report, 2
 * when the database or key cannot be used. Run it as the broker's user: the
 * database is refused when anyone else could read it. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "version-flag.h"
#include "audit.h"
#include "checkpoint.h"
#include "db.h"
#include "log.h"

int main(int argc, char **argv)
{
	struct cordon_note_verifier v;
	struct cordon_audit_report rep;
	struct cordon_audit_options ao = {};
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	char line[400];
	int r;

	cordon_version_flag(argc, argv, "cordon-audit-verify");
	log_set_program("cordon-audit-verify");
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: cordon-audit-verify DATABASE VERIFIER-KEY [ORIGIN]\n");
		return 2;
	}
	r = cordon_note_verifier_parse(argv[2], &v, &d);
	if (r < 0) {
		log_error_errno(r, "verifier key: %s", d.message);
		return 2;
	}
	/* Never create a database here: verifying a path that does not exist is
	 * an error, not an empty PASS. */
	if (access(argv[1], F_OK) < 0) {
		log_error_errno(-errno, "'%s'", argv[1]);
		return 2;
	}
	r = cordon_db_open(argv[1], NULL, &db, &d);
	if (r < 0) {
		log_error_errno(r, "%s", d.message);
		return 2;
	}
	if (argc == 4) {
		/* With an origin, checkpoints must carry exactly it. Setup without
		 * a signer only records the origin. */
		ao.origin = argv[3];
		r = cordon_audit_setup(db, &ao, NULL, &d);
		if (r < 0) {
			cordon_db_close(db);
			log_error_errno(r, "%s", d.message);
			return 2;
		}
	}
	r = cordon_audit_verify(db, &v, &rep);
	if (r < 0) {
		log_error_errno(r, "reading the audit log: %s", cordon_db_last_error(db));
		cordon_db_close(db);
		return 2;
	}
	cordon_db_close(db);
	cordon_audit_report_format(&rep, line, sizeof(line));
	printf("%s\n", line);
	return rep.verdict == CORDON_AUDIT_PASS ? 0 : 1;
}
