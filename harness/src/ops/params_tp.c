/*
 * The tensor-parallel attributes (SPEC.md Step V3-8, §2.5; FORMAT.md
 * "Tensor-parallel steps"): `tp_rank` (whose view a case holds),
 * `reduce_order` (the declared order of the sum) and `reduce_at` (where the
 * block's partial output is reduced). `tp_rank` on a captured V3-family
 * mtp_step makes it the tensor-parallel step; all_reduce takes
 * `reduce_order` and `tp_rank` too. Apart from params.c so that the
 * tensor-parallel pieces stay together.
 */
#include "mtp/op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mtp/family.h"

static const struct mtp_attr *find(const struct mtp_attr_list *l,
				   const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

/* A string attribute among names[0..n); its index into *v. */
static enum mtp_status parse_name(const struct mtp_attr *a,
				  const char *const *names, int n, int *v,
				  char *err, size_t errn)
{
	for (int i = 0; a->is_string && i < n; i++) {
		if (strcmp(a->str, names[i]) == 0) {
			*v = i;
			return MTP_OK;
		}
	}
	snprintf(err, errn, "attribute '%s': '%s' is not one of %s", a->name,
		 a->is_string ? a->str : "(a number)",
		 n == 4 ? "ring, tree, one_shot, two_shot"
			: "moe, after_block, final_norm");
	return MTP_ERR_INVALID;
}

static bool takes_tp(const struct mtp_op *op, const struct mtp_params *p)
{
	return op->id == MTP_OP_ALL_REDUCE ||
	       (op->id == MTP_OP_MTP_STEP && p->v2.captured &&
		!mtp_family_mhc(p->family));
}

enum mtp_status mtp_params_parse_tp(const struct mtp_op *op,
				    const struct mtp_attr_list *attrs,
				    struct mtp_params *out, char *err,
				    size_t errn)
{
	static const char *const orders[] = {"one_shot", "two_shot", "ring",
					     "tree"};
	static const char *const ats[] = {"moe", "after_block", "final_norm"};
	static const char *const names[] = {"tp_rank", "reduce_order",
					    "reduce_at"};
	struct mtp_tp_params *tp = &out->tp;
	const struct mtp_attr *a;
	int v = 0;

	memset(tp, 0, sizeof(*tp));
	for (int i = 0; i < 3; i++) {
		if (find(attrs, names[i]) && !takes_tp(op, out)) {
			snprintf(err, errn,
				 "attribute '%s': tensor parallelism is judged "
				 "on all_reduce and on a V3-family captured "
				 "mtp_step only (SPEC.md Step V3-8)",
				 names[i]);
			return MTP_ERR_INVALID;
		}
	}
	if ((a = find(attrs, "tp_rank"))) {
		if (a->is_string || !isfinite(a->num) ||
		    a->num != floor(a->num) || a->num < 0 || a->num > 4096) {
			snprintf(err, errn,
				 "attribute 'tp_rank': must be an integer in "
				 "[0, 4096]");
			return MTP_ERR_INVALID;
		}
		tp->rank = (int64_t)a->num;
		tp->step = op->id == MTP_OP_MTP_STEP;
	}
	if ((a = find(attrs, "reduce_order"))) {
		if (parse_name(a, orders, 4, &v, err, errn))
			return MTP_ERR_INVALID;
		tp->order = (enum mtp_reduce_order)(v + 1);
	}
	if ((a = find(attrs, "reduce_at"))) {
		if (op->id != MTP_OP_MTP_STEP ||
		    parse_name(a, ats, 3, &v, err, errn)) {
			if (op->id != MTP_OP_MTP_STEP)
				snprintf(err, errn,
					 "attribute 'reduce_at': a step's, not "
					 "%s's",
					 op->name);
			return MTP_ERR_INVALID;
		}
		tp->at = (enum mtp_reduce_at)v;
	}
	if (op->id == MTP_OP_MTP_STEP && !tp->step &&
	    (find(attrs, "reduce_order") || find(attrs, "reduce_at"))) {
		snprintf(err, errn,
			 "attribute 'reduce_order': a step's reduction needs "
			 "tp_rank (FORMAT.md, tensor-parallel steps)");
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

bool mtp_params_tp_takes(const struct mtp_op *op, const char *name)
{
	/* the tensor-parallel step is captured-only, which the generated
	 * problems are not: all_reduce's alone */
	return op->id == MTP_OP_ALL_REDUCE &&
	       (strcmp(name, "tp_rank") == 0 ||
		strcmp(name, "reduce_order") == 0);
}
