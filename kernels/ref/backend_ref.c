/*
 * The `ref` backend: the scalar reference behind the backend interface, so
 * that the same runner path that judges every optimized backend also checks
 * the reference against the golden fixtures. Its "device" is host memory.
 */
#include "mtp/backend.h"

static enum mtp_status ref_open(struct mtp_backend *be)
{
	(void)be;
	return MTP_OK;
}

static void ref_close(struct mtp_backend *be)
{
	(void)be;
}

static bool ref_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	(void)c;
	return true; /* the reference implements every op of the table */
}

static enum mtp_status ref_launch(struct mtp_backend *be,
				  const struct mtp_call *c)
{
	enum mtp_status st = mtp_reference_run(c);

	if (st)
		return mtp_backend_fail(be, st, "reference: %s",
					mtp_status_name(st));
	return MTP_OK;
}

const struct mtp_backend_iface mtp_ref_backend = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "ref",
	.description = "scalar C reference (double accumulation), host memory",
	.open = ref_open,
	.close = ref_close,
	.alloc = mtp_host_alloc,
	.free = mtp_host_free,
	.upload = mtp_host_copy,
	.download = mtp_host_copy,
	.supports = ref_supports,
	.launch = ref_launch,
	.copy = mtp_host_copy,
};
