/*
 * The engine conventions of SPEC.md §12.1 as case attributes (FORMAT.md
 * "Version 2"): their names and values in table order, reading and
 * validating them, and their spelling in results.
 */
#include "mtp/conventions.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mtp/fixture.h"
#include "mtp/op.h"

static const char *const conv_names[MTP_CONV_COUNT] = {
	[MTP_CONV_ADD_NORM_INPUT] = "add_norm_input",
	[MTP_CONV_FINAL_ADD] = "final_add",
	[MTP_CONV_SILU_MUL_ROUNDING] = "silu_mul_rounding",
	[MTP_CONV_LOGITS_DTYPE] = "logits_dtype",
	[MTP_CONV_POS0_MASK] = "pos0_mask",
};

/* Values in table order; index i is the enum value i of the field. */
static const char *const conv_values[MTP_CONV_COUNT][2] = {
	[MTP_CONV_ADD_NORM_INPUT] = {"residual", "sum"},
	[MTP_CONV_FINAL_ADD] = {"unfused", "fused"},
	[MTP_CONV_SILU_MUL_ROUNDING] = {"once", "twice"},
	[MTP_CONV_LOGITS_DTYPE] = {"float32", "bfloat16"},
	[MTP_CONV_POS0_MASK] = {"1", "0"},
};

void mtp_conventions_default(struct mtp_conventions *c)
{
	memset(c, 0, sizeof(*c));
}

const char *mtp_conv_name(enum mtp_conv_id id)
{
	return (unsigned)id < MTP_CONV_COUNT ? conv_names[id] : "?";
}

int mtp_conv_n_values(enum mtp_conv_id id)
{
	(void)id;
	return 2;
}

const char *mtp_conv_value_name(enum mtp_conv_id id, int v)
{
	if ((unsigned)id >= MTP_CONV_COUNT || v < 0 || v > 1)
		return "?";
	return conv_values[id][v];
}

int mtp_conv_get(const struct mtp_conventions *c, enum mtp_conv_id id)
{
	switch (id) {
	case MTP_CONV_ADD_NORM_INPUT: return (int)c->add_norm_input;
	case MTP_CONV_FINAL_ADD: return (int)c->final_add;
	case MTP_CONV_SILU_MUL_ROUNDING: return (int)c->silu_mul_rounding;
	case MTP_CONV_LOGITS_DTYPE: return (int)c->logits_dtype;
	case MTP_CONV_POS0_MASK: return (int)c->pos0_mask;
	default: return 0;
	}
}

void mtp_conv_set(struct mtp_conventions *c, enum mtp_conv_id id, int v)
{
	switch (id) {
	case MTP_CONV_ADD_NORM_INPUT:
		c->add_norm_input = (enum mtp_add_norm_input)v;
		break;
	case MTP_CONV_FINAL_ADD: c->final_add = (enum mtp_final_add)v; break;
	case MTP_CONV_SILU_MUL_ROUNDING:
		c->silu_mul_rounding = (enum mtp_silu_rounding)v;
		break;
	case MTP_CONV_LOGITS_DTYPE:
		c->logits_dtype = (enum mtp_logits_dtype)v;
		break;
	case MTP_CONV_POS0_MASK: c->pos0_mask = (enum mtp_pos0_mask)v; break;
	default: break;
	}
}

