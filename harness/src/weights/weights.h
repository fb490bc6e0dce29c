/*
 * Subsystem weights: mtpcheck audit-weights: the engine loader's
 * simulation, checkpoint names and index files (the strict reader of
 * mtp/safetensors.h; no libcjson), the audit and its JSON, and its self-test.
 *
 * May depend on: ops, judge, reports, util
 * Its interface: mtp/weightmap.h.
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
const char *mtp_wm_dspark_map(const struct mtp_wm_config *c,
			      const struct mtp_wm_names *params,
			      const char *name, struct mtp_wm_target *t);

#endif
