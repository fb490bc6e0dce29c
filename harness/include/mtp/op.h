/*
 * The op table: every MTP step of SPEC.md §11 as data. For each op it
 * says which attributes it takes, which tensors go in and come out with their
 * shape rules and dtype classes, which spec section defines it, and how the
 * reference computes it. The harness checks a problem against this table
 * before anything runs, and backends receive calls whose tensors are in the
 * table's order (absent optional inputs have data == NULL).
 */
#ifndef MTP_OP_H
#define MTP_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/family.h"
#include "mtp/ref.h"
#include "mtp/status.h"
#include "mtp/tensor.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

enum mtp_op_id {
	MTP_OP_RMSNORM,
	MTP_OP_ADD_RMSNORM,
	MTP_OP_EMBED,
	MTP_OP_FUSED_EH_NORM,
	MTP_OP_FUSED_EMBED_EH_NORM,
	MTP_OP_EH_PROJ,
	MTP_OP_FUSED_MTP_INPUT_RMSNORM,
	MTP_OP_EH_PROJ_HC,
	MTP_OP_HC_PRE,
	MTP_OP_HC_POST,
	MTP_OP_HC_FUSED_POST_PRE,
	MTP_OP_HC_HEAD,
	MTP_OP_MTP_SHARED_HEAD_RMSNORM,
	MTP_OP_LM_HEAD,
	MTP_OP_ALL_REDUCE,
	MTP_OP_MTP_BLOCK,
	MTP_OP_MTP_STEP,
	MTP_OP_DRAFT_CHAIN,
	/* DSpark drafters (SPEC.md §13) */
	MTP_OP_MAIN_PROJ_NORM,
	MTP_OP_HC_COLLAPSE,
	MTP_OP_MARKOV_BIAS,
	MTP_OP_CONFIDENCE,
	MTP_OP_HC_PRE_DELAYED,
	/* the target's hand-off to draft step 0 (SPEC.md §5.5) */
	MTP_OP_TARGET_HANDOFF,
	MTP_OP_DSPARK_STEP,
	MTP_OP_COUNT
};

/* What a tensor holds, which fixes the dtypes it may have. */
enum mtp_tclass {
	MTP_TC_ACT,    /* activations and their weights: the op's float dtype */
	MTP_TC_PARAM,  /* mHC parameters and mixes: float32 */
	MTP_TC_INDEX,  /* positions, ids: int64 (int32 accepted on input) */
	MTP_TC_LOGITS, /* float32 */
	MTP_TC_TOKEN,  /* int64 */
	MTP_TC_QWEIGHT, /* a projection weight: the op's float dtype or
			 * float8_e4m3fn (then with its block scale) */
	MTP_TC_QSCALE,	/* the block scale of the QWEIGHT before it: float32
			 * or float8_e8m0fnu; its rule is the weight's, each
			 * dim read as ceil(dim / 128) */
};

struct mtp_tspec {
	const char *name;
	const char *shape; /* "T,M*H", "2*M+M*M,M*H", "K-1,T" */
	enum mtp_tclass cls;
	bool optional;
};

/* Values of the shape symbols of one problem (after binding, 0 also stands
 * for a symbol the problem does not use; T = 0 is an empty batch). */
struct mtp_dims {
	int64_t t, h, m, v, f, r, p, k, l;
	int64_t c; /* dspark_step's context rows (SPEC.md §13.9) */
};

/* FORMAT.md version 2 attributes of the captured-block form (SPEC.md
 * §12.3). pos0_mask is read here only to know whether it is declared (the
 * MISSING_POS0_MASK claim needs a declared 1). */
struct mtp_v2_params {
	bool captured;	      /* block = "captured" */
	int64_t max_position; /* chains: positions clamp; INT64_MAX: none */
	int pos0_mask;	      /* -1 undeclared, else 0 or 1 */
};

/* [Step V3-8] Where the block's partial output is reduced. */
enum mtp_reduce_at {
	MTP_REDUCE_AT_MOE,	   /* at the end of the MoE (deepseek_mtp.py) */
	MTP_REDUCE_AT_AFTER_BLOCK, /* explicitly after the block (V3.2 ROCm) */
	MTP_REDUCE_AT_FINAL_NORM,  /* fused into the final norm (V3.2 CUDA) */
};

/* [Step V3-8, §2.5] tp_rank, reduce_order, reduce_at (params_tp.c). */
struct mtp_tp_params {
	bool step;    /* a tensor-parallel captured mtp_step (tp_rank set) */
	int64_t rank; /* tp_rank; 0 when absent */
	enum mtp_reduce_order order;
	enum mtp_reduce_at at;
};

