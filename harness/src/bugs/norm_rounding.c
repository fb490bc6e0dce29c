/*
 * NORM_ROUNDING (SPEC.md §2.1/§2.2): the other RMSNorm rounding (eager
 * double rounding vs fused single rounding). A legitimate variant, named
 * as information on a passing output; no mutant.
 */
#include "bugs.h"

#include <string.h>

static bool applies(const struct mtp_call *c)
{
	return strstr(c->op->attrs, "rounding") != NULL;
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	e->p->rounding = e->p->rounding == MTP_ROUNDING_EAGER
				 ? MTP_ROUNDING_FUSED
				 : MTP_ROUNDING_EAGER;
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_norm_rounding = {
	.name = "NORM_ROUNDING",
	.section = "§2.1/§2.2",
	.history = "eager double rounding vs fused single rounding of RMSNorm: "
		   "a tolerance matter, not a bug",
	.applies_to = "ops with a rounding attribute",
	.shows_in = "every output after a norm, within tolerance",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_INFO,
	.applies = applies,
	.edit = edit,
};
