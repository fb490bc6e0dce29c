/*
 * Element-type names and exact conversions. Rounding is done on bit patterns
 * so that it is round-to-nearest-even for every input, the subnormal range
 * included, and never depends on the FPU's rounding mode or on x87 excess
 * precision. double -> bfloat16/float16 rounds once, directly from the double
 * (no double rounding through float).
 */
#include "mtp/dtype.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[MTP_DTYPE_COUNT] = {
	[MTP_F64] = "float64",
	[MTP_F32] = "float32",
	[MTP_F16] = "float16",
	[MTP_BF16] = "bfloat16",
	[MTP_I64] = "int64",
	[MTP_I32] = "int32",
	[MTP_F8E4M3] = "float8_e4m3fn",
	[MTP_F8E8M0] = "float8_e8m0fnu",
};

static const size_t dtype_sizes[MTP_DTYPE_COUNT] = {
	[MTP_F64] = 8, [MTP_F32] = 4, [MTP_F16] = 2,	[MTP_BF16] = 2,
	[MTP_I64] = 8, [MTP_I32] = 4, [MTP_F8E4M3] = 1, [MTP_F8E8M0] = 1,
};

const char *mtp_dtype_name(enum mtp_dtype dt)
{
	return (unsigned)dt < MTP_DTYPE_COUNT ? dtype_names[dt] : "?";
}

bool mtp_dtype_parse(const char *name, enum mtp_dtype *out)
{
	for (int i = 0; i < MTP_DTYPE_COUNT; i++) {
		if (strcmp(name, dtype_names[i]) == 0) {
			*out = (enum mtp_dtype)i;
			return true;
		}
	}
	return false;
}

