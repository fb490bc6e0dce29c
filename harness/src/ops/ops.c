/*
 * The op table (SPEC.md §11, FORMAT.md): one row per op, each defined in its
 * own file, rows/<name>.c (docs/ARCHITECTURE.md, "Adding an op"). This file
 * only collects them, in enum order, and finds them by id and by name.
 */
#include "rows/rows.h"

#include <string.h>

static const struct mtp_op *const op_table[MTP_OP_COUNT] = {
	[MTP_OP_RMSNORM] = &mtp_row_rmsnorm,
	[MTP_OP_ADD_RMSNORM] = &mtp_row_add_rmsnorm,
	[MTP_OP_EMBED] = &mtp_row_embed,
	[MTP_OP_FUSED_EH_NORM] = &mtp_row_fused_eh_norm,
	[MTP_OP_FUSED_EMBED_EH_NORM] = &mtp_row_fused_embed_eh_norm,
	[MTP_OP_EH_PROJ] = &mtp_row_eh_proj,
	[MTP_OP_FUSED_MTP_INPUT_RMSNORM] = &mtp_row_fused_mtp_input_rmsnorm,
	[MTP_OP_EH_PROJ_HC] = &mtp_row_eh_proj_hc,
	[MTP_OP_HC_PRE] = &mtp_row_hc_pre,
	[MTP_OP_HC_POST] = &mtp_row_hc_post,
	[MTP_OP_HC_FUSED_POST_PRE] = &mtp_row_hc_fused_post_pre,
	[MTP_OP_HC_HEAD] = &mtp_row_hc_head,
	[MTP_OP_MTP_SHARED_HEAD_RMSNORM] = &mtp_row_mtp_shared_head_rmsnorm,
	[MTP_OP_LM_HEAD] = &mtp_row_lm_head,
	[MTP_OP_ALL_REDUCE] = &mtp_row_all_reduce,
	[MTP_OP_MTP_BLOCK] = &mtp_row_mtp_block,
	[MTP_OP_MTP_STEP] = &mtp_row_mtp_step,
	[MTP_OP_DRAFT_CHAIN] = &mtp_row_draft_chain,
	[MTP_OP_MAIN_PROJ_NORM] = &mtp_row_main_proj_norm,
	[MTP_OP_HC_COLLAPSE] = &mtp_row_hc_collapse,
	[MTP_OP_MARKOV_BIAS] = &mtp_row_markov_bias,
	[MTP_OP_CONFIDENCE] = &mtp_row_confidence,
	[MTP_OP_HC_PRE_DELAYED] = &mtp_row_hc_pre_delayed,
};

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
