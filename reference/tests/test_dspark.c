/*
 * Tests of the DSpark primitives [SPEC.md §13]: main_proj_norm, hc_collapse,
 * markov_bias and confidence, on inputs small enough that every expected
 * value is worked out by hand in the comments, rounding points included;
 * and the three bug rows' changes of dspark_step (struct
 * mtp_dspark_mistakes), each as a property against the correct step.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "test_util.h"

/* A plain (not block-FP8) weight. */
static struct mtp_ref_qweight qw(const double *w)
{
	return (struct mtp_ref_qweight){w, NULL};
}

Test(main_proj_norm, projection_rounds_before_the_norm)
{
	/* T = 1, P = 2 layers, H = 2: aux = [1, 2^-9 | -1, 0]. W row 0 sums
	 * the first two features: 1 + 2^-9 rounds to bf16 1 (the spacing at
	 * 1 is 2^-7); row 1 takes aux[2] = -1. P = [1, -1], rms 1
	 * (eps 0), main_x = [w0, -w1] = [1.5, -0.25]. Unrounded, P0 would
	 * make the rms larger than 1 and main_x[0] other than 1.5. */
	const double aux[4] = {1, 1.0 / 512, -1, 0};
	const double w[8] = {1, 1, 0, 0, 0, 0, 1, 0}, nw[2] = {1.5, 0.25};
	double p[2], y[2];

	mtp_ref_main_proj_norm(aux, qw(w), NULL, nw, 1, 2, 2, 0.0,
			       MTP_ROUNDING_EAGER, MTP_BF16, p, y);
	cr_assert_eq(p[0], 1.0);
	cr_assert_eq(p[1], -1.0);
	cr_assert_eq(y[0], 1.5);
	cr_assert_eq(y[1], -0.25);
	/* in float32 the sum survives: P0 = 1 + 2^-9 */
	mtp_ref_main_proj_norm(aux, qw(w), NULL, nw, 1, 2, 2, 0.0,
			       MTP_ROUNDING_EAGER, MTP_F32, p, y);
	cr_assert_eq(p[0], 1.0 + 1.0 / 512);
	cr_assert(y[0] != 1.5);
}

Test(main_proj_norm, layers_are_concatenated_in_order)
{
	/* P = 3, H = 1: W = [1, 10, 100] reads layer i at column i, so
	 * aux = [1, 2, 3] gives 321 (exact in bf16? 321 needs 9 bits: bf16
	 * rounds it to 320); H = 1 makes main_x = sign * w = 2. */
	const double aux[3] = {1, 2, 3}, w[3] = {1, 10, 100}, nw[1] = {2};
	double p[1], y[1];

	mtp_ref_main_proj_norm(aux, qw(w), NULL, nw, 1, 3, 1, 0.0,
			       MTP_ROUNDING_FUSED, MTP_BF16, p, y);
	cr_assert_eq(p[0], 320.0);
	cr_assert_eq(y[0], 2.0);
}

Test(hc_collapse, weighted_sum_of_the_streams_per_token)
{
	/* T = 2, M = 2, H = 2. Token 0: x = [[1, 2], [4, 8]], pre = [0.5,
	 * 0.25] -> [0.5 + 1, 1 + 2] = [1.5, 3]. Token 1 uses its own row:
	 * x = [[1, 1], [1, -1]], pre = [2, 1] -> [3, 1]. */
	const double x[8] = {1, 2, 4, 8, 1, 1, 1, -1},
		     pre[4] = {0.5, 0.25, 2, 1};
	double y[4];

	mtp_ref_hc_collapse(x, pre, 2, 2, 2, MTP_BF16, y);
	cr_assert_eq(y[0], 1.5);
	cr_assert_eq(y[1], 3.0);
	cr_assert_eq(y[2], 3.0);
	cr_assert_eq(y[3], 1.0);
}

