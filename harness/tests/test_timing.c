/* The timing engine on the ref backend: statistics, rotation, outputs; the
 * op table's cost model on hand-counted cases. No speed is asserted. */
#include <criterion/criterion.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/generate.h"
#include "mtp/timing.h"

static void make(const char *op, int64_t t, int64_t h, struct mtp_case *c,
		 struct mtp_case_call *cc)
{
	struct mtp_gen_spec spec;
	char err[MTP_ERR_MAX];

	mtp_gen_spec_init(&spec, mtp_op_find(op));
	spec.t = t;
	spec.rows = t;
	spec.h = h;
	cr_assert_eq(mtp_case_generate(&spec, c, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_assert_eq(mtp_case_call_init(c, cc, err, sizeof(err)), MTP_OK, "%s",
		     err);
}

Test(timing, rmsnorm_cost_is_hand_counted)
{
	struct mtp_case c = {0};
	struct mtp_case_call cc;
	double bytes, flops;

	make("rmsnorm", 8, 64, &c, &cc);
	mtp_op_cost(&cc.call, &bytes, &flops);
	/* bf16: x [8,64] read, weight [64] read, y [8,64] written */
	cr_expect_eq(bytes, 2.0 * (8 * 64 + 64 + 8 * 64));
	cr_expect_eq(flops, 4.0 * 8 * 64);
	mtp_case_call_fini(&cc);
	mtp_case_fini(&c);
}

/* The block is counted alone: its step adds eh_proj, the norms and the
 * vocabulary GEMM (a block once carried the step's eh_proj, and read 1.4
 * PFLOP/s on an H200). */
Test(timing, block_cost_is_the_block_alone)
{
	struct mtp_case c = {0}, s = {0};
	struct mtp_case_call cc, sc;
	double bytes, block, step;

	make("mtp_block", 8, 64, &c, &cc);
	make("mtp_step", 8, 64, &s, &sc);
	mtp_op_cost(&cc.call, &bytes, &block);
	mtp_op_cost(&sc.call, &bytes, &step);
	double t = 8, h = 64, f = (double)cc.call.dims.f,
	       v = (double)sc.call.dims.v;
	cr_assert_gt(f, 0);
	cr_expect_eq(block, 2 * t * h * h + 3 * 2 * t * h * f + 20 * t * h);
	cr_expect_eq(step - block,
		     2 * t * (2 * h) * h + 10 * t * h + 2 * t * h * v);
	mtp_case_call_fini(&sc);
	mtp_case_fini(&s);
	mtp_case_call_fini(&cc);
	mtp_case_fini(&c);
}

Test(timing, statistics_rotation_and_outputs)
{
	struct mtp_case c = {0};
	struct mtp_case_call cc;
	struct mtp_backend *be;
	struct mtp_timing_opts o;
	struct mtp_timing t;
	struct mtp_tensor out[4] = {{0}}, ref[4] = {{0}};
	char why[256];

	make("rmsnorm", 4, 64, &c, &cc);
	cr_assert_eq(mtp_backend_open("ref", NULL, &be, why, sizeof(why)),
		     MTP_OK);
	mtp_timing_opts_init(&o);
	o.min_reps = 7;
	o.min_seconds = 0;
	o.rotate_bytes = 4096;
	cr_assert_eq(mtp_time_call(be, &cc.call, &o, &t, out), MTP_OK);
	cr_expect_eq(t.reps, 7);
	cr_expect(t.sets > 1, "small inputs are rotated over several copies");
	cr_expect(t.min <= t.q1 && t.q1 <= t.median && t.median <= t.q3);
	cr_expect(t.median > 0);
	/* the timed outputs are the op's outputs */
	cr_assert_eq(mtp_backend_execute(be, &cc.call, ref), MTP_OK);
	cr_expect(memcmp(out[0].data, ref[0].data,
			 mtp_tensor_nbytes(&ref[0])) == 0);
	o.warm = true;
	cr_expect(t.samples && t.samples[0] == t.min,
		  "the raw samples come back, sorted");
	mtp_timing_fini(&t);
	mtp_tensor_fini(&out[0]);
	cr_assert_eq(mtp_time_call(be, &cc.call, &o, &t, out), MTP_OK);
	cr_expect_eq(t.sets, 1, "--warm times one input set");
	mtp_timing_fini(&t);
	double bw;

	cr_expect_eq(mtp_probe_copy_bandwidth(be, 1 << 20, &bw), MTP_OK);
	cr_expect(bw > 0);
	mtp_tensor_fini(&out[0]);
	mtp_tensor_fini(&ref[0]);
	mtp_backend_close(be);
	mtp_case_call_fini(&cc);
	mtp_case_fini(&c);
}

Test(timing, perf_verdicts_from_raw_samples)
{
	double base[12], same[12], slow[12], noisy[4] = {1.0, 1.4, 0.7, 1.2};
	double r, p;

	for (int i = 0; i < 12; i++) {
		base[i] = 1.0 + 0.001 * i; /* 1.000 .. 1.011 */
		same[i] = 1.0 + 0.001 * (11 - i);
		slow[i] = 1.10 + 0.001 * i; /* 10 % slower, no overlap */
	}
	cr_expect_eq(mtp_perf_compare(base, 12, same, 12, 0.03, 0.01, &r, &p),
		     MTP_SAME);
	cr_expect_float_eq(r, 1.0, 1e-12);
	cr_expect_eq(mtp_perf_compare(base, 12, slow, 12, 0.03, 0.01, &r, &p),
		     MTP_SLOWER);
	/* no overlap at 12 + 12 samples: p = 2 * P(U = 0) ~ 3.7e-5 (normal approx.) */
	cr_expect(p < 1e-3, "p = %g", p);
	cr_expect_eq(mtp_perf_compare(slow, 12, base, 12, 0.03, 0.01, &r, &p),
		     MTP_FASTER);
	cr_expect_eq(mtp_perf_compare(base, 12, noisy, 4, 0.03, 0.01, &r, &p),
		     MTP_AMBIGUOUS,
		     "a 10 %% shift in 4 noisy samples cannot be told");
}

/* The unfused row's words: a ratio below 1 is never "faster". */
Test(timing, speed_words_say_faster_or_slower)
{
	char w[32];

	mtp_speed_words(1.0, 1.22, w,
			sizeof(w)); /* fused 1.0 s, unfused 1.22 */
	cr_expect_str_eq(w, "1.22x faster");
	mtp_speed_words(1.22, 1.0, w, sizeof(w)); /* fused slower */
	cr_expect_str_eq(w, "1.22x slower");
	mtp_speed_words(2.0, 2.0, w, sizeof(w));
	cr_expect_str_eq(w, "1.00x faster");
	mtp_speed_words(0, 1.0, w, sizeof(w));
	cr_expect_str_eq(w, "-");
}

/* A timing of 12 samples around level (0.1 % apart), for the gate. */
static void fake_timing(struct mtp_timing *t, double *s, double level)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 12; i++)
		s[i] = level * (1.0 + 0.001 * i);
	t->samples = s;
	t->reps = 12;
	t->median = level * 1.0055;
}

