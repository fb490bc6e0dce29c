/*
 * The weight audit's state, shared by audit.c (the mapping, parameter and
 * module checks) and audit_ckpt.c (the checks on a checkpoint's headers).
 */
#ifndef MTP_AUDIT_INT_H
#define MTP_AUDIT_INT_H

#include "mtp/weightmap.h"

struct audit {
	const struct mtp_wm_config *c;
	const struct mtp_wm_inputs *in;
	const struct mtp_wm_names *params; /* judged against */
	struct mtp_wm_names own_params; /* the fixed loader's, if not given */
	struct mtp_wm_mapping fixed, sim;
	struct mtp_wm_names loaded; /* existing params that are loaded */
	struct mtp_wm_audit *a;
	enum mtp_status st;
};

/* i if name is under model.layers.{N+i}. with i < K, else -1. */
int mtp_wm_au_layer_of(const struct mtp_wm_config *c, const char *name);
/* i if a checkpoint key belongs to MTP layer i < K, else -1. */
int mtp_wm_au_key_layer(const struct mtp_wm_config *c, const char *key);
void mtp_wm_au_finding(struct audit *au, enum mtp_diag d, const char *key,
		       const char *target, const char *text);
/* fmt takes an int and a string, in that order. */
void mtp_wm_au_note(struct mtp_wm_audit *a, const char *fmt, int n,
		    const char *first);

/* The judged mapping (the engine's MAP, else the simulated loader's). */
const struct mtp_wm_mapping *mtp_wm_au_simulated(const struct audit *au);

/* --checkpoint: every MTP tensor loaded into exactly one parameter, every
 * parameter loaded once, FP8 weights with consistent scales, shapes. */
void mtp_wm_au_checkpoint(struct audit *au);

/* A weight-scale parameter (weight_scale, weight_scale_inv,
 * weight_scale_2, and the fused experts' w13_weight_scale ...). */
bool mtp_wm_au_is_weight_scale(const char *name);

bool mtp_wm_au_confusion(struct audit *au);

#endif