/* A problem's attributes, parsed and range-checked. */
struct mtp_params {
	enum mtp_family family;
	double eps;
	enum mtp_rounding rounding;
	struct mtp_hc_params hc; /* hc_pre and friends; V4 steps fill it too */
	double hc_eps;
	enum mtp_hc_head_variant variant;
	enum mtp_contract contract;
	int64_t hc_mult;
	int64_t num_steps, num_layers;
	bool pass_step_idx;
	struct mtp_v2_params v2;     /* FORMAT.md version 2 (params_v2.c) */
	struct mtp_tp_params tp;     /* tensor parallelism (params_tp.c) */
	struct mtp_conventions conv; /* SPEC.md §12.1; zeroed: v1 */
	/* [§12.2] FORMAT.md proj_quant and act_quant_eps (default 1e-10);
	 * proj_quant_declared is false when the attribute is absent */
	enum mtp_proj_quant proj_quant;
	bool proj_quant_declared;
	double act_quant_eps;
	/* HANDOFF_MISMATCH's change (bugs/handoff_mismatch.c), never read
	 * from a file: target_handoff hands over the pre-norm sum */
	bool handoff_pre_norm;
	/* [§13 Step DS-6] markov_bias's logit_scale (default 1) */
	double logit_scale;
	/* [Step V3-9] the head's logits divided by it (a family whose row has
	 * logits_mup: Inkling's logits_mup_width_multiplier); 0: absent */
	double logits_mup;
	enum mtp_block_mask block_mask; /* [§13.9] dspark_step; 0: non_causal */
	/* DSPARK_MARKOV_KEYED_ON_IDS, DSPARK_PRE_MIX_NOT_DELAYED and the two
	 * DSPARK_COLLAPSE_*_PRE_MIX rows' changes (bugs/dspark.c), never read
	 * from a file */
	struct mtp_dspark_mistakes dspark;
	/* [§13.9.1] the captured dspark_step's drafter; 0: V4.1 */
	enum mtp_dspark_variant dspark_variant;
};

/* The sublayer (of 2L) whose pre-mix hc_collapse takes under m: the last
 * FFN's, or collapse_back sublayers before it where there is one. */
static inline int64_t
mtp_dspark_collapse_sublayer(const struct mtp_dspark_mistakes *m,
			     int64_t layers)
{
	int64_t k = 2 * layers - 1 - m->collapse_back;

	return m->collapse_back > 0 && k >= 0 ? k : 2 * layers - 1;
}

/* Whether target_handoff hands over the pre-norm sum: the family's kind of
 * recycled hidden (the pre-norm sum for a family that recycles it, SPEC.md
 * §5.5), flipped by HANDOFF_MISMATCH's change. */
static inline bool mtp_params_handoff_pre_norm(const struct mtp_params *p)
{
	return p->handoff_pre_norm != mtp_family_recycles_pre_norm(p->family);
}

#define MTP_SIG_MAX 320

/* The tensors of one problem, in table order. Expanded per problem because
 * some ops' signatures depend on the family, the attributes (draft_chain's
 * layers and steps) and which optional state is present (mtp_block). */
struct mtp_signature {
	int n_in, n_out;
	struct mtp_tspec in[MTP_SIG_MAX], out[MTP_SIG_MAX];
	char names[2 * MTP_SIG_MAX][MTP_NAME_MAX]; /* storage for built names */
	int n_names;
};

struct mtp_call;

/* How the token rows of an op depend on each other (run --invariance,
 * docs/DIAGNOSES.md "Batch invariance"): the rows are the dims named T or R
 * of its tensors (mtp_tspec_row_axis). */
enum mtp_rows {
	MTP_ROWS_UNDECLARED,  /* not said: invariance is not applicable */
	MTP_ROWS_INDEPENDENT, /* output row t reads only input row t */
	MTP_ROWS_CAUSAL,      /* row t reads rows 0..t (causal attention) */
	MTP_ROWS_MIXED,	      /* any row reads any row */
};

/* How much of an MTP layer an op computes (SPEC.md §10, §3, §5). */
enum mtp_op_scope {
	MTP_SCOPE_PIECE, /* one piece of a layer: a norm, a projection, ... */
	MTP_SCOPE_BLOCK, /* the transformer block alone */
	MTP_SCOPE_STEP,	 /* a whole draft step: inputs to logits, recycled */
	MTP_SCOPE_CHAIN, /* K steps with recycling: outputs "step.s/..." */
};

