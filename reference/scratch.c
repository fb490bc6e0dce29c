/*
 * The reference's one scratch allocator. Its functions return void by
 * contract (mtp/ref.h), so a failed allocation of internal scratch is a
 * resource error that ends the process with a message, never a wrong result.
 */
#include "ref_internal.h"

#include <stdio.h>

void *mtp_ref_alloc(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);

	if (!p) {
		fprintf(stderr,
			"mtp reference: out of memory for %zu bytes of "
			"scratch\n",
			bytes);
		abort();
	}
	return p;
}

double *mtp_ref_scratch(size_t n)
{
	if (n > SIZE_MAX / sizeof(double))
		n = SIZE_MAX; /* unsatisfiable: reported by mtp_ref_alloc */
	else
		n *= sizeof(double);
	return mtp_ref_alloc(n);
}
