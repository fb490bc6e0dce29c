/* Case files: lists expand into every combination, includes resolve against
 * the including file and carry their tags, cycles and deep nesting stop, and
 * every parse error names FILE:LINE:COL and the problem. Selection by tag
 * gives each fixture and each generated case once. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/casefile.h"
#include "mtp/config.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mtp_casefile_XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

/* Writes tmpdir/rel (creating one level of folder) and returns its path. */
static const char *put(const char *rel, const char *text)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];
	FILE *f;

	snprintf(p, 512, "%s/%s", tmpdir, rel);
	char *slash = strrchr(p, '/');

	*slash = 0;
	mkdir(p, 0700);
	*slash = '/';
	f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
	return p;
}

static struct mtp_casefile parse_ok(const char *text)
{
	struct mtp_casefile cf = {0};
	char err[MTP_ERR_MAX] = "";

	cr_assert_eq(
		mtp_casefile_parse_text("t.case", text, &cf, err, sizeof(err)),
		MTP_OK, "%s", err);
	return cf;
}

Test(casefile, a_line_expands_into_every_combination)
{
	struct mtp_casefile cf = parse_ok("op=rmsnorm T=1,2,3 H=64,128\n");

	cr_assert_eq(cf.n, 6);
	for (int i = 0; i < 6; i++) {
		cr_expect_eq(cf.entries[i].kind, MTP_CASEFILE_GENERATED);
		cr_expect_eq(cf.entries[i].spec.t,
			     1 + i / 2); /* last key fastest */
		cr_expect_eq(cf.entries[i].spec.h, i % 2 ? 128 : 64);
		cr_expect_str_eq(cf.entries[i].origin, "t.case:1");
		for (int k = 0; k < i; k++)
			cr_expect_str_neq(cf.entries[i].id, cf.entries[k].id);
	}
	cr_expect_str_eq(cf.entries[5].id,
			 "gen.rmsnorm.deepseek_v3.bf16.R3.H128.s1");
	mtp_casefile_fini(&cf);

	cf = parse_ok(
		"op=mtp_step,draft_chain family=deepseek_v3,glm,deepseek_v4 "
		"attr.rounding=eager,fused T=1,8 seed=1,2\n");
	cr_expect_eq(cf.n, 2 * 3 * 2 * 2 * 2);
	mtp_casefile_fini(&cf);
}

Test(casefile, comments_blank_lines_and_defaults)
{
	struct mtp_casefile cf =
		parse_ok("# a comment\n\n   \t\n"
			 "op=hc_pre T=4  # trailing comment\n"
			 "op=lm_head dtype=fp32 family=glm seed=0x10 V=1000 "
			 "tags=quick,smoke backends=ref,mutant:*\n");

	cr_assert_eq(cf.n, 2);
	cr_expect_eq(cf.entries[0].spec.family, MTP_FAMILY_DEEPSEEK_V4);
	cr_expect_eq(cf.entries[0].spec.act, MTP_BF16);
	cr_expect_eq(cf.entries[0].spec.seed, MTP_GEN_DEFAULT_SEED);
	cr_expect_eq(cf.entries[0].tags.n, 0);
	cr_expect_str_eq(cf.entries[0].origin, "t.case:4");
	cr_expect_eq(cf.entries[1].spec.act, MTP_F32);
	cr_expect_eq(cf.entries[1].spec.family, MTP_FAMILY_GLM);
	cr_expect_eq(cf.entries[1].spec.seed, 16);
	cr_expect_eq(cf.entries[1].spec.v, 1000);
	cr_expect_eq(cf.entries[1].tags.n, 2);
	cr_expect_str_eq(cf.entries[1].tags.v[1], "smoke");
	cr_expect(mtp_casefile_backend_ok(&cf.entries[1].backends,
					  "mutant:PRE_NORM_RECYCLE:ref"));
	cr_expect(mtp_casefile_backend_ok(&cf.entries[1].backends, "ref"));
	cr_expect(!mtp_casefile_backend_ok(&cf.entries[1].backends, "cpu"));
	cr_expect(mtp_casefile_backend_ok(&cf.entries[0].backends, "cpu"));
	mtp_casefile_fini(&cf);
}