Test(hc_collapse, one_rounding_of_the_sum)
{
	/* x = [1, 1] (M = 2, H = 1), pre = [1, 2^-9]: 1 + 2^-9 rounds to bf16
	 * 1 once; in float32 it stays. */
	const double x[2] = {1, 1}, pre[2] = {1, 1.0 / 512};
	double y;

	mtp_ref_hc_collapse(x, pre, 1, 2, 1, MTP_BF16, &y);
	cr_assert_eq(y, 1.0);
	mtp_ref_hc_collapse(x, pre, 1, 2, 1, MTP_F32, &y);
	cr_assert_eq(y, 1.0 + 1.0 / 512);
}

Test(markov_bias, bias_comes_from_the_previous_token)
{
	/* V = 3, R = 2. w1 rows: [1,0], [0,1], [1,1]; w2 rows: [1,0], [0,2],
	 * [-1,-1]. Row 0: prev = 2, e = [1,1], bias = [1, 2, -2]; logits
	 * [0.5, -1, 3] -> [1.5, 1, 1], token 0. Row 1: prev = 0, e = [1,0],
	 * bias = [1, 0, -1]; logits [0, 0, 1.5] -> [1, 0, 0.5], token 0. */
	const double w1[6] = {1, 0, 0, 1, 1, 1}, w2[6] = {1, 0, 0, 2, -1, -1};
	const double in[6] = {0.5, -1, 3, 0, 0, 1.5};
	const int64_t prev[2] = {2, 0};
	const double want[6] = {1.5, 1, 1, 1, 0, 0.5}, want_e[4] = {1, 1, 1, 0};
	double e[4], out[6];
	int64_t tok[2];

	mtp_ref_markov_bias(in, prev, w1, w2, 2, 3, 2, 1.0, MTP_BF16, e, out,
			    tok);
	test_assert_same(e, want_e, 4, "markov_embed");
	test_assert_same(out, want, 6, "logits");
	cr_assert_eq(tok[0], 0);
	cr_assert_eq(tok[1], 0);
}

Test(markov_bias, the_bias_and_the_sum_round)
{
	/* V = 1, R = 2, e = [1, 2^-9], w2 = [1, 1]: the bias 1 + 2^-9 rounds
	 * to bf16 1; 256 + 1 = 257 is a tie between 256 and 258 and rounds to
	 * even, 256. Without the bias rounding it would be 257.002 -> 258. */
	const double w1[2] = {1, 1.0 / 512}, w2[2] = {1, 1}, in[1] = {256};
	const int64_t prev[1] = {0};
	double e[2], out[1];
	int64_t tok[1];

	mtp_ref_markov_bias(in, prev, w1, w2, 1, 1, 2, 1.0, MTP_BF16, e, out,
			    tok);
	cr_assert_eq(out[0], 256.0);
	cr_assert_eq(tok[0], 0);
}

Test(markov_bias, the_scaled_bias_rounds_before_the_add)
{
	/* V = 1, R = 1, e = [1], w2 = [1 + 2^-7] (a bf16), logit_scale 1.5:
	 * 1.5 * (1 + 2^-7) = 1.51171875 is a tie between 1.5078125 and
	 * 1.515625 and rounds to even, 1.515625; 127/256 + 1.515625 =
	 * 2.01171875 rounds to 2.015625. Added unrounded, 2.0078125 would be
	 * a tie rounding to 2. */
	const double w1[1] = {1}, w2[1] = {1 + 1.0 / 128},
		     in[1] = {127.0 / 256};
	const int64_t prev[1] = {0};
	double e[1], out[1];
	int64_t tok[1];

	mtp_ref_markov_bias(in, prev, w1, w2, 1, 1, 1, 1.5, MTP_BF16, e, out,
			    tok);
	cr_assert_eq(out[0], 2.015625);
}

