/*
 * The checkpoint-folder audit (weightmap_ckpt.c, audit_ckpt.c) and the
 * index parser (safetensors.c): folders written here byte by byte, each
 * defect named, each malformed file a one-line error naming file and field.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/safetensors.h"
#include "mtp/weightmap.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mtp-wmckpt-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

static void put(const char *name, const char *text, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(text, 1, n, f), n);
	fclose(f);
}

/* A safetensors file: tensors "name:DTYPE:d0,d1;..." laid out in order. */
static void put_st(const char *file, const char *spec)
{
	char json[8192] = "{", buf[8192 + 8 + 65536], tmp[512];
	size_t off = 0, n;
	char *s = strdup(spec), *save = NULL;

	for (char *t = strtok_r(s, ";", &save); t;
	     t = strtok_r(NULL, ";", &save)) {
		char name[256], dtype[16], dims[64] = "";
		size_t elems = 1, esz;

		cr_assert(sscanf(t, "%255[^:]:%15[^:]:%63s", name, dtype,
				 dims) >= 2);
		for (char *d = dims; *d;
		     d += strcspn(d, ",") + (d[strcspn(d, ",")] == ','))
			elems *= strtoul(d, NULL, 10);
		esz = mtp_safetensors_dtype_size(dtype);
		snprintf(tmp, sizeof(tmp),
			 "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%s],"
			 "\"data_offsets\":[%zu,%zu]}",
			 json[1] ? "," : "", name, dtype, dims, off,
			 off + elems * esz);
		strcat(json, tmp);
		off += elems * esz;
	}
	free(s);
	strcat(json, "}");
	n = strlen(json);
	for (int i = 0; i < 8; i++)
		buf[i] = (char)((uint64_t)n >> (8 * i));
	memcpy(buf + 8, json, n);
	memset(buf + 8 + n, 0, off);
	put(file, buf, 8 + n + off);
}

static enum mtp_status read_ckpt(struct mtp_wm_ckpt *k, char *err)
{
	err[0] = '\0';
	return mtp_wm_read_checkpoint(dir, k, err, 512);
}