struct mtp_ref_io;    /* a call widened for the reference (ops: ref_io.h) */
struct mtp_sig_build; /* a signature being built (ops: rows/rows.h) */

/* Which outputs of an op come out of the mHC mix GEMMs (SPEC.md §4.4.1),
 * where the signed rounding-bias test applies (mtp/bias.h). */
enum mtp_bias_scope {
	MTP_BIAS_NONE,
	MTP_BIAS_ALL, /* every output but bias_skip */
	MTP_BIAS_MHC, /* every output, under an mHC family */
};

/* The error-budget depth of an op whose outputs are judged under a budget
 * (docs/DIAGNOSES.md): by the output's name along the flow (SPEC.md §10). */
#define MTP_DEPTH_FLOW (-1)

/* One op of the unfused sequence that bench times a fused op against (at
 * most MTP_OP_UNFUSED_MAX). */
#define MTP_OP_UNFUSED_MAX 3
struct mtp_op_unfused {
	const char *op;	 /* NULL: the end */
	bool per_stream; /* T*M rows rather than T */
	int64_t parts;	 /* P of an all_reduce */
};

/* One row of the op table: one file per op, harness/src/ops/rows/<name>.c
 * (docs/ARCHITECTURE.md, "Adding an op"). The first fields are what a
 * backend reads; the rest is how the harness treats the op. */
struct mtp_op {
	enum mtp_op_id id;
	const char *name;
	const char *section; /* SPEC.md section */
	const char *summary;
	/* Attributes, space separated; a trailing '?' marks an optional one.
	 * attrs_v4 is added for the deepseek_v4 family. */
	const char *attrs;
	const char *attrs_v4;
	/* Which families the op belongs to (bitmask of 1 << family); 0: any. */
	unsigned families;
	enum mtp_rows rows;

	enum mtp_op_scope scope;
	/* The family of a generated problem that names none. */
	enum mtp_family default_family;
	/* Its tensors: a fixed list (inputs, {NULL}, outputs, {NULL}), or,
	 * when sig is NULL, build_sig expands them per problem. */
	const struct mtp_tspec *sig;
	void (*build_sig)(struct mtp_sig_build *b, const struct mtp_params *p,
			  const struct mtp_tensor_list *present);
	/* It has the captured-block form (block = "captured", SPEC.md
	 * §12.3): its reference is then the captured steps (refglue). */
	bool captured_form;
	/* The reference of that form when it is not the captured steps of
	 * refglue (dspark_step's, SPEC.md §13.9.1); NULL: those. */
	enum mtp_status (*captured_ref)(const struct mtp_ref_io *io);
	/* The shape symbols its attributes bind (draft_chain: "KL"). */
	const char *attr_dims;
	/* The scalar reference on a widened call (NULL: unsupported). */
	enum mtp_status (*ref)(const struct mtp_ref_io *io);
	/* It reads positions only for the pos-0 mask (SPEC.md §12.1). */
	bool pos_mask_only;
	/* Flops of the math as the spec writes it (mtp_op_cost), and the
	 * input of which only the batch's rows are read (a gather). */
	double (*flops)(const struct mtp_call *c);
	const char *gathered;
	/* 0: judged under the dtype's tolerance; else the error budget's
	 * rounding steps, or MTP_DEPTH_FLOW. */
	int budget_depth;
	enum mtp_bias_scope bias;
	const char *bias_skip;
	/* The output of its GEMM [T, N] = x [T, K] * weight [N, K]^T that
	 * gets the accumulation allowance (mtp_tol_accum), or NULL. */
	const char *accum_output;
	/* bench --unfused: the same math as separate ops. */
	const char *unfused_what;
	struct mtp_op_unfused unfused[MTP_OP_UNFUSED_MAX];
};

const struct mtp_op *mtp_op_get(enum mtp_op_id id);
const struct mtp_op *mtp_op_find(const char *name);

/* A raw attribute as read from a fixture or a case. */
struct mtp_attr {
	char name[48];
	bool is_string;
	bool is_int; /* stored as an integer type (else num is NaN for kinds
			that are neither string nor number) */
	double num;
	char str[64];
};

struct mtp_attr_list {
	int n;
	struct mtp_attr items[32];
};

/* Parses the attributes the op needs; on error writes "attribute 'x': why"
 * into err and returns MTP_ERR_INVALID. */
enum mtp_status mtp_params_parse(const struct mtp_op *op,
				 enum mtp_family family,
				 const struct mtp_attr_list *attrs,
				 struct mtp_params *out, char *err,
				 size_t errn);

