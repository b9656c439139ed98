/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Each verb gets argv starting at its own option and returns the process
 * exit status. */
int verb_probe(int argc, char **argv);
int verb_check(int argc, char **argv);
int verb_run(int argc, char **argv);
int verb_serve(int argc, char **argv);
