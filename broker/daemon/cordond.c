/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond: the broker daemon. A thin main over the daemon core
 * (broker/daemon/daemon-core.c); see docs/architecture.md for the process model. */
#include <stdio.h>
#include <stdlib.h>

#include "version-flag.h"
#include "daemon-core.h"
#include "log.h"
#include "paths.h"

static void usage(void)
{
	printf("Usage: cordond [OPTIONS]\n"
	       "  --config FILE            YAML configuration (flags override it)\n"
	       "  --profiles DIR           connector profiles (*.yaml)\n"
	       "  --state DIR              database and audit key (created 0700)\n"
	       "  --runtime DIR            sockets (default: STATE/run)\n"
	       "  --user NAME              user to run as (as root default: cordond's private id %u,\n"
	       "                           which no user entry names; a shared account such as nobody\n"
	       "                           is refused)\n"
	       "  --operator-group NAME    group allowed on operator.sock and http.sock\n"
	       "  --gateway-group NAME     restrict gateway.sock to a group (default: 0666)\n"
	       "  --http 127.0.0.1:PORT    TCP listener for /health and /metrics\n"
	       "  --approval-wait DUR      how long a call waits for approval (default 30s)\n"
	       "  --result-cap SIZE        largest tool result relayed (default 1M)\n"
	       "  --launcher PATH          cordon-launch binary (default: " CORDON_LIBEXEC_LAUNCH ")\n"
	       "  --max-sessions N         concurrent gateway sessions (default 4096)\n"
	       "  --log-level LEVEL        error, warning, notice, info (default) or debug\n"
	       "  --debug                  verbose log (--log-level debug)\n"
	       "Example: cordond --state ./state --profiles profiles\n",
	       CORDON_BROKER_PRIVATE_ID);
}

int main(int argc, char **argv)
{
	struct cordon_daemon_config cfg;
	struct cordon_daemon *d = NULL;
	struct cordon_diag diag = {};
	int r;

	cordon_version_flag(argc, argv, "cordond");
	log_set_program("cordond");
	/* Priorities for the journal when stderr is it (systemd's
	 * JOURNAL_STREAM), the level's name otherwise. */
	(void)log_open_stderr();
	cordon_daemon_config_init(&cfg);
	r = cordon_daemon_config_parse_args(&cfg, argc, argv, &diag);
	if (r == 1) {
		usage();
		cordon_daemon_config_done(&cfg);
		return 0;
	}
	if (r >= 0)
		r = cordon_daemon_config_finish(&cfg, &diag);
	if (r < 0) {
		if (diag.line)
			log_error("%s (line %u, column %u)", diag.message, diag.line, diag.column);
		else
			log_error("%s", diag.message);
		cordon_daemon_config_done(&cfg);
		return 2;
	}
	log_set_max_level((enum log_level)cordon_daemon_config_log_level(&cfg));
	r = cordon_daemon_new_args(&cfg, NULL, argc, argv, &d, &diag);
	cordon_daemon_config_done(&cfg);
	if (r < 0) {
		log_error("start-up failed at %s: %s", diag.step, diag.message);
		return 1;
	}
	r = cordon_daemon_run(d);
	cordon_daemon_free(d);
	return r < 0 ? 1 : r;
}
