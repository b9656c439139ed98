/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launcher helper's server (launcher/lib/serve.c) driven over a
 * socketpair, one packet at a time with cordon_server_handle_one(), without
 * the helper process and without spawning: every request here is refused
 * before cordon_spawn() would run (the server starts each test with `cat`
 * and `noceil` in force, as cordond puts them), and each reply is asserted exactly
 * (type, id, status, diag step and message), as are the lines the server
 * hands to its log callback. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "profile.h"
#include "serve-proto.h"
#include "serve.h"
#include "test-support.h"

static char *base;
static char profiles[4096], work[4096 + 16], etc[4096 + 16], config[4096 + 32];
static int profiles_fd = -EBADF;
static int sv[2] = { -EBADF, -EBADF }; /* sv[0]: "cordond", sv[1]: the server's */
static struct cordon_server *server;
static struct cordon_caps caps;
static char log_lines[8][640];
static unsigned n_log_lines;
static struct cordon_serve_msg req, rep; /* req borrows what it sends and is never cleared */
static struct cordon_serve_root root;

/* clang-format off */
#define PROFILE_FMT                                                     \
	"version: 1\n"                                                  \
	"connector:\n"                                                  \
	"  description: test connector\n"                               \
	"  command: [/bin/cat]\n"                                       \
	"sandbox:\n"                                                    \
	"  user: dynamic\n"                                             \
	"  filesystem:\n"                                               \
	"    system:\n"                                                 \
	"      - {path: /usr, access: read-exec}\n"                     \
	"      - {path: /lib, access: read-exec}\n"                     \
	"      - {path: /bin, access: read-exec}\n"                     \
	"%s"                                                            \
	"    tmp: 1M\n"                                                 \
	"  network:\n"                                                  \
	"    mode: none\n"                                              \
	"tools:\n"                                                      \
	"  default_risk: read\n"
/* clang-format on */

static void on_log(enum log_level level, int error, const char *message, void *userdata)
{
	(void)userdata;
	if (n_log_lines < ELEMENTSOF(log_lines))
		snprintf(log_lines[n_log_lines++], sizeof(log_lines[0]), "%d %d %s", (int)level, error, message);
}

