/*
 * Which loader maps a checkpoint name (docs/WEIGHTS.md): the DSpark
 * loader's rules (weightmap_dspark.c) when the audit judges it, else the
 * family's MTP loader (weightmap.c: V4's mtp.{i} names or V3's layer
 * names). A file of its own so that the two rule files depend on neither
 * this choice nor each other's dispatch.
 */
#include "mtp/family.h"
#include "mtp/weightmap.h"

#include <string.h>

#include "weights.h"

void mtp_wm_map_name(const struct mtp_wm_config *c,
		     const struct mtp_wm_names *params, const char *name,
		     struct mtp_wm_target *out)
{
	const char *why = "name too long";

	mtp_wm_target_skip(out, NULL);
	if (strlen(name) < MTP_WM_NAME_MAX)
		why = c->dspark ? mtp_wm_dspark_map(c, params, name, out)
		      : mtp_family_def(c->family)->ckpt == MTP_CKPT_MTP
			      ? mtp_wm_v4_map(c, name, out)
			      : mtp_wm_v3_map(c, params, name, out);
	if (why)
		mtp_wm_target_skip(out, why);
}
