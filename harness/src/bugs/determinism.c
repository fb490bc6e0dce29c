/*
 * Determinism (docs/DIAGNOSES.md "Determinism"): found by calling the
 * backend again (run --invariance, --repeat N --bitwise), no hypothesis.
 * The mutants flip the last bit of a hashed sixteenth of the finite,
 * non-zero elements of every bfloat16/float16 output (the activations, as
 * ROUNDING_BIAS's mutant: a float32-only case, such as the fp32 norms, is
 * one these cannot break). One ulp is within every tolerance, and a
 * flipped last bit moves odd and even mantissas in opposite directions, so
 * ROUNDING_BIAS stays silent: only the determinism modes can see these.
 *  - BATCH_VARIANT: only in a call of more than one row, at positions of
 *    the batch, as a kernel chosen by the batch size would: a token alone
 *    (T = 1) or at another row gets other bits;
 *  - NONDETERMINISTIC: positions hashed with the count of the calls, as
 *    atomics would: every call gives other bits.
 */
#include "bugs.h"

static bool flip_here(size_t i, uint32_t salt)
{
	uint32_t h = ((uint32_t)i ^ salt) * 2654435761u;

	return (h >> 28) == 5; /* one in 16 */
}

static void flip(struct mtp_tensor *t, uint32_t salt)
{
	size_t n = (size_t)mtp_tensor_numel(t), sz = mtp_dtype_size(t->dtype);

	if (t->dtype != MTP_BF16 && t->dtype != MTP_F16)
		return;
	for (size_t i = 0; i < n; i++) {
		double v = mtp_load(t->dtype, t->data, i);

		if (!flip_here(i, salt) || v == 0 || v != v || v - v != 0)
			continue;
		((unsigned char *)t->data)[i * sz] ^= 1u; /* little endian */
	}
}

static enum mtp_status batch_variant(const struct mtp_call *c, uint32_t call_no,
				     struct mtp_tensor *t)
{
	(void)call_no;
	if (c->dims.t > 1 || c->dims.r > 1)
		flip(t, 0);
	return MTP_OK;
}

static enum mtp_status nondeterministic(const struct mtp_call *c,
					uint32_t call_no, struct mtp_tensor *t)
{
	(void)c;
	flip(t, call_no * 0x9e3779b9u);
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_batch_variant = {
	.name = "BATCH_VARIANT",
	.section = "§10",
	.history =
		"a token's outputs change with the batch (T) or its row: the "
		"verify pass (q_len = N) and decode (q_len = 1) run "
		"different kernels, so greedy speculative decoding drifts "
		"(run --invariance)",
	.applies_to = "run --invariance",
	.shows_in = "a token's outputs alone vs in the batch",
	.flags = MTP_BUG_MUTANT,
	.after_run = batch_variant,
};

const struct mtp_bug_class mtp_bug_nondeterministic = {
	.name = "NONDETERMINISTIC",
	.section = "§10",
	.history = "the same inputs give other bits on another run (atomics, "
		   "split-K order, uninitialised scratch; run --repeat N "
		   "--bitwise)",
	.applies_to = "run --repeat N --bitwise",
	.shows_in = "any output, call to call",
	.flags = MTP_BUG_MUTANT,
	.after_run = nondeterministic,
};
