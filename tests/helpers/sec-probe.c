/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sec-probe: one attempt per run for the security suite, from inside a
 * sandbox or as a dropped-privilege process. Exit status: 0 when the attempt
 * succeeded, else its errno; one line on stdout says what happened.
 *   sec-probe unix-connect PATH   connect(2) to a pathname unix socket
 *   sec-probe open-rw PATH        open(2) O_RDWR
 *   sec-probe open-ro PATH        open(2) O_RDONLY
 *   sec-probe udp-send ADDR PORT  sendto(2) one UDP datagram to an IPv4 address */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int report(const char *what, const char *path, int r)
{
	int e = r < 0 ? errno : 0;

	printf("%s %s: %s (errno %d)\n", what, path, e ? strerror(e) : "ok", e);
	fflush(stdout);
	return e;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 200;
	if (strcmp(argv[1], "unix-connect") == 0) {
		struct sockaddr_un su = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return report("socket", argv[2], -1);
		if (strlen(argv[2]) >= sizeof(su.sun_path))
			return 201;
		strcpy(su.sun_path, argv[2]);
		return report("connect", argv[2], connect(fd, (struct sockaddr *)&su, sizeof(su)));
	}
	if (strcmp(argv[1], "udp-send") == 0 && argc > 3) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])) };
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return report("socket", argv[2], -1);
		if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
			return 203;
		return report("sendto", argv[2], (int)sendto(fd, "leak", 4, 0, (struct sockaddr *)&sa, sizeof(sa)));
	}
	if (strcmp(argv[1], "open-rw") == 0)
		return report("open-rw", argv[2], open(argv[2], O_RDWR | O_CLOEXEC));
	if (strcmp(argv[1], "open-ro") == 0)
		return report("open-ro", argv[2], open(argv[2], O_RDONLY | O_CLOEXEC));
	return 202;
}
