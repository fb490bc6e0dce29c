/*
 * Element types of mtpcheck tensors and exact conversions between them.
 *
 * Every narrowing conversion rounds to nearest, ties to even, keeps NaN a NaN
 * (quiet, sign kept) and Inf an Inf, and overflows to Inf. The reference keeps
 * its values in double and calls mtp_round() at each point where the spec
 * stores to a narrower type, so a rounding point is one visible call.
 */
#ifndef MTP_DTYPE_H
#define MTP_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

enum mtp_dtype {
	MTP_F64,
	MTP_F32,
	MTP_F16,
	MTP_BF16,
	MTP_I64,
	MTP_I32,
	MTP_F8E4M3, /* float8_e4m3fn: weights of FP8 projections (no Inf) */
	MTP_F8E8M0, /* float8_e8m0fnu: power-of-two block scales */
	MTP_DTYPE_COUNT
};

/* "float64", "bfloat16", ... as FORMAT.md spells them. */
const char *mtp_dtype_name(enum mtp_dtype dt);
/* Parses a FORMAT.md dtype name; false if it is not one. */
bool mtp_dtype_parse(const char *name, enum mtp_dtype *out);
size_t mtp_dtype_size(enum mtp_dtype dt);
/* The activation-capable float types (float64/32/16, bfloat16); the FP8
 * storage types are not among them. */
bool mtp_dtype_is_float(enum mtp_dtype dt);
bool mtp_dtype_is_fp8(enum mtp_dtype dt);

uint16_t mtp_bf16_from_double(double v);
uint16_t mtp_bf16_from_float(float v);
float mtp_bf16_to_float(uint16_t bits);
uint16_t mtp_f16_from_double(double v);
float mtp_f16_to_float(uint16_t bits);
float mtp_f32_from_double(double v);

/*
 * float8_e4m3fn (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no
 * Inf; NaN = S.1111.111; largest finite 448; smallest subnormal 2^-9).
 * Round to nearest, ties to even, subnormals included. A value whose rounding
 * passes 448 (|v| > 464) saturates to +-448 when `saturate` is set (the
 * engines' quantizers clamp first) and becomes NaN otherwise (a plain cast);
 * Inf does the same; NaN stays NaN (0x7f / 0xff).
 */
uint8_t mtp_e4m3_from_double(double v, bool saturate);
double mtp_e4m3_to_double(uint8_t bits);
/*
 * float8_e8m0fnu: an unsigned biased exponent, value 2^(e-127), e in
 * [0, 254]; 0xff is NaN; there is no zero. From a double: the nearest power
 * of two (ties, 1.5 * 2^k, go up), clamped to [2^-127, 2^127]; zero, a
 * negative value, Inf and NaN give 0xff.
 */
uint8_t mtp_e8m0_from_double(double v);
double mtp_e8m0_to_double(uint8_t bits);

/* v rounded to the nearest value representable in dt, returned as a double.
 * Integer dtypes and float64 return v unchanged. */
double mtp_round(enum mtp_dtype dt, double v);

/* Element i of a buffer of dtype dt, widened exactly to double. */
double mtp_load(enum mtp_dtype dt, const void *buf, size_t i);
/* Stores v rounded to dt at element i (integers: truncation of an in-range value). */
void mtp_store(enum mtp_dtype dt, void *buf, size_t i, double v);

#ifdef __cplusplus
}
#endif

#endif
