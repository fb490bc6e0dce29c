/*
 * Judging a dump under the engine conventions (SPEC.md §12.1, FORMAT.md
 * v2 rule 8). A declared convention is the contract: the outputs are judged
 * under it alone, and a mismatch is diagnosed (CONVENTION_MISMATCH). An
 * undeclared one is resolved: unless the outputs match the v1 values
 * exactly, the undeclared conventions the op uses are tried jointly, every
 * combination in table order, and the passing one that fits best (on equal
 * fit the first in table order, so an exact match stops the search; a
 * passing default is displaced only by a clearly better fit) is the
 * result, with the values it took reported as information. Best fit rather
 * than first pass, because the tolerance alone accepts some neighbouring
 * conventions (add_norm_input at 0.5 of the threshold) and the report must
 * name the one the outputs were made under.
 */
#include "judge.h"

#include "mtp/backend.h"
#include "mtp/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The conventions to resolve: used by the op and not declared. The logits
 * precision is never tried: it comes from the stored dtype. */
static unsigned free_mask(const struct mtp_call *c)
{
	return mtp_conv_exercised(c) & ~c->params->conv.declared &
	       ~(1u << MTP_CONV_LOGITS_DTYPE);
}

/* Combination `idx` of the fm conventions, in table order: the first
 * convention of the table is the most significant digit. */
static void combination(unsigned fm, unsigned idx, struct mtp_conventions *conv)
{
	int n = 0;

	for (int id = 0; id < MTP_CONV_COUNT; id++)
		n += (fm >> id) & 1u;
	for (int id = 0; id < MTP_CONV_COUNT; id++) {
		if (!((fm >> id) & 1u))
			continue;
		n--;
		mtp_conv_set(conv, (enum mtp_conv_id)id,
			     (int)((idx >> n) & 1u));
	}
}

static void outputs_free(struct mtp_tensor *out, int n)
{
	for (int i = 0; out && i < n; i++)
		mtp_tensor_fini(&out[i]);
	free(out);
}

/* The reference under conventions conv, judged into r2. */
static enum mtp_status try_one(const struct mtp_result *r,
			       const struct mtp_case *c,
			       const struct mtp_case_call *p,
			       const struct mtp_params *params,
			       struct mtp_result *r2)
{
	struct mtp_case_call p2 = *p;
	int n = p->call.n_out;
	struct mtp_tensor *out = calloc((size_t)n + 1, sizeof(*out));
	enum mtp_status st = out ? MTP_OK : MTP_ERR_NOMEM;

	for (int i = 0; !st && i < n; i++)
		st = mtp_tensor_alloc(&out[i], p->call.out[i].dtype,
				      p->call.out[i].ndim,
				      p->call.out[i].shape);
	p2.call.params = params;
	p2.call.out = out;
	if (!st)
		st = mtp_reference_run(&p2.call);
	*r2 = *r;
	r2->cmp = NULL;
	r2->n_cmp = 0;
	r2->first_bad = -1;
	r2->message[0] = 0;
	memset(&r2->diag, 0, sizeof(r2->diag));
	if (!st)
		st = mtp_judge_dump(r2, c, &p2, out);
	outputs_free(out, n);
	return st;
}

/* The values taken by the free conventions, and the declared ones that no
 * recomputed step uses (rule 8: accepted, reported as not exercised). */
static void note(struct mtp_result *r, const struct mtp_conventions *conv,
		 unsigned fm, unsigned idle)
{
	char vals[160], unused[96] = "";

	mtp_conventions_str(conv, fm, vals, sizeof(vals));
	for (int id = 0; id < MTP_CONV_COUNT; id++)
		if ((idle >> id) & 1u)
			snprintf(unused + strlen(unused),
				 sizeof(unused) - strlen(unused), " %s",
				 mtp_conv_name(id));
	snprintf(r->conventions, sizeof(r->conventions), "%s%s%s", vals,
		 idle ? (fm ? "; declared, not exercised:"
			    : "declared, not "
			      "exercised:")
		      : "",
		 unused);
}

/* A failure with an undeclared pos0_mask may not be called a missing mask:
 * no contract says the mask was due (SPEC.md §12.1). */