Test(confidence, sigmoid_of_the_dot_with_hidden_and_embedding)
{
	/* H = 2, R = 1: w = [1, -1 | 2], hidden = [3, 1], e = [0.5]: z = 3 - 1
	 * + 1 = 3; with bias -3, z = 0 and the confidence is exactly 0.5;
	 * without a bias it is f32(1 / (1 + e^-3)). The second row reads its
	 * own inputs: hidden = [0, 0], e = [-1] -> z = -2 (+ bias). */
	const double w[3] = {1, -1, 2}, h[4] = {3, 1, 0, 0}, e[2] = {0.5, -1};
	const double bias[1] = {-3};
	double c[2];

	mtp_ref_confidence(h, e, w, bias, 2, 2, 1, c);
	cr_assert_eq(c[0], 0.5);
	cr_assert_eq(c[1], (double)(float)(1.0 / (1.0 + exp(5.0))));
	/* without the embedding (R = 0, Qwen3's default): z = 3 - 1 - 3 */
	mtp_ref_confidence(h, NULL, w, bias, 1, 2, 0, c);
	cr_assert_eq(c[0], (double)(float)(1.0 / (1.0 + exp(1.0))));
	mtp_ref_confidence(h, e, w, NULL, 2, 2, 1, c);
	cr_assert_eq(c[0], (double)(float)(1.0 / (1.0 + exp(-3.0))));
	cr_assert_eq(c[1], (double)(float)(1.0 / (1.0 + exp(2.0))));
}

/* hc_pre_delayed with fn = 0: every mix is sigma(base) (+ eps), so with base
 * = 0 and pre_eps = 0 the pre-mix is exactly 0.5 and post exactly 1. */
static void delayed(const double *x, const double *pre_in, double *li,
		    double *pre_out, double *post)
{
	const struct mtp_hc_params p = {0.0, 0.0, 1e-6, 2.0, 20, 1e-6};
	double fn[8 * 4] = {0}, scale[3] = {1, 1, 1}, base[8] = {0};
	double comb[4];

	/* M = 2, H = 2: fn [2M + M^2 = 8, M*H = 4] */
	mtp_ref_hc_pre_delayed(x, fn, scale, base, NULL, pre_in, &p, 1, 2, 2,
			       MTP_BF16, post, comb, li, pre_out);
}

Test(hc_pre_delayed, layer_input_uses_the_carried_pre_mix)
{
	/* streams [1, 2] and [4, 8]; carried pre-mix [1, 0.25]: [2, 4], not
	 * the sublayer's own 0.5 * ([1, 2] + [4, 8]) = [2.5, 5]. */
	const double x[4] = {1, 2, 4, 8}, pre_in[2] = {1, 0.25};
	double li[2], pre[2], post[2];

	delayed(x, pre_in, li, pre, post);
	cr_assert_eq(post[0], 1.0);
	cr_assert_eq(post[1], 1.0);
	cr_assert_eq(li[0], 2.0);
	cr_assert_eq(li[1], 4.0);
	cr_assert_eq(pre[0], 0.5);
	cr_assert_eq(pre[1], 0.5);
}

Test(hc_pre_delayed, no_carried_pre_mix_selects_stream_0)
{
	/* layer 0 [§13 DS-4]: stream 0 as it is, even next to an Inf (a
	 * weighted sum with weight 0 would give NaN; the mixes are NaN). */
	const double x[4] = {1.5, -3, INFINITY, 8};
	double li[2], pre[2], post[2];

	delayed(x, NULL, li, pre, post);
	cr_assert_eq(li[0], 1.5);
	cr_assert_eq(li[1], -3.0);
}

Test(dspark_step, rope_rotates_the_halves_by_the_position)
{
	/* H = 2 (one pair, frequency 10000^0 = 1): x = [1, 0] at position 1
	 * turns by 1 radian to [cos 1, sin 1]; at position 0 it stays. */
	const double x[4] = {1, 0, 1, 0};
	const int64_t pos[2] = {1, 0};
	double y[4];

	mtp_ref_rope(x, pos, 2, 2, MTP_F32, y);
	cr_assert_eq(y[0], (double)(float)cos(1.0));
	cr_assert_eq(y[1], (double)(float)sin(1.0));
	cr_assert_eq(y[2], 1.0);
	cr_assert_eq(y[3], 0.0);
}

