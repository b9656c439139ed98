/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cordon_diag_setv(struct cordon_diag *d, int error, const char *step, unsigned line, unsigned column,
		     const char *fmt, va_list ap)
{
	if (error <= 0)
		error = EIO;
	if (d) {
		d->error = error;
		d->line = line;
		d->column = column;
		snprintf(d->step, sizeof(d->step), "%s", step ? step : "");
		vsnprintf(d->message, sizeof(d->message), fmt, ap);
	}
	return -error;
}

int cordon_diag_set(struct cordon_diag *d, int error, const char *step, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = cordon_diag_setv(d, error, step, 0, 0, fmt, ap);
	va_end(ap);
	return r;
}

int cordon_diag_set_at(struct cordon_diag *d, int error, const char *step, unsigned line, unsigned column,
		       const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = cordon_diag_setv(d, error, step, line, column, fmt, ap);
	va_end(ap);
	return r;
}
