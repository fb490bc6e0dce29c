/*
 * The bug classes the weight audit names from a checkpoint's names and
 * the engine's module tree (mtpcheck weights, SPEC.md §8.4-§8.6): no
 * hypothesis on outputs, no mutant.
 */
#include "bugs.h"

const struct mtp_bug_class mtp_bug_stale_weight_remap = {
	.name = "STALE_WEIGHT_REMAP",
	.section = "§8.5",
	.history = "remap target names no parameter (norm_gate, fixed on XPU "
		   "in #45240)",
	.applies_to = "weight audit",
	.shows_in = "a checkpoint key mapped to no parameter",
};

const struct mtp_bug_class mtp_bug_eh_proj_no_prefix = {
	.name = "EH_PROJ_NO_PREFIX",
	.section = "§8.4",
	.history = "e_proj/h_proj built without prefix= (vLLM #44817, fix "
		   "#44821)",
	.applies_to = "weight audit",
	.shows_in = "module names without the layer prefix",
};

const struct mtp_bug_class mtp_bug_mtp_head_embed_unloaded = {
	.name = "MTP_HEAD_EMBED_UNLOADED",
	.section = "§8.6",
	.history = "MTP shared head / embedding never loaded from a "
		   "save_pretrained checkpoint",
	.applies_to = "weight audit",
	.shows_in = "head and embedding keys the loader skips",
};

const struct mtp_bug_class mtp_bug_dspark_loaded_as_mtp = {
	.name = "DSPARK_LOADED_AS_MTP",
	.section = "§13",
	.history =
		"method=mtp on a DSpark checkpoint (vLLM #41834): main_proj, "
		"markov and confidence heads loaded nowhere, e_proj/h_proj "
		"never loaded",
	.applies_to = "weight audit: a DSpark key list under an MTP loader",
	.shows_in = "the DSpark keys loaded nowhere, the MTP parameters no key "
		    "loads",
};

const struct mtp_bug_class mtp_bug_dspark_loader_on_mtp = {
	.name = "DSPARK_LOADER_ON_MTP",
	.section = "§13",
	.history = "an MTP checkpoint given to the DSpark loader: "
		   "e_proj/h_proj/enorm/hnorm/hc_head keys have no DSpark "
		   "parameter",
	.applies_to = "weight audit: an MTP key list under the DSpark loader",
	.shows_in = "the MTP keys with no DSpark parameter",
};
