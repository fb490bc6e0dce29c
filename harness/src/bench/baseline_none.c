/* Stands in for baseline.c in a build without libcjson: says so. */
#include "mtp/baseline.h"

#include <stdio.h>
#include <string.h>

enum mtp_status mtp_baseline_load(const char *path, struct mtp_baseline *b,
				  char *err, size_t errn)
{
	memset(b, 0, sizeof(*b));
	snprintf(err, errn,
		 "%s: this mtpcheck was built without libcjson, so it "
		 "cannot read a baseline (install libcjson-dev and rebuild)",
		 path);
	return MTP_ERR_UNSUPPORTED;
}

const struct mtp_baseline_row *mtp_baseline_find(const struct mtp_baseline *b,
						 const char *op,
						 const char *shape,
						 const char *backend)
{
	(void)b;
	(void)op;
	(void)shape;
	(void)backend;
	return NULL;
}

void mtp_baseline_free(struct mtp_baseline *b)
{
	memset(b, 0, sizeof(*b));
}
