/*
 * `mtpcheck audit-weights`: reads a checkpoint's key list and, optionally,
 * the engine's parameters, modules and resolved mapping, runs the weight
 * audit and prints one line per finding (its options are rows of the
 * CLI's option table, cli/options.c). Exit codes are ARCHITECTURE.md's: 0 no
 * finding, 1 a finding, 2 a usage error or an input that cannot be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/meta.h"
#include "mtp/weightmap.h"
#include "weights.h"

struct audit_inputs {
	struct mtp_wm_names keys, params;
	struct mtp_wm_pairs modules, map, shapes;
	struct mtp_wm_ckpt ckpt;
	struct mtp_wm_inputs in;
};

static int usage(const char *fmt, const char *arg)
{
	fputs("mtpcheck audit-weights: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see mtpcheck audit-weights --help)\n", stderr);
	return MTP_EXIT_USAGE;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

/* Checks the options and fills the configuration; -1 to go on. */
static int make_config(const struct mtp_audit_opts *o, struct mtp_wm_config *c)
{
	enum mtp_family fam;
	int layer, k = 1;

	if (!o->family || !o->layer || !o->keys == !o->checkpoint)
		return usage("needs --family, --layer and one of --keys and "
			     "--checkpoint%s",
			     "");
	if (!mtp_family_parse(o->family, &fam))
		return usage("--family: unknown family '%s' (mtpcheck list "
			     "families)",
			     o->family);
	if (mtp_family_def(fam)->ckpt == MTP_CKPT_MTP_FC)
		return usage("--family %s: its checkpoint layout (mtp.fc, "
			     "mtp.layers.{i}, mtp.norm) has no weight map yet",
			     o->family);
	if (!parse_int(o->layer, 1, 100000, &layer))
		return usage(
			"--layer: '%s' is not a layer index (an integer >= 1)",
			o->layer);
	if (o->mtp_layers && !parse_int(o->mtp_layers, 1, 64, &k))
		return usage(
			"--mtp-layers: '%s' is not an integer from 1 to 64",
			o->mtp_layers);
	mtp_wm_config_init(c, fam, layer, k);
	c->dspark = o->loader && !strcmp(o->loader, "dspark");
	if (c->dspark && !mtp_family_mhc(fam))
		return usage(
			"--loader dspark is DeepSeek V4.1's DSpark loader: "
			"--family deepseek_v4, not %s",
			o->family);
	if (o->loader && !c->dspark && !mtp_loader_parse(o->loader, &c->loader))
		return usage("--loader: '%s' is not fixed, buggy-remap, "
			     "no-alias, no-prefix or dspark",
			     o->loader);
	if (o->loader && o->mapping && !c->dspark)
		return usage("--mapping is judged instead of a simulated "
			     "loader: drop --loader %s",
			     o->loader);
	if (c->loader != MTP_LOADER_FIXED &&
	    mtp_family_def(fam)->ckpt != MTP_CKPT_MTP)
		return usage("--loader %s reproduces a deepseek_v4 loader bug",
			     o->loader);
	if (o->expert_dtype && strcmp(o->expert_dtype, "fp4") &&
	    strcmp(o->expert_dtype, "fp8"))
		return usage("--expert-dtype: '%s' is not fp4 or fp8",
			     o->expert_dtype);
	c->expert_fp8 = o->expert_dtype && !strcmp(o->expert_dtype, "fp8");
	c->engine = MTP_ENGINE_VLLM_0_33;
	if (o->engine && !mtp_engine_parse(o->engine, &c->engine))
		return usage("--engine: '%s' is not vllm@0.33, vllm@0.23 or "
			     "spec",
			     o->engine);
	return -1;
}

static void inputs_fini(struct audit_inputs *x)
{
	mtp_wm_names_fini(&x->keys);
	mtp_wm_names_fini(&x->params);
	mtp_wm_pairs_fini(&x->modules);
	mtp_wm_pairs_fini(&x->map);
	mtp_wm_pairs_fini(&x->shapes);
	mtp_wm_ckpt_fini(&x->ckpt);
}