Test(index, parse)
{
	static const struct {
		const char *json, *want; /* want: NULL = accepted */
	} cases[] = {
		{"{\"metadata\":{\"total_size\":3},\"weight_map\":{\"a\":"
		 "\"m-1.safetensors\",\"b\":\"m-2.safetensors\"}}",
		 NULL},
		{"{\"metadata\":{}}", "weight_map: missing"},
		{"{\"weight_map\":{\"a\":\"x.safetensors\",\"a\":\"x."
		 "safetensors\"}}",
		 "named twice"},
		{"{\"weight_map\":{\"a\":\"../x.safetensors\"}}", "a: file"},
		{"{\"weight_map\":{\"a\":\"x.bin\"}}", "*.safetensors"},
		{"{\"weight_map\":{\"a\":3}}", "a: file: not a string"},
		{"{\"weight_map\":{}} x", "bytes after"},
		{"{\"weight_map\":{},\"weight_map\":{}}", "given twice"},
		{"[1]", "not a JSON object"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mtp_st_index ix;
		char err[512] = "";
		enum mtp_status st = mtp_safetensors_index_parse(
			cases[i].json, strlen(cases[i].json), "idx.json", &ix,
			err, sizeof(err));

		if (!cases[i].want) {
			cr_expect_eq(st, MTP_OK, "%s: %s", cases[i].json, err);
			cr_expect_eq(ix.n, 2);
			cr_expect_str_eq(ix.v[1].file, "m-2.safetensors");
		} else {
			cr_expect_neq(st, MTP_OK, "%s accepted", cases[i].json);
			cr_expect(strstr(err, cases[i].want) &&
					  !strncmp(err, "idx.json: ", 10) &&
					  !strchr(err, '\n'),
				  "%s: '%s'", cases[i].json, err);
		}
		mtp_safetensors_index_close(&ix);
	}
}

#define IDX(map) "{\"weight_map\":{" map "}}"

Test(ckpt, folders, .init = setup, .fini = teardown)
{
	struct mtp_wm_ckpt k;
	char err[512];
	const char *idx =
		IDX("\"a\":\"m1.safetensors\",\"b\":\"m2.safetensors\"");

	put_st("m1.safetensors", "a:BF16:2,3");
	put_st("m2.safetensors", "b:F8_E4M3:4");
	cr_assert_eq(read_ckpt(&k, err), MTP_OK, "%s", err);
	cr_expect(k.n == 2 && k.n_files == 2 && !k.indexed);
	cr_expect_eq(mtp_wm_ckpt_find(&k, "b")->shape[0], 4);
	mtp_wm_ckpt_fini(&k);

	put("model.safetensors.index.json", idx, strlen(idx));
	cr_assert_eq(read_ckpt(&k, err), MTP_OK, "%s", err);
	cr_expect(k.indexed && k.n == 2);
	mtp_wm_ckpt_fini(&k);

	/* a header tensor the index does not list */
	put_st("m2.safetensors", "b:F8_E4M3:4;c:BF16:1");
	cr_expect_eq(read_ckpt(&k, err), MTP_ERR_INVALID);
	cr_expect(strstr(err, "m2.safetensors: c: in this file's header"), "%s",
		  err);
	/* an index entry whose file lacks it */
	put_st("m2.safetensors", "z:BF16:1");
	cr_expect_eq(read_ckpt(&k, err), MTP_ERR_INVALID);
	cr_expect(strstr(err, "m2.safetensors: z:"), "%s", err);
	put_st("m2.safetensors", "");
	cr_expect_eq(read_ckpt(&k, err), MTP_ERR_INVALID);
	cr_expect(strstr(err, "weight_map: names 2 tensors"), "%s", err);
	/* a malformed header: one line naming the file and the tensor */
	put("m2.safetensors", "\x11\0\0\0\0\0\0\0{\"b\":{\"dtype\":1}}", 25);
	cr_expect_eq(read_ckpt(&k, err), MTP_ERR_INVALID);
	cr_expect(strstr(err, "m2.safetensors: b: dtype") && !strchr(err, '\n'),
		  "%s", err);
	/* without an index, a tensor in two files */
	unlink(strcat(strcpy((char[512]){0}, dir),
		      "/model.safetensors.index.json"));
	put_st("m2.safetensors", "a:BF16:2,3");
	cr_expect_eq(read_ckpt(&k, err), MTP_ERR_INVALID);
	cr_expect(strstr(err, "\"a\" is in two of its files"), "%s", err);
}

/* The V3 layer-61 layout, one expert, with FP8 projections. */
#define L "model.layers.61."
static const char v3_ok[] =
	L "embed_tokens.weight:BF16:16,8;" L "enorm.weight:BF16:8;" L
	  "hnorm.weight:BF16:8;" L "eh_proj.weight:BF16:8,16;" L
	  "shared_head.norm.weight:BF16:8;" L
	  "shared_head.head.weight:BF16:16,8;" L
	  "input_layernorm.weight:BF16:8;" L
	  "post_attention_layernorm.weight:BF16:8;" L
	  "self_attn.o_proj.weight:F8_E4M3:8,32;" L
	  "self_attn.o_proj.weight_scale_inv:F32:2,8;" L
	  "self_attn.q_b_proj.weight:F8_E4M3:32,8;" L
	  "self_attn.q_b_proj.weight_scale_inv:F32:8,2;" L
	  "mlp.gate.weight:BF16:2,8;" L
	  "mlp.gate.e_score_correction_bias:F32:2;" L
	  "mlp.experts.0.gate_proj.weight:BF16:4,8;" L
	  "mlp.experts.0.up_proj.weight:BF16:4,8;" L
	  "mlp.experts.0.down_proj.weight:BF16:8,4";

static int audit_dir(const char *params, struct mtp_wm_audit *a, char *err)
{
	struct mtp_wm_ckpt k;
	struct mtp_wm_names p = {0};
	struct mtp_wm_pairs shapes = {0};
	struct mtp_wm_inputs in = {.keys = &k.keys, .ckpt = &k};
	struct mtp_wm_config c;
	enum mtp_status st;

	cr_assert_eq(read_ckpt(&k, err), MTP_OK, "%s", err);
	if (params) {
		put("params.txt", params, strlen(params));
		cr_assert_eq(
			mtp_wm_read_params(strcat(strcpy((char[512]){0}, dir),
						  "/params.txt"),
					   &p, &shapes, err, 512),
			MTP_OK, "%s", err);
		mtp_wm_names_sort(&p);
		in.params = &p;
		in.shapes = shapes.n ? &shapes : NULL;
	}
	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V3, 61, 1);
	c.engine = MTP_ENGINE_VLLM_0_33;
	st = mtp_wm_audit_run(&c, &in, a, err, 512);
	mtp_wm_ckpt_fini(&k);
	mtp_wm_names_fini(&p);
	mtp_wm_pairs_fini(&shapes);
	return st;
}

