/*
 * Between mutant.c (the wrapper and the §8 bugs), mutant_field.c (the
 * §12 bugs seen in the field) and mutant_det.c (determinism).
 */
#ifndef MTP_MUTANT_INT_H
#define MTP_MUTANT_INT_H

#include "mtp/mutant.h"

/* Whether d is one of mutant_field.c's (mutant_det.c's included). */
bool mtp_mutant_field(enum mtp_diag d);
/* Runs the call on base with bug d (mutant_field.c). */
enum mtp_status mtp_mutant_field_launch(struct mtp_backend *base,
					enum mtp_diag d,
					const struct mtp_call *c);

/* Whether d is one of mutant_det.c's (determinism), and a call on base
 * with it, which mtp_mutant_field_launch hands over. */
bool mtp_mutant_det(enum mtp_diag d);
enum mtp_status mtp_mutant_det_launch(struct mtp_backend *base, enum mtp_diag d,
				      const struct mtp_call *c);

/* One call of op on base built from the op table with the parent's params
 * and dims, its tensors bound by name (mutant.c). */
struct mtp_sub_bind {
	bool out;
	const char *name;
	const struct mtp_tensor *t;
};
enum mtp_status mtp_mutant_sub(struct mtp_backend *base, enum mtp_op_id op,
			       const struct mtp_call *parent,
			       const struct mtp_sub_bind *b, int n);

/* The all-reduce bugs (mutant_tp.c, SPEC.md §8.8): a call on base with
 * bug d; calls it does not touch go to base as they are. */
enum mtp_status mtp_mutant_tp_launch(struct mtp_backend *base, enum mtp_diag d,
				     const struct mtp_call *c);

#endif
