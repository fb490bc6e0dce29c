/* FORMAT.md v1: round trips and every validation error, one line each. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mtp/config.h"
#include "test_util.h"

static struct mtp_limits lim = {1u << 30};

static void write_one(const char *path, struct mtp_case *c)
{
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_write(path, "test", c, 1, err, sizeof(err)),
		     MTP_OK, "%s", err);
}

static enum mtp_status open_err(const char *path, char *err, size_t n)
{
	struct mtp_fixture fx;
	enum mtp_status st = mtp_fixture_open(path, &lim, &fx, err, n);

	if (st == MTP_OK)
		mtp_fixture_close(&fx);
	return st;
}

Test(fixture, round_trip_keeps_values_and_attributes)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_fixture fx;

	tu_tmpname(path, sizeof(path), "rt");
	tu_rmsnorm_case(&c, "rms.a", 3, 8, 2.0, 1.0);
	/* a value that only bf16 holds exactly: 1 + 2^-7 */
	mtp_store(MTP_BF16, c.inputs.items[0].t.data, 5, 1.0078125);
	write_one(path, &c);
	cr_assert_eq(mtp_fixture_open(path, &lim, &fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_assert_eq(fx.n_cases, 1);
	cr_expect_str_eq(fx.cases[0].id, "rms.a");
	cr_expect_str_eq(fx.cases[0].op->name, "rmsnorm");
	cr_expect_eq(fx.cases[0].seed, 7);
	cr_expect_eq(fx.cases[0].params.eps, 1e-6);
	cr_expect_eq(fx.cases[0].params.rounding, MTP_ROUNDING_EAGER);
	cr_assert_eq(mtp_fixture_load(&fx, 0, err, sizeof(err)), MTP_OK, "%s",
		     err);
	const struct mtp_named *x = mtp_list_find(&fx.cases[0].inputs, "x");

	cr_assert(x && x->t.dtype == MTP_BF16 && x->t.ndim == 2);
	cr_expect_eq(x->t.shape[0], 3);
	cr_expect_eq(mtp_load(MTP_BF16, x->t.data, 5), 1.0078125);
	cr_expect_eq(mtp_load(MTP_BF16, x->t.data, 4), 2.0);
	mtp_fixture_close(&fx);
	mtp_case_fini(&c);
	remove(path);
}

Test(fixture, not_hdf5_is_one_line_error)
{
	char path[128], err[MTP_ERR_MAX];
	FILE *f;

	tu_tmpname(path, sizeof(path), "garbage");
	f = fopen(path, "wb");
	fputs("this is not an HDF5 file at all, just text\n", f);
	fclose(f);
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, path) && strstr(err, "not an HDF5 file"), "%s",
		  err);
	cr_expect(!strchr(err, '\n'), "one line");
	remove(path);
}

Test(fixture, truncated_file_is_refused_without_crash)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	FILE *f;
	long n;

	tu_tmpname(path, sizeof(path), "trunc");
	tu_rmsnorm_case(&c, "rms.t", 64, 64, 2.0, 1.0);
	write_one(path, &c);
	f = fopen(path, "rb+");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	cr_assert(truncate(path, n / 2) == 0);
	enum mtp_status st = open_err(path, err, sizeof(err));

	cr_expect_neq(st, MTP_OK);
	cr_expect(strstr(err, path) != NULL, "%s", err);
	mtp_case_fini(&c);
	remove(path);
}

Test(fixture, missing_file)
{
	char err[MTP_ERR_MAX];

	cr_expect_eq(open_err("/nonexistent/x.h5", err, sizeof(err)),
		     MTP_ERR_IO);
	cr_expect(strstr(err, "/nonexistent/x.h5") != NULL);
}

/* Builds a case, lets `mutate` break it, writes it and checks the error. */
static void expect_refused(void (*mutate)(struct mtp_case *),
			   const char *needle)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "bad");
	tu_rmsnorm_case(&c, "rms.bad", 2, 4, 2.0, 1.0);
	mutate(&c);
	write_one(path, &c);
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, needle) != NULL, "want '%s' in: %s", needle, err);
	cr_expect(strstr(err, "/cases/") != NULL, "names the object: %s", err);
	mtp_case_fini(&c);
	remove(path);
}

static void drop_weight(struct mtp_case *c)
{
	c->inputs.n = 1;
}
static void wrong_shape(struct mtp_case *c)
{
	c->inputs.items[1].t.shape[0] = 3;
}
static void bad_rounding(struct mtp_case *c)
{
	snprintf(c->attrs.items[1].str, 8, "lazy");
}
static void no_eps(struct mtp_case *c)
{
	snprintf(c->attrs.items[0].name, 8, "epsilon");
}
static void extra_input(struct mtp_case *c)
{
	int64_t s[1] = {4};

	tu_add(&c->inputs, "bias", MTP_BF16, 1, s, NULL);
}
static void expected_shape(struct mtp_case *c)
{
	c->expected.items[0].t.shape[1] = 2;
}
static void expected_name(struct mtp_case *c)
{
	snprintf(c->expected.items[0].name, 8, "z");
}
static void bad_id(struct mtp_case *c)
{
	snprintf(c->id, sizeof(c->id), "has space");
}