static void write_profile(const char *id, const char *ceiling, mode_t mode)
{
	char path[4096 + 64], body[8192], line[4096 + 64] = "";
	FILE *f;

	if (ceiling)
		snprintf(line, sizeof(line), "    ceiling: [%s]\n", ceiling);
	snprintf(body, sizeof(body), PROFILE_FMT, line);
	snprintf(path, sizeof(path), "%s/%s.yaml", profiles, id);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(body, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
	(void)state;
	base = cordon_test_mkdtemp("server");
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	snprintf(work, sizeof(work), "%s/work", base);
	assert_int_equal(mkdir(profiles, 0755), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	snprintf(etc, sizeof(etc), "%s/etc", base);
	snprintf(config, sizeof(config), "%s/cordond.yaml", etc);
	assert_int_equal(mkdir(etc, 0755), 0);
	write_profile("cat", work, 0644);
	write_profile("noceil", NULL, 0644);
	write_profile("ww", work, 0666);
	profiles_fd = open(profiles, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(profiles_fd >= 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	closep(&profiles_fd);
	(void)cordon_test_rm_rf(base);
	free(base);
	return 0;
}

static int server_start(void **state)
{
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	n_log_lines = 0;
	memset(&caps, 0, sizeof(caps));
	assert_int_equal(cordon_server_new(&(struct cordon_server_options){ .sock = sv[1],
									    .profiles_fd = profiles_fd,
									    .profiles_dir = profiles,
									    .caps = &caps,
									    .sigfd = -EBADF,
									    .log = on_log },
					   &server),
			 0);
	return 0;
}

static int server_stop(void **state)
{
	(void)state;
	cordon_server_free(server);
	server = NULL;
	closep(&sv[0]);
	closep(&sv[1]);
	cordon_serve_msg_clear(&rep);
	return 0;
}

/* Lets the server handle the one packet waiting, asserts it keeps serving. */
static void serve_one(void)
{
	struct pollfd p = { .fd = sv[1], .events = POLLIN };

	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(cordon_server_handle_one(server, p.revents), 0);
}

static void send_raw(const void *b, size_t n)
{
	assert_int_equal(send(sv[0], b, n, MSG_NOSIGNAL), (ssize_t)n);
	serve_one();
}

static void request(void)
{
	assert_int_equal(cordon_serve_send(sv[0], &req), 0);
	serve_one();
}

/* The next packet from the server is the reply, exactly. */
static void assert_reply(uint16_t type, uint32_t id, int error, const char *step, const char *message)
{
	struct pollfd p = { .fd = sv[0], .events = POLLIN };
	struct cordon_diag d = { 0 };

	assert_int_equal(poll(&p, 1, 5000), 1);
	cordon_serve_msg_clear(&rep);
	assert_int_equal(cordon_serve_recv(sv[0], &rep, &d), 0);
	assert_int_equal(rep.type, type);
	assert_int_equal(rep.id, id);
	assert_int_equal(rep.status, -error);
	assert_int_equal(rep.diag.error, error);
	assert_string_equal(rep.diag.step, step);
	assert_string_equal(rep.diag.message, message);
	assert_int_equal(rep.n_fds, 0);
}

/* Nothing more came from the server. */
static void assert_no_reply(void)
{
	struct pollfd p = { .fd = sv[0], .events = POLLIN };

	assert_int_equal(poll(&p, 1, 0), 0);
}

static void spawn_request(uint32_t id, const char *connector, const char *host, const char *sandbox)
{
	cordon_serve_msg_init(&req, CORDON_SERVE_SPAWN, id);
	snprintf(req.connector, sizeof(req.connector), "%s", connector);
	if (host) {
		snprintf(root.host, sizeof(root.host), "%s", host);
		snprintf(root.sandbox, sizeof(root.sandbox), "%s", sandbox ? sandbox : "");
		root.access = CORDON_ACCESS_READ;
		req.roots = &root;
		req.n_roots = 1;
	}
	request();
}

/* The hash of profiles/<id>.yaml as cordond computes it (the loader's). */
static void profile_sha(const char *id, char out[65])
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = { 0 };
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s.yaml", profiles, id);
	assert_int_equal(cordon_profile_load(path, &p, &d), 0);
	memcpy(out, p->sha256, 65);
	cordon_profile_free(p);
}

static void profiles_request(uint32_t id, const char *json)
{
	cordon_serve_msg_init(&req, CORDON_SERVE_PROFILES, id);
	req.json = (char *)json;
	request();
}

static int server_start_in_force(void **state)
{
	char json[256], a[65], b[65];

	server_start(state);
	profile_sha("cat", a);
	profile_sha("noceil", b);
	snprintf(json, sizeof(json), "{\"cat\":\"%s\",\"noceil\":\"%s\"}", a, b);
	profiles_request(1, json);
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 1, 0, "", "");
	n_log_lines = 0;
	return 0;
}

/* A SPAWN header whose payload is cut short: answered with -EBADMSG under
 * the request's own id and type, and logged once. */
static void test_malformed_request(void **state)
{
	uint8_t b[16] = { 'C', 'D', 'N', '1', CORDON_SERVE_SPAWN, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0 };

	(void)state;
	send_raw(b, sizeof(b));
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 9, EBADMSG, "serve",
		     "malformed message: field 'connector' at byte 16: truncated length");
	assert_int_equal(n_log_lines, 1);
	assert_string_equal(log_lines[0], "4 0 malformed request #1 from cordond: malformed message: field "
					  "'connector' at byte 16: truncated length");
}

/* Garbage without a request header is dropped (logged, not answered), and
 * a reply type sent as a request too; the server still serves. */
static void test_not_a_request_dropped(void **state)
{
	uint8_t b[16];

	(void)state;
	memset(b, 0xa5, sizeof(b));
	send_raw(b, sizeof(b));
	assert_no_reply();
	cordon_serve_msg_init(&req, CORDON_SERVE_KILL_REPLY, 3);
	request();
	assert_no_reply();
	assert_int_equal(n_log_lines, 2);
	assert_string_equal(log_lines[0], "4 0 malformed request #1 from cordond: malformed message: bad magic");
	assert_string_equal(log_lines[1],
			    "4 0 malformed request #2 from cordond: malformed message: a kill-reply message is not a "
			    "request");

	cordon_serve_msg_init(&req, CORDON_SERVE_KILL, 4);
	req.instance = 7;
	request();
	assert_reply(CORDON_SERVE_KILL_REPLY, 4, ENOENT, "kill", "no instance 7");
}

static void test_unknown_profile(void **state)
{
	char want[8192];

	(void)state;
	spawn_request(11, "nope", NULL, NULL);
	snprintf(want, sizeof(want),
		 "no profile for connector 'nope' is in force (cordond has not put %s/nope.yaml in force)", profiles);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 11, ENOENT, "profile", want);
	assert_int_equal(n_log_lines, 0);
}

