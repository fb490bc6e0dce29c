/*
 * Generated problems (no fixture): a case named by op, family, shape, dtype
 * and seed, whose inputs are made in process from the seed, so that the repro
 * line replays them exactly. The reference computes the expected outputs
 * (the runner does that when a case has neither expected/ nor observed/).
 * This is how full-size shapes are checked without giant fixture files.
 *
 * Values are portable: each input tensor draws from its own xoshiro256**
 * stream, seeded through splitmix64 from the seed and the tensor's name, and
 * turned into values with +, -, *, / and sqrt only (no libm transcendental),
 * so the same seed gives the same bits on every machine.
 */
#ifndef MTP_GENERATE_H
#define MTP_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/fixture.h"

/* A generated tensor larger than this is refused before anything is allocated. */
#define MTP_GEN_MAX_TENSOR_BYTES (8ull << 30)
/* The seed of a spec that names none (mtp_gen_spec_init). */
#define MTP_GEN_DEFAULT_SEED 1u

/* What to generate. Zero dims take the op's small defaults, except the batch
 * dims T and R named in `empty`: those are 0 (an empty batch). */
struct mtp_gen_spec {
	const struct mtp_op *op;
	enum mtp_family family;
	enum mtp_dtype act;    /* activation dtype */
	int64_t t, h, m, v, f; /* tokens, hidden, hc_mult, vocab, FFN width */
	int64_t rows, parts; /* rmsnorm-style rows (R), all_reduce parts (P) */
	int64_t k, l;	     /* draft_chain steps and layers */
	int64_t c;	     /* dspark_step's context rows */
	struct mtp_attr_list attrs; /* overrides of the op's default attributes */
	uint64_t seed;
	bool optional;	/* also generate the op's optional inputs */
	unsigned empty; /* MTP_GEN_EMPTY_T, _R, _C: that dim is 0 */
};

#define MTP_GEN_EMPTY_T 1u
#define MTP_GEN_EMPTY_R 2u
#define MTP_GEN_EMPTY_C 4u /* dspark_step's context rows (an idle rank) */

/* Zeroes spec and sets op, the op's default family (its row's
 * default_family: deepseek_v4 for the mHC and V4 input ops, deepseek_v3
 * otherwise), bfloat16 and the default seed. */
void mtp_gen_spec_init(struct mtp_gen_spec *spec, const struct mtp_op *op);

/* The family a spec of `op` takes when none is named. */
enum mtp_family mtp_gen_default_family(const struct mtp_op *op);

/* Validates a spec without allocating tensor data: attributes (only those the
 * op takes), dims, the signature, and every tensor's size against
 * MTP_GEN_MAX_TENSOR_BYTES. Writes the case id into id (may be NULL). */
enum mtp_status mtp_gen_spec_check(const struct mtp_gen_spec *spec, char *id,
				   size_t idn, char *err, size_t errn);

/* Bytes running the spec's case takes (its inputs, three copies of its
 * outputs: mtp/membudget.h), from the shapes alone; UINT64_MAX if the spec
 * is invalid. */
uint64_t mtp_gen_spec_bytes(const struct mtp_gen_spec *spec);

/* Fills c (id, op, family, seed, attrs, inputs; no expected/observed) and
 * checks it against the op table. The case id encodes the whole spec so that
 * `--filter ID` plus the same case file replays it, e.g.
 * gen.rmsnorm.deepseek_v3.bf16.R4096.H7168.s42. On error c holds nothing. */
enum mtp_status mtp_case_generate(const struct mtp_gen_spec *spec,
				  struct mtp_case *c, char *err, size_t errn);

/* Fills an allocated tensor of spec s with the values of its rule (by name and
 * class), drawn from the stream of (seed, s->name); d->v bounds ids. */
enum mtp_status mtp_gen_fill(const struct mtp_tspec *s,
			     const struct mtp_dims *d, uint64_t seed,
			     struct mtp_tensor *t);

#endif