Test(fixture, rule_breaks_name_the_rule)
{
	expect_refused(drop_weight, "input 'weight': missing");
	expect_refused(wrong_shape,
		       "input 'weight': shape [3] breaks the rule [H]");
	expect_refused(bad_rounding, "'lazy' is not a valid value");
	expect_refused(no_eps, "attribute 'eps': missing");
	expect_refused(extra_input, "input 'bias': not an input");
	expect_refused(expected_shape, "expected 'y': shape [2,2]");
	expect_refused(expected_name, "expected 'z': not an output");
	expect_refused(bad_id, "case id must match");
}

Test(fixture, mixed_activation_dtypes_refused)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	int64_t s[1] = {4};

	tu_tmpname(path, sizeof(path), "mixed");
	tu_rmsnorm_case(&c, "rms.m", 2, 4, 2.0, 1.0);
	mtp_tensor_fini(&c.inputs.items[1].t);
	c.inputs.n = 1;
	tu_add(&c.inputs, "weight", MTP_F32, 1, s, NULL);
	write_one(path, &c);
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, "dtype float32 not allowed") != NULL, "%s", err);
	mtp_case_fini(&c);
	remove(path);
}

/* Rewrites one string attribute of an object in an existing file. */
static void set_str_attr(const char *path, const char *obj, const char *name,
			 const char *val)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);

	H5Tset_size(t, strlen(val) + 1);
	H5Adelete(o, name);
	hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, t, val);
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
	H5Oclose(o);
	H5Fclose(f);
}

Test(fixture, bad_dtype_attribute_and_format)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "dtype");
	tu_rmsnorm_case(&c, "rms.d", 2, 4, 2.0, 1.0);
	write_one(path, &c);
	set_str_attr(path, "/cases/rms.d/inputs/x", "dtype", "bfloat17");
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, "/cases/rms.d/inputs/x: dtype 'bfloat17'"), "%s",
		  err);
	/* bf16 claimed for a float32-stored dataset: storage must match */
	write_one(path, &c);
	set_str_attr(path, "/cases/rms.d/inputs/x", "dtype", "float32");
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, "stored HDF5 type does not match") != NULL, "%s",
		  err);
	write_one(path, &c);
	set_str_attr(path, "/", "format", "something-else");
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, "format is 'something-else'") != NULL, "%s", err);
	write_one(path, &c);
	set_str_attr(path, "/cases/rms.d", "op", "rmsnorm_v2");
	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID);
	cr_expect(strstr(err, "/cases/rms.d: unknown op 'rmsnorm_v2'") != NULL,
		  "%s", err);
	mtp_case_fini(&c);
	remove(path);
}

Test(fixture, size_limit_checked_before_allocation)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_limits small = {100};
	struct mtp_fixture fx;

	tu_tmpname(path, sizeof(path), "limit");
	tu_rmsnorm_case(&c, "rms.l", 8, 64, 2.0, 1.0);
	write_one(path, &c);
	cr_expect_eq(mtp_fixture_open(path, &small, &fx, err, sizeof(err)),
		     MTP_ERR_LIMIT);
	cr_expect(strstr(err, "inputs/weight: 128 bytes is over the "
			      "per-dataset limit"),
		  "%s", err);
	mtp_case_fini(&c);
	remove(path);
}

/* Writes case c alone, opens the file, and expects its load to be refused
 * with a message containing want; frees c and removes the file. */
