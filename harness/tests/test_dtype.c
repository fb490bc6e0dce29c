/* dtype conversions: round-to-nearest-even on edge values, NaN/Inf kept. */
#include <criterion/criterion.h>
#include <math.h>

#include "mtp/dtype.h"

Test(dtype, bf16_exact_values_round_trip)
{
	/* 1.0 = 0x3f80, -2.0 = 0xc000, 0.5 = 0x3f00 */
	cr_expect_eq(mtp_bf16_from_double(1.0), 0x3f80);
	cr_expect_eq(mtp_bf16_from_double(-2.0), 0xc000);
	cr_expect_eq(mtp_bf16_from_double(0.5), 0x3f00);
	cr_expect_eq(mtp_bf16_to_float(0x3f80), 1.0f);
}

Test(dtype, bf16_ties_go_to_even)
{
	/* bf16 has 8 significant bits: 1 + 2^-8 is halfway between 1 and
	 * 1 + 2^-7; the even neighbour is 1.0 (0x3f80). 1 + 3*2^-8 is halfway
	 * between 1+2^-7 (0x3f81, odd) and 1+2^-6 (0x3f82, even). */
	cr_expect_eq(mtp_bf16_from_double(1.0 + ldexp(1, -8)), 0x3f80);
	cr_expect_eq(mtp_bf16_from_double(1.0 + 3 * ldexp(1, -8)), 0x3f82);
	/* just above the tie rounds up */
	cr_expect_eq(mtp_bf16_from_double(1.0 + ldexp(1, -8) + ldexp(1, -30)),
		     0x3f81);
}

Test(dtype, bf16_no_double_rounding_through_float)
{
	/* 1 + 2^-8 + 2^-40: a float would round it to 1 + 2^-8 (a tie, then
	 * down to 1.0); rounding once from double must go up to 0x3f81. */
	double v = 1.0 + ldexp(1, -8) + ldexp(1, -40);

	cr_expect_eq(mtp_bf16_from_float((float)v), 0x3f80);
	cr_expect_eq(mtp_bf16_from_double(v), 0x3f81);
}

