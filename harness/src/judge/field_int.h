/*
 * What the hypotheses (diag_field.c) and the mutants (mutant_field.c) of the
 * field bugs share: which inputs are heads and block scales, and how each
 * bug changes a block scale. Implemented in diag_field.c.
 */
#ifndef MTP_FIELD_INT_H
#define MTP_FIELD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/diagnose.h"

/* "layer.1/head_weight" -> "head_weight". */
const char *mtp_field_base(const char *name);
bool mtp_field_ends_with(const char *s, const char *suffix);
/* Input i is a head weight (head_weight of any layer, an lm_head's weight). */
bool mtp_field_is_head(const struct mtp_call *c, int i);
/* Input i is the block scale of a head. */
bool mtp_field_is_head_scale(const struct mtp_call *c, int i);
/* The index of layer (l+1) mod L's input named like input i (same shape),
 * or i when there is none. */
int mtp_field_other_layer(const struct mtp_call *c, int i);
/* Element (r, k) of a rows x cols block scale as bug d has it: the flat
 * index of the source element, and the value made of the source's v. */
int64_t mtp_field_scale_src(enum mtp_diag d, int64_t r, int64_t k, int64_t rows,
			    int64_t cols);
double mtp_field_scale_value(enum mtp_diag d, double v);

#endif