static void expect_load_refused(struct mtp_case *c, const char *want)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_fixture fx;

	tu_tmpname(path, sizeof(path), "refused");
	write_one(path, c);
	cr_assert_eq(mtp_fixture_open(path, &lim, &fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(mtp_fixture_load(&fx, 0, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, want), "%s", err);
	mtp_fixture_close(&fx);
	mtp_case_fini(c);
	remove(path);
}

Test(fixture, ids_out_of_range_refused_at_load)
{
	struct mtp_case c = {0};
	int64_t st[1] = {3}, sv[2] = {5, 4}, so[2] = {3, 4};
	double ids[3] = {0, 4, 5}; /* 5 is outside [0, 5) */

	snprintf(c.id, sizeof(c.id), "embed.oob");
	c.op = mtp_op_find("embed");
	c.seed = 1;
	tu_add(&c.inputs, "input_ids", MTP_I64, 1, st, ids);
	tu_add(&c.inputs, "embed_table", MTP_BF16, 2, sv, NULL);
	tu_add(&c.expected, "out", MTP_BF16, 2, so, NULL);
	expect_load_refused(&c, "inputs/input_ids: an id is outside [0, V)");
}

/* DSpark's markov_bias gathers markov_w1[prev_ids] (SPEC.md §13 DS-6): an id
 * past the table must be refused at load, not read out of bounds. */
Test(fixture, markov_prev_ids_out_of_range_refused_at_load)
{
	struct mtp_case c = {0};
	int64_t st[1] = {2}, svr[2] = {3, 4}, stv[2] = {2, 3}, str[2] = {2, 4};
	double ids[2] = {0, 3}; /* 3 is outside [0, 3) */

	snprintf(c.id, sizeof(c.id), "markov.oob");
	c.op = mtp_op_find("markov_bias");
	c.seed = 1;
	tu_add(&c.inputs, "logits_in", MTP_BF16, 2, stv, NULL);
	tu_add(&c.inputs, "prev_ids", MTP_I64, 1, st, ids);
	tu_add(&c.inputs, "markov_w1", MTP_BF16, 2, svr, NULL);
	tu_add(&c.inputs, "markov_w2", MTP_BF16, 2, svr, NULL);
	tu_add(&c.expected, "markov_embed", MTP_BF16, 2, str, NULL);
	tu_add(&c.expected, "logits", MTP_BF16, 2, stv, NULL);
	tu_add(&c.expected, "token", MTP_I64, 1, st, NULL);
	expect_load_refused(
		&c, "inputs/prev_ids: an id is outside [0, V) of markov_w1");
}

Test(fixture, empty_batch_is_valid)
{
	/* SPEC.md §7.3: T == 0 returns empty outputs (judged SKIPPED, nothing
	 * compared: test_runner.c) */
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c = {0};
	struct mtp_fixture fx;
	int64_t s0[1] = {0}, th[2] = {0, 16}, tmh[3] = {0, 4, 16}, h[1] = {16};

	snprintf(c.id, sizeof(c.id), "fmir.T0");
	c.op = mtp_op_find("fused_mtp_input_rmsnorm");
	c.family = MTP_FAMILY_DEEPSEEK_V4;
	c.seed = 3;
	tu_attr_num(&c, "eps", 1e-6);
	tu_add(&c.inputs, "embeds", MTP_BF16, 2, th, NULL);
	tu_add(&c.inputs, "positions", MTP_I64, 1, s0, NULL);
	tu_add(&c.inputs, "prev_hidden", MTP_BF16, 3, tmh, NULL);
	tu_add(&c.inputs, "enorm_weight", MTP_BF16, 1, h, NULL);
	tu_add(&c.inputs, "hnorm_weight", MTP_BF16, 1, h, NULL);
	tu_add(&c.expected, "enorm_out", MTP_BF16, 2, th, NULL);
	tu_add(&c.expected, "hnorm_out", MTP_BF16, 3, tmh, NULL);
	tu_tmpname(path, sizeof(path), "t0");
	write_one(path, &c);
	cr_assert_eq(mtp_fixture_open(path, &lim, &fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(mtp_fixture_load(&fx, 0, err, sizeof(err)), MTP_OK, "%s",
		     err);
	mtp_fixture_close(&fx);
	mtp_case_fini(&c);
	remove(path);
}

/* Writers differ: h5py's np.bytes_ gives fixed-length NULLPAD strings of
 * exactly the text's length, with no terminator stored. */
Test(fixture, fixed_length_unterminated_strings_are_read_whole)
{
	char path[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_fixture fx;

	tu_tmpname(path, sizeof(path), "nullpad");
	tu_rmsnorm_case(&c, "rms.np", 1, 8, 2.0, 1.0);
	write_one(path, &c);
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);

	H5Tset_size(t, strlen("mtpcheck-fixture"));
	H5Tset_strpad(t, H5T_STR_NULLPAD);
	H5Adelete(f, "format");
	hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, t, "mtpcheck-fixture");
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
	H5Fclose(f);
	cr_expect_eq(mtp_fixture_open(path, &lim, &fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	mtp_fixture_close(&fx);
	mtp_case_fini(&c);
	remove(path);
}

/* A fuzzer-found file on which HDF5 1.10 itself segfaults (tools/ci/fuzz.sh):
 * the probe reads it in a child, so the caller gets one line and lives on. */
Test(fixture, a_file_that_crashes_hdf5_is_refused_not_fatal)
{
	char err[MTP_ERR_MAX];
	const char *path = MTP_SOURCE_DIR "/harness/tests/data/hdf5_crash.h5";

	cr_expect_eq(open_err(path, err, sizeof(err)), MTP_ERR_INVALID, "%s",
		     err);
	cr_expect(strstr(err, "hdf5_crash.h5") != NULL, "%s", err);
	cr_expect(!strchr(err, '\n'), "one line");
}
