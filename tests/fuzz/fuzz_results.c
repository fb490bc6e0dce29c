/*
 * libFuzzer target of `mtpcheck report`'s reader (mtp_run_merge, results
 * and bench files; docs/RESULTS.md "What mtpcheck report reads"): any input
 * file ends in a status; a refused one leaves one line naming the file; an
 * accepted one holds only verdicts that exist and no PASSED without a
 * compared element (but weights-only checks), and its run writes as JSON
 * and its bench rows as the benchmarks page (report --markdown).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/bench.h"
#include "mtp/runner.h"

static void check_accepted(const struct mtp_run *run)
{
	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];
		bool compared = false;

		if ((unsigned)r->verdict >= MTP_VERDICT_COUNT)
			abort();
		for (int k = 0; k < r->n_cmp; k++)
			compared = compared || r->cmp[k].n > 0;
		if (r->verdict == MTP_PASSED && !compared) {
			bool weights = false; /* unless its column says so */

			for (int d = 0; d < run->n_devices; d++)
				if (!strcmp(run->devices[d].name, r->backend))
					weights = run->devices[d]
							  .origin.weights_only;
			if (!weights) {
				fprintf(stderr, "fuzz_results: a PASSED that "
						"compared nothing\n");
				abort();
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long n;
	const char *tmp =
		getenv("MTP_FUZZ_TMP") ? getenv("MTP_FUZZ_TMP") : "/tmp";
	char path[512], out[512], err[MTP_ERR_MAX] = "";
	const char *paths[2];
	struct mtp_run run = {0};
	FILE *f;

	snprintf(path, sizeof(path), "%s/mtp-fuzz-%ld-%lu.json", tmp,
		 (long)getpid(), n);
	snprintf(out, sizeof(out), "%s/mtp-fuzz-%ld-%lu.out.json", tmp,
		 (long)getpid(), n++);
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	paths[0] = paths[1] = path; /* twice: the repeats are dropped */
	if (mtp_run_merge(&run, paths, 2, err, sizeof(err)) == MTP_OK) {
		check_accepted(&run);
		if (mtp_report_json(&run, out, err, sizeof(err)) != MTP_OK ||
		    mtp_bench_history_markdown(run.bench, out, err,
					       sizeof(err)) != MTP_OK)
			abort();
	} else if (strncmp(err, path, strlen(path)) || strchr(err, '\n')) {
		fprintf(stderr,
			"fuzz_results: not one line naming the "
			"file: %s\n",
			err);
		abort();
	}
	mtp_run_fini(&run);
	remove(path);
	remove(out);
	return 0;
}
