/*
 * The weight audit's DSpark checks (docs/WEIGHTS.md "DSpark checkpoints"):
 * a DSpark drafter and an MTP layer share the mtp.{i}.* prefix, so a
 * checkpoint of one kind given to the other kind's loader maps half its
 * keys and leaves half the parameters at their initial values without an
 * error (vLLM #41834). The checkpoint's kind, told from its keys, is held
 * against the loader judged; a confusion is named as such, and for the
 * DSpark loader every parameter of its stages must be loaded by some key.
 */
#include <stdio.h>
#include <string.h>

#include "audit_int.h"
#include "weights.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The parameters only one kind of loader has, that a checkpoint of the
 * other kind leaves unloaded: per MTP layer model.layers.{N+i}.X, and the
 * DSpark model's own (model level). */
static const char *const mtp_only[] = {
	"e_proj.weight", "h_proj.weight", "enorm.weight",  "hnorm.weight",
	"hc_head_fn",	 "hc_head_base",  "hc_head_scale",
};
static const char *const dspark_only[] = {
	"model.main_proj.weight",
	"model.main_norm.weight",
	"model.markov_head.markov_w1.weight",
	"model.markov_head.markov_w2.weight",
};

/* Where the judged mapping puts key: MAP's first target, else the
 * simulated loader's; "" when nowhere. */
static const char *target_of(const struct audit *au, const char *key)
{
	const struct mtp_wm_mapping *m = mtp_wm_au_simulated(au);

	if (au->in->map) {
		for (int i = 0; i < au->in->map->n; i++)
			if (!strcmp(au->in->map->v[i].a, key))
				return au->in->map->v[i].b;
		return "";
	}
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].key, key))
			return m->v[i].param ? m->v[i].param : "";
	return "";
}

/* Each key of the other kind: where the wrong loader put it. */
static void name_keys(struct audit *au, enum mtp_wm_kind other, enum mtp_diag d)
{
	char text[200];

	for (int k = 0; k < au->in->keys->n; k++) {
		const char *key = au->in->keys->v[k], *t;

		if (mtp_wm_key_kind(au->c, key) != other)
			continue;
		t = target_of(au, key);
		snprintf(text, sizeof(text), "%s key under the %s loader: %s",
			 other == MTP_WM_KIND_DSPARK ? "a DSpark drafter's"
						     : "an MTP layer's",
			 au->c->dspark ? "DSpark" : "MTP",
			 !*t		   ? "loaded nowhere"
			 : !au->in->params ? "the loader has no parameter of "
					     "its role"
			 : !mtp_wm_names_has(au->params, t)
				 ? "no parameter of that name (KeyError "
				   "at load)"
				 : "loaded into a parameter of another role");
		mtp_wm_au_finding(au, d, key, *t ? t : "(loaded nowhere)",
				  text);
	}
}

/* A parameter of the loader's own kind that no key loads (with PARAMS:
 * only those the engine has). */
static void name_param(struct audit *au, const char *param, enum mtp_diag d)
{
	if (mtp_wm_names_has(&au->loaded, param) ||
	    (au->in->params && !mtp_wm_names_has(au->in->params, param)))
		return;
	mtp_wm_au_finding(au, d, "", param,
			  au->c->dspark
				  ? "a DSpark parameter no key loads: the "
				    "checkpoint is an MTP layer's"
				  : "an MTP parameter no key loads: the "
				    "checkpoint is a DSpark drafter's "
				    "(the half-load)");
}

bool mtp_wm_au_confusion(struct audit *au)
{
	enum mtp_wm_kind kind = au->a->kind;
	bool both = kind == MTP_WM_KIND_BOTH, ds = au->c->dspark;
	enum mtp_diag d = ds ? MTP_DIAG_DSPARK_LOADER_ON_MTP
			     : MTP_DIAG_DSPARK_LOADED_AS_MTP;
	char param[MTP_WM_NAME_MAX];

	if (kind == MTP_WM_KIND_NEITHER)
		mtp_wm_au_note(au->a,
			       "%.0dthe draft keys carry no marker of an MTP "
			       "layer or a DSpark drafter: %s",
			       0, "the checkpoint's kind is not known");
	if (!(both || kind == (ds ? MTP_WM_KIND_MTP : MTP_WM_KIND_DSPARK)))
		return false;
	au->a->n = 0; /* the wrong loader's findings: consequences */
	name_keys(au, ds ? MTP_WM_KIND_MTP : MTP_WM_KIND_DSPARK, d);
	for (size_t k = 0; ds && k < ARRAY_LEN(dspark_only); k++)
		name_param(au, dspark_only[k], d);
	for (int i = 0; !ds && i < au->c->mtp_layers; i++) {
		for (size_t k = 0; k < ARRAY_LEN(mtp_only); k++) {
			snprintf(param, sizeof(param), "model.layers.%d.%s",
				 au->c->layer + i, mtp_only[k]);
			name_param(au, param, d);
		}
	}
	mtp_wm_au_note(au->a,
		       "%.0dcheckpoint kind '%s': the mapping judged is the "
		       "other kind's loader, whose other findings are not "
		       "reported",
		       0, mtp_wm_kind_name(kind));
	return true;
}