static bool has(const struct mtp_wm_audit *a, enum mtp_diag d, const char *key,
		const char *text)
{
	for (int i = 0; i < a->n; i++)
		if (a->f[i].diag == d && !strcmp(a->f[i].key, key) &&
		    strstr(a->f[i].text, text))
			return true;
	return false;
}

static void dump(const struct mtp_wm_audit *a)
{
	for (int i = 0; i < a->n; i++)
		cr_log_info("%d %s -> %s: %s", a->f[i].diag, a->f[i].key,
			    a->f[i].target, a->f[i].text);
}

Test(ckpt, clean_and_fp8_blocks, .init = setup, .fini = teardown)
{
	struct mtp_wm_audit a;
	char err[512], spec[sizeof(v3_ok) + 512];

	put_st("model.safetensors", v3_ok);
	cr_assert_eq(audit_dir(NULL, &a, err), MTP_OK, "%s", err);
	dump(&a);
	cr_expect_eq(a.n, 0);
	cr_expect_eq(a.n_fp8, 2);
	mtp_wm_audit_fini(&a);

	/* a scale dropped (renamed away) */
	snprintf(spec, sizeof(spec), "%s", v3_ok);
	memcpy(strstr(spec, "o_proj.weight_scale_inv"),
	       "o_proj.weight_scale_xxx", 23);
	put_st("model.safetensors", spec);
	cr_assert_eq(audit_dir(NULL, &a, err), MTP_OK, "%s", err);
	dump(&a);
	cr_expect(has(&a, MTP_DIAG_QUANT_SCALE_DROPPED,
		      L "self_attn.o_proj.weight", "without its scale"));
	cr_expect_eq(a.n, 1);
	mtp_wm_audit_fini(&a);

	/* a block shape the other weight contradicts (square: no transpose) */
	snprintf(spec, sizeof(spec), "%s", v3_ok);
	memcpy(strstr(spec, "q_b_proj.weight_scale_inv:F32:8,2"),
	       "q_b_proj.weight_scale_inv:F32:4,4", 33);
	put_st("model.safetensors", spec);
	cr_assert_eq(audit_dir(NULL, &a, err), MTP_OK, "%s", err);
	dump(&a);
	cr_expect(has(&a, MTP_DIAG_QUANT_SCALE_DROPPED,
		      L "self_attn.q_b_proj.weight_scale_inv",
		      "does not fit the blocks [4, 4]"));
	cr_expect_eq(a.n, 1);
	mtp_wm_audit_fini(&a);

	/* the transpose of the block scale of the other weight */
	snprintf(spec, sizeof(spec), "%s", v3_ok);
	memcpy(strstr(spec, "q_b_proj.weight_scale_inv:F32:8,2"),
	       "q_b_proj.weight_scale_inv:F32:2,8", 33);
	put_st("model.safetensors", spec);
	cr_assert_eq(audit_dir(NULL, &a, err), MTP_OK, "%s", err);
	dump(&a);
	cr_expect(has(&a, MTP_DIAG_QUANT_SCALE_TRANSPOSED,
		      L "self_attn.q_b_proj.weight_scale_inv",
		      "(its transpose does)"));
	cr_expect_eq(a.n, 1);
	mtp_wm_audit_fini(&a);
}

