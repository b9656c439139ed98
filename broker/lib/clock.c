/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
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

/* Reads exactly n decimal digits at s. Returns the value or -1. */
static int digits(const char *s, unsigned n)
{
	int v = 0;

	for (unsigned i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so parsing needs neither the TZ nor timegm(). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int cordon_time_parse(const char *s, uint64_t *ret)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h = 0, mi = 0, sec = 0;
	uint64_t frac = 0, t;
	size_t n;
	int64_t days;

	if (!s)
		return -EINVAL;
	n = strlen(s);
	if (n < 10 || s[4] != '-' || s[7] != '-')
		return -EINVAL;
	y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || (unsigned)d > mdays[mo - 1])
		return -EINVAL;
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return -EINVAL;
	s += 10;
	if (*s) {
		if (strlen(s) < 10 || s[0] != 'T' || s[3] != ':' || s[6] != ':')
			return -EINVAL;
		h = digits(s + 1, 2), mi = digits(s + 4, 2), sec = digits(s + 7, 2);
		if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
			return -EINVAL;
		s += 9;
		if (*s == '.') {
			unsigned k = 0;

			for (s++; *s >= '0' && *s <= '9'; s++, k++) {
				if (k >= 6)
					return -EINVAL;
				frac = frac * 10 + (uint64_t)(*s - '0');
			}
			if (k == 0)
				return -EINVAL;
			for (; k < 6; k++)
				frac *= 10;
		}
		/* UTC only: a time without its zone is ambiguous, and an
		 * offset is one more thing to get wrong in an audit query. */
		if (strcmp(s, "Z") != 0)
			return -EINVAL;
	}
	days = days_from_civil(y, (unsigned)mo, (unsigned)d);
	t = ((uint64_t)days * 86400 + (uint64_t)h * 3600 + (uint64_t)mi * 60 + (uint64_t)sec) * CORDON_USEC_PER_SEC +
	    frac;
	*ret = t;
	return 0;
}