/* The version 2 attributes (block, max_position, pos0_mask) into out->v2;
 * called by mtp_params_parse. */
enum mtp_status mtp_params_parse_v2(const struct mtp_op *op,
				    const struct mtp_attr_list *attrs,
				    struct mtp_params *out, char *err,
				    size_t errn);

/* The tensor-parallel attributes into out->tp (params_tp.c); called by
 * mtp_params_parse_v2. */
enum mtp_status mtp_params_parse_tp(const struct mtp_op *op,
				    const struct mtp_attr_list *attrs,
				    struct mtp_params *out, char *err,
				    size_t errn);

/* Whether a generated problem of op may set the tensor-parallel attribute
 * `name` (all_reduce's tp_rank and reduce_order; params_tp.c). */
bool mtp_params_tp_takes(const struct mtp_op *op, const char *name);

/* Builds the signature; `present` tells which optional inputs exist
 * (it may be NULL: none). */
enum mtp_status mtp_signature_build(const struct mtp_op *op,
				    const struct mtp_params *p,
				    const struct mtp_tensor_list *present,
				    struct mtp_signature *sig, char *err,
				    size_t errn);

/* Binds the shape symbols from the inputs and checks every input's shape and
 * dtype; then computes the output shapes. `act` receives the op's activation
 * dtype. Errors name the tensor and the rule. */
enum mtp_status mtp_signature_bind(const struct mtp_signature *sig,
				   const struct mtp_params *p,
				   const struct mtp_tensor_list *inputs,
				   struct mtp_dims *dims, enum mtp_dtype *act,
				   char *err, size_t errn);

/* Shape of an output (or input) spec under bound dims; false if a symbol is
 * unbound or the result is negative. */
bool mtp_tspec_shape(const struct mtp_tspec *s, const struct mtp_dims *d,
		     int *ndim, int64_t *shape);
enum mtp_dtype mtp_tspec_dtype(const struct mtp_tspec *s, enum mtp_dtype act);
/* The symbol of a signature's batch dim: T, or R for the row ops, which
 * have no T (elsewhere R is another size: DSpark's Markov rank). */
char mtp_sig_batch_dim(const struct mtp_signature *sig);
/* The axis of a tensor spec of signature sig that holds its rows (the dim
 * that is exactly the batch symbol), or -1 for a tensor shared by every row
 * (a weight). */
int mtp_tspec_row_axis(const struct mtp_signature *sig,
		       const struct mtp_tspec *s);

/* One invocation of an op on a backend. Tensors are in signature order; their
 * data pointers are the backend's (device) pointers. */
struct mtp_call {
	const struct mtp_op *op;
	const struct mtp_params *params;
	const struct mtp_signature *sig;
	struct mtp_dims dims;
	enum mtp_dtype act;
	int n_in, n_out;
	struct mtp_tensor *in;
	struct mtp_tensor *out;
};

/* Index of the tensor named `name` in the call's inputs/outputs, or -1.
 * These and mtp_call_tensor live in mtp_base, so backend modules have them. */
int mtp_call_in_index(const struct mtp_call *c, const char *name);
int mtp_call_out_index(const struct mtp_call *c, const char *name);
/* The input (out = false) or output named pfx + name ("layer.1/" +
 * "hc_head_fn"; pfx may be NULL), or NULL if the call has none. */
const struct mtp_tensor *mtp_call_tensor(const struct mtp_call *c, bool out,
					 const char *pfx, const char *name);
/* [SPEC.md §2.6] Whether input k of the call is an RMSNorm weight: every
 * input of shape [H] in the activation class is one (the op table has no
 * other). norm_offset: what the call's family adds to such a weight before
 * it multiplies (1 for a zero-centred row, else 0); a backend applies it to
 * its widened fp32 copy, never to the stored dtype. */
bool mtp_call_in_is_norm_weight(const struct mtp_call *c, int k);
double mtp_call_norm_offset(const struct mtp_call *c);
/* True when no output of the call holds an element: an empty batch (T or
 * R = 0), which an engine's idle rank issues. Such a call has nothing to
 * compute; a backend returns MTP_OK from launch() without launching a
 * kernel on an empty grid (docs/BACKENDS.md). An empty tensor's data may be
 * NULL. */
bool mtp_call_empty(const struct mtp_call *c);

/* Runs the scalar reference on a call whose tensors are in host memory. */
enum mtp_status mtp_reference_run(const struct mtp_call *c);

#ifdef __cplusplus
}
#endif

#endif
