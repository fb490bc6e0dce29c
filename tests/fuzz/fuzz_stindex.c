/*
 * libFuzzer target of the safetensors index parser (mtp/safetensors.h,
 * mtp_safetensors_index_parse; `audit-weights --checkpoint`): any input
 * ends in a status; an accepted index names each tensor once, with a
 * non-empty name and a plain *.safetensors file; a refused one leaves a
 * one-line error naming the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/safetensors.h"

static void check_accepted(const struct mtp_st_index *ix)
{
	for (int i = 0; i < ix->n; i++) {
		const char *f = ix->v[i].file;
		size_t n = strlen(f);

		if (!ix->v[i].name[0] || n <= 12 || strchr(f, '/') ||
		    f[0] == '.' || strcmp(f + n - 12, ".safetensors")) {
			fprintf(stderr, "fuzz_stindex: accepted a bad entry\n");
			abort();
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(ix->v[j].name, ix->v[i].name))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mtp_st_index ix;
	char err[512] = "";

	if (size > 4096) /* the pairwise check above is quadratic */
		return 0;
	if (mtp_safetensors_index_parse((const char *)data, size, "idx", &ix,
					err, sizeof(err)) == 0)
		check_accepted(&ix);
	else if (strncmp(err, "idx: ", 5) || strchr(err, '\n'))
		abort();
	mtp_safetensors_index_close(&ix);
	return 0;
}
