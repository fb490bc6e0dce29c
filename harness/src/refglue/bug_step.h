/*
 * Internal to the harness: the reference's side of a step bug
 * (mtp/bugclass.h struct mtp_bug_step_ops) on one step's double buffers,
 * shared by the plain steps (judge/diag_hyp.c) and the captured-block run
 * (captured_ref.c), so a row's after_step runs the same way on both.
 */
#ifndef MTP_BUG_STEP_H
#define MTP_BUG_STEP_H

#include "mtp/bugclass.h"
#include "mtp/ref.h"

struct mtp_ref_bug_step {
	struct mtp_bug_step s; /* first: the row sees this */
	const struct mtp_ref_dims *d;
	const struct mtp_ref_step_cfg *cfg;
	const struct mtp_ref_v3_layer *v3; /* every layer's, [L] */
	const struct mtp_ref_v4_layer *v4;
	struct mtp_ref_step_out o; /* the step's buffers (captured: the
				      block_* and mixes are its inputs) */
};

/* Applies row's after_step to the step in x (s.c, s.step, s.layer, s.mhc,
 * the weights and buffers set by the caller). */
enum mtp_status mtp_ref_bug_step_apply(struct mtp_ref_bug_step *x,
				       const struct mtp_bug_class *row);

#endif
