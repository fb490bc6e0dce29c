/*
 * libFuzzer target of the case-file parser (docs/CASES.md): the input is the
 * text of a case file in cases/ (so that relative fixtures= and include=
 * paths reach the real tree), parsed, then selected by tag. Bad input must
 * end in a status and one `FILE:LINE:COL: ...` line; never a crash or a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/casefile.h"
#include "mtp/config.h"

#define NAME MTP_SOURCE_DIR "/cases/fuzz.case"

static void check_error(const char *err)
{
	if (!err[0] || strchr(err, '\n') ||
	    (strncmp(err, MTP_SOURCE_DIR, strlen(MTP_SOURCE_DIR)) &&
	     !strstr(err, "out of memory"))) {
		fprintf(stderr, "fuzz_casefile: bad error line: '%s'\n", err);
		abort();
	}
}

static void select_tags(const struct mtp_casefile *cf, const char *tags)
{
	struct mtp_case_selection sel;
	char err[MTP_ERR_MAX];

	memset(&sel, 0, sizeof(sel));
	if (mtp_casefile_select(cf, tags, &sel, err, sizeof(err)) != MTP_OK)
		return;
	for (int i = 0; i < sel.n_fixtures; i++)
		mtp_casefile_fixture_match(&sel.fixtures[i], "norms.h5",
					   "rmsnorm.bf16.T1.H64");
	mtp_case_selection_fini(&sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mtp_casefile cf;
	char err[MTP_ERR_MAX] = "";
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	memset(&cf, 0, sizeof(cf));
	if (mtp_casefile_parse_text(NAME, text, &cf, err, sizeof(err)) ==
	    MTP_OK) {
		select_tags(&cf, NULL);
		select_tags(&cf, "quick,nightly");
		for (int i = 0; i < cf.n; i++)
			mtp_casefile_backend_ok(&cf.entries[i].backends, "ref");
	} else {
		check_error(err);
	}
	mtp_casefile_fini(&cf);
	free(text);
	return 0;
}
