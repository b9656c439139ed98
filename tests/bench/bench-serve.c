/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the privsep split costs cordond: (1) one request/reply round trip to
 * the launcher helper (a KILL of an unknown instance: protocol plus a table
 * lookup), (2) spawn of /bin/true through the helper until its SPAWN_REPLY,
 * and until its EXITED event is dispatched, against (3) the same
 * cordon_spawn() + wait + free called in-process, the baseline, in the same
 * run. Figures only, no assertion. Root only.
 * Usage: bench-serve [N] (spawns; default 50; round trips are 40 N). The
 * helper binary is $CORDON_LAUNCH, else <build>/launcher/cordon-launch next
 * to this program's build directory. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launcher-client.h"
#include "probe.h"
#include "profile.h"
#include "spawn.h"
#include "test-support.h"
#include "bench-util.h"

static uint64_t report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	printf("%-36s median %9.3f ms  p99 %9.3f ms  min %9.3f ms  (n=%d)\n", what, v[n / 2] / 1e6,
	       v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e6, v[0] / 1e6, n);
	return v[n / 2];
}

static unsigned n_exited;

static void on_exited(void *u, uint32_t instance, int st, const json_t *report)
{
	(void)u, (void)instance, (void)st, (void)report;
	n_exited++;
}

static const char *profile_text = "version: 1\n"
				  "connector:\n"
				  "  command: [/bin/true]\n"
				  "sandbox:\n"
				  "  user: dynamic\n"
				  "  filesystem:\n"
				  "    system:\n"
				  "      - {path: /usr, access: read-exec}\n"
				  "      - {path: /lib, access: read-exec}\n"
				  "      - {path: /lib64, access: read-exec}\n"
				  "      - {path: /bin, access: read-exec}\n"
				  "      - {path: /etc/ld.so.cache, access: read}\n"
				  "    tmp: 1M\n"
				  "  network:\n"
				  "    mode: none\n"
				  "  limits: {memory: 64M, pids: 16}\n"
				  "  require: [landlock, seccomp, cgroup, namespaces]\n"
				  "tools:\n"
				  "  default_risk: read\n";

int main(int argc, char **argv)
{
	static const struct cordon_launcher_handlers h = { .exited = on_exited };
	int n = argc > 1 ? atoi(argv[1]) : 50, rt_n;
	char launch[PATH_MAX], profiles[PATH_MAX + 16], path[PATH_MAX + 64], self[PATH_MAX];
	uint64_t *rt, *reply, *full, *direct, m_reply, m_full, m_direct;
	struct cordon_launcher_client *lc = NULL;
	struct cordon_profile *p = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	char *base;
	FILE *f;
	int r;

	if (n < 1 || n > 10000) {
		fprintf(stderr, "usage: %s [N]\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-serve: needs root\n");
		return 77;
	}
	rt_n = 40 * n;
	if (getenv("CORDON_LAUNCH"))
		snprintf(launch, sizeof(launch), "%s", getenv("CORDON_LAUNCH"));
	else {
		ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (k < 0)
			return 1;
		self[k] = '\0';
		snprintf(launch, sizeof(launch), "%s/../../launcher/cordon-launch", dirname(self));
	}
	base = cordon_test_mkdtemp("bench-serve");
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	if (mkdir(profiles, 0755) < 0)
		return 1;
	snprintf(path, sizeof(path), "%s/true.yaml", profiles);
	f = fopen(path, "we");
	if (!f)
		return 1;
	fputs(profile_text, f);
	fclose(f);

	rt = calloc((size_t)rt_n, sizeof(*rt));
	reply = calloc((size_t)n, sizeof(*reply));
	full = calloc((size_t)n, sizeof(*full));
	direct = calloc((size_t)n, sizeof(*direct));
	if (!rt || !reply || !full || !direct)
		return 1;

	r = cordon_launcher_client_start(launch, profiles, &h, &lc, &d);
	if (r < 0) {
		fprintf(stderr, "bench-serve: starting %s: %s\n", launch, d.message);
		return 1;
	}
	/* The profile in force, as cordond puts it. */
	{
		struct cordon_profile *prof = NULL;
		char failed[64];

		r = cordon_profile_load(path, &prof, &d);
		if (r >= 0)
			r = cordon_launcher_client_profiles(lc, &prof, 1, failed, sizeof(failed), &d);
		cordon_profile_free(prof);
		if (r < 0) {
			fprintf(stderr, "bench-serve: profile: %s\n", d.message);
			return 1;
		}
	}
	for (int i = 0; i < rt_n; i++) {
		uint64_t t0 = now_ns();

		(void)cordon_launcher_client_kill(lc, 0xffffffffu, &d);
		rt[i] = now_ns() - t0;
	}
	for (int i = 0; i < n; i++) {
		struct cordon_launched l;
		unsigned want = n_exited + 1;
		uint64_t t0 = now_ns();

		r = cordon_launcher_client_spawn(lc, "true", NULL, NULL, 0, &l, &d);
		if (r < 0) {
			fprintf(stderr, "bench-serve: spawn: %s: %s\n", d.step, d.message);
			return 1;
		}
		reply[i] = now_ns() - t0;
		while (n_exited < want) {
			struct pollfd pf = { .fd = cordon_launcher_client_fd(lc), .events = POLLIN };

			if (poll(&pf, 1, 10000) <= 0)
				return 1;
			(void)cordon_launcher_client_dispatch(lc);
		}
		full[i] = now_ns() - t0;
		close(l.stdin_fd);
		close(l.stdout_fd);
		close(l.stderr_fd);
		json_decref(l.report);
	}
	cordon_launcher_client_free(lc);

	/* Baseline: the same profile spawned in-process. */
	if (cordon_probe(&caps) < 0 || cordon_profile_load(path, &p, &d) < 0) {
		fprintf(stderr, "bench-serve: baseline setup: %s\n", d.message);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct cordon_launch_policy pol = { .profile = p, .stdio = CORDON_STDIO_PIPES };
		struct cordon_instance *inst = NULL;
		uint64_t t0 = now_ns();
		int st;

		if (cordon_spawn(&pol, &caps, &inst, &d) < 0) {
			fprintf(stderr, "bench-serve: cordon_spawn: %s: %s\n", d.step, d.message);
			return 1;
		}
		(void)cordon_instance_wait(inst, &st);
		cordon_instance_free(inst);
		direct[i] = now_ns() - t0;
	}
	cordon_profile_free(p);

	printf("bench-serve: launcher helper over SOCK_SEQPACKET vs in-process cordon_spawn (same run)\n");
	report("request round trip (KILL unknown)", rt, rt_n);
	m_reply = report("spawn via helper: until SPAWN_REPLY", reply, n);
	m_full = report("spawn via helper: until EXITED", full, n);
	m_direct = report("cordon_spawn+wait+free in-process", direct, n);
	printf("ratio helper/in-process (median, until EXITED): %.2f; helper overhead %+.3f ms\n",
	       (double)m_full / (double)m_direct, ((double)m_full - (double)m_direct) / 1e6);
	(void)m_reply;
	cordon_test_rm_rf(base);
	free(base);
	free(rt);
	free(reply);
	free(full);
	free(direct);
	return 0;
}
