/*
 * Internal to the harness: the captured-block form of mtp_step and
 * draft_chain (SPEC.md §12.3, FORMAT.md version 2). The reference run
 * and the bug hypotheses of the diagnoses on such a call, and the case
 * preparation that keeps real-size judging cheap (sampled vocabulary rows).
 */
#ifndef MTP_CAPTURED_H
#define MTP_CAPTURED_H

#include "mtp/bugclass.h"
#include "mtp/fixture.h"
#include "ops/ops.h"

/* The reference on a captured call (outputs into io's double arrays). */
enum mtp_status mtp_captured_run(const struct mtp_ref_io *io);

/* The same with a step bug's row (its after_step) applied to each step
 * before the next is fed. */
enum mtp_status mtp_captured_hypothesis(const struct mtp_ref_io *io,
					const struct mtp_bug_class *row);

/* [Step V3-8] A tensor-parallel step's block output: the partials
 * reduced as declared ([T,H], to free; the first T*H values), with cfg's
 * final add made fused under reduce_at = final_norm. NULL: no memory. */
double *mtp_captured_tp_block_out(const struct mtp_ref_io *io,
				  struct mtp_ref_step_cfg *cfg);

/* Real sizes: for a captured case whose vocabulary is larger than
 * MTP_SAMPLE_MIN_V, unless `full`, keeps only a deterministic sample of the
 * vocabulary rows (every k-th row, and every token and id the case holds) in
 * head_weight, embed_table and the logits, and renumbers the tokens and ids
 * into it; the reference then computes the vocabulary GEMM on those rows
 * only. `note` says so (empty when nothing was sampled). Data is loaded. */
#define MTP_SAMPLE_MIN_V 8192
#define MTP_SAMPLE_ROWS 4096
enum mtp_status mtp_captured_prepare(struct mtp_case *c, bool full, char *note,
				     size_t noten, char *err, size_t errn);

#endif
