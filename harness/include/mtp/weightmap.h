/*
 * The weight-mapping audit (SPEC.md §6, §8.4-§8.6): the loader rules that
 * turn checkpoint tensor names into engine parameter names, written as data
 * with a few small functions, and the checks that name the three known
 * mapping bugs (STALE_WEIGHT_REMAP, EH_PROJ_NO_PREFIX,
 * MTP_HEAD_EMBED_UNLOADED). These bugs leave no trace in the numbers a
 * kernel computes, so they are judged from names alone: docs/WEIGHTS.md.
 */
#ifndef MTP_WEIGHTMAP_H
#define MTP_WEIGHTMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/diagnose.h"
#include "mtp/ref.h"
#include "mtp/status.h"

#define MTP_WM_NAME_MAX 256

/* Which loader is simulated: the correct one, or one of the known bugs
 * (each a deepseek_v4 loader; the V3 family has only the fixed one). */
enum mtp_loader {
	MTP_LOADER_FIXED,	/* nvidia mtp.py @0050eb86 (§6.2) */
	MTP_LOADER_BUGGY_REMAP, /* + the norm_gate table of @023da1fc (§8.5) */
	MTP_LOADER_NO_ALIAS,	/* without step 0 (§8.6) */
	MTP_LOADER_NO_PREFIX, /* e_proj/h_proj built without prefix= (§8.4) */
	MTP_LOADER_COUNT
};

const char *mtp_loader_name(enum mtp_loader l);
bool mtp_loader_parse(const char *s, enum mtp_loader *out);

/* Whose loader rules are simulated (weightmap_engine.c): the spec's §6,
 * or a measured engine release (SPEC.md §12.5). */
enum mtp_engine {
	MTP_ENGINE_SPEC,
	MTP_ENGINE_VLLM_0_33, /* the CLI default */
	MTP_ENGINE_VLLM_0_23,
	MTP_ENGINE_COUNT
};

struct mtp_wm_rules {
	const char *name;    /* "vllm@0.33" */
	const char *source;  /* the engine files and functions read */
	bool routed_experts; /* experts.routed_experts.w13_* */
	bool top_embed;	     /* V3: model.embed_tokens.weight loaded */
	bool glm_lm_head;    /* GLM: lm_head -> layers.N.shared_head.head */
	bool glm_qkv;	     /* GLM: q/k/v_proj -> qkv_proj shards 0/1/2 */
	/* FP8 indexer wk: folded with its scale at load into the weight; the
	 * substring a scale's name must hold to be caught (NULL: no fold) */
	const char *indexer_wk_scale;
	bool v4_alias;	   /* §6.2 step 0 */
	bool v4_eh_prefix; /* V4 e_proj / h_proj built with prefix= */
};

const struct mtp_wm_rules *mtp_wm_rules_of(enum mtp_engine e);
bool mtp_engine_parse(const char *s, enum mtp_engine *out);

struct mtp_wm_config {
	enum mtp_engine engine; /* mtp_wm_config_init: MTP_ENGINE_SPEC */
	enum mtp_family family;
	int layer;	/* N: index of the first MTP layer */
	int mtp_layers; /* K */
	enum mtp_loader loader;
	bool expert_fp8; /* V4 routed experts in fp8 (default fp4) */
	/* --family glm loaded by the DeepSeek MTP loader: GLM-5.x
	 * (glm_moe_dsa), set by mtp_wm_map_keys from the names
	 * (mtp_wm_glm_dsa); no GLM-4.5 lm_head alias or q/k/v stacking */
	bool glm_dsa;
	/* the judged loader is DeepSeek V4.1's DSpark drafter (vLLM 0.33
	 * models/deepseek_v41/nvidia/dspark.py DSparkDeepseekV4ForCausalLM
	 * .load_weights): stage s of mtp.{s}.* loads under model.layers.{s}.,
	 * main_proj / main_norm / norm / markov_head / confidence_head at
	 * model level. --loader dspark, or PARAMS / MAP naming model.main_proj
	 * or model.markov_head (mtp_wm_dspark_params) */
	bool dspark;
};

void mtp_wm_config_init(struct mtp_wm_config *c, enum mtp_family family,
			int layer, int mtp_layers);

/* What a checkpoint's draft keys are, told from the names alone before
 * any mapping (docs/WEIGHTS.md "DSpark checkpoints"): an MTP layer
 * (e_proj/h_proj/eh_proj, enorm, hnorm, hc_head_*), a DSpark drafter
 * (main_proj, main_norm, markov_head, confidence_head), both, or neither
 * (draft keys with no marker of either); NONE: no draft key at all. */
struct mtp_wm_names;

