/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordon_db_migrations[i] migrates user_version i to i + 1. */
extern const char *const cordon_db_migrations[];
extern const unsigned cordon_db_n_migrations;