Test(ckpt, shapes_and_scales, .init = setup, .fini = teardown)
{
	struct mtp_wm_audit a;
	char err[512];
	static const char params[] =
		"model.embed_tokens.weight\tshape=16,8\n" L
		"enorm.weight\tshape=8\n" L "hnorm.weight\tshape=8\n" L
		"eh_proj.weight\tshape=8,16\n" L
		"shared_head.norm.weight\tshape=8\n" L
		"shared_head.head.weight\tshape=16,8\n" L
		"mtp_block.input_layernorm.weight\tshape=8\n" L
		"mtp_block.post_attention_layernorm.weight\tshape=8\n" L
		"mtp_block.self_attn.o_proj.weight\tshape=8,32\n" L
		"mtp_block.self_attn.o_proj.weight_scale_inv\tshape=2,8\n" L
		"mtp_block.self_attn.q_b_proj.weight\tshape=32,8\n" L
		"mtp_block.self_attn.q_b_proj.weight_scale_inv\tshape=8,2\n" L
		"mtp_block.self_attn.q_b_proj.input_scale\n" L
		"mtp_block.mlp.gate.weight\tshape=2,8\n" L
		"mtp_block.mlp.gate.e_score_correction_bias\tshape=2\n" L
		"mtp_block.mlp.experts.routed_experts.w13_weight\tshape=1,8,"
		"8\n" L "mtp_block.mlp.experts.routed_experts.w2_weight\tshape="
		"1,8,3\n" L
		"mtp_block.mlp.experts.routed_experts.w2_weight_scale\n";

	put_st("model.safetensors", v3_ok);
	cr_assert_eq(audit_dir(params, &a, err), MTP_OK, "%s", err);
	dump(&a);
	/* w2 [8, 4] does not fit [1, 8, 3]; the experts' w2 scale is built
	 * and never loaded; w13 halves and every other shape fit */
	cr_expect(has(&a, MTP_DIAG_STALE_WEIGHT_REMAP,
		      L "mlp.experts.0.down_proj.weight",
		      "shape [8, 4] does not fit the parameter's [1, 8, 3]"));
	cr_expect(a.n == 2 && a.f[0].diag == MTP_DIAG_QUANT_SCALE_DROPPED &&
			  strstr(a.f[0].target, "w2_weight_scale"),
		  "%d", a.n);
	cr_expect_gt(a.n_shapes, 15);
	mtp_wm_audit_fini(&a);
}

Test(params, shapes_format, .init = setup, .fini = teardown)
{
	struct mtp_wm_names p;
	struct mtp_wm_pairs s;
	char err[512], path[512];

	snprintf(path, sizeof(path), "%s/p.txt", dir);
	put("p.txt", "a\tshape=2,3\nb\nc\tshape=\n", 23);
	cr_assert_eq(mtp_wm_read_params(path, &p, &s, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_expect(p.n == 3 && s.n == 2 && !strcmp(s.v[0].b, "2,3") &&
		  !strcmp(s.v[1].b, ""));
	mtp_wm_names_fini(&p);
	mtp_wm_pairs_fini(&s);
	put("p.txt", "a\tshape=2 x3\n", 13);
	cr_expect_eq(mtp_wm_read_params(path, &p, &s, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "p.txt:1: expected NAME or NAME<TAB>shape="),
		  "%s", err);
}