Test(dspark_step, the_in_block_mask_decides_which_block_keys_count)
{
	/* No context, T = 2, H = 1; equal scores (keys 0), values 2 and 4.
	 * Non-causal: both rows average both values, 3. Causal: row 0 sees
	 * only key 0 (2), row 1 both (3). One context key of value 6 joins
	 * every row: non-causal (6 + 2 + 4) / 3 = 4. */
	const double q[2] = {1, 1}, kb[2] = {0, 0}, vb[2] = {2, 4};
	const double kc[1] = {0}, vc[1] = {6};
	double o[2];

	mtp_ref_block_attention(q, NULL, NULL, kb, vb, 0, 2, 1,
				MTP_BLOCK_MASK_NON_CAUSAL, MTP_F32, o);
	cr_assert_eq(o[0], 3.0);
	cr_assert_eq(o[1], 3.0);
	mtp_ref_block_attention(q, NULL, NULL, kb, vb, 0, 2, 1,
				MTP_BLOCK_MASK_CAUSAL, MTP_F32, o);
	cr_assert_eq(o[0], 2.0);
	cr_assert_eq(o[1], 3.0);
	mtp_ref_block_attention(q, kc, vc, kb, vb, 1, 2, 1,
				MTP_BLOCK_MASK_NON_CAUSAL, MTP_F32, o);
	cr_assert_eq(o[0], 4.0);
	cr_assert_eq(o[1], 4.0);
}

/* ---- dspark_step under the bug rows' internal attributes (§13.9) ------- */

enum { DT = 3, DM = 2, DH = 4, DC = 2, DP = 2, DV = 5, DR = 2, DL = 2, DF = 3 };
#define NMIX (2 * DM + DM * DM)

struct ds_run {
	double main_x[DC * DH], inputs[2 * DL * DT * DH], pre[2 * DL * DT * DM];
	double streams[DT * DM * DH], h[DT * DH], base[DT * DV];
	double embed[DT * DR], logits[DT * DV], conf[DT];
	int64_t token[DT];
};

/* Random float32 weights of one small step (seed 7), run with `mk`; the
 * embedding table and markov_w1 are copied out. Which slice of the pool
 * an initialiser takes is the compiler's order: the same in every run. */
static void ds_step(struct mtp_dspark_mistakes mk, struct ds_run *o,
		    double *embed_table, double *markov_w1)
{
	struct test_rng g = test_rng_init(7);
	double *w = test_alloc(4096), *q = w;
	struct mtp_ref_dspark_layer ly[DL];
	static const int64_t ctx_pos[DC] = {11, 12}, ids[DT] = {1, 4, 4},
			     pos[DT] = {13, 14, 15};
#define TAKE(n, sc) (test_fill(&g, q, (n), (sc), MTP_F32), q += (n), q - (n))
#define NORM(n) (test_fill_around_one(&g, q, (n), 0.3), q += (n), q - (n))
	const double *aux = TAKE(DC * DP * DH, 1.0);
	struct mtp_ref_dspark_w dw = {.embed_table = TAKE(DV * DH, 1.0),
				      .main_proj_w = TAKE(DH * DP * DH, 0.5),
				      .main_norm_w = NORM(DH)};

	for (int l = 0; l < DL; l++) {
		ly[l].b = (struct mtp_ref_v4_block){TAKE(NMIX * DM * DH, 0.5),
						    NORM(3),
						    TAKE(NMIX, 1.0),
						    TAKE(NMIX * DM * DH, 0.5),
						    NORM(3),
						    TAKE(NMIX, 1.0),
						    NORM(DH),
						    NORM(DH),
						    TAKE(DH * DH, 0.5),
						    TAKE(DF * DH, 0.5),
						    TAKE(DF * DH, 0.5),
						    TAKE(DH * DF, 0.5)};
		ly[l].W_q = TAKE(DH * DH, 0.5);
		ly[l].W_kv = TAKE(DH * DH, 0.5);
		ly[l].kv_norm_w = NORM(DH);
	}
	dw.layers = ly;
	dw.norm_w = NORM(DH);
	dw.head_w = TAKE(DV * DH, 0.5);
	dw.markov_w1 = TAKE(DV * DR, 1.0);
	dw.markov_w2 = TAKE(DV * DR, 1.0);
	dw.conf_w = TAKE(DH + DR, 0.5);
#undef TAKE
#undef NORM
	memcpy(embed_table, dw.embed_table, sizeof(double) * DV * DH);
	memcpy(markov_w1, dw.markov_w1, sizeof(double) * DV * DR);
	mtp_ref_dspark_step(
		&(struct mtp_ref_dspark_in){aux, ctx_pos, ids, pos}, &dw,
		&(struct mtp_ref_dims){DT, DH, DM, DV, DF},
		&(struct mtp_ref_step_cfg){.family = MTP_FAMILY_DEEPSEEK_V4,
					   .eps = 1e-6,
					   .act = MTP_F32,
					   .hc_eps = 1e-6,
					   .sinkhorn_iters = 20,
					   .post_mult = 2.0},
		&(struct mtp_ref_dspark_cfg){
			DC, DP, DL, DR, MTP_BLOCK_MASK_NON_CAUSAL, 1.0, mk},
		&(struct mtp_ref_dspark_out){
			o->main_x, o->inputs, o->pre, o->streams, o->h, o->base,
			o->embed, o->logits, o->token, o->conf});
	free(w);
}

