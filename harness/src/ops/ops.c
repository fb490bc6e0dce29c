/*
 * The op table (SPEC.md §11, FORMAT.md): one row per op, each defined in its
 * own file, rows/<name>.c (docs/ARCHITECTURE.md, "Adding an op"). This file
 * only collects them, at their ids, and finds them by id and by name.
 */
#include "rows/rows.h"

#include <string.h>

/* Every row: its id (MTP_OP_<ID>) and its file's row (mtp_row_<name>). */
#define OP_ROWS(X)                                                             \
	X(RMSNORM, rmsnorm)                                                    \
	X(ADD_RMSNORM, add_rmsnorm)                                            \
	X(EMBED, embed)                                                        \
	X(FUSED_EH_NORM, fused_eh_norm)                                        \
	X(FUSED_EMBED_EH_NORM, fused_embed_eh_norm)                            \
	X(EH_PROJ, eh_proj)                                                    \
	X(FUSED_MTP_INPUT_RMSNORM, fused_mtp_input_rmsnorm)                    \
	X(EH_PROJ_HC, eh_proj_hc)                                              \
	X(HC_PRE, hc_pre)                                                      \
	X(HC_POST, hc_post)                                                    \
	X(HC_FUSED_POST_PRE, hc_fused_post_pre)                                \
	X(HC_HEAD, hc_head)                                                    \
	X(MTP_SHARED_HEAD_RMSNORM, mtp_shared_head_rmsnorm)                    \
	X(LM_HEAD, lm_head)                                                    \
	X(ALL_REDUCE, all_reduce)                                              \
	X(MTP_BLOCK, mtp_block)                                                \
	X(MTP_STEP, mtp_step)                                                  \
	X(DRAFT_CHAIN, draft_chain)                                            \
	X(MAIN_PROJ_NORM, main_proj_norm)                                      \
	X(HC_COLLAPSE, hc_collapse)                                            \
	X(MARKOV_BIAS, markov_bias)                                            \
	X(CONFIDENCE, confidence)                                              \
	X(HC_PRE_DELAYED, hc_pre_delayed)                                      \
	X(TARGET_HANDOFF, target_handoff)                                      \
	X(DSPARK_STEP, dspark_step)

#define DECLARE(id, name) extern const struct mtp_op mtp_row_##name;
OP_ROWS(DECLARE)

#define ENTRY(id, name) [MTP_OP_##id] = &mtp_row_##name,
static const struct mtp_op *const op_table[MTP_OP_COUNT] = {OP_ROWS(ENTRY)};

const struct mtp_op *mtp_op_get(enum mtp_op_id id)
{
	return (unsigned)id < MTP_OP_COUNT ? op_table[id] : NULL;
}

const struct mtp_op *mtp_op_find(const char *name)
{
	for (int i = 0; i < MTP_OP_COUNT; i++)
		if (op_table[i] && strcmp(op_table[i]->name, name) == 0)
			return op_table[i];
	return NULL;
}
