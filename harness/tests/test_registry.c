/*
 * The backend registry as the one list of backend names
 * (harness/src/backends/registry.c): `list backends`, the preflight's
 * typo check and the plugin name check all ask it, so its names must be
 * each there once, built-ins first, and known with the forms a module reads;
 * and its rows say which backends read float8 inputs and captured steps.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "mtp/backend.h"

Test(registry, every_name_once_builtins_first)
{
	int n = 0;

	for (int i = 0; mtp_backend_name(i); i++, n++) {
		cr_expect(mtp_backend_known(mtp_backend_name(i)), "%s",
			  mtp_backend_name(i));
		for (int k = 0; k < i; k++)
			cr_expect_str_neq(mtp_backend_name(k),
					  mtp_backend_name(i));
	}
	cr_expect_gt(n, mtp_backend_builtin_count(), "modules after them");
	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		cr_expect_str_eq(mtp_backend_name(i),
				 mtp_backend_builtin(i)->name);
	cr_expect_null(mtp_backend_name(-1));
	cr_expect_null(mtp_backend_name(n));
}

Test(registry, known_forms)
{
	cr_expect(mtp_backend_known("ref"));
	cr_expect(mtp_backend_known("cuda")); /* built here or not */
	cr_expect(mtp_backend_known("opencl:spirv"));
	cr_expect(mtp_backend_known("opencl@intel"));
	cr_expect(mtp_backend_known("python:numpy"));
	cr_expect(!mtp_backend_known("cdua"));
	cr_expect(!mtp_backend_known("cuda:x")); /* cuda reads no variant */
	cr_expect(!mtp_backend_known("mutant:PRE_NORM_RECYCLE"));
	cr_expect(!mtp_backend_known(""));
}

/* The rows say which backends read float8 inputs and the captured form; an
 * opened backend carries its row's answer, which the harness asks. */
Test(registry, reads_v2_from_the_rows)
{
	struct mtp_backend *be = NULL;
	char why[256];

	cr_expect(mtp_backend_reads_fp8("ref"));
	cr_expect(mtp_backend_reads_captured("python"));
	cr_expect(mtp_backend_reads_captured("mutant"));
	/* the GPU modules read it; their supports() declines FP8 itself */
	cr_expect(mtp_backend_reads_fp8("opencl"));
	cr_expect(!mtp_backend_reads_fp8("a_plugin"));
	cr_expect(!mtp_backend_reads_captured("a_plugin"));
	cr_assert_eq(mtp_backend_open("ref", NULL, &be, why, sizeof(why)),
		     MTP_OK, "%s", why);
	cr_expect(be->reads_v2);
	mtp_backend_close(be);
	cr_assert_eq(mtp_backend_open("mutant:PRE_NORM_RECYCLE:ref", NULL, &be,
				      why, sizeof(why)),
		     MTP_OK, "%s", why);
	cr_expect(be->reads_v2);
	mtp_backend_close(be);
}