Test(dtype, bf16_overflow_and_specials)
{
	/* max finite bf16 = 0x7f7f = (2 - 2^-7) * 2^127 */
	double maxf = (2 - ldexp(1, -7)) * ldexp(1, 127);

	cr_expect_eq(mtp_bf16_from_double(maxf), 0x7f7f);
	/* halfway between max finite and 2^128 rounds to even: Inf */
	cr_expect_eq(mtp_bf16_from_double((2 - ldexp(1, -8)) * ldexp(1, 127)),
		     0x7f80);
	cr_expect_eq(mtp_bf16_from_double(1e300), 0x7f80);
	cr_expect_eq(mtp_bf16_from_double(-INFINITY), 0xff80);
	uint16_t n = mtp_bf16_from_double(NAN);

	cr_expect((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0, "NaN stays NaN");
	cr_expect(isnan(mtp_round(MTP_BF16, NAN)));
	cr_expect_eq(mtp_bf16_from_double(-0.0), 0x8000);
}

Test(dtype, bf16_subnormals)
{
	/* smallest bf16 subnormal = 2^-133 (0x0001) */
	cr_expect_eq(mtp_bf16_from_double(ldexp(1, -133)), 0x0001);
	/* half of it is a tie with 0 (even): 0 */
	cr_expect_eq(mtp_bf16_from_double(ldexp(1, -134)), 0x0000);
	/* 1.5 * 2^-133 is a tie between 1 and 2 units: even = 2 */
	cr_expect_eq(mtp_bf16_from_double(1.5 * ldexp(1, -133)), 0x0002);
	/* largest subnormal rounding up into the smallest normal 0x0080 */
	cr_expect_eq(mtp_bf16_from_double(ldexp(1, -126) - ldexp(1, -140)),
		     0x0080);
}

Test(dtype, f16_edges)
{
	cr_expect_eq(mtp_f16_from_double(1.0), 0x3c00);
	cr_expect_eq(mtp_f16_from_double(65504.0), 0x7bff);
	/* 65520 is halfway between 65504 and 65536 (Inf): ties to even = Inf */
	cr_expect_eq(mtp_f16_from_double(65520.0), 0x7c00);
	cr_expect_eq(mtp_f16_from_double(65519.0), 0x7bff);
	cr_expect_eq(mtp_f16_from_double(ldexp(1, -24)), 0x0001);
	cr_expect_eq(mtp_f16_from_double(ldexp(1, -25)), 0x0000);
	cr_expect_eq(mtp_f16_to_float(0x0001), ldexpf(1, -24));
	cr_expect_eq(mtp_f16_to_float(0xc000), -2.0f);
	cr_expect(isinf(mtp_f16_to_float(0x7c00)));
	cr_expect(isnan(mtp_f16_to_float(0x7e00)));
	/* 1 + 2^-11 is a tie: even is 1.0 */
	cr_expect_eq(mtp_f16_from_double(1.0 + ldexp(1, -11)), 0x3c00);
}

Test(dtype, f32_rounding_matches_the_fpu)
{
	/* the FPU rounds double->float to nearest even: both must agree */
	double vals[] = {1.0 + ldexp(1, -24),
			 1.0 + 3 * ldexp(1, -24),
			 1e-45,
			 7e-46,
			 3.4028235677973366e38,
			 1e39,
			 -1.1754942e-38};

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		cr_expect_eq(mtp_f32_from_double(vals[i]), (float)vals[i],
			     "value %g", vals[i]);
}

Test(dtype, names_parse_and_sizes)
{
	enum mtp_dtype dt;

	cr_expect(mtp_dtype_parse("bfloat16", &dt) && dt == MTP_BF16);
	cr_expect(!mtp_dtype_parse("bf16", &dt));
	cr_expect_eq(mtp_dtype_size(MTP_I64), 8);
	cr_expect_str_eq(mtp_dtype_name(MTP_F16), "float16");
}

/* ---- float8_e4m3fn and float8_e8m0fnu (FORMAT.md version 2) -------- */

Test(dtype, e4m3_decodes_every_pattern)
{
	/* normal: 2^(e-7) * (1 + f/8); subnormal: f * 2^-9; S.1111.111 NaN */
	for (int b = 0; b < 256; b++) {
		int e = (b >> 3) & 15, f = b & 7;
		double want = e ? ldexp(8 + f, e - 10) : ldexp(f, -9);
		double got = mtp_e4m3_to_double((uint8_t)b);

		if ((b & 0x7f) == 0x7f) {
			cr_expect(isnan(got), "0x%02x is NaN", b);
			continue;
		}
		cr_expect_eq(got, b & 0x80 ? -want : want, "0x%02x", b);
		/* every finite pattern survives a round trip, both modes */
		cr_expect_eq(mtp_e4m3_from_double(got, true), b, "0x%02x", b);
		cr_expect_eq(mtp_e4m3_from_double(got, false), b, "0x%02x", b);
	}
	cr_expect_eq(mtp_e4m3_to_double(0x7e), 448.0);
	cr_expect_eq(mtp_e4m3_to_double(0x01), ldexp(1, -9));
	cr_expect_eq(mtp_e4m3_to_double(0x08), ldexp(1, -6));
}

Test(dtype, e4m3_ties_go_to_even)
{
	/* between 1 (0x38) and 1.125 (0x39): 1.0625 is the tie -> 0x38;
	 * between 1.125 and 1.25 (0x3a): 1.1875 -> 0x3a (even) */
	cr_expect_eq(mtp_e4m3_from_double(1.0625, true), 0x38);
	cr_expect_eq(mtp_e4m3_from_double(1.1875, true), 0x3a);
	cr_expect_eq(mtp_e4m3_from_double(1.0625 + 1e-9, true), 0x39);
	cr_expect_eq(mtp_e4m3_from_double(-1.1875, true), 0xba);
	/* subnormal ties: 1.5 * 2^-9 -> 2 * 2^-9 (even); 0.5 * 2^-9 -> 0 */
	cr_expect_eq(mtp_e4m3_from_double(1.5 * ldexp(1, -9), true), 0x02);
	cr_expect_eq(mtp_e4m3_from_double(2.5 * ldexp(1, -9), true), 0x02);
	cr_expect_eq(mtp_e4m3_from_double(0.5 * ldexp(1, -9), true), 0x00);
	cr_expect_eq(mtp_e4m3_from_double(-0.5 * ldexp(1, -9), true), 0x80);
	cr_expect_eq(mtp_e4m3_from_double(0.51 * ldexp(1, -9), true), 0x01);
	/* the largest subnormal 7 * 2^-9 and the carry into the first normal */
	cr_expect_eq(mtp_e4m3_from_double(7.5 * ldexp(1, -9), true), 0x08);
	cr_expect_eq(mtp_e4m3_from_double(7.49 * ldexp(1, -9), true), 0x07);
}

Test(dtype, e4m3_saturation_nan_and_zero)
{
	/* 464 is the tie between 448 and (the would-be) 480: even is 448 */
	cr_expect_eq(mtp_e4m3_from_double(464.0, false), 0x7e);
	cr_expect_eq(mtp_e4m3_from_double(464.01, false), 0x7f);
	cr_expect_eq(mtp_e4m3_from_double(464.01, true), 0x7e);
	cr_expect_eq(mtp_e4m3_from_double(-1e6, true), 0xfe);
	cr_expect_eq(mtp_e4m3_from_double(-1e6, false), 0xff);
	cr_expect_eq(mtp_e4m3_from_double(INFINITY, true), 0x7e);
	cr_expect_eq(mtp_e4m3_from_double(-INFINITY, false), 0xff);
	cr_expect_eq(mtp_e4m3_from_double(NAN, true), 0x7f);
	cr_expect_eq(mtp_e4m3_from_double(-NAN, true), 0xff);
	cr_expect_eq(mtp_e4m3_from_double(0.0, true), 0x00);
	cr_expect_eq(mtp_e4m3_from_double(-0.0, true), 0x80);
	cr_expect_eq(mtp_e4m3_from_double(1e-300, true), 0x00);
	cr_expect(isnan(mtp_round(MTP_F8E4M3, 500.0)));
	cr_expect_eq(mtp_round(MTP_F8E4M3, 3.3), 3.25);
}

Test(dtype, e8m0_powers_of_two)
{
	cr_expect_eq(mtp_e8m0_to_double(127), 1.0);
	cr_expect_eq(mtp_e8m0_to_double(0), ldexp(1, -127));
	cr_expect_eq(mtp_e8m0_to_double(254), ldexp(1, 127));
	cr_expect(isnan(mtp_e8m0_to_double(255)));
	for (int b = 0; b < 255; b++)
		cr_expect_eq(
			mtp_e8m0_from_double(mtp_e8m0_to_double((uint8_t)b)),
			b);
	cr_expect_eq(mtp_e8m0_from_double(1.49), 127);
	cr_expect_eq(mtp_e8m0_from_double(1.5), 128);
	cr_expect_eq(mtp_e8m0_from_double(0.0), 0xff);
	cr_expect_eq(mtp_e8m0_from_double(-1.0), 0xff);
	cr_expect_eq(mtp_e8m0_from_double(NAN), 0xff);
	cr_expect_eq(mtp_e8m0_from_double(1e300), 254);
	cr_expect_eq(mtp_e8m0_from_double(1e-300), 0);
}

Test(dtype, fp8_names_sizes_and_storage)
{
	enum mtp_dtype dt;

	cr_expect(mtp_dtype_parse("float8_e4m3fn", &dt) && dt == MTP_F8E4M3);
	cr_expect(mtp_dtype_parse("float8_e8m0fnu", &dt) && dt == MTP_F8E8M0);
	cr_expect_eq(mtp_dtype_size(MTP_F8E4M3), 1);
	cr_expect(!mtp_dtype_is_float(MTP_F8E4M3));
	cr_expect(mtp_dtype_is_fp8(MTP_F8E8M0));
	uint8_t buf[2];

	mtp_store(MTP_F8E4M3, buf, 0, -2.0);
	mtp_store(MTP_F8E8M0, buf, 1, 0.25);
	cr_expect_eq(buf[0], 0xc0);
	cr_expect_eq(buf[1], 125);
	cr_expect_eq(mtp_load(MTP_F8E4M3, buf, 0), -2.0);
	cr_expect_eq(mtp_load(MTP_F8E8M0, buf, 1), 0.25);
}
