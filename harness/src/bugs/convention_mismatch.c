/*
 * CONVENTION_MISMATCH (SPEC.md §12.1): the dump was made under the other
 * value of a declared engine convention. One hypothesis per convention,
 * which the judge builds from the convention table (diag_hyp.c,
 * mtp_diag_conv_*); no mutant.
 */
#include "bugs.h"

const struct mtp_bug_class mtp_bug_convention_mismatch = {
	.name = "CONVENTION_MISMATCH",
	.section = "§12.1",
	.history = "the dump was made under another value of a declared engine "
		   "convention than it declares (legitimate in itself: fix the "
		   "declaration or the engine)",
	.applies_to = "calls that exercise a declared convention",
	.shows_in = "the outputs the convention acts on",
	.flags = MTP_BUG_NUMERIC,
};
