/*
 * libFuzzer target of the fixture reader (FIXTURES.md): the input is written
 * to a file (HDF5 reads files, and the reader probes the path itself), which
 * is then opened, every case loaded and turned into a call, and closed. Bad
 * input must end in a status and a one-line error; it must not crash, leak
 * memory, or leave an HDF5 object open.
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/fixture.h"

/* Small enough that an absurd shape is refused, not allocated. */
static const struct mtp_limits limits = {1u << 20};

static void write_input(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

/* Every error is one line that names the file. */
static void check_error(const char *path, const char *err)
{
	if (!err[0] || strchr(err, '\n') || strncmp(err, path, strlen(path))) {
		fprintf(stderr, "fuzz_fixture: bad error line: '%s'\n", err);
		abort();
	}
}

static void exercise(const char *path)
{
	struct mtp_fixture fx;
	char err[MTP_ERR_MAX] = "";

	if (mtp_fixture_open(path, &limits, &fx, err, sizeof(err))) {
		check_error(path, err);
		return;
	}
	for (int i = 0; i < fx.n_cases; i++) {
		struct mtp_case_call call;

		err[0] = 0;
		if (mtp_fixture_load(&fx, i, err, sizeof(err))) {
			check_error(path, err);
			continue;
		}
		mtp_case_call_init(&fx.cases[i], &call, err, sizeof(err));
		mtp_case_call_fini(&call);
		mtp_fixture_unload(&fx, i);
	}
	mtp_fixture_close(&fx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long n;
	char path[128];

	/* a fresh name each time: HDF5 shares an open file by name */
	snprintf(path, sizeof(path), "%s/mtp-fuzz-%ld-%lu.h5",
		 getenv("MTP_FUZZ_TMP") ? getenv("MTP_FUZZ_TMP") : "/tmp",
		 (long)getpid(), n++);
	write_input(path, data, size);
	exercise(path);
	remove(path);
	if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) {
		fprintf(stderr, "fuzz_fixture: %ld HDF5 objects left open\n",
			(long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL));
		abort();
	}
	return 0;
}