static enum mtp_status read_inputs(const struct mtp_audit_opts *o,
				   struct audit_inputs *x, char *err,
				   size_t errn)
{
	enum mtp_status st;

	memset(x, 0, sizeof(*x));
	x->in.keys = &x->keys;
	if (o->checkpoint) {
		st = mtp_wm_read_checkpoint(o->checkpoint, &x->ckpt, err, errn);
		x->in.keys = &x->ckpt.keys;
		x->in.ckpt = &x->ckpt;
	} else {
		st = mtp_wm_read_keys(o->keys, &x->keys, err, errn);
	}
	if (!st && o->params &&
	    !(st = mtp_wm_read_params(o->params, &x->params, &x->shapes, err,
				      errn))) {
		mtp_wm_names_sort(&x->params);
		x->in.params = &x->params;
		x->in.shapes = x->shapes.n ? &x->shapes : NULL;
	}
	if (!st && o->modules &&
	    !(st = mtp_wm_read_pairs(o->modules, true, &x->modules, err, errn)))
		x->in.modules = &x->modules;
	if (!st && o->mapping &&
	    !(st = mtp_wm_read_pairs(o->mapping, false, &x->map, err, errn)))
		x->in.map = &x->map;
	return st;
}

/* The engine's files name a DSpark model (model.main_proj ...): its
 * loader is the one judged, --loader dspark or not. */
static void dspark_from_inputs(struct mtp_wm_config *c,
			       const struct mtp_wm_inputs *in)
{
	if (mtp_family_mhc(c->family) &&
	    mtp_wm_dspark_params(in->params, in->map))
		c->dspark = true;
}

/* KEY<TAB>PARAM lines, readable back as a --mapping file. */
static enum mtp_status print_mapping(const struct mtp_wm_config *c,
				     const struct mtp_wm_inputs *in)
{
	struct mtp_wm_mapping m;

	if (mtp_wm_map_keys(c, in->keys, in->params, &m))
		return MTP_ERR_NOMEM;
	for (int i = 0; i < m.n; i++) {
		const struct mtp_wm_entry *e = &m.v[i];

		if (!e->param) {
			printf("# %s\tskipped: %s\n", e->key, e->skip);
			continue;
		}
		printf("%s\t%s", e->key, e->param);
		if (e->shard >= 0)
			printf("\tshard=%d", e->shard);
		if (e->expert >= 0)
			printf("\texpert=%d", e->expert);
		puts(e->via ? "\t# via its alias" : "");
	}
	mtp_wm_mapping_fini(&m);
	return MTP_OK;
}

static void print_findings(const struct mtp_wm_audit *a,
			   const struct mtp_wm_config *c, bool map,
			   bool verbose)
{
	int per[MTP_DIAG_COUNT] = {0};

	for (int i = 0; i < a->n; i++) {
		const struct mtp_wm_finding *f = &a->f[i];
		const struct mtp_bug_class *d = mtp_diag_info(f->diag);

		per[f->diag]++;
		printf("%s %s  %s%s%s: %s\n", d->name, d->section,
		       f->key[0] ? f->key : "", f->key[0] ? " -> " : "",
		       f->target[0] ? f->target : "(empty)", f->text);
	}
	for (int i = 0; i < a->n_notes && (verbose || a->n == 0); i++)
		printf("note: %s\n", a->notes[i]);
	printf("audit-weights: %s N=%d K=%d %s%s, checkpoint kind %s: %d "
	       "keys (%d of the MTP layers), "
	       "%d mapped, %d skipped; %d parameters; %d finding(s)",
	       mtp_family_name(c->family), c->layer, c->mtp_layers,
	       map ? "engine mapping" : mtp_loader_name(c->loader),
	       c->dspark ? " (DSpark loader)" : "", mtp_wm_kind_name(a->kind),
	       a->n_keys, a->n_mtp_keys, a->n_mapped, a->n_skipped, a->n_params,
	       a->n);
	for (int d = 1, first = 1; d < MTP_DIAG_COUNT; d++) {
		if (!per[d])
			continue;
		printf("%s%s x%d", first ? ": " : ", ", mtp_diag_info(d)->name,
		       per[d]);
		first = 0;
	}
	putchar('\n');
	for (int d = 1; d < MTP_DIAG_COUNT && verbose; d++)
		if (per[d])
			printf("  %s: %s\n", mtp_diag_info(d)->name,
			       mtp_diag_info(d)->history);
}