static void test_invalid_connector_id(void **state)
{
	(void)state;
	spawn_request(12, "Bad\x01id", NULL, NULL);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 12, EINVAL, "request",
		     "'Bad?id' is not a valid connector id ([a-z0-9][a-z0-9-]{0,31})");
}

/* The reply to a refused PROFILES names the profile in its json. */
static void assert_refused_names(const char *id)
{
	char want[128];

	snprintf(want, sizeof(want), "{\"connector\":\"%s\"}", id);
	assert_string_equal(rep.json, want);
}

/* The helper's own checks apply when it reads a profile to put it in
 * force: a world-writable file refuses the whole set (cat stays in
 * force, ww never is), logged once. */
static void test_world_writable_profile(void **state)
{
	char want[8192], json[256], a[65], b[65];

	(void)state;
	profile_sha("cat", a);
	profile_sha("ww", b);
	snprintf(json, sizeof(json), "{\"cat\":\"%s\",\"ww\":\"%s\"}", a, b);
	profiles_request(13, json);
	snprintf(want, sizeof(want),
		 "profile '%s/ww.yaml' is group- or world-writable (mode 0666); only its owner may write it", profiles);
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 13, EPERM, "profile", want);
	assert_refused_names("ww");
	assert_int_equal(n_log_lines, 1);
	spawn_request(14, "ww", NULL, NULL);
	snprintf(want, sizeof(want),
		 "no profile for connector 'ww' is in force (cordond has not put %s/ww.yaml in force)", profiles);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 14, ENOENT, "profile", want);
	/* cat is still in force: the request gets as far as its ceiling. */
	spawn_request(15, "cat", "/etc", NULL);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 15, EPERM, "root",
		     "root '/etc' refused: not beneath the ceiling of profile 'cat' (checked on disk, symlinks "
		     "refused)");
}

/* A profile whose bytes do not hash to what cordond named (changed on
 * disk since cordond read it) is refused: ESTALE. */
static void test_profile_hash_mismatch(void **state)
{
	char want[8192], json[256];

	(void)state;
	snprintf(json, sizeof(json), "{\"cat\":\"%064d\"}", 0);
	profiles_request(16, json);
	snprintf(want, sizeof(want), "%s/cat.yaml changed on disk since cordond read it; reload again", profiles);
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 16, ESTALE, "profile", want);
	assert_refused_names("cat");
}

/* The set is parsed strictly; each refusal is exact. */
static void test_profiles_set_malformed(void **state)
{
	(void)state;
	profiles_request(17, "[]");
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 17, EINVAL, "request",
		     "the profile set is not a JSON object of at most 1024 profiles");
	profiles_request(18, "{\"a\":\"x\",\"a\":\"y\"}");
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 18, EINVAL, "request",
		     "the profile set is not a JSON object of at most 1024 profiles");
	profiles_request(19, "{\"../x\":\"00\"}");
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 19, EINVAL, "request",
		     "'../x' is not a valid connector id ([a-z0-9][a-z0-9-]{0,31})");
	assert_string_equal(rep.json, "");
	profiles_request(20, "{\"cat\":\"ABC\"}");
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 20, EINVAL, "request",
		     "profile cat: the hash is not 64 lower-case hex digits");
	assert_refused_names("cat");
	/* An empty set is a set: nothing in force. */
	profiles_request(21, "{}");
	assert_reply(CORDON_SERVE_PROFILES_REPLY, 21, 0, "", "");
	spawn_request(22, "cat", NULL, NULL);
	{
		char want[8192];

		snprintf(want, sizeof(want),
			 "no profile for connector 'cat' is in force (cordond has not put %s/cat.yaml in force)",
			 profiles);
		assert_reply(CORDON_SERVE_SPAWN_REPLY, 22, ENOENT, "profile", want);
	}
}