size_t mtp_dtype_size(enum mtp_dtype dt)
{
	return (unsigned)dt < MTP_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

bool mtp_dtype_is_float(enum mtp_dtype dt)
{
	return dt == MTP_F64 || dt == MTP_F32 || dt == MTP_F16 ||
	       dt == MTP_BF16;
}

bool mtp_dtype_is_fp8(enum mtp_dtype dt)
{
	return dt == MTP_F8E4M3 || dt == MTP_F8E8M0;
}

static uint64_t double_bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

/*
 * |v| (u: the bits of a finite, nonzero double) rounded to nearest even in a
 * binary format with `mant` explicit mantissa bits and exponent bias `bias`,
 * as the pattern (biased exponent << mant | fraction) without the sign and
 * without an upper bound: the caller decides what a pattern past its largest
 * finite one means (Inf, NaN or saturation).
 */
static uint64_t round_mag(uint64_t u, int mant, int bias)
{
	int exp = (int)((u >> 52) & 0x7ff);
	uint64_t frac = u & 0xfffffffffffffull;
	/* value = sig * 2^(e - 52) with sig holding the implicit bit */
	uint64_t sig = exp ? (frac | (1ull << 52)) : frac;
	int e = exp ? exp - 1023 : -1022;
	int ne = e + bias; /* biased narrow exponent if normal */
	int shift;	   /* bits of sig dropped */

	if (ne >= 1)
		shift = 52 - mant;
	else /* subnormal in the narrow format: fixed exponent 1 - bias */
		shift = 52 - mant + (1 - ne);
	if (shift > 63)
		return 0; /* far below half the smallest subnormal */

	uint64_t kept = sig >> shift;
	uint64_t rem = sig & ((1ull << shift) - 1);
	uint64_t half = 1ull << (shift - 1);

	if (rem > half || (rem == half && (kept & 1)))
		kept++;
	if (ne < 1) /* subnormal: kept may carry into the first normal */
		return kept;
	/* normal: kept has the implicit bit at position mant; a carry bumps the
	 * exponent, which the addition below does by itself */
	return ((uint64_t)(ne - 1) << mant) + kept;
}

/* Rounds a double to an IEEE-style format (all-ones exponent = Inf/NaN) with
 * `mant` mantissa bits and `ebits` exponent bits; the pattern has no sign. */
static uint32_t round_to_narrow(uint64_t u, int mant, int ebits)
{
	const uint32_t inf = ((1u << ebits) - 1) << mant;
	int exp = (int)((u >> 52) & 0x7ff);
	uint64_t frac = u & 0xfffffffffffffull;

	if (exp == 0x7ff) /* Inf stays Inf, NaN becomes a quiet NaN */
		return frac ? inf | (1u << (mant - 1)) : inf;
	if (exp == 0 && frac == 0)
		return 0;

	uint64_t r = round_mag(u, mant, (1 << (ebits - 1)) - 1);

	return r >= inf ? inf : (uint32_t)r;
}

static uint16_t narrow16(double v, int mant, int ebits)
{
	uint64_t u = double_bits(v);
	uint16_t sign = (uint16_t)((u >> 48) & 0x8000);

	return sign | (uint16_t)round_to_narrow(u, mant, ebits);
}

uint16_t mtp_bf16_from_double(double v)
{
	return narrow16(v, 7, 8);
}

uint16_t mtp_bf16_from_float(float v)
{
	return narrow16((double)v, 7, 8); /* float -> double is exact */
}

float mtp_bf16_to_float(uint16_t bits)
{
	uint32_t u = (uint32_t)bits << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t mtp_f16_from_double(double v)
{
	return narrow16(v, 10, 5);
}

float mtp_f16_to_float(uint16_t bits)
{
	uint32_t sign = (uint32_t)(bits & 0x8000) << 16;
	uint32_t exp = (bits >> 10) & 0x1f;
	uint32_t frac = bits & 0x3ff;
	float f;

	if (exp == 0x1f) {
		uint32_t u = sign | 0x7f800000u | (frac << 13);

		memcpy(&f, &u, sizeof(f));
		return f;
	}
	f = exp ? ldexpf((float)(frac | 0x400), (int)exp - 25)
		: ldexpf((float)frac, -24);
	return sign ? -f : f;
}

float mtp_f32_from_double(double v)
{
	uint64_t u = double_bits(v);
	uint32_t r =
		((uint32_t)(u >> 32) & 0x80000000u) | round_to_narrow(u, 23, 8);
	float f;

	memcpy(&f, &r, sizeof(f));
	return f;
}

uint8_t mtp_e4m3_from_double(double v, bool saturate)
{
	const uint64_t max_finite = 0x7e; /* S.1111.110 = 448 */
	uint64_t u = double_bits(v);
	uint8_t sign = (uint8_t)((u >> 56) & 0x80);
	uint64_t r;

	if (isnan(v))
		return sign | 0x7f;
	if (isinf(v))
		return sign | (saturate ? 0x7e : 0x7f);
	if (v == 0)
		return sign;
	r = round_mag(u, 3, 7);
	if (r > max_finite)
		r = saturate ? max_finite : 0x7f;
	return sign | (uint8_t)r;
}

double mtp_e4m3_to_double(uint8_t bits)
{
	int exp = (bits >> 3) & 0xf, frac = bits & 7;
	double m;

	if ((bits & 0x7f) == 0x7f)
		return NAN;
	m = exp ? ldexp(8 + frac, exp - 10) : ldexp(frac, -9);
	return bits & 0x80 ? -m : m;
}

uint8_t mtp_e8m0_from_double(double v)
{
	int e;
	double m;

	if (!(v > 0) || isinf(v))
		return 0xff;
	m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
	e -= 1;		  /* v = 2m * 2^e, 2m in [1, 2) */
	if (2 * m >= 1.5)
		e++;
	if (e < -127)
		e = -127;
	if (e > 127)
		e = 127;
	return (uint8_t)(e + 127);
}

double mtp_e8m0_to_double(uint8_t bits)
{
	return bits == 0xff ? NAN : ldexp(1.0, (int)bits - 127);
}

double mtp_round(enum mtp_dtype dt, double v)
{
	switch (dt) {
	case MTP_F32: return mtp_f32_from_double(v);
	case MTP_F16: return mtp_f16_to_float(mtp_f16_from_double(v));
	case MTP_BF16: return mtp_bf16_to_float(mtp_bf16_from_double(v));
	case MTP_F8E4M3: return mtp_e4m3_to_double(mtp_e4m3_from_double(v, 0));
	case MTP_F8E8M0: return mtp_e8m0_to_double(mtp_e8m0_from_double(v));
	default: return v;
	}
}

double mtp_load(enum mtp_dtype dt, const void *buf, size_t i)
{
	switch (dt) {
	case MTP_F64: return ((const double *)buf)[i];
	case MTP_F32: return ((const float *)buf)[i];
	case MTP_F16: return mtp_f16_to_float(((const uint16_t *)buf)[i]);
	case MTP_BF16: return mtp_bf16_to_float(((const uint16_t *)buf)[i]);
	case MTP_I64: return (double)((const int64_t *)buf)[i];
	case MTP_I32: return ((const int32_t *)buf)[i];
	case MTP_F8E4M3: return mtp_e4m3_to_double(((const uint8_t *)buf)[i]);
	case MTP_F8E8M0: return mtp_e8m0_to_double(((const uint8_t *)buf)[i]);
	default: return NAN;
	}
}

void mtp_store(enum mtp_dtype dt, void *buf, size_t i, double v)
{
	switch (dt) {
	case MTP_F64: ((double *)buf)[i] = v; break;
	case MTP_F32: ((float *)buf)[i] = mtp_f32_from_double(v); break;
	case MTP_F16: ((uint16_t *)buf)[i] = mtp_f16_from_double(v); break;
	case MTP_BF16: ((uint16_t *)buf)[i] = mtp_bf16_from_double(v); break;
	case MTP_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case MTP_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case MTP_F8E4M3:
		((uint8_t *)buf)[i] = mtp_e4m3_from_double(v, false);
		break;
	case MTP_F8E8M0: ((uint8_t *)buf)[i] = mtp_e8m0_from_double(v); break;
	default: break;
	}
}
