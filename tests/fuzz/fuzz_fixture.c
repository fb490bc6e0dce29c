/*
 * libFuzzer target of the fixture reader (FORMAT.md): the input is written
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

	if (mtp_fixture_open_direct(path, &limits, &fx, err, sizeof(err))) {
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

/* HDF5 ids of every kind the reader opens; a count that grows is a leak. */
static const H5I_type_t kinds[] = {H5I_FILE,	   H5I_GROUP,	H5I_DATATYPE,
				   H5I_DATASPACE,  H5I_DATASET, H5I_ATTR,
				   H5I_GENPROP_LST};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static void count_ids(hsize_t n[N_KINDS])
{
	for (size_t k = 0; k < N_KINDS; k++)
		if (H5Inmembers(kinds[k], &n[k]) < 0)
			n[k] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long n;
	static hsize_t base[N_KINDS];
	hsize_t now[N_KINDS];
	char path[128];

	if (n == 0) {
		H5open();
		count_ids(base);
	}
	/* a fresh name each time: HDF5 shares an open file by name */
	snprintf(path, sizeof(path), "%s/mtp-fuzz-%ld-%lu.h5",
		 getenv("MTP_FUZZ_TMP") ? getenv("MTP_FUZZ_TMP") : "/tmp",
		 (long)getpid(), n++);
	write_input(path, data, size);
	exercise(path);
	remove(path);
	count_ids(now);
	for (size_t k = 0; k < N_KINDS; k++) {
		if (now[k] > base[k]) {
			fprintf(stderr,
				"fuzz_fixture: HDF5 ids of kind %d left open: "
				"%llu\n",
				(int)kinds[k],
				(unsigned long long)(now[k] - base[k]));
			abort();
		}
	}
	return 0;
}
