/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch --serve FD --profiles DIR [--config FILE]: the privileged launcher helper of
 * cordond (docs/privsep.md). This verb parses its arguments and sets the
 * process up (dies with cordond, ignores SIGPIPE, takes SIGTERM/SIGINT/
 * SIGHUP through a signalfd (SIGHUP is ignored there), opens and checks the profiles directory,
 * probes the kernel, removes a dead helper's cgroups, loads the egress
 * policy); the server itself is launcher/lib/serve.c. --config names the
 * one file a CONFIG_READ request returns (cordond's own --config, absolute,
 * fixed here for the helper's life). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "probe.h"
#include "serve-proto.h"
#include "serve.h"
#include "spawn.h"
#include "verbs.h"

extern char **environ;

static void log_line(enum log_level level, int error, const char *message, void *userdata)
{
	(void)userdata;
	(void)log_internal(level, error, "%s", message);
}

int verb_serve(int argc, char **argv)
{
	_cleanup_close_ int sigfd = -EBADF, profiles_fd = -EBADF;
	struct cordon_netpolicy_state *np = NULL;
	struct cordon_server *s = NULL;
	struct cordon_caps caps;
	const char *dir = NULL, *config = NULL;
	uint64_t fd64;
	sigset_t mask;
	int type = 0, sock, r;
	socklen_t sl = sizeof(type);

	/* Under cordond's unit, stderr is the journal: the helper's lines
	 * carry their priorities too (cordond's log, docs/cordond.md). Any
	 * other stderr keeps the plain "cordon-launch: ..." lines. */
	if (log_journal_stream_matches(getenv("JOURNAL_STREAM"), STDERR_FILENO))
		(void)log_open_stderr();
	/* argv[0] is "--serve". */
	if (argc < 2 || parse_u64(argv[1], &fd64) < 0 || fd64 < 3 || fd64 > INT_MAX) {
		log_error("--serve needs a socket fd number (>= 3)");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--profiles") == 0 && i + 1 < argc && !dir)
			dir = argv[++i];
		else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc && !config)
			config = argv[++i];
		else {
			log_error(
				"--serve: unexpected argument '%s' (usage: --serve FD --profiles DIR [--config FILE])",
				argv[i]);
			return 2;
		}
	}
	if (!dir) {
		log_error("--serve needs --profiles DIR");
		return 2;
	}
	if (config && config[0] != '/') {
		log_error("--serve: --config '%s' must be an absolute path", config);
		return 2;
	}

	/* Die with cordond. If it already died before this line, the socket
	 * reads EOF below and we exit the same way. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
		log_error_errno(-errno, "PR_SET_PDEATHSIG");
		return 1;
	}

	if (getsockopt((int)fd64, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 || type != SOCK_SEQPACKET) {
		log_error("--serve: fd %d is not a SOCK_SEQPACKET socket", (int)fd64);
		return 2;
	}

	sock = (int)fd64;
	(void)fd_set_cloexec(sock, 1);
	/* Room for the largest message (the default send buffer is smaller). */
	(void)setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &(int){ CORDON_SERVE_MAX_MSG + 4096 }, sizeof(int));
	/* A closed connector pipe or socket must be an error, not a signal. */
	(void)signal(SIGPIPE, SIG_IGN);

	/* SIGTERM/SIGINT stop the helper cleanly (instances killed); SIGHUP
	 * is logged and ignored (the server's loop), so a SIGHUP to cordond's
	 * whole process group reloads cordond and leaves the helper and its
	 * connectors running. Taken through the signalfd rather than SIG_IGN,
	 * which connectors would inherit across exec; blocking them is safe
	 * for connectors: the sandbox init resets its signal mask before
	 * anything runs. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || (sigfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
		log_error_errno(-errno, "signalfd");
		return 1;
	}

	profiles_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (profiles_fd < 0) {
		log_error_errno(-errno, "profiles directory '%s'", dir);
		return 1;
	}
	{
		struct cordon_diag d = { 0 };
		struct stat st;

		if (fstat(profiles_fd, &st) < 0) {
			log_error_errno(-errno, "profiles directory '%s'", dir);
			return 1;
		}
		r = cordon_server_check_owner_mode(&st, "profiles directory", dir, &d);
		if (r < 0) {
			log_error("%s", d.message);
			return 1;
		}
	}

	/* The dynamic-uid lock's directory exists, root's, before cordond
	 * (which takes its runtime directory over) could make one. */
	{
		struct cordon_diag d = { 0 };
		int lock_fd = -EBADF;

		r = cordon_dynamic_uid_lock_open(&lock_fd, &d);
		if (r < 0) {
			log_error("%s", d.message);
			return 1;
		}
		close(lock_fd);
	}

	r = cordon_probe(&caps);
	if (r < 0) {
		log_error_errno(r, "probing the kernel failed");
		return 1;
	}
	/* Instance cgroups of a helper that was SIGKILLed are removed now
	 * (their processes died with it through PDEATHSIG). */
	(void)cordon_cgroup_cleanup_stale(&caps);
	/* The egress policy, loaded once for every instance, so that its
	 * denial events reach cordond. Without it (no BPF, CORDON_BPF=OFF)
	 * cordon_spawn() plans each launch without the eBPF layer: refused
	 * or degraded as the profile says. */
	if (caps.bpf_cgroup_sock_addr) {
		struct cordon_diag d = { 0 };

		r = cordon_netpolicy_open(&np, &d);
		if (r < 0)
			log_warning("eBPF egress policy unavailable: %s", d.message);
	}

	r = cordon_server_new(&(struct cordon_server_options){ .sock = sock,
							       .profiles_fd = profiles_fd,
							       .profiles_dir = dir,
							       .config_path = config,
							       .caps = &caps,
							       .netpolicy = np,
							       .env = environ,
							       .sigfd = sigfd,
							       .log = log_line },
			      &s);
	if (r < 0)
		log_error_errno(r, "starting the server");
	else
		r = cordon_server_run(s);
	/* Every instance is gone before its egress policy is. */
	cordon_server_free(s);
	cordon_netpolicy_close(np);
	return r < 0 ? 1 : 0;
}
