/*
 * The device-neutral half of the platform code that the opencl and
 * level_zero backends share: kernel arguments flattened into (size, value)
 * pairs, the device pick (GPUs first, $ENV=N), the
 * build log in a verdict, the timestamp span, and the identity of a SPIR-V
 * module. Each backend's own code is then only its vendor calls, and all
 * of this runs under OpenCL (PoCL and Intel's CPU runtime in CI) even
 * where Level Zero has no device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"

int mtp_ocl_flatten(const struct ocl_arg *a, int n, struct ocl_flat_arg *out,
		    int max)
{
	int j = 0;

	for (int i = 0; i < n; i++) {
		if (j + 2 > max)
			return -1;
		struct ocl_flat_arg *f = &out[j++];

		switch (a[i].kind) {
		case OCL_A_BUF:
			/* a NULL value is a NULL pointer in the kernel */
			f->v.p = a[i].v.b.mem;
			f->size = sizeof(f->v.p);
			f->value = f->v.p ? &f->v.p : NULL;
			f = &out[j++];
			f->v.l = (int64_t)a[i].v.b.off;
			f->size = sizeof(f->v.l);
			break;
		case OCL_A_I32:
			f->v.i = a[i].v.i;
			f->size = sizeof(f->v.i);
			break;
		case OCL_A_I64:
			f->v.l = a[i].v.l;
			f->size = sizeof(f->v.l);
			break;
		case OCL_A_LOCAL: /* a size and no value: local memory */
			f->size = a[i].v.local;
			f->value = NULL;
			continue;
		default:
			f->v.f = a[i].v.f;
			f->size = sizeof(f->v.f);
			break;
		}
		f->value = &f->v;
	}
	return j;
}

/* A non-negative decimal index, or -1. */
static int parse_index(const char *s)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1 << 20)
		return -1;
	return (int)v;
}

enum mtp_status mtp_ocl_pick(struct mtp_backend *be, const bool *is_gpu, int n,
			     const char *env, const char *what, int *pick)
{
	const char *s = getenv(env);
	int want = s && *s ? parse_index(s) : 0, k = 0;

	if (want < 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"%s=%s: not a device index", env, s);
	for (int gpu = 1; gpu >= 0; gpu--)
		for (int i = 0; i < n; i++)
			if (is_gpu[i] == (gpu == 1) && k++ == want) {
				*pick = i;
				return MTP_OK;
			}
	if (s && *s)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"%s=%s: %d %s device(s)", env, s, n,
					what);
	return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE, "no %s device", what);
}

void mtp_ocl_append_log(struct mtp_backend *be, char *log)
{
	size_t used = strlen(be->error);

	for (char *p = log; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	snprintf(be->error + used, sizeof(be->error) - used, ": %s", log);
}

double mtp_ocl_span_seconds(uint64_t t0, uint64_t t1, unsigned valid_bits,
			    double ns_per_tick)
{
	uint64_t mask = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;

	if (valid_bits >= 64 && t1 < t0)
		return 0.0; /* no wrap on a 64-bit counter: a bad pair */
	return (double)((t1 - t0) & mask) * ns_per_tick * 1e-9;
}

bool mtp_ocl_spirv_magic(const unsigned char *b, size_t n)
{
	return n >= 20 && n % 4 == 0 && b[0] == 0x03 && b[1] == 0x02 &&
	       b[2] == 0x23 && b[3] == 0x07; /* 0x07230203, little-endian */
}

void mtp_ocl_spirv_describe(const unsigned char *b, size_t n,
			    const char *origin, char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	snprintf(buf, len, "SPIR-V %s (%zu bytes, fnv1a64 %016llx)", origin, n,
		 (unsigned long long)h);
}
