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

/* An op call on the base backend, built from the op table (mutant_sub.c):
 * init from the parent's params and dims, bind tensors by name, run and
 * synchronize. */
struct mtp_subcall {
	struct mtp_signature sig;
	struct mtp_call c;
	struct mtp_tensor in[MTP_SIG_MAX], out[MTP_SIG_MAX];
};
enum mtp_status mtp_mutant_sub_init(struct mtp_subcall *s, enum mtp_op_id op,
				    const struct mtp_call *parent);
void mtp_mutant_sub_set(struct mtp_subcall *s, bool out, const char *name,
			const struct mtp_tensor *t);
enum mtp_status mtp_mutant_sub_run(struct mtp_backend *base,
				   struct mtp_subcall *s);

/* One call of op on base, its tensors bound by name (mutant_sub.c). */
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
