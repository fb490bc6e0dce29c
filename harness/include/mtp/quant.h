/*
 * FP8 block-quantized projection weights [SPEC.md §12.2, FORMAT.md
 * version 2]: the companion names, the checks a problem's quantized inputs
 * must pass before anything runs.
 */
#ifndef MTP_QUANT_H
#define MTP_QUANT_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/op.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

/* The block-scale companion of a weight input: "weight" ->
 * "weight_scale_inv", "layer.1/head_weight" -> "layer.1/head_scale_inv".
 * False if `weight` does not end in "weight" or buf is too small. */
bool mtp_quant_scale_name(const char *weight, char *buf, size_t n);

/* Every float8_e4m3fn weight has its scale, every scale has a float8
 * weight, and a declared proj_quant = none has no float8 weight. Errors name
 * the tensor and the rule. */
enum mtp_status mtp_quant_check(const struct mtp_signature *sig,
				const struct mtp_params *p,
				const struct mtp_tensor_list *inputs, char *err,
				size_t errn);

/* Whether any input of the call is a float8 tensor. */
bool mtp_call_has_fp8(const struct mtp_call *c);

/* Which backends read float8 inputs: mtp_backend_reads_fp8 (mtp/backend.h,
 * the registry's rows). */

#ifdef __cplusplus
}
#endif

#endif
