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
