/*
 * Rules: named properties checked on a case beyond its outputs. The block
 * contract rule (HC_STATE_DEFAULTS, SPEC.md §8.3b, §10.2): a backend's block
 * entry is called with the optional state (post_mix, res_mix, residual) left
 * out and with neutral state supplied, under both contracts; both calls must
 * succeed and agree.
 */
#ifndef MTP_RULES_H
#define MTP_RULES_H

#include <stdbool.h>

#include "mtp/backend.h"
#include "mtp/fixture.h"

/* Whether the rule applies to this case (a stateless mtp_block, an mtp_step
 * or a draft_chain, whose block inputs it reuses). */
bool mtp_rule_block_applies(const struct mtp_case *c);

/* Runs the rule on backend be. Returns false, with the violation in msg, if
 * the stateless call fails where the stateful one works, or they differ. */
bool mtp_rule_block_contract(struct mtp_backend *be, const struct mtp_case *c,
			     char *msg, size_t n);

#endif
