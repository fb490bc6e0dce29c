/*
 * Writes the seed corpus of fuzz_fixture: a few tiny valid fixtures (one case
 * each, a few KB) made from generated problems whose outputs the reference
 * computes, as goldens (expected/) and as a dump (observed/). Made at build or
 * test time so that no binary seed is committed.
 *   fuzz_seeds DIR
 */
#include <stdio.h>
#include <string.h>

#include "mtp/fixture.h"
#include "mtp/generate.h"
#include "mtp/op.h"

struct seed {
	const char *op;
	enum mtp_family family;
	int64_t t, h, m, v, f, rows, k, l;
	bool observed; /* a dump rather than a golden */
};

static const struct seed seeds[] = {
	{"rmsnorm", MTP_FAMILY_DEEPSEEK_V3, .rows = 2, .h = 8},
	{"add_rmsnorm", MTP_FAMILY_GLM, .rows = 2, .h = 8, .observed = true},
	{"fused_embed_eh_norm", MTP_FAMILY_DEEPSEEK_V3, .t = 2, .h = 8, .v = 5},
	{"hc_pre", MTP_FAMILY_DEEPSEEK_V4, .t = 2, .h = 4, .m = 2},
	{"hc_head", MTP_FAMILY_DEEPSEEK_V4, .t = 2, .h = 4, .m = 2,
	 .observed = true},
	{"draft_chain", MTP_FAMILY_DEEPSEEK_V3, .t = 2, .h = 8, .f = 4, .v = 6,
	 .k = 2, .l = 2},
};

/* Moves the reference's outputs of the call into the case's expected/ or
 * observed/ list. */
static enum mtp_status keep_outputs(struct mtp_case *c, struct mtp_case_call *p,
				    bool observed)
{
	struct mtp_tensor_list *l = observed ? &c->observed : &c->expected;

	for (int i = 0; i < p->call.n_out; i++) {
		struct mtp_tensor *t = &p->call.out[i];
		int64_t shape[MTP_MAX_DIMS];

		memcpy(shape, t->shape, sizeof(shape));
		if (mtp_tensor_alloc(t, t->dtype, t->ndim, shape))
			return MTP_ERR_NOMEM;
	}
	enum mtp_status st = mtp_reference_run(&p->call);

	for (int i = 0; !st && i < p->call.n_out; i++) {
		struct mtp_named *e = mtp_list_add(l, p->sig->out[i].name);

		if (!e)
			return MTP_ERR_NOMEM;
		e->t = p->call.out[i];
		memset(&p->call.out[i], 0, sizeof(p->call.out[i]));
	}
	return st;
}

static int write_seed(const char *dir, const struct seed *s)
{
	struct mtp_gen_spec spec;
	struct mtp_case c;
	struct mtp_case_call p;
	char err[MTP_ERR_MAX], path[MTP_PATH_MAX];
	enum mtp_status st;

	mtp_gen_spec_init(&spec, mtp_op_find(s->op));
	spec.family = s->family;
	spec.t = s->t, spec.h = s->h, spec.m = s->m, spec.v = s->v;
	spec.f = s->f, spec.rows = s->rows, spec.k = s->k, spec.l = s->l;
	memset(&c, 0, sizeof(c));
	memset(&p, 0, sizeof(p));
	st = mtp_case_generate(&spec, &c, err, sizeof(err));
	if (!st)
		st = mtp_case_call_init(&c, &p, err, sizeof(err));
	if (!st)
		st = keep_outputs(&c, &p, s->observed);
	snprintf(path, sizeof(path), "%s/%s%s.h5", dir, s->op,
		 s->observed ? ".dump" : "");
	if (!st)
		st = mtp_fixture_write(path, "fuzz_seeds", &c, 1, err,
				       sizeof(err));
	else
		snprintf(err + strlen(err), sizeof(err) - strlen(err), " (%s)",
			 s->op);
	mtp_case_call_fini(&p);
	mtp_case_fini(&c);
	if (st)
		fprintf(stderr, "fuzz_seeds: %s\n", err);
	return st ? 1 : 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		bad |= write_seed(argv[1], &seeds[i]);
	return bad;
}