static void drop_unclaimable(struct mtp_result *r, const struct mtp_case *c)
{
	if (r->diag.diag != MTP_DIAG_MISSING_POS0_MASK ||
	    mtp_conv_declared(&c->params.conv, MTP_CONV_POS0_MASK))
		return;
	memset(&r->diag, 0, sizeof(r->diag));
}

/* A failure under a declared contract: no undeclared value may rescue it. */
static bool declared_broken(const struct mtp_result *r,
			    const struct mtp_case *c)
{
	return r->verdict == MTP_FAILED &&
	       (r->diag.diag == MTP_DIAG_CONVENTION_MISMATCH ||
		(r->diag.diag == MTP_DIAG_MISSING_POS0_MASK &&
		 mtp_conv_declared(&c->params.conv, MTP_CONV_POS0_MASK)));
}

static double fit(const struct mtp_result *r)
{
	return r->verdict == MTP_PASSED ? mtp_result_worst_headroom(r)
					: INFINITY;
}

/* A passing candidate replaces a failing result; it replaces a passing one
 * only by fitting clearly better (by the diagnoses' ratio), so that a
 * difference with another cause (eager vs fused rounding) does not send
 * the report to a convention that merely absorbs part of it. */
static bool better(const struct mtp_result *cand, const struct mtp_result *r)
{
	if (r->verdict != MTP_PASSED)
		return cand->verdict == MTP_PASSED;
	return fit(cand) * MTP_DIAG_MIN_RATIO <= fit(r) && fit(cand) < fit(r);
}

/* Every other combination of the free conventions: the passing one that
 * fits best (the smallest worst error against its threshold; on equal fit
 * the first in table order) replaces r. */
static enum mtp_status search(struct mtp_result *r, const struct mtp_case *c,
			      const struct mtp_case_call *p, unsigned fm,
			      struct mtp_conventions *conv)
{
	int n = 0;

	for (int id = 0; id < MTP_CONV_COUNT; id++)
		n += (fm >> id) & 1u;
	for (unsigned idx = 1; idx < (1u << n) && fit(r) > 0; idx++) {
		struct mtp_params params = c->params;
		struct mtp_result r2;
		enum mtp_status st;

		combination(fm, idx, &params.conv);
		st = try_one(r, c, p, &params, &r2);
		if (st == MTP_OK && better(&r2, r)) {
			free(r->cmp);
			*r = r2;
			*conv = params.conv;
			continue;
		}
		free(r2.cmp);
		if (st)
			return st;
	}
	return MTP_OK;
}

enum mtp_status mtp_judge_conventions(struct mtp_result *r,
				      const struct mtp_case *c,
				      const struct mtp_case_call *p)
{
	unsigned fm = free_mask(&p->call);
	unsigned idle = c->params.conv.declared & ~mtp_conv_exercised(&p->call);
	struct mtp_conventions conv = c->params.conv;
	enum mtp_status st = MTP_OK;

	if (fm && (r->verdict == MTP_PASSED || r->verdict == MTP_FAILED) &&
	    !declared_broken(r, c))
		st = search(r, c, p, fm, &conv);
	if ((fm || idle) && r->verdict == MTP_PASSED)
		note(r, &conv, fm, idle);
	drop_unclaimable(r, c);
	return st;
}

bool mtp_conv_backend_ok(const struct mtp_backend *be, const struct mtp_call *c,
			 char *why, size_t n)
{
	const struct mtp_backend *b = be;
	unsigned used = mtp_conv_exercised(c), other = 0;
	char vals[160];

	while (b->base)
		b = b->base;
	/* python: the conventions reach the adapter as attributes, and its
	 * supports() declines those it does not implement; every other
	 * backend that reads the captured-block form (cpu, the GPU modules):
	 * its captured-block step implements every one that form exercises */
	if (strcmp(b->iface->name, "ref") == 0 ||
	    strcmp(b->iface->name, "python") == 0 ||
	    (b->reads_v2 && c->params->v2.captured))
		return true;
	for (int id = 0; id < MTP_CONV_COUNT; id++)
		if (((used >> id) & 1u) && mtp_conv_get(&c->params->conv, id))
			other |= 1u << id;
	if (!other)
		return true;
	mtp_conventions_str(&c->params->conv, other, vals, sizeof(vals));
	snprintf(why, n, "backend %s does not implement the conventions %s",
		 be->name, vals);
	return false;
}