/* Ceiling violations, checked against the profile on disk. */
static void test_root_outside_ceiling(void **state)
{
	(void)state;
	spawn_request(14, "cat", "/etc", NULL);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 14, EPERM, "root",
		     "root '/etc' refused: not beneath the ceiling of profile 'cat' (checked on disk, symlinks "
		     "refused)");
}

static void test_root_without_ceiling(void **state)
{
	char host[8192];

	(void)state;
	snprintf(host, sizeof(host), "%s", work);
	spawn_request(15, "noceil", host, NULL);
	snprintf(host, sizeof(host), "root '%s' refused: profile 'noceil' has no ceiling, so no root can be added",
		 work);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 15, EPERM, "root", host);
}

static void test_root_over_system_view(void **state)
{
	(void)state;
	spawn_request(16, "cat", work, "/usr/x");
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 16, EPERM, "root",
		     "root 0: sandbox path '/usr/x' overlaps the system path '/usr'");
}

static void test_root_not_canonical(void **state)
{
	(void)state;
	spawn_request(17, "cat", "/etc/../tmp", NULL);
	assert_reply(CORDON_SERVE_SPAWN_REPLY, 17, EINVAL, "root",
		     "root 0: host path '/etc/../tmp' is not absolute and canonical");
}

/* EOF from cordond ends the server's loop. */
static void test_eof_ends(void **state)
{
	struct pollfd p = { .fd = sv[1], .events = POLLIN };

	(void)state;
	closep(&sv[0]);
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(cordon_server_handle_one(server, p.revents), -ECONNRESET);
	assert_int_equal(cordon_server_run(server), 0);
}

/* ---- CONFIG_READ ------------------------------------------------------------ */

/* Writes path through a temporary file renamed over it (as editors and
 * dpkg do), with mode. */
static void write_config(const char *path, const char *text, size_t len, mode_t mode)
{
	char tmp[4096 + 64];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static int server_start_config(void **state)
{
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	n_log_lines = 0;
	memset(&caps, 0, sizeof(caps));
	write_config(config, "approval_wait: 5s\n", 18, 0644);
	assert_int_equal(chmod(etc, 0755), 0);
	assert_int_equal(cordon_server_new(&(struct cordon_server_options){ .sock = sv[1],
									    .profiles_fd = profiles_fd,
									    .profiles_dir = profiles,
									    .config_path = config,
									    .caps = &caps,
									    .sigfd = -EBADF,
									    .log = on_log },
					   &server),
			 0);
	return 0;
}

static void config_request(uint32_t id)
{
	cordon_serve_msg_init(&req, CORDON_SERVE_CONFIG_READ, id);
	request();
}

/* The file's bytes, and after a rename over the path, the new file's. */
static void test_config_read_follows_rename(void **state)
{
	(void)state;
	config_request(30);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 30, 0, "", "");
	assert_string_equal(rep.json, "approval_wait: 5s\n");
	write_config(config, "approval_wait: 7s\nsessions_per_uid: 3\n", 38, 0600);
	config_request(31);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 31, 0, "", "");
	assert_string_equal(rep.json, "approval_wait: 7s\nsessions_per_uid: 3\n");
	assert_int_equal(n_log_lines, 0);
}

/* A symlink put in place of the file is refused (whatever it points to),
 * and said so in the helper's log too. */
static void test_config_read_symlink(void **state)
{
	char want[8192], other[4096 + 32];

	(void)state;
	snprintf(other, sizeof(other), "%s/other.yaml", etc);
	write_config(other, "approval_wait: 9s\n", 18, 0644);
	assert_int_equal(unlink(config), 0);
	assert_int_equal(symlink(other, config), 0);
	config_request(32);
	snprintf(want, sizeof(want), "configuration '%s' is a symlink; refusing it", config);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 32, ELOOP, "config", want);
	assert_string_equal(rep.json, "");
	assert_int_equal(n_log_lines, 1);
	assert_non_null(strstr(log_lines[0], want));
	assert_int_equal(unlink(config), 0);
	assert_int_equal(unlink(other), 0);
}

