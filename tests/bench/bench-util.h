/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Timing and percentile helpers the benchmark programs share. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (0..100) of v[0..n), n > 0; sorts v. */
static inline uint64_t pct(uint64_t *v, size_t n, unsigned p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) * p / 100];
}