enum mtp_wm_kind {
	MTP_WM_KIND_NONE,
	MTP_WM_KIND_MTP,
	MTP_WM_KIND_DSPARK,
	MTP_WM_KIND_BOTH,
	MTP_WM_KIND_NEITHER,
};

const char *mtp_wm_kind_name(enum mtp_wm_kind k); /* "dspark" ... */
enum mtp_wm_kind mtp_wm_ckpt_kind(const struct mtp_wm_config *c,
				  const struct mtp_wm_names *keys);
/* Which marker a draft key carries: MTP_WM_KIND_MTP, _DSPARK or _NONE. */
enum mtp_wm_kind mtp_wm_key_kind(const struct mtp_wm_config *c,
				 const char *key);

/* A set of names (checkpoint keys, engine parameters), kept in input order
 * until mtp_wm_names_sort() makes it a sorted set for lookups. */
struct mtp_wm_names {
	char **v;
	int n, cap;
	bool sorted;
};

enum mtp_status mtp_wm_names_add(struct mtp_wm_names *s, const char *name);
void mtp_wm_names_sort(struct mtp_wm_names *s); /* sorts, drops repeats */
bool mtp_wm_names_has(const struct mtp_wm_names *s, const char *name);
void mtp_wm_names_fini(struct mtp_wm_names *s);

/* Name pairs read from a file: MODULES (module, quantization prefix) and
 * MAP (checkpoint key, parameter); line is the file line, for messages. */
struct mtp_wm_pair {
	char *a, *b;
	int line;
	char shard[12]; /* MAP's shard=S column ("0", "w1", "q"), or "" */
	int expert;	/* MAP's expert=E column, or -1 */
};

struct mtp_wm_pairs {
	struct mtp_wm_pair *v;
	int n, cap;
};

enum mtp_status mtp_wm_pairs_add(struct mtp_wm_pairs *p, const char *a,
				 const char *b, int line);
void mtp_wm_pairs_fini(struct mtp_wm_pairs *p);

/* Where one checkpoint name lands. */
struct mtp_wm_target {
	char param[MTP_WM_NAME_MAX]; /* "" when skipped */
	int shard;     /* stacked shard; w13 half of a routed expert; else -1 */
	int expert;    /* routed expert id, else -1 */
	int mtp_index; /* i of MTP layer N+i, -1 when skipped */
	const char *skip; /* why the loader skips the name; NULL when mapped */
};

/* Runs one name through the loader's steps (after step 0's aliasing).
 * params answers the one question the V3 loader asks of the engine (does
 * the fused q_a/kv_a parameter exist); NULL: it does. */
void mtp_wm_map_name(const struct mtp_wm_config *c,
		     const struct mtp_wm_names *params, const char *name,
		     struct mtp_wm_target *out);

/* One row of a key list's mapping. */
struct mtp_wm_entry {
	const char *key; /* the checkpoint key (points into the key set) */
	char *via;	 /* the alias name the loader saw (step 0), or NULL */
	char *param;	 /* NULL when skipped */
	int shard, expert, mtp_index;
	const char *skip;
};

struct mtp_wm_mapping {
	struct mtp_wm_entry *v;
	int n, cap;
};

/* Whether PARAMS (or MAP's targets) are a DSpark model's: a
 * model.main_proj or model.markov_head parameter. Either may be NULL. */
bool mtp_wm_dspark_params(const struct mtp_wm_names *params,
			  const struct mtp_wm_pairs *map);

/* Whether a --family glm model is GLM-5.x (glm_moe_dsa): DeepSeek's MLA
 * attention in KEYS or PARAMS (kv_a_proj_with_mqa, fused_qkv_a_proj) where
 * GLM-4.x has q/k/v_proj. vLLM loads it with the DeepSeek MTP loader
 * (config/speculative.py hf_config_override: glm_moe_dsa -> deepseek_mtp),
 * not glm4_moe_mtp.py's. params may be NULL. */
bool mtp_wm_glm_dsa(const struct mtp_wm_config *c,
		    const struct mtp_wm_names *keys,
		    const struct mtp_wm_names *params);

/* Maps every key (keys in input order), adding step 0's aliases; a GLM-5
 * model (mtp_wm_glm_dsa) under the DeepSeek loader's rules. */
enum mtp_status mtp_wm_map_keys(const struct mtp_wm_config *c,
				const struct mtp_wm_names *keys,
				const struct mtp_wm_names *params,
				struct mtp_wm_mapping *out);
void mtp_wm_mapping_fini(struct mtp_wm_mapping *m);

/* The quantized MTP projection modules the simulated loader builds, with
 * the prefix each is given (V4: e_proj and h_proj of every MTP layer). */
enum mtp_status mtp_wm_modules(const struct mtp_wm_config *c,
			       struct mtp_wm_pairs *out);

