/*
 * Model families of MTP draft layers, each one row of data (families/).
 *
 * Why this exists: the families differ in a handful of choices (how the
 * embedding and the previous hidden are fused, whether the layer carries mHC
 * streams, what it recycles, how its checkpoint names its weights). Code that
 * must know asks the family's row for the choice; it never compares a family
 * id. A new family is a new file in families/ and one line in the table of
 * families/families.c (docs/ARCHITECTURE.md, "Adding a family").
 *
 * Contract: rows are constant and live for the whole process (workers are
 * forked, so a row's address is valid there too); mtp_family_def() of an id
 * outside the table returns NULL; nothing here allocates or fails otherwise.
 */
#ifndef MTP_FAMILY_H
#define MTP_FAMILY_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The id a case carries (`family` attribute); the order of the table. */
enum mtp_family {
	MTP_FAMILY_DEEPSEEK_V3, /* also V3.1, V3.2, R1 */
	MTP_FAMILY_GLM,		/* same math as deepseek_v3 */
	MTP_FAMILY_DEEPSEEK_V4,
	MTP_FAMILY_GLM4_MOE_LITE, /* GLM-4.7-Flash */
	MTP_FAMILY_QWEN3_NEXT,	  /* Qwen3-Next, Qwen3.5: (1 + w) norms */
	MTP_FAMILY_MIMO,	  /* MiMo-7B: hidden first into input_proj */
	MTP_FAMILY_KIMI_K3,	  /* Kimi K3: the pre-norm sum recycled */
	MTP_FAMILY_STEP3P5, /* Step-3.5: (1 + w) norms, the pre-norm sum */
	MTP_FAMILY_INKLING, /* Inkling: two embedding norms, a mup head */
	MTP_FAMILY_COUNT
};

/* How the layer fuses the token embedding e and the previous hidden h
 * before its block (SPEC.md Steps V3-1..3 and V4-1..3). */
enum mtp_fusion {
	/* x0 = eh_proj(cat(enorm(mask(e)), hnorm(h))): one stream */
	MTP_FUSION_EH_PROJ,
	/* x0[m] = h_proj(hnorm(h[m])) + e_proj(enorm(mask(e))) per mHC stream */
	MTP_FUSION_HC_PROJ,
	/* x0 = eh_proj(cat(hnorm(h), enorm(mask(e)))): the hidden first
	 * (MiMo-7B's input_proj, SPEC.md Step V3-2) */
	MTP_FUSION_EH_PROJ_HIDDEN_FIRST,
};

/* What a step hands the next one as its previous hidden (SPEC.md §5.5). */
enum mtp_recycled {
	MTP_RECYCLED_POST_NORM, /* the shared-head-normed hidden (Step V3-5) */
	MTP_RECYCLED_STREAMS,	/* the M streams before hc_head (Step V4-7) */
	/* the sum before the final norm, by the family's contract (Kimi K3's
	 * "pre-norm recurrent state", SPEC.md §8.1) */
	MTP_RECYCLED_PRE_NORM,
};

/* How the checkpoint names an MTP layer's weights (SPEC.md §6). */
enum mtp_ckpt_layout {
	MTP_CKPT_LAYERS, /* model.layers.{N+i}.*, the layer's own names */
	MTP_CKPT_MTP,	 /* mtp.{i}.*, renamed to model.layers.{N+i}.* */
	/* mtp.fc, mtp.pre_fc_norm_*, mtp.layers.{i}, mtp.norm (Qwen3-Next):
	 * no weight map reads it yet (mtpcheck weights refuses it) */
	MTP_CKPT_MTP_FC,
};

/* Attention inside the MTP block, as the loader stacks its projections. */
enum mtp_block_attn {
	MTP_ATTN_MLA, /* q_a_proj/kv_a_proj_with_mqa -> fused_qkv_a_proj */
	MTP_ATTN_GQA, /* q_proj/k_proj/v_proj -> qkv_proj (GLM-4.5) */
};

/* The form of every RMSNorm weight of the family's step (SPEC.md §2.6):
 * the glue norms, the block's, the final/shared-head norm and the target's
 * final norm that makes the step-0 hand-off. */
enum mtp_norm_weight {
	MTP_NORM_W_PLAIN,	 /* y = norm(x) * w */
	MTP_NORM_W_ZERO_CENTRED, /* y = norm(x) * f32(1 + w) (Gemma style) */
};

struct mtp_family_def {
	enum mtp_family id;
	const char *name;   /* the `family` attribute */
	const char *models; /* the checkpoints it covers */
	const char
		*source; /* the engine file and version the row was read from */
	enum mtp_fusion fusion;
	/* mHC streams: the hc_* attributes (op->attrs_v4), M = hc_mult streams
	 * through the block, hc_head before the final norm */
	bool mhc;
	enum mtp_recycled recycled;
	enum mtp_ckpt_layout ckpt;
	enum mtp_block_attn attn;
	/* the engine loads the target's lm_head.weight as the first MTP
	 * layer's shared head (SPEC.md §12.5, GLM) */
	bool lm_head_is_shared_head;
	/* [§2.6] every norm weight of the step is w or f32(1 + w) */
	enum mtp_norm_weight norm_weight;
	/* [Step V3-9] the embedding is normed by the target's own embed_norm
	 * (embed_pre_norm_weight), rounded, before the layer's enorm:
	 * enorm(pre(E)), Inkling's embed_dual_rmsnorm_cat */
	bool embed_pre_norm;
	/* [Step V3-9] the head's logits are divided by the case's logits_mup
	 * attribute (the checkpoint's logits_mup_width_multiplier) before
	 * they are stored; no attribute, no division (vLLM's `if not mup`) */
	bool logits_mup;
};

/* The row of id f, or NULL outside the table. */
const struct mtp_family_def *mtp_family_def(enum mtp_family f);
/* The row named s, or NULL. */
const struct mtp_family_def *mtp_family_find(const char *s);

/* The row's name, "?" outside the table. */
const char *mtp_family_name(enum mtp_family f);
/* Sets *out to the family named s; false if there is none. */
bool mtp_family_parse(const char *s, enum mtp_family *out);
/* "deepseek_v3, glm or deepseek_v4": for one-line errors. */
const char *mtp_family_names(void);
/* Whether family f carries mHC streams (the row's mhc; false outside). */
bool mtp_family_mhc(enum mtp_family f);
/* [§2.6] What family f adds to a stored norm weight before it multiplies:
 * 1 for a zero-centred row, 0 otherwise (and outside the table). */
double mtp_family_norm_offset(enum mtp_family f);
/* Whether family f concatenates the hidden before the embedding
 * (MTP_FUSION_EH_PROJ_HIDDEN_FIRST; false outside the table). */
bool mtp_family_hidden_first(enum mtp_family f);
/* Whether family f recycles the pre-norm sum (MTP_RECYCLED_PRE_NORM; false
 * outside the table). */
bool mtp_family_recycles_pre_norm(enum mtp_family f);
/* Whether family f norms the embedding twice (the row's embed_pre_norm;
 * false outside the table). */
bool mtp_family_embed_pre_norm(enum mtp_family f);
/* Whether family f's head takes a logits_mup divisor (the row's
 * logits_mup; false outside the table). */
bool mtp_family_logits_mup(enum mtp_family f);

#ifdef __cplusplus
}
#endif
#endif
