/*
 * Internal to the ops subsystem: what the op rows (rows/<name>.c, one file
 * per op) share. A row is data; what several rows compute alike lives here
 * once: the signature builder and the tensor lists of an MTP layer
 * (signature.c), the flop formulas of the shared pieces (flops.c), and the
 * reference's view of a call (ref_io.h).
 *
 * [§10, §5] Every op reads token row t alone (rows = MTP_ROWS_INDEPENDENT):
 * the synthetic block's attention stand-in is a per-row GEMM (SPEC.md
 * §10.1), a chain runs each row's own draft tokens (§5), and a captured
 * block's outputs are inputs (§12.3). A block with real attention would be
 * MTP_ROWS_CAUSAL.
 */
#ifndef MTP_OPS_ROWS_H
#define MTP_OPS_ROWS_H

#include "../ref_io.h"
#include "mtp/op.h"
#include "mtp/ref.h"

/* The end of a tensor list. */
#define ROW_END                                                                \
	{                                                                      \
		NULL, NULL, MTP_TC_ACT, false                                  \
	}

/* [§1, §12.2] attribute lists that several rows take */
#define ROW_HC_ATTRS                                                           \
	"rms_eps pre_eps sinkhorn_eps post_mult? sinkhorn_iters norm_eps?"
/* post_mult may be left out: vLLM hard-codes 2.0 (SPEC.md §1) */
#define ROW_QUANT_ATTRS "proj_quant? act_quant_eps?"
#define ROW_V4_STEP_ATTRS                                                      \
	"hc_mult hc_eps sinkhorn_iters post_mult? block_contract"

/* [§10, §5] What a single op's row sets like the others: no attributes of
 * its own under a V4 family, rows read alone, and the row file's static
 * sig and ref (ROW_BASE), and flops (ROW_SINGLE). Used first in a row's
 * initialiser; a row sets none of these members again. */
#define ROW_BASE                                                               \
	.attrs_v4 = "", .rows = MTP_ROWS_INDEPENDENT, .sig = sig, .ref = ref
#define ROW_SINGLE ROW_BASE, .flops = flops
/* [§4.4] an mHC op: the V4 family by default; the mixing ones (hc_pre and
 * its fused and delayed forms) take ROW_HC_ATTRS */
#define ROW_MHC ROW_SINGLE, .default_family = MTP_FAMILY_DEEPSEEK_V4
#define ROW_HC_MIX ROW_MHC, .attrs = ROW_HC_ATTRS
/* [§2] an RMSNorm, eager or fused rounding */
#define ROW_NORM ROW_SINGLE, .attrs = "eps rounding"
/* [§7] a norm of the MTP input that masks position 0 */
#define ROW_INPUT_NORM ROW_SINGLE, .attrs = "eps", .pos_mask_only = true

/* ---- signatures (signature.c) -------------------------------------------- */

struct mtp_sig_build {
	struct mtp_signature *sig;
	bool overflow;
};

void mtp_sig_push(struct mtp_sig_build *b, bool out, const struct mtp_tspec *s,
		  const char *prefix);
/* Pushes a list ended by ROW_END; returns the element after the end. */
const struct mtp_tspec *mtp_sig_push_list(struct mtp_sig_build *b, bool out,
					  const struct mtp_tspec *s,
					  const char *prefix);
/* The synthetic blocks' weights (§10.1, §10.2). */
extern const struct mtp_tspec mtp_sig_v3_block_w[], mtp_sig_v4_block_w[];
/* One MTP layer's weights around the block (and the block's unless the
 * block is captured) under prefix ("" or "layer.l/"). */
void mtp_sig_push_layer(struct mtp_sig_build *b, const struct mtp_params *p,
			const char *prefix);
/* One step's outputs (and, captured, its captured inputs) under prefix. */
void mtp_sig_push_step_out(struct mtp_sig_build *b, bool v4,
			   const struct mtp_params *p, const char *prefix);
/* [§12.4] the target model's lm_head, which a dump may carry */
void mtp_sig_push_target_head(struct mtp_sig_build *b);

/* ---- flops (flops.c) ----------------------------------------------------- */

/* The sizes an op's flops are counted in, as doubles (m is 1 without mHC). */
struct mtp_flop_shape {
	double t, h, m, f, v, r, p;
	int iters;
};

void mtp_flop_shape(const struct mtp_call *c, struct mtp_flop_shape *s);
double mtp_flops_gemm(double rows, double in, double out);
double mtp_flops_hc_pre(const struct mtp_flop_shape *s);
double mtp_flops_hc_post(const struct mtp_flop_shape *s);
double mtp_flops_hc_head(const struct mtp_flop_shape *s);
/* The synthetic block (§10), and one step without the vocabulary GEMM. */
double mtp_flops_block(const struct mtp_flop_shape *s, bool v4);
double mtp_flops_step(const struct mtp_flop_shape *s, bool v4);

#endif