Test(casefile, attributes_and_optional_inputs)
{
	struct mtp_casefile cf = parse_ok("op=hc_pre attr.sinkhorn_iters=1,20 "
					  "attr.post_mult=1.5 optional=0,1\n");

	cr_assert_eq(cf.n, 4);
	cr_expect_eq(cf.entries[0].spec.attrs.n, 2);
	cr_expect_str_eq(cf.entries[0].spec.attrs.items[0].name,
			 "sinkhorn_iters");
	cr_expect_eq(cf.entries[0].spec.attrs.items[0].num, 1);
	cr_expect_eq(cf.entries[3].spec.attrs.items[0].num, 20);
	cr_expect_eq(cf.entries[0].spec.attrs.items[1].num, 1.5);
	cr_expect(!cf.entries[0].spec.optional && cf.entries[1].spec.optional);
	mtp_casefile_fini(&cf);
	cf = parse_ok("op=mtp_step family=deepseek_v4 "
		      "attr.block_contract=internal\n");
	cr_expect(cf.entries[0].spec.attrs.items[0].is_string);
	cr_expect_str_eq(cf.entries[0].spec.attrs.items[0].str, "internal");
	mtp_casefile_fini(&cf);
}

Test(casefile, fixtures_resolve_against_the_case_file)
{
	struct mtp_casefile cf = {0};
	char err[MTP_ERR_MAX] = "", want[600];
	const char *path;

	make_tmpdir();
	put("fx/b.h5", "");
	put("fx/a.h5", "");
	put("fx/notes.txt", "");
	path = put("cases/x.case",
		   "fixtures=../fx filter=rmsnorm.*,hc_pre.* tags=quick\n"
		   "fixtures=../fx/./b.h5\n");
	cr_assert_eq(mtp_casefile_parse(path, &cf, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_assert_eq(cf.n, 3);
	snprintf(want, sizeof(want), "%s/fx/a.h5", tmpdir);
	cr_expect_str_eq(cf.entries[0].path, want);
	cr_expect_eq(cf.entries[0].kind, MTP_CASEFILE_FIXTURES);
	cr_expect_eq(cf.entries[0].filters.n, 2);
	cr_expect_str_eq(cf.entries[0].filters.v[1], "hc_pre.*");
	snprintf(want, sizeof(want), "%s/fx/b.h5", tmpdir);
	cr_expect_str_eq(cf.entries[1].path, want);
	cr_expect_str_eq(cf.entries[2].path, want);
	snprintf(want, sizeof(want), "%s/cases/x.case:2", tmpdir);
	cr_expect_str_eq(cf.entries[2].origin, want);
	mtp_casefile_fini(&cf);
}

Test(casefile, includes_resolve_carry_tags_and_select)
{
	struct mtp_casefile cf = {0};
	struct mtp_case_selection sel;
	char err[MTP_ERR_MAX] = "";
	const char *top;

	make_tmpdir();
	put("fx/a.h5", "");
	put("sub/inner.case", "op=rmsnorm T=1,2 tags=quick\n");
	put("sub/quick.case",
	    "include=inner.case\nfixtures=../fx/a.h5 filter=x.* tags=quick\n");
	top = put("nightly.case", "include=sub/quick.case tags=nightly\n"
				  "op=rmsnorm T=2,3 tags=nightly\n"
				  "fixtures=fx/a.h5 filter=y.* tags=nightly\n"
				  "op=eh_proj tags=other\n");
	cr_assert_eq(mtp_casefile_parse(top, &cf, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_assert_eq(cf.n, 2 + 1 + 2 + 1 + 1);
	cr_expect_eq(cf.entries[0].tags.n, 2);
	cr_expect_str_eq(cf.entries[0].tags.v[1], "nightly");

	cr_assert_eq(mtp_casefile_select(&cf, "quick", &sel, err, sizeof(err)),
		     MTP_OK);
	cr_expect_eq(sel.n_specs, 2);
	cr_expect_eq(sel.n_fixtures, 1);
	cr_expect_eq(sel.fixtures[0].filters.n, 1);
	mtp_case_selection_fini(&sel);

	/* nightly: T=2 appears twice, the fixture twice with two filters */
	cr_assert_eq(
		mtp_casefile_select(&cf, "nightly", &sel, err, sizeof(err)),
		MTP_OK);
	cr_expect_eq(sel.n_specs, 3);
	cr_expect_str_eq(sel.gen[2].id,
			 "gen.rmsnorm.deepseek_v3.bf16.R3.H64.s1");
	cr_expect_eq(sel.specs[2].t, 3);
	cr_expect_eq(sel.n_fixtures, 1);
	cr_expect_eq(sel.fixtures[0].filters.n, 2);
	cr_expect(mtp_casefile_fixture_match(&sel.fixtures[0], "a.h5", "y.1"));
	cr_expect(mtp_casefile_fixture_match(&sel.fixtures[0], "a.h5", "x.1"));
	cr_expect(!mtp_casefile_fixture_match(&sel.fixtures[0], "a.h5", "z.1"));
	mtp_case_selection_fini(&sel);

	cr_assert_eq(
		mtp_casefile_select(&cf, "other,none", &sel, err, sizeof(err)),
		MTP_OK);
	cr_expect_eq(sel.n_specs, 1);
	cr_expect_eq(sel.n_fixtures, 0);
	mtp_case_selection_fini(&sel);
	cr_assert_eq(mtp_casefile_select(&cf, NULL, &sel, err, sizeof(err)),
		     MTP_OK);
	cr_expect_eq(sel.n_specs, 4);
	mtp_case_selection_fini(&sel);
	cr_assert_eq(
		mtp_casefile_select(&cf, "nonesuch", &sel, err, sizeof(err)),
		MTP_OK);
	cr_expect_eq(sel.n_specs + sel.n_fixtures, 0);
	mtp_case_selection_fini(&sel);
	mtp_casefile_fini(&cf);
}

Test(casefile, a_fixture_without_filter_selects_all_of_it)
{
	struct mtp_casefile cf = {0};
	struct mtp_case_selection sel;
	char err[MTP_ERR_MAX] = "";
	const char *top;

	make_tmpdir();
	put("fx/a.h5", "");
	top = put("t.case", "fixtures=fx/a.h5 filter=x.*\nfixtures=fx/a.h5\n");
	cr_assert_eq(mtp_casefile_parse(top, &cf, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_assert_eq(mtp_casefile_select(&cf, "", &sel, err, sizeof(err)),
		     MTP_OK);
	cr_expect_eq(sel.n_fixtures, 1);
	cr_expect_eq(sel.fixtures[0].filters.n, 0);
	cr_expect(mtp_casefile_fixture_match(&sel.fixtures[0], "a.h5",
					     "anything"));
	mtp_case_selection_fini(&sel);
	mtp_casefile_fini(&cf);
}

static void parse_fails(const char *path, const char *want_prefix,
			const char *want_part)
{
	struct mtp_casefile cf = {0};
	char err[MTP_ERR_MAX] = "";

	cr_expect_neq(mtp_casefile_parse(path, &cf, err, sizeof(err)), MTP_OK);
	cr_expect(strncmp(err, want_prefix, strlen(want_prefix)) == 0,
		  "got '%s', want the prefix '%s'", err, want_prefix);
	cr_expect(strstr(err, want_part), "got '%s', want '%s' in it", err,
		  want_part);
	cr_expect(!strchr(err, '\n'), "one line: %s", err);
	mtp_casefile_fini(&cf);
}

Test(casefile, include_cycle_depth_and_missing_files)
{
	char want[600];
	const char *a;

	make_tmpdir();
	a = put("a.case", "op=rmsnorm\ninclude=sub/b.case\n");
	put("sub/b.case", "# b\n  include=../a.case\n");
	snprintf(want, sizeof(want),
		 "%s/sub/b.case:2:11: include cycle: ", tmpdir);
	parse_fails(a, want, "a.case -> ");

	a = put("self.case", "include=self.case\n");
	snprintf(want, sizeof(want), "%s/self.case:1:9: include cycle", tmpdir);
	parse_fails(a, want, "self.case");

	for (int i = 0; i < MTP_CASEFILE_MAX_DEPTH + 2; i++) {
		char name[32], text[64];

		snprintf(name, sizeof(name), "d%d.case", i);
		snprintf(text, sizeof(text), "include=d%d.case\n", i + 1);
		put(name, text);
	}
	put("d10.case", "op=rmsnorm\n");
	snprintf(want, sizeof(want), "%s/d", tmpdir);
	parse_fails(put("top.case", "include=d0.case\n"), want,
		    "nested deeper than");

	a = put("m.case", "op=rmsnorm\ninclude=x.case,missing.case\n");
	put("x.case", "op=eh_proj\n");
	snprintf(want, sizeof(want), "%s/m.case:2:16: cannot read include",
		 tmpdir);
	parse_fails(a, want, "missing.case");

	snprintf(want, sizeof(want), "%s/nope.case: cannot read", tmpdir);
	char nope[600];

	snprintf(nope, sizeof(nope), "%s/nope.case", tmpdir);
	parse_fails(nope, want, "No such file");

	/* an error inside an included file names that file */
	a = put("outer.case", "op=rmsnorm\ninclude=inner.case\n");
	put("inner.case", "\n\nop=rmsnorm T=1,x\n");
	snprintf(want, sizeof(want), "%s/inner.case:3:16: ", tmpdir);
	parse_fails(a, want, "bad number 'x'");
}

/* An include bomb: top.case includes f0.case, f0.case includes f1.case 4
 * times, ... down to f<levels>.case, which holds `leaf`. Parsing it fails
 * at `where` (after the folder) with the budget `part` in the message. */
static void bomb_fails(int levels, const char *leaf, const char *where,
		       const char *part)
{
	char name[32], text[128], want[600];

	make_tmpdir();
	for (int i = 0; i < levels; i++) {
		snprintf(name, sizeof(name), "f%d.case", i);
		snprintf(text, sizeof(text),
			 "include=f%d.case,f%d.case,"
			 "f%d.case,f%d.case\n",
			 i + 1, i + 1, i + 1, i + 1);
		put(name, text);
	}
	snprintf(name, sizeof(name), "f%d.case", levels);
	put(name, leaf);
	snprintf(want, sizeof(want), "%s/%s", tmpdir, where);
	parse_fails(put("top.case", "include=f0.case\n"), want, part);
}

/* Includes only (7 deep: 21845 files) stop at the budget of files read;
 * the message names the include line that went over it. */
Test(casefile, an_include_bomb_stops_at_the_files_budget)
{
	char part[64];

	snprintf(part, sizeof(part), "more than %d files",
		 MTP_CASEFILE_MAX_FILES);
	bomb_fails(7, "# leaf\n", "f6.case:1:17: include '", part);
}

/* Problems at the leaves (64 copies of 320) stop at the entries' budget,
 * named at the include of the leaf file. */
Test(casefile, an_include_bomb_stops_at_the_entries_budget)
{
	char part[64];

	snprintf(part, sizeof(part), "more than %d entries",
		 MTP_CASEFILE_MAX_ENTRIES);
	bomb_fails(3,
		   "op=rmsnorm T=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
		   "H=64,128,192,256,320,384,448,512,576,640,704,768,832,896,"
		   "960,1024\n"
		   "op=rmsnorm T=1,2,3,4 H=64,128,192,256,320,384,448,512,576,"
		   "640,704,768,832,896,960,1024\n",
		   "f2.case:1:33: include '", part);
}

/* A file of 1 MiB included 17 times goes over the budget of text read. */
Test(casefile, includes_stop_at_the_bytes_budget)
{
	char want[600], part[64], *big = malloc(1 << 20);
	char line[17 * 10 + 16] = "include=";

	cr_assert(big);
	memset(big, '#', (1 << 20) - 1);
	for (int i = 1023; i < (1 << 20); i += 1024)
		big[i] = '\n';
	big[(1 << 20) - 1] = 0;
	make_tmpdir();
	put("big.case", big);
	free(big);
	for (int i = 0; i < 17; i++)
		strcat(line, i ? ",big.case" : "big.case");
	strcat(line, "\n");
	snprintf(want, sizeof(want), "%s/top.case:1:", tmpdir);
	snprintf(part, sizeof(part), "more than %ld bytes",
		 (long)MTP_CASEFILE_MAX_BYTES);
	parse_fails(put("top.case", line), want, part);
}

/* A cycle through a symbolic link (l -> .) is a cycle, found by the file's
 * identity, not the depth limit. */
Test(casefile, a_cycle_through_a_link_is_a_cycle)
{
	char want[600], link[600];
	const char *a;

	make_tmpdir();
	a = put("a.case", "op=rmsnorm\ninclude=l/b.case\n");
	put("b.case", "include=a.case\n");
	snprintf(link, sizeof(link), "%s/l", tmpdir);
	cr_assert_eq(symlink(".", link), 0);
	snprintf(want, sizeof(want),
		 "%s/l/b.case:1:9: include cycle: ", tmpdir);
	parse_fails(a, want, "a.case -> ");
}

struct bad_line {
	char text[200];
	char where[24]; /* "LINE:COL: " after "t.case:" */
	char part[64];
};

static struct bad_line bad_lines[] = {
	{"op=rmsnorm dtpye=bf16", "1:12: ", "unknown key 'dtpye'"},
	{"op=rmsnorm T=1,x", "1:16: ", "bad number 'x' for 'T'"},
	{"op=rmsnorm H=0", "1:14: ",
	 "bad number '0' for 'H': only the batch dims T, R and C may be 0"},
	{"op=lm_head T=1 V=0", "1:18: ", "bad number '0' for 'V'"},
	{"op=rmsnorm T=00", "1:14: ", "bad number '00' for 'T'"},
	{"op=rmsnorm T=12ab", "1:14: ", "bad number '12ab'"},
	{"op=rmsnorm T=1,,2", "1:16: ", "empty item"},
	{"op=rmsnorm T=", "1:14: ", "empty value for 'T'"},
	{"op=rmsnorm foo", "1:12: ", "expected key=value, got 'foo'"},
	{"op=rmsnorm =3", "1:12: ", "missing key"},
	{"op=rmsnrom", "1:4: ", "unknown op 'rmsnrom'"},
	{"op=rmsnorm,nope T=4", "1:12: ", "unknown op 'nope'"},
	{"\n# c\nop=rmsnorm family=v5", "3:19: ", "unknown family 'v5'"},
	{"op=rmsnorm dtype=int64", "1:18: ", "bad dtype 'int64'"},
	{"op=rmsnorm T=1 T=2", "1:16: ", "duplicate key 'T'"},
	{"op=rmsnorm seed=-1", "1:17: ", "bad number '-1' for 'seed'"},
	{"op=rmsnorm seed=99999999999999999999999", "1:17: ", "bad number"},
	{"op=rmsnorm optional=2", "1:21: ", "'optional'"},
	{"op=rmsnorm attr.sinkhorn_iters=5", "1:12: ", "'sinkhorn_iters'"},
	{"op=rmsnorm attr.rounding=sl*ppy", "1:26: ", "bad value 'sl*ppy'"},
	{"op=rmsnorm attr.rounding=sloppy", "1:12: ", "rounding"},
	{"op=rmsnorm attr.a-b=1", "1:18: ", "bad attribute name"},
	{"op=rmsnorm filter=x", "1:12: ", "key 'filter' does not go with op="},
	{"fixtures=nonexistent.h5", "1:10: ", "no fixture file or folder"},
	{"op=rmsnorm fixtures=x", "1:12: ", "cannot share a line"},
	{"include=x.case op=rmsnorm", "1:16: ", "cannot share a line"},
	{"tags=quick", "1:1: ", "a line needs op=, fixtures= or include="},
	{"include=a.case seed=3",
	 "1:16: ", "key 'seed' does not go with include="},
	{"op=rmsnorm tags=qu!ck",
	 "1:19: ", "character '!' not allowed in 'tags'"},
	{"  op=rmsnorm\tT=1 dtpye=x", "1:18: ", "unknown key 'dtpye'"},
	{"op=rmsnorm H=99999999999", "1:12: ", "H=99999999999"},
	{"op=fused_embed_eh_norm V=1048576 H=7168", "1:1: ", "'embed_table'"},
	{"op=mtp_step family=deepseek_v4 M=2 attr.hc_mult=4",
	 "1:36: ", "disagrees"},
	{"op=rmsnorm R=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
	 "H=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
	 "seed=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
	 "1:1: ", "more than 4096 problems"},
};

ParameterizedTestParameters(casefile, parse_errors_name_file_line_col)
{
	return cr_make_param_array(struct bad_line, bad_lines,
				   sizeof(bad_lines) / sizeof(bad_lines[0]));
}

ParameterizedTest(struct bad_line *b, casefile, parse_errors_name_file_line_col)
{
	struct mtp_casefile cf = {0};
	char err[MTP_ERR_MAX] = "", want[64];

	snprintf(want, sizeof(want), "t.case:%s", b->where);
	cr_expect_eq(mtp_casefile_parse_text("t.case", b->text, &cf, err,
					     sizeof(err)),
		     MTP_ERR_INVALID, "%s", b->text);
	cr_expect(strncmp(err, want, strlen(want)) == 0,
		  "'%s': got '%s', want the prefix '%s'", b->text, err, want);
	cr_expect(strstr(err, b->part), "'%s': got '%s', want '%s' in it",
		  b->text, err, b->part);
	cr_expect(!strchr(err, '\n'));
	mtp_casefile_fini(&cf);
}

Test(casefile, the_bundled_case_files_parse)
{
	const char *files[] = {MTP_SOURCE_DIR "/cases/quick.case",
			       MTP_SOURCE_DIR "/cases/nightly.case"};

	for (int i = 0; i < 2; i++) {
		struct mtp_casefile cf = {0};
		struct mtp_case_selection sel;
		char err[MTP_ERR_MAX] = "";

		cr_assert_eq(
			mtp_casefile_parse(files[i], &cf, err, sizeof(err)),
			MTP_OK, "%s", err);
		cr_assert_eq(mtp_casefile_select(&cf, i ? "nightly" : "quick",
						 &sel, err, sizeof(err)),
			     MTP_OK);
		cr_expect(sel.n_fixtures >= 10, "%s: %d fixtures", files[i],
			  sel.n_fixtures);
		cr_expect(sel.n_specs >= 5, "%s: %d generated", files[i],
			  sel.n_specs);
		mtp_case_selection_fini(&sel);
		mtp_casefile_fini(&cf);
	}
}
