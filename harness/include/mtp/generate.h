/*
 * Generated problems (no fixture): a case named by op, family, shape, dtype
 * and seed, whose inputs are made in process from the seed, so that the repro
 * line replays them exactly. The reference computes the expected outputs
 * (the runner does that when a case has neither expected/ nor observed/).
 * This is how full-size shapes are checked without giant fixture files.
 */
#ifndef MTP_GENERATE_H
#define MTP_GENERATE_H

#include <stdint.h>

#include "mtp/fixture.h"

/* What to generate. Zero dims take the op's small defaults. */
struct mtp_gen_spec {
	const struct mtp_op *op;
	enum mtp_family family;
	enum mtp_dtype act;       /* activation dtype */
	int64_t t, h, m, v, f;    /* tokens, hidden, hc_mult, vocab, FFN width */
	int64_t rows, parts;      /* rmsnorm-style rows (R), all_reduce parts (P) */
	int64_t k, l;             /* draft_chain steps and layers */
	struct mtp_attr_list attrs; /* overrides of the op's default attributes */
	uint64_t seed;
};

/* Fills c (id, op, family, seed, attrs, inputs; no expected/observed) and
 * checks it against the op table. The case id encodes the whole spec so that
 * `--filter ID` plus the same case file replays it. */
enum mtp_status mtp_case_generate(const struct mtp_gen_spec *spec,
				  struct mtp_case *c, char *err, size_t errn);

#endif