/* The same binary against itself while a load comes and goes: one repeat
 * of three falls in a burst 20 % slower. A single comparison calls that
 * SLOWER; the gate, which wants the effect in every repeat above their
 * spread, says SAME. A slowdown in every repeat stays SLOWER. */
Test(timing, gate_needs_the_effect_in_every_repeat)
{
	double base[12], s[3][12], r, p, floor;
	struct mtp_timing rep[3], b;

	fake_timing(&b, base, 1.0);
	fake_timing(&rep[0], s[0], 1.2); /* the burst */
	fake_timing(&rep[1], s[1], 1.0);
	fake_timing(&rep[2], s[2], 1.0);
	cr_expect_eq(mtp_perf_compare(base, 12, s[0], 12, 0.05, 0.01, &r, &p),
		     MTP_SLOWER, "one measurement in the burst is SLOWER");
	cr_expect_eq(
		mtp_perf_gate(base, 12, 0, rep, 3, 0.05, 0.01, &r, &p, &floor),
		MTP_SAME);
	cr_expect_float_eq(floor, 0.2, 1e-9, "the repeats' spread: %g", floor);
	for (int k = 0; k < 3; k++)
		fake_timing(&rep[k], s[k], 1.2 + 0.01 * k);
	cr_expect_eq(
		mtp_perf_gate(base, 12, 0, rep, 3, 0.05, 0.01, &r, &p, &floor),
		MTP_SLOWER, "20 %% slower in every repeat, 2 %% spread");
	cr_expect_float_eq(r, 1.21, 0.01);
	/* the baseline's own spread widens the floor too */
	cr_expect_eq(mtp_perf_gate(base, 12, 0.3, rep, 3, 0.05, 0.01, &r, &p,
				   &floor),
		     MTP_SAME);
	cr_expect_float_eq(floor, 0.3, 1e-9);
	/* one repeat is mtp_perf_compare */
	cr_expect_eq(
		mtp_perf_gate(base, 12, 0, rep, 1, 0.05, 0.01, &r, &p, &floor),
		MTP_SLOWER);
}
