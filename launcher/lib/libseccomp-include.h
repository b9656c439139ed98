/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* launcher/lib is on the include path, so cordon's contract header
 * launcher/lib/seccomp.h shadows libseccomp's <seccomp.h>. This file lives
 * in that same directory: included as <libseccomp-include.h>, its
 * #include_next continues the search *after* launcher/lib and reaches the
 * library's header, wherever pkg-config put it. */
#include_next <seccomp.h>
