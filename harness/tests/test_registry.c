/*
 * The backend registry as the one list of backend names
 * (harness/src/backends/registry.c): `list backends`, the preflight's
 * typo check and the plugin name check all ask it, so its names must be
 * each there once, built-ins first, and known with the forms a module reads;
 * and its rows say which backends read float8 inputs and captured steps.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "judge/judge.h"
#include "mtp/backend.h"
#include "mtp/conventions.h"

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
	/* the GPU modules: their supports() decides (kernels/gpu/ops.c) */
	cr_expect(mtp_backend_reads_fp8("opencl"));
	cr_expect(mtp_backend_reads_fp8("cuda"));
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

/* The rows say which conventions other than v1 a backend computes
 * (SPEC.md §12.1); an opened backend carries its row's answer, which the
 * judge asks (mtp_conv_backend_ok), never a backend name. */
Test(registry, conventions_from_the_rows)
{
	struct mtp_backend *be = NULL;
	struct mtp_params p;
	struct mtp_call c = {.op = mtp_op_get(MTP_OP_ADD_RMSNORM),
			     .params = &p};
	char why[256] = "";

	memset(&p, 0, sizeof(p));
	mtp_conv_set(&p.conv, MTP_CONV_ADD_NORM_INPUT, 1);
	cr_assert_eq(mtp_backend_open("ref", NULL, &be, why, sizeof(why)),
		     MTP_OK, "%s", why);
	cr_expect_eq(be->conv_support, MTP_CONV_SUPPORT_ALL);
	cr_expect(mtp_conv_backend_ok(be, &c, why, sizeof(why)));
	be->conv_support = MTP_CONV_SUPPORT_V1; /* as a plugin's row */
	cr_expect(!mtp_conv_backend_ok(be, &c, why, sizeof(why)));
	cr_expect(strstr(why, "does not implement the conventions") != NULL,
		  "%s", why);
	be->conv_support = MTP_CONV_SUPPORT_CAPTURED; /* cpu's */
	cr_expect(!mtp_conv_backend_ok(be, &c, why, sizeof(why)));
	p.v2.captured = true;
	cr_expect(mtp_conv_backend_ok(be, &c, why, sizeof(why)));
	mtp_backend_close(be);
}

/* The defaults of run and of selftest and bench are the built-in rows:
 * the reference first. */
Test(registry, defaults_are_the_builtin_rows)
{
	const char *names[8];
	struct mtp_backend *be = NULL;
	char why[256];
	int n = mtp_backend_defaults(true, names, 8);

	cr_expect_eq(mtp_backend_defaults(false, names, 8), 1);
	cr_expect_str_eq(names[0], "ref");
	cr_expect_eq(n, mtp_backend_builtin_count());
	cr_assert_eq(mtp_backend_open("ref", NULL, &be, why, sizeof(why)),
		     MTP_OK, "%s", why);
	cr_expect(mtp_backend_is_reference(be));
	mtp_backend_close(be);
	cr_assert_eq(mtp_backend_open("mutant:PRE_NORM_RECYCLE:ref", NULL, &be,
				      why, sizeof(why)),
		     MTP_OK, "%s", why);
	cr_expect(!mtp_backend_is_reference(be), "a mutant over it is not");
	mtp_backend_close(be);
}
