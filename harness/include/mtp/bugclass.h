/*
 * A bug class is one row of data (docs/ARCHITECTURE.md "Add a bug class"):
 * its name, its history line, where the judge tries it and where it shows,
 * and the bug itself as ONE change that both the judge's hypothesis (the
 * reference run as the buggy engine ran it) and the mutant backend (a
 * correct backend made to have the bug) apply, so the two cannot drift.
 * The rows are listed in mtp/bug_list.h, one file per row (or per small
 * family of variants) in harness/src/bugs/.
 *
 * The change is at most one of:
 *  - edit: the call's inputs and attributes as the bug has them (a weight
 *    swapped or replaced, a scale changed, an attribute flipped; a mistake
 *    inside the op that no input expresses: an internal attribute of
 *    struct mtp_params that no file sets). The judge runs the reference on
 *    the edited call; the mutant copies the inputs to the host, edits them
 *    with the same function and runs its base on them.
 *  - after_step: what the bug does to one MTP step's outputs before the
 *    next step is fed (a recycled tensor taken elsewhere, logits from
 *    another hidden), written against struct mtp_bug_step_ops, which the
 *    reference implements on its buffers and the mutant with its base
 *    backend's own kernels.
 *  - partials: which partials a tensor-parallel call reduces and what it
 *    does after (a partial left unreduced, reduced twice, reduced past the
 *    final norm), written against struct mtp_bug_tp_ops, which the
 *    reference implements on the host and the mutant with its base
 *    backend's own kernels.
 *  - after_run (mutant only, no hypothesis): what the bug does to the
 *    finished outputs (directed rounding, flipped bits).
 * A row with none of them is a name the judge or the weight audit gives
 * from other evidence (a remap, a determinism mode, a TypeError).
 */
#ifndef MTP_BUGCLASS_H
#define MTP_BUGCLASS_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/op.h"

enum mtp_diag {
	MTP_DIAG_NONE,
#define MTP_BUG(id, row) MTP_DIAG_##id,
#include "mtp/bug_list.h"
#undef MTP_BUG
	MTP_DIAG_COUNT
};

enum mtp_bug_flags {
	MTP_BUG_NUMERIC = 1u
			  << 0, /* named from outputs (else: weights, modes) */
	MTP_BUG_MUTANT = 1u << 1,   /* a mutant reproduces it (selftest) */
	MTP_BUG_INFO = 1u << 2,	    /* information, never a failure */
	MTP_BUG_STEPWISE = 1u << 3, /* after_step feeds the next step: a
				       chain's mutant runs step by step */
};

/* An edit (struct mtp_bug_class.edit). The call's inputs are on the host.
 * in[] starts as a copy of c->in; an entry may be set to another input of
 * c (its struct), to absent (data NULL), or to own[i], a tensor the edit
 * allocates with mtp_tensor_alloc (own[] starts zeroed; the caller frees
 * it). p is a copy of the call's attributes the edit may change. */
struct mtp_bug_edit {
	const struct mtp_call *c;
	struct mtp_params *p;
	struct mtp_tensor *in, *own;
};

/* One finished MTP step (struct mtp_bug_class.after_step): `step` of the
 * call, run by MTP layer `layer`; mhc: the layer has mHC streams. Tensors
 * are the step's outputs and captured inputs by their unprefixed names
 * (mtp_step's signature: "recycled", "hidden_pre", "hidden_post",
 * "streams", "block_out", "block_residual", "head_hidden", "logits"). */
struct mtp_bug_step {
	const struct mtp_bug_step_ops *ops;
	const struct mtp_call *c;
	int64_t step, layer;
	bool mhc;
};

struct mtp_bug_step_ops {
	/* dst <- src (dst's size) */
	enum mtp_status (*copy)(const struct mtp_bug_step *s, const char *dst,
				const char *src);
	/* logits, token <- lm_head(RMSNorm(x)) with layer `layer`'s shared
	 * head, or lm_head(x) when !norm */
	enum mtp_status (*head)(const struct mtp_bug_step *s, const char *x,
				bool norm);
	/* head_hidden <- hc_head(streams) with the hc_head parameters of
	 * layer hc_layer, then head("head_hidden", true) */
	enum mtp_status (*mhc_head)(const struct mtp_bug_step *s,
				    int64_t hc_layer);
	/* streams <- hc_post(block_out, streams, post_mix, comb_mix) */
	enum mtp_status (*hc_post_again)(const struct mtp_bug_step *s);
};

/* Rank `rank` of `np` (>= 2) of a tensor-parallel call (struct
 * mtp_bug_class.partials): an all_reduce, or a tensor-parallel captured
 * mtp_step, whose partials input (mtp_bug_tp_parts) holds np partials of n
 * values each; x is them, [np][n], as doubles. */
struct mtp_bug_tp {
	const struct mtp_bug_tp_ops *ops;
	const struct mtp_call *c;
	int64_t rank, np, n;
	const double *x;
};

struct mtp_bug_tp_ops {
	/* the call's outputs <- the call run on partials `parts` ([np][n],
	 * rounded to the partials' dtype) */
	enum mtp_status (*run)(const struct mtp_bug_tp *t, const double *parts);
	/* out[n] <- the all-reduce of parts ([np][n]) in the declared order */
	enum mtp_status (*reduce)(const struct mtp_bug_tp *t,
				  const double *parts, double *out);
	/* v <- the call's output `name` (n values), and back */
	enum mtp_status (*get)(const struct mtp_bug_tp *t, const char *name,
			       double *v);
	enum mtp_status (*put)(const struct mtp_bug_tp *t, const char *name,
			       const double *v);
	/* logits, token <- lm_head(z) with the call's own head (z: [n]) */
	enum mtp_status (*head)(const struct mtp_bug_tp *t, const double *z);
};

struct mtp_bug_class {
	const char *name;	/* as printed and parsed ("X.variant") */
	const char *section;	/* SPEC.md section */
	const char *history;	/* the field report, one line */
	const char *applies_to; /* where the judge tries it, in words */
	const char *shows_in;	/* the outputs it changes, in words */
	unsigned flags;		/* enum mtp_bug_flags */
	/* An engine with the bug may return output alt_out with the shape of
	 * the hypothesis's output alt_from (both unprefixed names): the judge
	 * then measures it against that one (NULL: none). */
	const char *alt_out, *alt_from;
	/* Whether the judge tries the hypothesis on this call (NULL: never).
	 * Only where it can differ from the correct outputs. */
	bool (*applies)(const struct mtp_call *c);
	enum mtp_status (*edit)(struct mtp_bug_edit *e);
	enum mtp_status (*after_step)(const struct mtp_bug_step *s);
	enum mtp_status (*partials)(const struct mtp_bug_tp *t);
	/* output k of the call, downloaded to the host (changed in place);
	 * call_no counts the mutant's calls in this process */
	enum mtp_status (*after_run)(const struct mtp_call *c, uint32_t call_no,
				     struct mtp_tensor *out);
	/* mutant: whether the buggy engine refuses the call, with `refusal` */
	bool (*refuses)(const struct mtp_call *c);
	const char *refusal;
};

#endif
