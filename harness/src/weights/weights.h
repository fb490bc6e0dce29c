/*
 * Subsystem weights: mtpcheck audit-weights: the engine loader's
 * simulation, checkpoint names and index files (the strict reader of
 * mtp/safetensors.h; no libcjson), the audit and its JSON, and its self-test.
 *
 * May depend on: ops, judge, reports, util
 * Its interface: mtp/weightmap.h, and here audit-weights' options and
 * entry point (the CLI's option table fills them).
 */
#ifndef MTP_SUBSYSTEM_WEIGHTS_H
#define MTP_SUBSYSTEM_WEIGHTS_H

#include "mtp/weightmap.h"

/* Internal to the loader simulation (weightmap.c, weightmap_keys.c): marks
 * t as not loaded, for why (NULL: a key the loader skips without a word). */
void mtp_wm_target_skip(struct mtp_wm_target *t, const char *why);
void mtp_wm_target_set(struct mtp_wm_target *t, const char *s, int shard);

/* The helpers the DSpark loader (weightmap_dspark.c) shares with the MTP
 * loaders: Python's str.replace (false if it would not fit), str.endswith,
 * `\.experts\.\d+\.w[123]\.scale$`, and V4's stacked (w1/w3, wq_a/wkv)
 * and routed-expert rules (true when a rule took the name). */
bool mtp_wm_replace_all(char *s, const char *from, const char *to);
bool mtp_wm_ends_with(const char *s, const char *suffix);
bool mtp_wm_is_expert_scale(const char *s);
bool mtp_wm_v4_stacked(const char *s, struct mtp_wm_target *t);
bool mtp_wm_v4_expert(const struct mtp_wm_config *c, const char *s,
		      struct mtp_wm_target *t);

/* vLLM 0.33's DSparkDeepseekV4ForCausalLM.load_weights on one name; the
 * reason it is skipped, or NULL (weightmap_dspark.c). */
/* DSpark (audit_dspark.c): the stage a DSpark model's parameter belongs
 * to (model.layers.{s}., s < K; the model-level main_proj, main_norm,
 * norm, markov_head, confidence_head: 0), else -1; and the confusion of
 * the checkpoint's kind with the judged loader's, named (true: the other
 * checks are moot). */
/* The family's MTP loader rules for one name (weightmap.c), V4's and V3's:
 * NULL with out set, or why the name is skipped. */
const char *mtp_wm_v4_map(const struct mtp_wm_config *c, const char *name,
			  struct mtp_wm_target *out);
const char *mtp_wm_v3_map(const struct mtp_wm_config *c,
			  const struct mtp_wm_names *params, const char *name,
			  struct mtp_wm_target *out);
int mtp_wm_dspark_stage_of(const struct mtp_wm_config *c, const char *name);
const char *mtp_wm_dspark_map(const struct mtp_wm_config *c,
			      const struct mtp_wm_names *params,
			      const char *name, struct mtp_wm_target *t);

/* What `mtpcheck audit-weights`'s options say (the CLI's option table fills
 * it), as given: audit_cli.c checks the values. */
struct mtp_audit_opts {
	const char *family, *layer, *mtp_layers, *keys, *params, *modules;
	const char *mapping, *loader, *expert_dtype, *json, *fixtures;
	const char *engine, *commit, *run_id, *checkpoint;
	bool print_mapping, selftest, verbose;
};

/* `mtpcheck audit-weights` with the options o; argv (argc of them, after
 * the command) is the command line the JSON records. Its exit code. */
int mtp_audit_weights_main(const struct mtp_audit_opts *o, int argc,
			   char **argv);

#endif
