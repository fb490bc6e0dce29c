/*
 * The `ref` backend: the scalar reference behind the backend interface, so
 * that the same runner path that judges every optimized backend also checks
 * the reference against the golden fixtures. Its "device" is host memory.
 */
#include "mtp/backend.h"

#include <stdlib.h>
#include <string.h>

static enum mtp_status ref_open(struct mtp_backend *be)
{
	(void)be;
	return MTP_OK;
}

static void ref_close(struct mtp_backend *be)
{
	(void)be;
}

static enum mtp_status ref_alloc(struct mtp_backend *be, size_t bytes,
				 void **ptr)
{
	*ptr = malloc(bytes);
	if (!*ptr)
		return mtp_backend_fail(be, MTP_ERR_NOMEM,
					"cannot allocate %zu bytes", bytes);
	return MTP_OK;
}

static void ref_free(struct mtp_backend *be, void *ptr)
{
	(void)be;
	free(ptr);
}

static enum mtp_status ref_copy(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes)
{
	(void)be;
	memcpy(dst, src, bytes);
	return MTP_OK;
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
	.alloc = ref_alloc,
	.free = ref_free,
	.upload = ref_copy,
	.download = ref_copy,
	.supports = ref_supports,
	.launch = ref_launch,
	.copy = ref_copy,
};
