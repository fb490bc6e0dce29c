/*
 * The table of bug classes (docs/ARCHITECTURE.md "Add a bug class"), one
 * line each: MTP_BUG(ID, row) makes enum mtp_diag's MTP_DIAG_<ID> and puts
 * the row `mtp_bug_<row>` (struct mtp_bug_class, mtp/bugclass.h; defined in
 * harness/src/bugs/<file>.c) in the table. The judge tries the hypotheses
 * in this order and claims the clearest; a tie goes to the earlier line.
 * Included only by mtp/bugclass.h and harness/src/bugs/table.c (no guard).
 */
MTP_BUG(PRE_NORM_RECYCLE, pre_norm_recycle)
MTP_BUG(DOUBLE_FINAL_NORM, double_final_norm)
MTP_BUG(MISSING_HC_POST, missing_hc_post)
MTP_BUG(HC_POST_TWICE, hc_post_twice)
MTP_BUG(HC_STATE_DEFAULTS, hc_state_defaults)
MTP_BUG(HC_HEAD_OWNER, hc_head_owner)
MTP_BUG(MISSING_POS0_MASK, missing_pos0_mask)
MTP_BUG(NORM_ROUNDING, norm_rounding)
MTP_BUG(STALE_WEIGHT_REMAP, stale_weight_remap)
MTP_BUG(EH_PROJ_NO_PREFIX, eh_proj_no_prefix)
MTP_BUG(MTP_HEAD_EMBED_UNLOADED, mtp_head_embed_unloaded)
MTP_BUG(DSPARK_LOADED_AS_MTP, dspark_loaded_as_mtp)
MTP_BUG(DSPARK_LOADER_ON_MTP, dspark_loader_on_mtp)
MTP_BUG(CONVENTION_MISMATCH, convention_mismatch)
MTP_BUG(SPEC_STEP_LAYER_REUSE, spec_step_layer_reuse)
MTP_BUG(SHARED_HEAD_OVERWRITE, shared_head_overwrite)
MTP_BUG(SHARED_HEAD_UNINIT, shared_head_uninit)
MTP_BUG(QUANT_SCALE_DROPPED, quant_scale_dropped)
MTP_BUG(QUANT_SCALE_RECIPROCAL, quant_scale_reciprocal)
MTP_BUG(QUANT_SCALE_TRANSPOSED, quant_scale_transposed)
MTP_BUG(QUANT_SCALE_OTHER_LAYER, quant_scale_other_layer)
MTP_BUG(HEAD_NORM_MISSING, head_norm_missing)
MTP_BUG(CONCAT_ORDER_SWAPPED, concat_order_swapped)
MTP_BUG(HANDOFF_MISMATCH, handoff_mismatch)
MTP_BUG(DSPARK_POSITIONS_SHIFTED, dspark_positions_shifted)
MTP_BUG(DSPARK_CAUSAL_BLOCK_MASK, dspark_causal_block_mask)
MTP_BUG(DSPARK_AUX_LAYERS_WRONG, dspark_aux_layers_wrong)
MTP_BUG(DSPARK_MARKOV_BIAS_DROPPED, dspark_markov_bias_dropped)
MTP_BUG(ROUNDING_BIAS, rounding_bias)
MTP_BUG(BATCH_VARIANT, batch_variant)
MTP_BUG(NONDETERMINISTIC, nondeterministic)
MTP_BUG(ALLREDUCE_MISSING, allreduce_missing)
MTP_BUG(ALLREDUCE_TWICE, allreduce_twice)
MTP_BUG(ALLREDUCE_SCALED, allreduce_scaled)
MTP_BUG(ALLREDUCE_AFTER_NORM, allreduce_after_norm)
