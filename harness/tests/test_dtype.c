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
