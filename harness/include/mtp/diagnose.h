/*
 * Named diagnoses (ARCHITECTURE.md "Rules and diagnoses"): when an output fails,
 * the reference is run under each bug hypothesis that applies to the op, and
 * the hypothesis the observed outputs match is named, with how much better it
 * matches than the correct reference and the bug's history in one line.
 *
 * Claim criterion: over the outputs where the hypothesis differs from the
 * correct reference (the informative ones), the observed outputs are within
 * the composite error budget of the hypothesis (normwise), and at least
 * MTP_DIAG_MIN_RATIO times closer to it than to the correct reference.
 * Otherwise the failure stays undiagnosed. NORM_ROUNDING is information only.
 */
#ifndef MTP_DIAGNOSE_H
#define MTP_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/bugclass.h"
#include "mtp/op.h"

#define MTP_DIAG_MIN_RATIO 4.0

/* The bug class row of d (mtp/bugclass.h); the empty NONE row for an
 * unknown d. */
const struct mtp_bug_class *mtp_diag_info(enum mtp_diag d);
bool mtp_diag_parse(const char *name, enum mtp_diag *out);

/* Whether hypothesis d can be computed for this call (op, family, attrs,
 * inputs: e.g. MISSING_POS0_MASK needs a position 0). */
bool mtp_diag_applies(enum mtp_diag d, const struct mtp_call *c);

/* The outputs the op gives under bug d, in signature order, into hyp
 * (allocated here, shapes as the call's). The call's inputs are host. */
enum mtp_status mtp_diag_hypothesis(enum mtp_diag d, const struct mtp_call *c,
				    struct mtp_tensor *hyp);

struct mtp_diag_score {
	enum mtp_diag diag;
	int variant;	/* CONVENTION_MISMATCH: the conventions flipped, one bit
		      * (1u << enum mtp_conv_id) each; more than one when the
		      * outputs match only their joint other values */
	double err_hyp; /* normwise error of the observed vs the hypothesis */
	double err_ref; /* ... vs the correct reference */
	int informative; /* outputs where the hypothesis differs */
};

struct mtp_diag_result {
	enum mtp_diag diag; /* the claimed one, or NONE */
	double ratio;	    /* err_ref / err_hyp of the claimed one */
	double err_hyp;
	int variant;	/* as in the score */
	bool info;	/* information only (NORM_ROUNDING): no failure */
	char text[400]; /* one line for the console and reports */
	int n_scores;
	/* every bug class once, every combination of conventions (31 at most) */
	struct mtp_diag_score scores[MTP_DIAG_COUNT + 40];
};

/* CONVENTION_MISMATCH (diag_hyp.c): whether convention `id` is a
 * hypothesis for this call (declared, used by the op, and not pos0_mask = 1,
 * whose mismatch is MISSING_POS0_MASK); whether every convention of `mask`
 * (a bit per enum mtp_conv_id) is; and the outputs under the other value of
 * each convention of `mask` at once (a dump that declares two wrong). */
bool mtp_diag_conv_applies(int id, const struct mtp_call *c);
bool mtp_diag_conv_mask_applies(unsigned mask, const struct mtp_call *c);
enum mtp_status mtp_diag_conv_hypothesis(unsigned mask,
					 const struct mtp_call *c,
					 struct mtp_tensor *hyp);
/* "add_norm_input declared residual, outputs match sum", one clause per
 * convention of mask */
void mtp_diag_conv_describe(unsigned mask, const struct mtp_call *c, char *buf,
			    size_t n);

/* Scores every applicable hypothesis for observed outputs `got` (signature
 * order; NULL data where absent) against the correct outputs `want` (same
 * order; NULL data where the judge has none). */
void mtp_diagnose(const struct mtp_call *c, const struct mtp_tensor *got,
		  const struct mtp_tensor *want, struct mtp_diag_result *out);

/* Whether the call's positions hold a 0 (where the position-0 mask acts). */
bool mtp_call_has_zero_position(const struct mtp_call *c);

/* On passing outputs: whether they are another value of a declared
 * convention (CONVENTION_MISMATCH claimed into out), which fails the case:
 * a declared convention is the contract even where the tolerance would
 * accept the other value (§12.1). False, out zeroed, otherwise. */
bool mtp_diagnose_declared(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out);

/*
 * SHARED_HEAD_UNINIT as a parameter sanity rule over a problem's head and
 * embedding weights (head_weight, layer.N/head_weight, embed_table, and an
 * lm_head's weight): NaN/Inf; the whole tensor, or at least 1 % of its rows,
 * all zeros; at least 1 % of its rows constant; at least 0.1 % of the
 * non-zero elements outside [1e-20, 1e4] in magnitude (the spread of
 * uninitialised memory read as floats). Float8 weights are checked on their
 * stored e4m3 values for NaN only. Returns whether one fired, with the rule
 * and the tensor in why.
 */
bool mtp_weights_suspect(const struct mtp_tensor_list *inputs, char *why,
			 size_t n);
/* The elements the rule looks at (0: the problem has no such weight, and
 * `verify --weights-only` checked nothing). */
int64_t mtp_weights_checked(const struct mtp_tensor_list *inputs);

/* On a passing output with a visible difference: whether the other RMSNorm
 * rounding (eager vs fused) explains it. Information, never a failure. */
void mtp_diagnose_rounding(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out);

#endif
