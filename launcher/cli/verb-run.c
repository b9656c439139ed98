/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-launch --profile FILE [--root HOST:SANDBOX:ACCESS]... [--report FILE] [-- CMD ARGS...]
 *
 * Runs one connector in the foreground, stdio passed through. Exit status
 * like a shell: the connector's status, 128+signal when it was killed, 125
 * when the sandbox could not be built (one line names the step and errno),
 * 2 for usage errors. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <jansson.h>

#include "cgroup.h"
#include "cleanup.h"
#include "log.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "probe.h"
#include "profile.h"
#include "spawn.h"
#include "verbs.h"

#define EXIT_SETUP 125
#define EXIT_USAGE 2
#define MAX_ROOTS  64

extern char **environ;

static int parse_root(char *arg, struct cordon_fs_entry *ret)
{
	char *first = strchr(arg, ':'), *last = strrchr(arg, ':');

	if (!first || first == last)
		return -EINVAL;
	*first = '\0';
	*last = '\0';
	ret->path = arg;
	ret->at = first + 1;
	if (strcmp(last + 1, "read") == 0)
		ret->access = CORDON_ACCESS_READ;
	else if (strcmp(last + 1, "read-exec") == 0)
		ret->access = CORDON_ACCESS_READ_EXEC;
	else if (strcmp(last + 1, "read-write") == 0)
		ret->access = CORDON_ACCESS_READ_WRITE;
	else
		return -EINVAL;
	if (!path_is_absolute_canonical(ret->path) || !path_is_absolute_canonical(ret->at))
		return -EINVAL;
	return 0;
}

static int write_report(const char *path, const json_t *report, const struct cordon_diag *err)
{
	_cleanup_close_ int fd = -EBADF;
	json_t *out;
	char *s;
	int r;

	if (!path)
		return 0;
	if (report)
		out = json_incref((json_t *)report);
	else
		out = json_pack("{s:i, s:{s:s, s:i, s:s}}", "version", 1, "error", "step", err->step, "errno",
				err->error, "message", err->message);
	if (!out)
		return -ENOMEM;
	s = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(out);
	if (!s)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(s);
		return -errno;
	}
	r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) && write(fd, "\n", 1) == 1 ? 0 : -EIO;
	free(s);
	return r;
}

/* One structured line per egress denial, on stderr (stdout is the
 * connector's MCP stream). */
static int print_denial(const struct cordon_netpolicy_event *ev, void *userdata)
{
	char line[CORDON_NETPOLICY_EVENT_LINE_MAX];

	(void)userdata;
	if (cordon_netpolicy_event_format(ev, line, sizeof(line)) >= 0)
		fprintf(stderr, "%s\n", line);
	return 0;
}

static int setup_failed(const char *report_path, const struct cordon_diag *d)
{
	log_error("sandbox setup failed at step '%s': %s: %s", d->step, d->message, strerror(d->error));
	(void)write_report(report_path, NULL, d);
	return EXIT_SETUP;
}

int verb_run(int argc, char **argv)
{
	_cleanup_(cordon_profile_freep) struct cordon_profile *profile = NULL;
	_cleanup_(cordon_instance_freep) struct cordon_instance *inst = NULL;
	_cleanup_close_ int sfd = -EBADF;
	struct cordon_fs_entry roots[MAX_ROOTS];
	struct cordon_launch_policy pol = { 0 };
	const char *profile_path = NULL, *report_path = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_netpolicy_state *np;
	struct cordon_caps caps;
	char **cmd = NULL;
	size_t n_roots = 0;
	sigset_t mask;
	int r, status = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
			profile_path = argv[++i];
		else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
			report_path = argv[++i];
		else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
			if (n_roots == MAX_ROOTS) {
				log_error("too many --root options (at most %d)", MAX_ROOTS);
				return EXIT_USAGE;
			}
			if (parse_root(argv[++i], &roots[n_roots]) < 0) {
				log_error("--root wants HOST:SANDBOX:ACCESS with absolute canonical paths and ACCESS "
					  "read, read-exec or read-write");
				return EXIT_USAGE;
			}
			n_roots++;
		} else if (strcmp(argv[i], "--") == 0) {
			if (i + 1 >= argc) {
				log_error("'--' must be followed by a command");
				return EXIT_USAGE;
			}
			cmd = argv + i + 1;
			break;
		} else {
			log_error("unknown or incomplete option '%s' (see --help)", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!profile_path) {
		log_error("--profile FILE is required");
		return EXIT_USAGE;
	}

	/* Only what a launch decides with (no report of the probe is shown). */
	r = cordon_probe_opts(&caps, CORDON_PROBE_FOR_SPAWN);
	if (r < 0)
		return log_error_errno(r, "probing the kernel failed"), EXIT_SETUP;
	/* Instance cgroups of a launcher that was SIGKILLed: kill and remove. */
	(void)cordon_cgroup_cleanup_stale(&caps);

	r = cordon_profile_load(profile_path, &profile, &d);
	if (r < 0) {
		log_error("sandbox setup failed at step '%s': %s:%u:%u: %s: %s", *d.step ? d.step : "profile",
			  profile_path, d.line, d.column, d.message, strerror(d.error > 0 ? d.error : -r));
		(void)write_report(report_path, NULL, &d);
		return EXIT_SETUP;
	}
	for (size_t i = 0; i < n_roots; i++)
		if (cordon_spawn_check_beneath_ceiling(profile, roots[i].path, &d) < 0)
			return setup_failed(report_path, &d);

	/* Signals are blocked before the sandbox exists and read from a
	 * signalfd afterwards: none is lost in between, and each is forwarded
	 * to the sandbox's init, which forwards it to the connector. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_error_errno(-errno, "sigprocmask"), EXIT_SETUP;
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return log_error_errno(-errno, "signalfd"), EXIT_SETUP;

	pol.profile = profile;
	pol.extra_roots = roots;
	pol.n_extra_roots = n_roots;
	pol.argv = cmd;
	pol.env_source = environ;
	pol.stdio = CORDON_STDIO_INHERIT;
	pol.one_shot = true;
	r = cordon_spawn(&pol, &caps, &inst, &d);
	if (r < 0)
		return setup_failed(report_path, &d);

	np = cordon_spawn_netpolicy();
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = cordon_instance_pidfd(inst), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = np ? cordon_netpolicy_events_fd(np) : -1, .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error_errno(-errno, "poll");
			break;
		}
		if (p[2].revents)
			(void)cordon_netpolicy_poll_events(np, print_denial, NULL);
		if (p[0].revents)
			break;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				(void)cordon_instance_signal(inst, (int)si.ssi_signo);
	}
	if (np)
		(void)cordon_netpolicy_poll_events(np, print_denial, NULL);
	r = cordon_instance_wait(inst, &status);
	if (r < 0)
		return log_error_errno(r, "waiting for the sandbox"), EXIT_SETUP;
	r = write_report(report_path, cordon_instance_report(inst), NULL);
	if (r < 0)
		log_warning_errno(r, "cannot write the report to '%s'", report_path);
	return cordon_exit_code(status);
}