static const struct mtp_attr *find_attr(const struct mtp_attr_list *l,
					const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

/* pos0_mask: a scalar integer 1 or 0, nothing else (not 1.0, not "true",
 * not a boolean enum). */
static enum mtp_status parse_pos0(const struct mtp_attr *a, int *v, char *err,
				  size_t errn)
{
	if (a->is_string || !a->is_int || !(a->num == 0 || a->num == 1)) {
		snprintf(err, errn,
			 "attribute 'pos0_mask': must be a scalar integer 1 "
			 "or 0 (got %s)",
			 a->is_string ? "a string"
			 : !a->is_int ? "a value that is not an integer"
				      : "another integer");
		return MTP_ERR_INVALID;
	}
	*v = a->num == 1 ? 0 : 1; /* index in table order: "1", "0" */
	return MTP_OK;
}

static enum mtp_status parse_one(const struct mtp_attr *a, enum mtp_conv_id id,
				 int *v, char *err, size_t errn)
{
	if (id == MTP_CONV_POS0_MASK)
		return parse_pos0(a, v, err, errn);
	for (int i = 0; a->is_string && i < 2; i++) {
		if (strcmp(a->str, conv_values[id][i]) == 0) {
			*v = i;
			return MTP_OK;
		}
	}
	snprintf(err, errn, "attribute '%s': '%s' is not %s or %s",
		 conv_names[id], a->is_string ? a->str : "(not a string)",
		 conv_values[id][0], conv_values[id][1]);
	return MTP_ERR_INVALID;
}

enum mtp_status mtp_conventions_parse(const struct mtp_attr_list *attrs,
				      struct mtp_conventions *c, char *err,
				      size_t errn)
{
	mtp_conventions_default(c);
	for (int id = 0; id < MTP_CONV_COUNT; id++) {
		const struct mtp_attr *a = find_attr(attrs, conv_names[id]);
		int v;

		if (!a)
			continue;
		if (parse_one(a, (enum mtp_conv_id)id, &v, err, errn))
			return MTP_ERR_INVALID;
		mtp_conv_set(c, (enum mtp_conv_id)id, v);
		c->declared |= 1u << id;
	}
	return MTP_OK;
}

void mtp_conventions_str(const struct mtp_conventions *c, unsigned mask,
			 char *buf, size_t n)
{
	size_t used = 0;

	if (n)
		buf[0] = 0;
	for (int id = 0; id < MTP_CONV_COUNT && used < n; id++) {
		if (!((mask >> id) & 1u))
			continue;
		int w = snprintf(buf + used, n - used, "%s%s=%s",
				 used ? " " : "", conv_names[id],
				 conv_values[id][mtp_conv_get(c, id)]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static bool is_logits_name(const char *name)
{
	const char *slash = strrchr(name, '/');

	return strcmp(slash ? slash + 1 : name, "logits") == 0;
}

/* The stored logits of one part must agree with the declaration (or with
 * the first stored ones, for an undeclared one); *seen tracks the latter. */
static enum mtp_status logits_part(const struct mtp_tensor_list *l,
				   const char *part, struct mtp_conventions *c,
				   enum mtp_dtype *seen, char *err, size_t errn)
{
	bool declared = mtp_conv_declared(c, MTP_CONV_LOGITS_DTYPE);

	for (int i = 0; i < l->n; i++) {
		enum mtp_dtype dt = l->items[i].t.dtype;

		if (!is_logits_name(l->items[i].name))
			continue;
		if (declared && dt != mtp_conv_logits_dtype(c)) {
			snprintf(err, errn,
				 "%s '%s': stored as %s, but logits_dtype is "
				 "declared %s",
				 part, l->items[i].name, mtp_dtype_name(dt),
				 mtp_dtype_name(mtp_conv_logits_dtype(c)));
			return MTP_ERR_INVALID;
		}
		if (declared || (dt != MTP_F32 && dt != MTP_BF16))
			continue;
		if (*seen != MTP_DTYPE_COUNT && dt != *seen) {
			snprintf(err, errn,
				 "%s '%s': stored as %s, but other logits of "
				 "the case as %s (declare logits_dtype)",
				 part, l->items[i].name, mtp_dtype_name(dt),
				 mtp_dtype_name(*seen));
			return MTP_ERR_INVALID;
		}
		*seen = dt;
	}
	return MTP_OK;
}

enum mtp_status mtp_conventions_resolve_logits(const struct mtp_case *k,
					       struct mtp_conventions *c,
					       char *err, size_t errn)
{
	enum mtp_dtype seen = MTP_DTYPE_COUNT;

	if (logits_part(&k->observed, "observed", c, &seen, err, errn) ||
	    logits_part(&k->expected, "expected", c, &seen, err, errn))
		return MTP_ERR_INVALID;
	if (!mtp_conv_declared(c, MTP_CONV_LOGITS_DTYPE) && seen == MTP_BF16)
		c->logits_dtype = MTP_LOGITS_BFLOAT16;
	return MTP_OK;
}
