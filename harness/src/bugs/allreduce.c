/*
 * The all-reduce classes (SPEC.md §8.8, Step V3-8): under tensor
 * parallelism a rank's partial is never reduced, reduced twice, replaced by
 * a multiplication by the world size, or reduced after the final norm.
 * They are rows like the others for the table, `list diagnoses` and the
 * self-test, but their change is not yet one function: the judge's
 * hypothesis is judge/diag_tp.c and the mutant backends/mutant_tp.c (both
 * need the call's P partials and the declared order, which an edit of the
 * inputs cannot express for ALLREDUCE_AFTER_NORM). Moving them onto one
 * change is open (docs/ARCHITECTURE.md).
 */
#include "bugs.h"

#define TP_ROW(id_name, text, shows)                                           \
	{                                                                      \
		.name = id_name, .section = "§8.8, Step V3-8",                 \
		.history = text,                                               \
		.applies_to = "rank tp_rank of an all_reduce or of a "         \
			      "tensor-parallel captured mtp_step, P >= 2",     \
		.shows_in = shows, .flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,  \
	}

const struct mtp_bug_class mtp_bug_allreduce_missing =
	TP_ROW("ALLREDUCE_MISSING",
	       "a rank's partial never all-reduced: the output is its own "
	       "partial (TRT-LLM #16617, draft MoE under plain TP; acceptance "
	       "about halved)",
	       "every output after the reduction point");
const struct mtp_bug_class mtp_bug_allreduce_twice =
	TP_ROW("ALLREDUCE_TWICE",
	       "an already-reduced tensor all-reduced again: P times the sum "
	       "(ROCm/ATOM #1764, 2.94 -> 2.08 tokens per forward)",
	       "every output after the reduction point");
const struct mtp_bug_class mtp_bug_allreduce_scaled =
	TP_ROW("ALLREDUCE_SCALED",
	       "the all-reduce replaced by a multiplication by the world size "
	       "(vLLM #48763, caught in review)",
	       "every output after the reduction point");
const struct mtp_bug_class mtp_bug_allreduce_after_norm =
	TP_ROW("ALLREDUCE_AFTER_NORM",
	       "the all-reduce moved past the final norm: logits right up to "
	       "scale, the pre-norm and recycled hidden wrong",
	       "hidden_pre and recycled (the logits only up to scale)");