static bool differs(const double *a, const double *b, size_t n)
{
	return memcmp(a, b, n * sizeof(*a)) != 0;
}

/* hc_collapse under collapse_back = back: the pre-mix of sublayer
 * 2L - 1 - back, the streams and every pre-mix as the spec's. */
static void collapse_with(int back)
{
	static struct ds_run ok, bug;
	double e[DV * DH], w1[DV * DR], y[DT * DH];

	ds_step((struct mtp_dspark_mistakes){0}, &ok, e, w1);
	ds_step((struct mtp_dspark_mistakes){.collapse_back = back}, &bug, e,
		w1);
	test_assert_same(bug.streams, ok.streams, DT * DM * DH, "streams");
	test_assert_same(bug.pre, ok.pre, 2 * DL * DT * DM, "pre_mixes");
	mtp_ref_hc_collapse(ok.streams, ok.pre + (2 * DL - 1 - back) * DT * DM,
			    DT, DM, DH, MTP_F32, y);
	test_assert_same(bug.h, y, DT * DH, "h");
	cr_expect(differs(bug.h, ok.h, DT * DH), "h unchanged");
}

Test(dspark_step, collapse_back_1_collapses_with_the_last_attention_mix)
{
	collapse_with(1);
}

Test(dspark_step, collapse_back_2_collapses_with_the_layer_befores_ffn_mix)
{
	collapse_with(2);
}

Test(dspark_step, markov_on_ids_keys_every_position_on_its_own_id)
{
	static struct ds_run ok, bug;
	static const int64_t ids[DT] = {1, 4, 4};
	double e[DV * DH], w1[DV * DR];

	ds_step((struct mtp_dspark_mistakes){0}, &ok, e, w1);
	ds_step((struct mtp_dspark_mistakes){.markov_on_ids = true}, &bug, e,
		w1);
	test_assert_same(bug.base, ok.base, DT * DV, "base_logits");
	for (int k = 0; k < DT; k++)
		test_assert_same(bug.embed + k * DR, w1 + ids[k] * DR, DR,
				 "markov_embed");
	/* position 0 is keyed on the bonus token either way */
	test_assert_same(bug.logits, ok.logits, DV, "logits[0]");
}

Test(dspark_step, pre_mix_undelayed_feeds_layer_0_its_own_pre_mix)
{
	static struct ds_run ok, bug;
	double e[DV * DH], w1[DV * DR];

	ds_step((struct mtp_dspark_mistakes){0}, &ok, e, w1);
	ds_step((struct mtp_dspark_mistakes){.pre_mix_undelayed = true}, &bug,
		e, w1);
	/* the correct layer 0 attention input is stream 0 of the broadcast
	 * embedding, normed; under the bug it is sum_m pre[m] E, normed: the
	 * norm takes the scale out, so the two differ only through eps and
	 * rounding (why a learned layer-0 pre-mix alone has no row), while
	 * the FFN's input (its own pre-mix, not the attention's) differs */
	test_assert_close(bug.inputs, ok.inputs, DT * DH, 1e-4,
			  "layer 0 attention input");
	test_assert_same(bug.pre, ok.pre, DT * DM, "layer 0 attention pre-mix");
	cr_expect(differs(bug.inputs + DT * DH, ok.inputs + DT * DH, DT * DH),
		  "layer 0 FFN input unchanged");
}
