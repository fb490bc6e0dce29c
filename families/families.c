/*
 * The table of model families (mtp/family.h): one line per family, in the
 * order of enum mtp_family, each row in its own file of this folder. The
 * lookups by id and by name are the only code that handles family ids.
 */
#include <stdio.h>
#include <string.h>

#include "mtp/family.h"

extern const struct mtp_family_def mtp_family_deepseek_v3;
extern const struct mtp_family_def mtp_family_glm;
extern const struct mtp_family_def mtp_family_deepseek_v4;
extern const struct mtp_family_def mtp_family_glm4_moe_lite;
extern const struct mtp_family_def mtp_family_qwen3_next;
extern const struct mtp_family_def mtp_family_mimo;
extern const struct mtp_family_def mtp_family_kimi_k3;
extern const struct mtp_family_def mtp_family_step3p5;
extern const struct mtp_family_def mtp_family_inkling;

static const struct mtp_family_def *const table[MTP_FAMILY_COUNT] = {
	[MTP_FAMILY_DEEPSEEK_V3] = &mtp_family_deepseek_v3,
	[MTP_FAMILY_GLM] = &mtp_family_glm,
	[MTP_FAMILY_DEEPSEEK_V4] = &mtp_family_deepseek_v4,
	[MTP_FAMILY_GLM4_MOE_LITE] = &mtp_family_glm4_moe_lite,
	[MTP_FAMILY_QWEN3_NEXT] = &mtp_family_qwen3_next,
	[MTP_FAMILY_MIMO] = &mtp_family_mimo,
	[MTP_FAMILY_KIMI_K3] = &mtp_family_kimi_k3,
	[MTP_FAMILY_STEP3P5] = &mtp_family_step3p5,
	[MTP_FAMILY_INKLING] = &mtp_family_inkling,
};

const struct mtp_family_def *mtp_family_def(enum mtp_family f)
{
	return (unsigned)f < MTP_FAMILY_COUNT ? table[f] : NULL;
}

const struct mtp_family_def *mtp_family_find(const char *s)
{
	for (int i = 0; s && i < MTP_FAMILY_COUNT; i++)
		if (strcmp(s, table[i]->name) == 0)
			return table[i];
	return NULL;
}

const char *mtp_family_name(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d ? d->name : "?";
}

bool mtp_family_parse(const char *s, enum mtp_family *out)
{
	const struct mtp_family_def *d = mtp_family_find(s);

	if (d)
		*out = d->id;
	return d != NULL;
}

const char *mtp_family_names(void)
{
	static char names[256];

	if (!names[0]) {
		size_t at = 0;

		for (int i = 0; i < MTP_FAMILY_COUNT && at < sizeof(names); i++)
			at += (size_t)snprintf(
				names + at, sizeof(names) - at, "%s%s",
				i == 0			    ? ""
				: i == MTP_FAMILY_COUNT - 1 ? " or "
							    : ", ",
				table[i]->name);
	}
	return names;
}

bool mtp_family_mhc(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->mhc;
}

double mtp_family_norm_offset(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->norm_weight == MTP_NORM_W_ZERO_CENTRED ? 1.0 : 0.0;
}

bool mtp_family_hidden_first(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->fusion == MTP_FUSION_EH_PROJ_HIDDEN_FIRST;
}

bool mtp_family_recycles_pre_norm(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->recycled == MTP_RECYCLED_PRE_NORM;
}

bool mtp_family_embed_pre_norm(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->embed_pre_norm;
}

bool mtp_family_logits_mup(enum mtp_family f)
{
	const struct mtp_family_def *d = mtp_family_def(f);

	return d && d->logits_mup;
}
