/*
 * Weights by subset (FORMAT.md v2 rules 1-6) on the independent
 * generator's dumps (tools/gen/captured.py, the ".sub_" cases of
 * fixtures/dumps/captured_bugs.h5):
 *  - every subset dump is judged as its id says and the result is partial,
 *    saying what was judged;
 *  - the partial judgement can fail: a captured block_in changed at a
 *    listed column fails there, at an unlisted column is not judged; a
 *    logit changed at a logits_rows column fails; a token outside
 *    logits_rows fails its necessary condition; a recycled state changed in
 *    a subset chain fails (it is judged whole);
 *  - a row subset of a weight that cannot be one is refused with one line.
 */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/runner.h"
#include "test_util.h"

#define DUMPS MTP_SOURCE_DIR "/fixtures/dumps/captured_bugs.h5"

static struct mtp_run verify(const char *path, const char *filter)
{
	struct mtp_run_opts o;
	struct mtp_run run = {0};

	mtp_run_opts_init(&o);
	o.verify = true;
	o.inputs[o.n_inputs++] = path;
	if (filter)
		o.filters[o.n_filters++] = filter;
	o.backends[o.n_backends++] = "ref";
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	return run;
}

/* A copy of the dumps, for changing one dataset of it. */
static void copy_dumps(char *path, size_t n)
{
	char cmd[600];

	tu_tmpname(path, n, "subset");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", DUMPS, path);
	cr_assert_eq(system(cmd), 0);
}

/* Adds `delta` to element `at` of a float32 or 16-bit (bf16) dataset, or
 * sets an int64 one to `delta`. */
static void poke(const char *path, const char *dset, size_t at, double delta)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
	hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
	size_t sz = H5Tget_size(t),
	       n = (size_t)H5Sget_simple_extent_npoints(sp);
	bool is_int = H5Tget_class(t) == H5T_INTEGER && sz == 8;
	void *buf = malloc(n * sz);

	cr_assert(f >= 0 && d >= 0 && buf && at < n, "%s", dset);
	H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	if (is_int) {
		((int64_t *)buf)[at] = (int64_t)delta;
	} else if (sz == 4) {
		((float *)buf)[at] += (float)delta;
	} else { /* bf16 bits */
		uint16_t *u = buf;
		uint32_t bits = (uint32_t)u[at] << 16;
		float v;

		memcpy(&v, &bits, 4);
		v += (float)delta;
		memcpy(&bits, &v, 4);
		u[at] = (uint16_t)(bits >> 16);
	}
	H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	free(buf);
	H5Sclose(sp);
	H5Tclose(t);
	H5Dclose(d);
	H5Fclose(f);
}

/* The first column in [0, h) that int64 dataset `rows` lists (or not). */
static int64_t column(const char *path, const char *rows, int64_t h,
		      bool listed)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t d = H5Dopen2(f, rows, H5P_DEFAULT);
	hid_t sp = H5Dget_space(d);
	int64_t n = H5Sget_simple_extent_npoints(sp), found = -1;
	int64_t *buf = malloc((size_t)n * sizeof(*buf) + 8);

	cr_assert(f >= 0 && d >= 0 && buf, "%s", rows);
	H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	for (int64_t col = 0; col < h && found < 0; col++) {
		bool in = false;

		for (int64_t k = 0; k < n; k++)
			in = in || buf[k] == col;
		if (in == listed)
			found = col;
	}
	free(buf);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return found;
}

static const struct mtp_result *only(const struct mtp_run *run)
{
	cr_assert_eq(run->n, 1);
	return &run->results[0];
}

Test(subset, every_subset_dump_is_partial_and_judged_as_its_id_says)
{
	struct mtp_run run = verify(DUMPS, "*.sub_*");

	cr_assert_geq(run.n, 20);
	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];
		const char *bug = strrchr(r->case_id, '.') + 1;

		cr_expect(r->partial, "%s", r->case_id);
		cr_expect(strstr(r->judged, "rows") != NULL, "%s: %s",
			  r->case_id, r->judged);
		if (strstr(r->case_id, ".sub_proj") ||
		    strstr(r->case_id, ".sub_all"))
			cr_expect(strstr(r->judged, "block_in judged at those "
						    "columns"),
				  "%s: %s", r->case_id, r->judged);
		if (strcmp(bug, "ok") == 0) {
			cr_expect_eq(r->verdict, MTP_PASSED, "%s: %s",
				     r->case_id, r->message);
			continue;
		}
		cr_expect_eq(r->verdict, MTP_FAILED, "%s", r->case_id);
		cr_expect_str_eq(mtp_diag_info(r->diag.diag)->name, bug, "%s",
				 r->case_id);
	}
	mtp_run_fini(&run);
}

#define V3 "/cases/step.v3.sub_all.ok/"

Test(subset, block_in_is_judged_at_the_listed_columns_only)
{
	char path[256];
	int64_t in, out;
	struct mtp_run run;

	copy_dumps(path, sizeof(path));
	in = column(path, V3 "inputs/eh_proj_rows", 64, true);
	out = column(path, V3 "inputs/eh_proj_rows", 64, false);
	cr_assert(in >= 0 && out >= 0);
	poke(path, V3 "inputs/block_in", (size_t)(64 + out), 4.0);
	run = verify(path, "step.v3.sub_all.ok");
	cr_expect_eq(only(&run)->verdict, MTP_PASSED, "%s",
		     only(&run)->message);
	mtp_run_fini(&run);
	poke(path, V3 "inputs/block_in", (size_t)(64 + in), 4.0);
	run = verify(path, "step.v3.sub_all.ok");
	cr_expect_eq(only(&run)->verdict, MTP_FAILED);
	cr_assert_geq(only(&run)->first_bad, 0);
	cr_expect_str_eq(only(&run)->cmp[only(&run)->first_bad].name,
			 "block_in");
	mtp_run_fini(&run);
	remove(path);
}

Test(subset, a_logit_at_a_listed_row_and_a_token_outside_them_fail)
{
	char path[256];
	struct mtp_run run;
	int64_t unlisted;

	copy_dumps(path, sizeof(path));
	poke(path, V3 "observed/logits", 2, 3.0);
	run = verify(path, "step.v3.sub_all.ok");
	cr_expect_eq(only(&run)->verdict, MTP_FAILED);
	cr_expect_str_eq(only(&run)->cmp[only(&run)->first_bad].name, "logits");
	mtp_run_fini(&run);
	copy_dumps(path, sizeof(path));
	unlisted = column(path, V3 "observed/logits_rows", 512, false);
	poke(path, V3 "observed/token", 0, (double)unlisted);
	run = verify(path, "step.v3.sub_all.ok");
	cr_expect_eq(only(&run)->verdict, MTP_FAILED);
	cr_expect_str_eq(only(&run)->cmp[only(&run)->first_bad].name, "token");
	mtp_run_fini(&run);
	remove(path);
}

Test(subset, a_subset_chain_judges_the_recycled_state_whole)
{
	char path[256];
	struct mtp_run run;

	copy_dumps(path, sizeof(path));
	poke(path,
	     "/cases/chain.v4.deferred.L2.K3.sub_all.ok/observed/step.2/"
	     "recycled",
	     7, 2.0);
	run = verify(path, "chain.v4.deferred.L2.K3.sub_all.ok");
	cr_expect_eq(only(&run)->verdict, MTP_FAILED);
	cr_expect_str_eq(only(&run)->cmp[only(&run)->first_bad].name,
			 "step.2/recycled");
	mtp_run_fini(&run);
	remove(path);
}
