/*
 * FORMAT.md version 2, the captured-block layout: the rules about a case
 * that need no tensor data (a v1 file declares no v2 attribute; a captured
 * case's block tensors are inputs only, rule 10), and which captured input
 * a judged output stands for (the block input the glue must produce).
 */
#include "mtp/fixture.h"

#include <stdio.h>
#include <string.h>

static const char *leaf(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

static const struct mtp_attr *attr(const struct mtp_case *c, const char *name)
{
	for (int i = 0; i < c->attrs.n; i++)
		if (strcmp(c->attrs.items[i].name, name) == 0)
			return &c->attrs.items[i];
	return NULL;
}

static bool declares_captured(const struct mtp_case *c)
{
	const struct mtp_attr *a = attr(c, "block");

	return a && a->is_string && strcmp(a->str, "captured") == 0;
}

/* The block's own tensors: inputs of a captured case, never outputs. */
static bool is_block_tensor(const char *name)
{
	static const char *const names[] = {"block_in", "block_out",
					    "block_residual", "post_mix",
					    "comb_mix"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(leaf(name), names[i]) == 0)
			return true;
	return false;
}

static enum mtp_status check_part(const struct mtp_tensor_list *l,
				  const char *part, char *err, size_t errn)
{
	for (int i = 0; i < l->n; i++) {
		if (!is_block_tensor(l->items[i].name))
			continue;
		snprintf(err, errn,
			 "%s/%s: a captured block tensor is an input, not an "
			 "output (docs/FORMAT.md v2 rule 10)",
			 part, l->items[i].name);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_fixture_v2_check(const struct mtp_fixture *fx,
				     const struct mtp_case *c, char *err,
				     size_t errn)
{
	static const char *const v2_only[] = {"block", "max_position"};
	enum mtp_status st;

	if (fx->format_version < 2) {
		for (size_t i = 0; i < sizeof(v2_only) / sizeof(v2_only[0]);
		     i++) {
			if (!attr(c, v2_only[i]))
				continue;
			snprintf(err, errn,
				 "attribute '%s' needs format_version 2",
				 v2_only[i]);
			return MTP_ERR_INVALID;
		}
		return MTP_OK;
	}
	if (!declares_captured(c))
		return MTP_OK;
	st = check_part(&c->expected, "expected", err, errn);
	return st ? st : check_part(&c->observed, "observed", err, errn);
}

const struct mtp_named *mtp_captured_judged_input(const struct mtp_case *c,
						  const char *name)
{
	if (!c->params.v2.captured || strcmp(leaf(name), "block_in") != 0)
		return NULL;
	return mtp_list_find(&c->inputs, name);
}
