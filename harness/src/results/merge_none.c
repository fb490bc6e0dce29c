/* Stands in for merge.c in a build without libcjson: says so. */
#include <stdio.h>

#include "mtp/runner.h"

enum mtp_status mtp_run_merge(struct mtp_run *run, const char *const *paths,
			      int n, char *err, size_t errn)
{
	(void)run;
	snprintf(err, errn,
		 "%s: this mtpcheck was built without libcjson, so it "
		 "cannot read results files (install libcjson-dev and rebuild)",
		 n ? paths[0] : "report");
	return MTP_ERR_UNSUPPORTED;
}