/* PARAMS from another engine than --engine names its routed experts the
 * other way (vLLM 0.33: experts.routed_experts.w13_weight; the spec's
 * loader and vLLM 0.23: experts.w13_weight), and every expert key draws a
 * false STALE_WEIGHT_REMAP: one line says so, findings or not. */
static void engine_hint(const struct mtp_wm_config *c,
			const struct mtp_wm_names *params)
{
	bool routed = false, plain = false,
	     want = mtp_wm_rules_of(c->engine)->routed_experts;

	for (int i = 0; params && i < params->n; i++) {
		routed |= strstr(params->v[i], ".routed_experts.") != NULL;
		plain |= strstr(params->v[i], ".experts.w13_") ||
			 strstr(params->v[i], ".experts.w2_");
	}
	if (want ? routed || !plain : !routed)
		return;
	printf("hint: PARAMS keeps the routed experts %s, --engine %s %s: "
	       "give the --engine PARAMS came from (%s; docs/WEIGHTS.md)\n",
	       want ? "at experts.w13_weight" : "under experts.routed_experts",
	       mtp_wm_rules_of(c->engine)->name,
	       want ? "expects experts.routed_experts" : "does not",
	       want ? "spec or vllm@0.23; the bundled lists: spec"
		    : "vllm@0.33");
}

static void command_line(int argc, char **argv, char *buf, size_t n)
{
	size_t o = (size_t)snprintf(buf, n, "mtpcheck audit-weights");

	for (int i = 0; i < argc && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, " %s", argv[i]);
}

static int audit(const struct mtp_audit_opts *o, struct mtp_wm_config *c,
		 int argc, char **argv)
{
	struct audit_inputs x;
	struct mtp_wm_audit a;
	char err[512] = "", cmd[1024];
	int rc = MTP_EXIT_USAGE;

	if (read_inputs(o, &x, err, sizeof(err)))
		goto out_inputs;
	dspark_from_inputs(c, &x.in);
	if (o->print_mapping) {
		rc = print_mapping(c, &x.in) ? MTP_EXIT_USAGE : MTP_EXIT_OK;
		snprintf(err, sizeof(err), "out of memory");
		goto out_inputs;
	}
	if (mtp_wm_audit_run(c, &x.in, &a, err, sizeof(err)))
		goto out_inputs;
	engine_hint(c, x.in.params); /* the summary stays the last line */
	print_findings(&a, c, o->mapping != NULL, o->verbose);
	if (x.in.ckpt)
		printf("audit-weights: checkpoint %s: %d tensor(s) in %d "
		       "file(s)%s; %d FP8 MTP weight(s) checked; %d shape(s) "
		       "compared\n",
		       o->checkpoint, x.ckpt.n, x.ckpt.n_files,
		       x.ckpt.indexed ? " (indexed)" : "", a.n_fp8, a.n_shapes);
	rc = a.n ? MTP_EXIT_FAIL : MTP_EXIT_OK;
	command_line(argc, argv, cmd, sizeof(cmd));
	if (o->json &&
	    mtp_wm_audit_json(&a, c, cmd, o->run_id, o->json, err, sizeof(err)))
		rc = MTP_EXIT_USAGE;
	mtp_wm_audit_fini(&a);
out_inputs:
	if (rc == MTP_EXIT_USAGE)
		fprintf(stderr, "mtpcheck audit-weights: %s\n", err);
	inputs_fini(&x);
	return rc;
}

int mtp_audit_weights_main(const struct mtp_audit_opts *opts, int argc,
			   char **argv)
{
	struct mtp_audit_opts o = *opts;
	struct mtp_wm_config c;
	int rc;

	if (o.selftest && o.json)
		return usage("--selftest writes no JSON (it prints its table): "
			     "drop --json%s",
			     "");
	if (o.selftest)
		return mtp_wm_selftest(o.fixtures, o.verbose);
	if (o.commit)
		mtp_meta_set_commit(o.commit);
	rc = make_config(&o, &c);
	if (rc >= 0)
		return rc;
	return audit(&o, &c, argc, argv);
}
