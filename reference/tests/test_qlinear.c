/*
 * Tests of the FP8 block-quantized projection [SPEC.md §12.2] on small
 * hand-computed cases: weight-only dequantization, W8A8 activation groups of
 * 128 with their dynamic scale, the eps clamp of an all-zero group, the
 * block scale's indexing over a partial last block.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define BF MTP_BF16

Test(qlinear, weight_only_is_w_times_scale)
{
	/* out 2, in 3: one block; scale 0.5 */
	const double w[6] = {1, 2, 3, 4, 5, 6}, s[1] = {0.5};
	const double x[3] = {1, 0, -1};
	const struct mtp_ref_quant q = {MTP_PROJ_QUANT_FP8_W, 1e-10};
	double y[2];

	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, s}, 1, 3, 2, &q, BF, y);
	cr_expect_eq(y[0], -1.0); /* (1 - 3) * 0.5 */
	cr_expect_eq(y[1], -1.0);
}

Test(qlinear, scale_blocks_follow_output_and_input_blocks)
{
	/* out 130 (2 row blocks), in 130 (2 column blocks); x = e_129 picks
	 * column 129 (block 1): row 0 scales by s[0][1], row 129 by s[1][1] */
	const int64_t n = 130;
	double *w = calloc((size_t)(n * n), sizeof(double));
	double *x = calloc((size_t)n, sizeof(double)), y[130];
	const double s[4] = {1, 2, 4, 8};
	const struct mtp_ref_quant q = {MTP_PROJ_QUANT_FP8_W, 1e-10};

	for (int64_t i = 0; i < n * n; i++)
		w[i] = 1;
	x[129] = 1;
	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, s}, 1, n, n, &q, BF, y);
	cr_expect_eq(y[0], 2.0);
	cr_expect_eq(y[129], 8.0);
	free(w);
	free(x);
}

Test(qlinear, w8a8_group_scale_and_saturation)
{
	/* one group [448*2^-4, 1.1]: amax 28, scale 28/448 = 1/16; 1.1 * 16 =
	 * 17.6 rounds to e4m3 18 (spacing 2 in [16, 32)); so x -> (448, 18)/16 */
	const double w[2] = {1, 1}, s[1] = {1};
	const double x[2] = {28.0, 1.1};
	const struct mtp_ref_quant q = {MTP_PROJ_QUANT_FP8_W8A8, 1e-10};
	double y[1];

	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, s}, 1, 2, 1, &q, MTP_F32,
			y);
	cr_expect_eq(y[0], 28.0 + 18.0 / 16, "got %.9g", y[0]);
}

Test(qlinear, zero_group_needs_the_eps_clamp)
{
	const double w[2] = {1, 1}, s[1] = {1}, x[2] = {0, 0};
	struct mtp_ref_quant q = {MTP_PROJ_QUANT_FP8_W8A8, 1e-10};
	double y[1];

	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, s}, 1, 2, 1, &q, BF, y);
	cr_expect_eq(y[0], 0.0);
	q.act_eps = 0; /* no clamp: 0 / 0 */
	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, s}, 1, 2, 1, &q, BF, y);
	cr_expect(isnan(y[0]));
}

Test(qlinear, no_scale_is_the_plain_gemm)
{
	const double w[3] = {0.5, 0.25, 2}, x[3] = {1, 2, 3};
	const struct mtp_ref_quant q = {MTP_PROJ_QUANT_FP8_W8A8, 1e-10};
	double a[1], b[1];

	mtp_ref_qlinear(x, (struct mtp_ref_qweight){w, NULL}, 1, 3, 1, &q, BF,
			a);
	mtp_ref_linear(x, w, 1, 3, 1, BF, b);
	cr_expect_eq(a[0], b[0]);
}

/* The GEMMs over threads (reference/parallel.c): 4 threads give the same
 * bits as 1 for plain, weight-only and W8A8 projections, at a size above
 * the threshold of the threaded path (37 x 300 x 600 = 6.7 M multiply-adds)
 * with partial scale blocks and thread ranges that split rows. */
Test(qlinear, threads_do_not_change_a_bit)
{
	enum { R = 37, IN = 300, OUT = 600 };
	const int64_t sb = (OUT + 127) / 128 * ((IN + 127) / 128);
	double *x = malloc(sizeof(double) * R * IN);
	double *w = malloc(sizeof(double) * OUT * IN);
	double *s = malloc(sizeof(double) * (size_t)sb);
	double *y1 = malloc(sizeof(double) * R * OUT);
	double *y4 = malloc(sizeof(double) * R * OUT);
	const struct mtp_ref_quant w8 = {MTP_PROJ_QUANT_FP8_W8A8, 1e-4};
	const struct mtp_ref_quant *qs[3] = {NULL, NULL, &w8};

	cr_assert(x && w && s && y1 && y4);
	for (int64_t i = 0; i < R * IN; i++)
		x[i] = (double)((i * 7919) % 1000 - 500) / 256;
	for (int64_t i = 0; i < OUT * IN; i++)
		w[i] = (double)((i * 104729) % 448 - 224) / 64;
	for (int64_t i = 0; i < sb; i++)
		s[i] = 1.0 / (double)(i + 2);
	for (int k = 0; k < 3; k++) {
		struct mtp_ref_qweight qw = {w, k ? s : NULL};

		setenv("MTP_REF_THREADS", "1", 1);
		mtp_ref_qlinear(x, qw, R, IN, OUT, qs[k], BF, y1);
		setenv("MTP_REF_THREADS", "4", 1);
		mtp_ref_qlinear(x, qw, R, IN, OUT, qs[k], BF, y4);
		cr_assert(!memcmp(y1, y4, sizeof(double) * R * OUT),
			  "projection %d differs with 4 threads", k);
	}
	unsetenv("MTP_REF_THREADS");
	free(x);
	free(w);
	free(s);
	free(y1);
	free(y4);
}