static void test_config_read_group_writable(void **state)
{
	char want[8192];

	(void)state;
	write_config(config, "approval_wait: 9s\n", 18, 0664);
	config_request(33);
	snprintf(want, sizeof(want),
		 "configuration '%s' is group- or world-writable (mode 0664); only its owner may write it", config);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 33, EPERM, "config", want);
}

/* A directory others can write lets them replace the file: refused. */
static void test_config_read_directory_writable(void **state)
{
	char want[8192];

	(void)state;
	assert_int_equal(chmod(etc, 0777), 0);
	config_request(34);
	snprintf(want, sizeof(want),
		 "configuration directory '%s' is group- or world-writable (mode 0777); only its owner may write it",
		 etc);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 34, EPERM, "config", want);
	assert_int_equal(chmod(etc, 0755), 0);
}

/* As root, a file root does not own is refused: its owner could change
 * what cordond enforces. (Not root, the helper accepts its own uid's file,
 * which the other tests exercise.) */
static void test_config_read_not_root_owned(void **state)
{
	char want[8192];

	(void)state;
	if (geteuid() != 0) {
		printf("  not root: the root-ownership rule does not apply\n");
		return;
	}
	assert_int_equal(chown(config, 1000, 1000), 0);
	config_request(38);
	snprintf(want, sizeof(want), "configuration '%s' is owned by uid 1000, not root", config);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 38, EPERM, "config", want);
}

static void test_config_read_too_big(void **state)
{
	char want[8192], *big = malloc(CORDON_SERVE_MAX_CONFIG + 1);

	(void)state;
	assert_non_null(big);
	memset(big, '#', CORDON_SERVE_MAX_CONFIG + 1);
	write_config(config, big, CORDON_SERVE_MAX_CONFIG + 1, 0644);
	free(big);
	config_request(35);
	snprintf(want, sizeof(want), "configuration '%s' is larger than %u bytes", config, CORDON_SERVE_MAX_CONFIG);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 35, EFBIG, "config", want);
}

static void test_config_read_nul(void **state)
{
	char want[8192];

	(void)state;
	write_config(config, "a: 1\n\0", 6, 0644);
	config_request(36);
	snprintf(want, sizeof(want), "configuration '%s' contains a NUL byte", config);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 36, EINVAL, "config", want);
}

/* A helper started without --config has no file to give. */
static void test_config_read_none(void **state)
{
	(void)state;
	config_request(37);
	assert_reply(CORDON_SERVE_CONFIG_READ_REPLY, 37, ENOENT, "config",
		     "the launcher helper was started without --config");
}

/* A relative path is refused at start: the file is named once, fully. */
static void test_config_path_relative(void **state)
{
	struct cordon_server *s = NULL;

	(void)state;
	assert_int_equal(cordon_server_new(&(struct cordon_server_options){ .sock = sv[1],
									    .profiles_fd = profiles_fd,
									    .profiles_dir = profiles,
									    .config_path = "etc/cordond.yaml",
									    .caps = &caps,
									    .sigfd = -EBADF },
					   &s),
			 -EINVAL);
	assert_null(s);
}

#define T(f)  cmocka_unit_test_setup_teardown(f, server_start_in_force, server_stop)
#define TC(f) cmocka_unit_test_setup_teardown(f, server_start_config, server_stop)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_malformed_request),
		T(test_not_a_request_dropped),
		T(test_unknown_profile),
		T(test_invalid_connector_id),
		T(test_world_writable_profile),
		T(test_root_outside_ceiling),
		T(test_root_without_ceiling),
		T(test_root_over_system_view),
		T(test_root_not_canonical),
		T(test_eof_ends),
		T(test_profile_hash_mismatch),
		T(test_profiles_set_malformed),
		TC(test_config_read_follows_rename),
		TC(test_config_read_symlink),
		TC(test_config_read_group_writable),
		TC(test_config_read_directory_writable),
		TC(test_config_read_too_big),
		TC(test_config_read_nul),
		TC(test_config_read_not_root_owned),
		T(test_config_read_none),
		T(test_config_path_relative),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
