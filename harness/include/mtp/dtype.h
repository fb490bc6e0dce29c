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

enum mtp_dtype {
	MTP_F64,
	MTP_F32,
	MTP_F16,
	MTP_BF16,
	MTP_I64,
	MTP_I32,
	MTP_DTYPE_COUNT
};

/* "float64", "bfloat16", ... as FORMAT.md spells them. */
const char *mtp_dtype_name(enum mtp_dtype dt);
/* Parses a FORMAT.md dtype name; false if it is not one. */
bool mtp_dtype_parse(const char *name, enum mtp_dtype *out);
size_t mtp_dtype_size(enum mtp_dtype dt);
bool mtp_dtype_is_float(enum mtp_dtype dt);

uint16_t mtp_bf16_from_double(double v);
uint16_t mtp_bf16_from_float(float v);
float mtp_bf16_to_float(uint16_t bits);
uint16_t mtp_f16_from_double(double v);
float mtp_f16_to_float(uint16_t bits);
float mtp_f32_from_double(double v);

/* v rounded to the nearest value representable in dt, returned as a double.
 * Integer dtypes and float64 return v unchanged. */
double mtp_round(enum mtp_dtype dt, double v);

/* Element i of a buffer of dtype dt, widened exactly to double. */
double mtp_load(enum mtp_dtype dt, const void *buf, size_t i);
/* Stores v rounded to dt at element i (integers: truncation of an in-range value). */
void mtp_store(enum mtp_dtype dt, void *buf, size_t i, double v);

#endif
