/*
 * The device-neutral platform helpers that the opencl and level_zero
 * backends share (dev_common.c), on the inputs that only Level Zero gives
 * them (a timestamp counter narrower than 64 bits that wraps) as well as
 * the ones both do: argument flattening, the device pick and its
 * environment variable, the SPIR-V identity.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"

Test(dev_common, flatten_buffers_become_pointer_and_offset)
{
	int mem;
	struct gpu_buf b = {&mem, 24}, none = {NULL, 0};
	const struct ocl_arg a[] = {OA_BUF(b),	   OA_I32(-3),
				    OA_BUF(none),  OA_F32(0.5f),
				    OA_LOCAL(512), OA_I64(1ll << 40)};
	struct ocl_flat_arg f[OCL_MAX_FLAT];
	int n = mtp_ocl_flatten(a, 6, f, OCL_MAX_FLAT);

	cr_assert_eq(n, 8);
	cr_assert_eq(f[0].size, sizeof(void *));
	cr_assert_eq(*(void *const *)f[0].value, &mem);
	cr_assert_eq(*(const int64_t *)f[1].value, 24);
	cr_assert_eq(*(const int32_t *)f[2].value, -3);
	cr_assert_null(f[3].value, "an absent buffer is a NULL pointer");
	cr_assert_eq(f[3].size, sizeof(void *));
	cr_assert_eq(*(const int64_t *)f[4].value, 0);
	cr_assert_eq(*(const float *)f[5].value, 0.5f);
	cr_assert_null(f[6].value, "local memory has no value");
	cr_assert_eq(f[6].size, 512);
	cr_assert_eq(*(const int64_t *)f[7].value, 1ll << 40);
	cr_assert_eq(mtp_ocl_flatten(a, 6, f, 7), -1, "too many for max");
}

Test(dev_common, span_wraps_a_narrow_counter)
{
	/* a 32-bit counter that wrapped: 0xFFFFFFF0 -> 0x10 is 0x20 ticks */
	double s = mtp_ocl_span_seconds(0xFFFFFFF0u, 0x10u, 32, 52.0833);

	cr_assert_float_eq(s, 0x20 * 52.0833e-9, 1e-15);
	cr_assert_float_eq(mtp_ocl_span_seconds(1000, 3000, 64, 1.0), 2e-6,
			   1e-15);
	cr_assert_eq(mtp_ocl_span_seconds(3000, 1000, 64, 1.0), 0.0,
		     "a 64-bit counter does not wrap: a bad pair is 0");
}

static struct mtp_backend be;

Test(dev_common, pick_gpus_first_then_by_index)
{
	const bool gpu[] = {false, true, false, true};
	int pick = -1;

	unsetenv("MTP_TEST_DEVICE");
	cr_assert_eq(mtp_ocl_pick(&be, gpu, 4, "MTP_TEST_DEVICE", "X", &pick),
		     MTP_OK);
	cr_assert_eq(pick, 1);
	setenv("MTP_TEST_DEVICE", "2", 1);
	mtp_ocl_pick(&be, gpu, 4, "MTP_TEST_DEVICE", "X", &pick);
	cr_assert_eq(pick, 0, "after the two GPUs, the first other device");
	setenv("MTP_TEST_DEVICE", "4", 1);
	cr_assert_eq(mtp_ocl_pick(&be, gpu, 4, "MTP_TEST_DEVICE", "X", &pick),
		     MTP_ERR_UNAVAILABLE);
	cr_assert(strstr(be.error, "MTP_TEST_DEVICE=4") != NULL, "%s",
		  be.error);
	setenv("MTP_TEST_DEVICE", "1x", 1);
	cr_assert_eq(mtp_ocl_pick(&be, gpu, 4, "MTP_TEST_DEVICE", "X", &pick),
		     MTP_ERR_UNAVAILABLE, "not a number is refused, not 1");
	unsetenv("MTP_TEST_DEVICE");
	cr_assert_eq(mtp_ocl_pick(&be, gpu, 0, "MTP_TEST_DEVICE", "X", &pick),
		     MTP_ERR_UNAVAILABLE);
	cr_assert_str_eq(be.error, "no X device");
}

Test(dev_common, spirv_magic_and_identity)
{
	unsigned char m[20] = {0x03, 0x02, 0x23, 0x07};
	char id[128];

	cr_assert(mtp_ocl_spirv_magic(m, sizeof(m)));
	cr_assert(!mtp_ocl_spirv_magic(m, 19), "not whole words");
	m[0] = 0x07;
	cr_assert(!mtp_ocl_spirv_magic(m, sizeof(m)));
	/* FNV-1a 64 of "a" is af63dc4c8601ec8c */
	mtp_ocl_spirv_describe((const unsigned char *)"a", 1, "x.spv", id,
			       sizeof(id));
	cr_assert_str_eq(id,
			 "SPIR-V x.spv (1 bytes, fnv1a64 af63dc4c8601ec8c)");
}

Test(dev_common, build_log_goes_on_one_line)
{
	char log[] = "line 1\nline 2\r\n";

	snprintf(be.error, sizeof(be.error), "clBuildProgram: X");
	mtp_ocl_append_log(&be, log);
	cr_assert_str_eq(be.error, "clBuildProgram: X: line 1 line 2  ");
}
