/* Internal to the HTML report (html_parts.c). */
#ifndef MTP_HTML_PARTS_H
#define MTP_HTML_PARTS_H

#include <stdio.h>

#include "mtp/runner.h"

/* The run's metadata as a <details id="meta"> block. */
void mtp_html_meta(FILE *f, const struct mtp_run *run);
/* Failures grouped by verdict/diagnosis x backend x op (id="failures"). */
void mtp_html_failures(FILE *f, const struct mtp_run *run,
		       const char *(*color)(enum mtp_verdict));
/* Merged nights (html_trend.c): changes per case and a headroom sparkline
 * per op; nothing when no backend@host has two runs. */
struct mtp_result_index;
void mtp_html_trend(FILE *f, const struct mtp_run *run,
		    const struct mtp_result_index *ix, const char **cols,
		    int nc, const char *(*color)(enum mtp_verdict));
/* Extra CSS (narrow windows, metadata, groups) and the sorting script. */
const char *mtp_html_css(void);
const char *mtp_html_script(void);

#endif