/* Reading the inputs. A KEYS file is a text list (one name a line; blank
 * lines and lines starting with '#' ignored) or a safetensors index JSON
 * (its "weight_map" keys, mtp_safetensors_index_open). Errors are one line
 * naming the file and line. */
enum mtp_status mtp_wm_read_keys(const char *path, struct mtp_wm_names *out,
				 char *err, size_t errn);
enum mtp_status mtp_wm_read_names(const char *path, struct mtp_wm_names *out,
				  char *err, size_t errn);
/* "a<TAB>b" lines; b may be empty only when allow_empty_b. */
enum mtp_status mtp_wm_read_pairs(const char *path, bool allow_empty_b,
				  struct mtp_wm_pairs *out, char *err,
				  size_t errn);
/* PARAMS with shapes: "name" or "name<TAB>shape=D0,D1,..." lines (the
 * capture writes the second form); shapes gets (name, "D0,D1") for the
 * lines that carry one (NULL: not wanted). */
enum mtp_status mtp_wm_read_params(const char *path, struct mtp_wm_names *out,
				   struct mtp_wm_pairs *shapes, char *err,
				   size_t errn);
/* A checkpoint folder's tensors, from the safetensors headers alone (the
 * reader of mtp/safetensors.h; no tensor data is read): the index file
 * model.safetensors.index.json when there is one (every tensor it names
 * must be in the header of the file it names, and every header tensor in
 * the index), else every *.safetensors file of the folder. */
struct mtp_st_tensor;
struct mtp_wm_ckpt {
	struct mtp_wm_names keys; /* the tensor names, in file order */
	struct mtp_st_tensor *t;  /* the same tensors, sorted by name */
	int n, n_files;
	bool indexed; /* read through the index file */
};

enum mtp_status mtp_wm_read_checkpoint(const char *dir, struct mtp_wm_ckpt *out,
				       char *err, size_t errn);
const struct mtp_st_tensor *mtp_wm_ckpt_find(const struct mtp_wm_ckpt *k,
					     const char *name);
void mtp_wm_ckpt_fini(struct mtp_wm_ckpt *k);

/* The audit. */
struct mtp_wm_finding {
	enum mtp_diag diag;
	char key[MTP_WM_NAME_MAX];    /* checkpoint key or module, or "" */
	char target[MTP_WM_NAME_MAX]; /* the parameter or prefix judged */
	char text[200];		      /* what is wrong, one line */
};

struct mtp_wm_inputs {
	const struct mtp_wm_names *keys;    /* required */
	const struct mtp_wm_names *params;  /* NULL: the fixed loader's set */
	const struct mtp_wm_pairs *modules; /* NULL: the loader's own */
	const struct mtp_wm_pairs *map;	    /* NULL: simulate c->loader */
	const struct mtp_wm_ckpt *ckpt;	    /* --checkpoint: its headers */
	const struct mtp_wm_pairs *shapes;  /* PARAMS' shapes, or NULL */
};

struct mtp_wm_audit {
	enum mtp_wm_kind kind; /* the checkpoint's, from KEYS */
	bool dspark;	       /* the judged loader was DSpark's */
	int n_keys, n_mtp_keys, n_mapped, n_skipped, n_params;
	int n_mtp_unloaded;    /* MTP keys the judged mapping loads nowhere */
	int n_params_unloaded; /* MTP parameters no key loads (notes) */
	int n_modules;	       /* e_proj/h_proj modules judged */
	int n_fp8;	       /* --checkpoint: FP8 MTP weights checked */
	int n_shapes;	       /* --checkpoint: shapes compared */
	struct mtp_wm_finding *f;
	int n, cap;
	char notes[10][200];
	int n_notes;
};

/* Runs every check; MTP_ERR_INVALID (with err) when the inputs cannot be
 * judged (e.g. no key of an MTP layer). */
enum mtp_status mtp_wm_audit_run(const struct mtp_wm_config *c,
				 const struct mtp_wm_inputs *in,
				 struct mtp_wm_audit *out, char *err,
				 size_t errn);
void mtp_wm_audit_fini(struct mtp_wm_audit *a);

/* Findings as JSON (the style of reports/json.c: schema_version and the
 * run metadata of mtp/meta.h, run_id as --run-id, NULL: from the
 * environment), written atomically. */
enum mtp_status mtp_wm_audit_json(const struct mtp_wm_audit *a,
				  const struct mtp_wm_config *c,
				  const char *command, const char *run_id,
				  const char *path, char *err, size_t errn);

/* Every loader variant over the bundled key lists in dir (NULL: the
 * source tree's fixtures/weights): 0 when each bug is caught and named as
 * its own and the fixed loader is clean. */
int mtp_wm_selftest(const char *dir, bool verbose);

#endif
