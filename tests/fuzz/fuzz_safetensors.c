/*
 * libFuzzer target of the safetensors header parser (mtp/safetensors.h):
 * the input is the JSON header of a file whose data section is 4 KiB. Any
 * input must end in a status; an accepted header must satisfy every rule
 * the parser promises (known dtype, sizes, ranges inside the data, no
 * overlap), and a refused one must leave a one-line error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/safetensors.h"

#define DATA 4096u

static void check_accepted(const struct mtp_safetensors *st)
{
	for (int i = 0; i < st->n; i++) {
		const struct mtp_st_tensor *t = &st->tensors[i];
		uint64_t bytes = t->elem_size;

		for (int k = 0; k < t->ndim; k++)
			bytes *= (uint64_t)t->shape[k];
		if (!t->elem_size || t->begin > t->end || t->end > DATA ||
		    t->end - t->begin != bytes || !t->name[0] ||
		    strlen(t->name) >= MTP_ST_NAME_MAX) {
			fprintf(stderr, "fuzz_safetensors: accepted a bad "
					"tensor\n");
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mtp_safetensors st;
	char err[512] = "";

	memset(&st, 0, sizeof(st));
	if (mtp_safetensors_parse((const char *)data, size, DATA, &st, err,
				  sizeof(err)) == 0)
		check_accepted(&st);
	else if (!err[0] || strchr(err, '\n'))
		abort();
	mtp_safetensors_close(&st);
	return 0;
}
