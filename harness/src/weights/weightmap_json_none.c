/* Stands in for weightmap_json.c in a build without libcjson: says so. */
#include "mtp/weightmap.h"

#include <stdio.h>

enum mtp_status mtp_wm_read_index_json(const char *path,
				       struct mtp_wm_names *out, char *err,
				       size_t errn)
{
	(void)out;
	snprintf(err, errn,
		 "%s: this mtpcheck was built without libcjson, so it "
		 "cannot read a safetensors index (give a text list of the "
		 "keys, "
		 "or install libcjson-dev and rebuild)",
		 path);
	return MTP_ERR_UNSUPPORTED;
}
