/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The states of the action ledger (actions.c owns the table). A header of
 * its own so a module that only reads states (connectors.c refuses removal
 * while actions are unresolved) does not depend on actions.c, which depends
 * on the decision (decide.c) that reads connectors. Stored as integers:
 * never renumber. */
enum cordon_action_state {
	CORDON_ACTION_PREPARED = 0,
	CORDON_ACTION_DISPATCHED = 1,
	CORDON_ACTION_SUCCEEDED = 2,
	CORDON_ACTION_FAILED = 3,
	CORDON_ACTION_ABANDONED = 4,
	CORDON_ACTION_OUTCOME_UNKNOWN = 5,
};
