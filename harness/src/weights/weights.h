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

#endif
