/*
 * Internal to the ops rows: dspark_step's captured-block form (SPEC.md
 * §13.9.1), its signature and its reference, which dspark_step's row uses
 * under block = captured.
 */
#ifndef MTP_ROWS_DSPARK_CAPTURED_H
#define MTP_ROWS_DSPARK_CAPTURED_H

#include "rows.h"

/* The head's outputs, both forms' (h, base_logits, markov_embed, logits,
 * token, confidence: reference/dspark_head.c), ROW_END-terminated. */
extern const struct mtp_tspec mtp_dspark_head_out[];

void mtp_dspark_captured_sig(struct mtp_sig_build *b,
			     const struct mtp_params *p);
enum mtp_status mtp_dspark_captured_ref(const struct mtp_ref_io *io);

#endif
