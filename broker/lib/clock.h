/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Time for the broker's state: every expiry, TTL and audit timestamp goes
 * through a struct cordon_clock so that tests drive time explicitly (a
 * virtual clock) instead of sleeping. Times are microseconds since the Unix
 * epoch, UTC (CLOCK_REALTIME for the real clock). */

#include <stddef.h>
#include <stdint.h>

struct cordon_clock {
	uint64_t (*now_usec)(void *userdata);
	void *userdata;
};

/* The real clock (CLOCK_REALTIME). */
extern const struct cordon_clock cordon_clock_real;

/* Current time of c, or of the real clock when c is NULL. */
uint64_t cordon_clock_now(const struct cordon_clock *c);

/* A virtual clock for tests: time moves only when the test says so. */
struct cordon_virtual_clock {
	struct cordon_clock clock;
	uint64_t now;
};

void cordon_virtual_clock_init(struct cordon_virtual_clock *v, uint64_t start_usec);
void cordon_virtual_clock_advance(struct cordon_virtual_clock *v, uint64_t delta_usec);

#define CORDON_USEC_PER_SEC UINT64_C(1000000)

/* Formats t as RFC 3339 UTC with microseconds, "2026-11-29T20:50:40.123456Z".
 * buf must hold at least CORDON_TIME_STRING_MAX bytes. Returns buf. */
#define CORDON_TIME_STRING_MAX 32
char *cordon_time_format(uint64_t t_usec, char *buf, size_t size);

/* Parses an ISO 8601 UTC time: "YYYY-MM-DD" (midnight UTC),
 * "YYYY-MM-DDTHH:MM:SSZ" or with 1 to 6 fractional digits
 * ("...SS.123456Z", what cordon_time_format() writes). Nothing else: no
 * offsets, no missing 'Z', no year before 1970, no invalid dates. Returns 0
 * and writes *ret (microseconds since the epoch), or -EINVAL. */
int cordon_time_parse(const char *s, uint64_t *ret);
