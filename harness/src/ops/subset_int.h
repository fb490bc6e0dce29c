/*
 * The pieces of weights by subset (FORMAT.md v2 rules 1-6) that subset.c
 * (checks, load-time layout, column views), judge/subset_judge.c (what is
 * judged) and refglue/captured_sample.c (the vocabulary renumbering) share;
 * other subsystems include it through ops/ops.h.
 */
#ifndef MTP_SUBSET_INT_H
#define MTP_SUBSET_INT_H

#include "mtp/fixture.h"

const char *mtp_subset_leaf(const char *name);
/* head_weight (any layer) and embed_table; the three projections. */
bool mtp_subset_is_vocab(const char *name);
bool mtp_subset_is_proj(const char *name);
/* "layer.0/head_weight" -> "inputs/layer.0/head_rows" (rule 1). */
void mtp_subset_rows_name(const char *weight, char *buf, size_t n);
/* The rows companion of weight input `weight`, or NULL. */
const struct mtp_tensor *mtp_subset_rows(const struct mtp_case *c,
					 const char *weight);
int64_t mtp_subset_at(const struct mtp_tensor *t, int64_t i);
/* Position of id in strictly increasing rows, or -1. */
int64_t mtp_subset_find(const struct mtp_tensor *rows, int64_t id);
/* K for a chain, 1 for an mtp_step; step s's output prefix ("step.1/" or
 * "") and the prefix of the layer it runs ("layer.1/" or ""). */
int64_t mtp_subset_steps(const struct mtp_case *c);
void mtp_subset_step_names(const struct mtp_case *c, int64_t s, char *step,
			   char *layer, size_t n);
/* The columns of captured block_in output `output` that are judged (the
 * rows of its layer's projection subset), or NULL: judged whole. */
const struct mtp_tensor *mtp_subset_columns(const struct mtp_case *c,
					    const char *output);
/* A copy of t's columns (last axis) at `cols`, for the judge. */
enum mtp_status mtp_subset_gather_columns(const struct mtp_tensor *t,
					  const struct mtp_tensor *cols,
					  struct mtp_tensor *out);

#endif
