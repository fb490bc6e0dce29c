/*
 * Between mutant.c (the wrapper and the §8 bugs) and mutant_field.c (the
 * §12 bugs seen in the field).
 */
#ifndef MTP_MUTANT_INT_H
#define MTP_MUTANT_INT_H

#include "mtp/mutant.h"

/* Whether d is one of mutant_field.c's. */
bool mtp_mutant_field(enum mtp_diag d);
/* Runs the call on base with bug d (mutant_field.c). */
enum mtp_status mtp_mutant_field_launch(struct mtp_backend *base,
					enum mtp_diag d,
					const struct mtp_call *c);

#endif
