/*
 * What the weight audit's checks share (audit_int.h): where a name or key
 * sits among the MTP layers, the findings and notes they add, the mapping
 * they judge, and which parameters are weight scales. audit.c (mapping,
 * parameters, modules) and audit_ckpt.c (a checkpoint's headers) use them.
 */
#include "audit_int.h"
#include "weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* i if name is under model.layers.{N+i}. with i < K, else -1. */
int mtp_wm_au_layer_of(const struct mtp_wm_config *c, const char *name)
{
	int idx, n = 0;

	if (c->dspark)
		return mtp_wm_dspark_stage_of(c, name);
	if (sscanf(name, "model.layers.%d.%n", &idx, &n) != 1 || n == 0 ||
	    idx < c->layer || idx >= c->layer + c->mtp_layers)
		return -1;
	return idx - c->layer;
}

/* i if a checkpoint key belongs to MTP layer i < K, else -1. */
int mtp_wm_au_key_layer(const struct mtp_wm_config *c, const char *key)
{
	int i, n = 0;

	if (mtp_family_def(c->family)->ckpt != MTP_CKPT_MTP)
		return strstr(key, "rotary_emb.inv_freq")
			       ? -1
			       : mtp_wm_au_layer_of(c, key);
	if (sscanf(key, "mtp.%d.%n", &i, &n) != 1 || n == 0 || i < 0 ||
	    i >= c->mtp_layers)
		return -1;
	return i;
}

void mtp_wm_au_finding(struct audit *au, enum mtp_diag d, const char *key,
		       const char *target, const char *text)
{
	struct mtp_wm_audit *a = au->a;
	struct mtp_wm_finding *f;

	if (a->n == a->cap) {
		int cap = a->cap ? 2 * a->cap : 16;
		void *v = realloc(a->f, (size_t)cap * sizeof(*a->f));

		if (!v) {
			au->st = MTP_ERR_NOMEM;
			return;
		}
		a->f = v;
		a->cap = cap;
	}
	f = &a->f[a->n++];
	f->diag = d;
	snprintf(f->key, sizeof(f->key), "%s", key);
	snprintf(f->target, sizeof(f->target), "%s", target);
	snprintf(f->text, sizeof(f->text), "%s", text);
}

void mtp_wm_au_note(struct mtp_wm_audit *a, const char *fmt, int n,
		    const char *first)
{
	if (a->n_notes < (int)(sizeof(a->notes) / sizeof(a->notes[0])))
		snprintf(a->notes[a->n_notes++], sizeof(a->notes[0]), fmt, n,
			 first);
}

const struct mtp_wm_mapping *mtp_wm_au_simulated(const struct audit *au)
{
	return au->c->loader == MTP_LOADER_FIXED ? &au->fixed : &au->sim;
}
