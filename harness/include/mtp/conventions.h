/*
 * Engine conventions (SPEC.md §12.1, FORMAT.md "Version 2"): the points
 * where real engines legitimately differ. Each is a case attribute; a
 * declared one is judged under its own contract alone, an undeclared one is
 * resolved by trying its values in table order (the first passing
 * combination is reported as information). The defaults are the v1
 * behaviour and every default is 0, so a zeroed struct mtp_conventions
 * computes exactly what the reference always computed.
 *
 * The reference's steps and single ops take these through struct
 * mtp_ref_step_cfg and struct mtp_params; nothing else changes with them.
 */
#ifndef MTP_CONVENTIONS_H
#define MTP_CONVENTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/dtype.h"
#include "mtp/status.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

/* The conventions in FORMAT.md table order (which is the order in which
 * undeclared ones are tried). */
enum mtp_conv_id {
	MTP_CONV_ADD_NORM_INPUT,
	MTP_CONV_FINAL_ADD,
	MTP_CONV_SILU_MUL_ROUNDING,
	MTP_CONV_LOGITS_DTYPE,
	MTP_CONV_POS0_MASK,
	MTP_CONV_COUNT
};

enum mtp_add_norm_input {
	MTP_ADD_NORM_RESIDUAL, /* §2.3: normalise the stored bf16 residual */
	MTP_ADD_NORM_SUM,      /* vLLM native: normalise the unrounded sum */
};

enum mtp_final_add {
	MTP_FINAL_ADD_UNFUSED, /* §10.1: act(r1 + h), then the norm */
	MTP_FINAL_ADD_FUSED, /* fused add + RMSNorm (add_norm_input applies) */
};

enum mtp_silu_rounding {
	MTP_SILU_ONCE,	/* act(silu(gate) * up) */
	MTP_SILU_TWICE, /* act(act(silu(gate)) * up) (torch native) */
};

enum mtp_logits_dtype {
	MTP_LOGITS_FLOAT32,  /* §10: fp32 logits, no activation rounding */
	MTP_LOGITS_BFLOAT16, /* vLLM's LogitsProcessor: bf16 logits */
};

enum mtp_pos0_mask {
	MTP_POS0_MASKED,   /* "1": embeddings at position 0 zeroed (vLLM) */
	MTP_POS0_UNMASKED, /* "0": no mask */
};

/* Every value 0 is the v1 behaviour, so a zeroed struct is the default:
 * residual, unfused, once, float32, mask on; none declared. */
struct mtp_conventions {
	enum mtp_add_norm_input add_norm_input;
	enum mtp_final_add final_add;
	enum mtp_silu_rounding silu_mul_rounding;
	enum mtp_logits_dtype logits_dtype;
	enum mtp_pos0_mask pos0_mask;
	unsigned declared; /* bit (1u << enum mtp_conv_id) per declared one */
};

/* The dtype of the logits under c: MTP_F32 or MTP_BF16. */
static inline enum mtp_dtype
mtp_conv_logits_dtype(const struct mtp_conventions *c)
{
	return c->logits_dtype == MTP_LOGITS_BFLOAT16 ? MTP_BF16 : MTP_F32;
}

/* The attribute name of convention id ("add_norm_input"). */
const char *mtp_conv_name(enum mtp_conv_id id);
/* Number of values of convention id (2 each). */
int mtp_conv_n_values(enum mtp_conv_id id);
/* The value of convention id in c, as an index in table order. */
int mtp_conv_get(const struct mtp_conventions *c, enum mtp_conv_id id);
void mtp_conv_set(struct mtp_conventions *c, enum mtp_conv_id id, int v);
/* The spelling of value v of convention id ("residual", "1"). */
const char *mtp_conv_value_name(enum mtp_conv_id id, int v);
static inline bool mtp_conv_declared(const struct mtp_conventions *c,
				     enum mtp_conv_id id)
{
	return (c->declared >> id) & 1u;
}

struct mtp_attr_list;

/* Reads the convention attributes of a case into c (defaults for those
 * absent). A value outside the table, or pos0_mask that is not a scalar
 * integer 0 or 1, is MTP_ERR_INVALID with "attribute 'x': why" in err. */
enum mtp_status mtp_conventions_parse(const struct mtp_attr_list *attrs,
				      struct mtp_conventions *c, char *err,
				      size_t errn);

struct mtp_case;
struct mtp_call;

/* The conventions (mask of 1u << enum mtp_conv_id) that the call's
 * computation uses: pos0_mask only with a position 0 (judge_conv.c). */
unsigned mtp_conv_exercised(const struct mtp_call *c);

/* The logits precision of case k: a declared logits_dtype must be the
 * stored dtype of every observed/ and expected/ logits (else
 * MTP_ERR_INVALID naming both); an undeclared one is taken from the stored
 * dtype (bfloat16 or float32; it stays undeclared). */
enum mtp_status mtp_conventions_resolve_logits(const struct mtp_case *k,
					       struct mtp_conventions *c,
					       char *err, size_t errn);

/* "add_norm_input=sum final_add=unfused" for the conventions in mask. */
void mtp_conventions_str(const struct mtp_conventions *c, unsigned mask,
			 char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
