/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The states of an approval (approvals.c owns the table). A header of its
 * own, like action-state.h, so the schema (db-schema.c) can tie the numbers
 * it stores to these names without depending on approvals.c. Stored as
 * integers: never renumber. */
enum cordon_approval_state {
	CORDON_APPROVAL_REQUESTED = 0,
	CORDON_APPROVAL_APPROVED = 1,
	CORDON_APPROVAL_DENIED = 2,
	CORDON_APPROVAL_EXPIRED = 3,
	CORDON_APPROVAL_REVOKED = 4,
	CORDON_APPROVAL_CONSUMED = 5,
};
