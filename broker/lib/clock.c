/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "clock.h"

#include <stdio.h>
#include <time.h>

static uint64_t real_now(void *userdata)
{
	struct timespec ts;

	(void)userdata;
	/* CLOCK_REALTIME cannot fail with a valid clock id and pointer. */
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * CORDON_USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

const struct cordon_clock cordon_clock_real = {
	.now_usec = real_now,
	.userdata = NULL,
};

uint64_t cordon_clock_now(const struct cordon_clock *c)
{
	if (!c || !c->now_usec)
		c = &cordon_clock_real;
	return c->now_usec(c->userdata);
}

static uint64_t virtual_now(void *userdata)
{
	const struct cordon_virtual_clock *v = userdata;

	return v->now;
}

void cordon_virtual_clock_init(struct cordon_virtual_clock *v, uint64_t start_usec)
{
	v->clock.now_usec = virtual_now;
	v->clock.userdata = v;
	v->now = start_usec;
}

void cordon_virtual_clock_advance(struct cordon_virtual_clock *v, uint64_t delta_usec)
{
	v->now += delta_usec;
}

char *cordon_time_format(uint64_t t_usec, char *buf, size_t size)
{
	time_t secs = (time_t)(t_usec / CORDON_USEC_PER_SEC);
	unsigned usec = (unsigned)(t_usec % CORDON_USEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&secs, &tm)) {
		snprintf(buf, size, "invalid-time");
		return buf;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
	return buf;
}
