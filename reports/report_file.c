/*
 * The one way report writers create their file: written under a temporary
 * name beside it and renamed over it once complete, so that a crash or a
 * full disk never leaves a partial report behind.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report_file.h"

enum mtp_status mtp_report_write(const struct mtp_run *run, const char *path,
				 mtp_report_body_fn body, char *err,
				 size_t errn)
{
	char tmp[MTP_PATH_MAX + 32];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		return MTP_ERR_IO;
	}
	body(f, run);
	if (ferror(f) | fclose(f) || rename(tmp, path) != 0) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		remove(tmp);
		return MTP_ERR_IO;
	}
	return MTP_OK;
}
