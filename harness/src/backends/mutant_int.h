/*
 * Between mutant.c (the wrapper and the step bugs, on the base's own
 * kernels) and mutant_edit.c (a row's edit of the inputs and after_run of
 * the outputs, through host copies).
 */
#ifndef MTP_MUTANT_INT_H
#define MTP_MUTANT_INT_H

#include "bugs/bugs.h"
#include "mtp/mutant.h"

/* Runs the call on base with its inputs as row->edit has them. */
enum mtp_status mtp_mutant_edit_launch(struct mtp_backend *base,
				       const struct mtp_bug_class *row,
				       const struct mtp_call *c);
/* row->after_run on every output of a call base has run. */
enum mtp_status mtp_mutant_after_run(struct mtp_backend *base,
				     const struct mtp_bug_class *row,
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

/* A device tensor of dtype dt and shape [ndim]shape (data NULL on
 * error). */
enum mtp_status mtp_mutant_scratch(struct mtp_backend *base,
				   struct mtp_tensor *t, enum mtp_dtype dt,
				   int ndim, const int64_t *shape);

/* row's `partials` change (an all-reduce bug, SPEC.md §8.8) on a call it
 * applies to, with base's own kernels (mutant_tp.c). */
enum mtp_status mtp_mutant_partials(struct mtp_backend *base,
				    const struct mtp_bug_class *row,
				    const struct mtp_call *c);

#endif
