/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by canon.c (the reference: pre-scan, jansson, tree encoder) and
 * canon-fast.c (the single-pass path), so both apply one definition of each
 * rule. Not an API for other modules. */

#include <stdbool.h>

#include "canon.h"

/* lim with zero fields (or lim == NULL) replaced by the defaults. */
struct cordon_canon_limits cordon_canon_limits_resolve(const struct cordon_canon_limits *lim);

/* strtod in the "C" locale, whatever the process's LC_NUMERIC. */
double cordon_canon_strtod_c(const char *s, char **end);

/* 2^53 − 1 < |x| < 1e21: an integral double whose canonical form would be an
 * integer lexeme outside the safe range (admission refuses it). */
bool cordon_canon_in_integer_band(double x);
