/*
 * A deliberately broken external backend, loaded with --backend-lib by the
 * runner tests: on rmsnorm it crashes when R = 1, hangs when R = 2 and fails
 * with a "vendor" error when R = 3. It shows that the loader works and that
 * isolation turns each fault into a verdict. With MTP_FAULTY_OPEN_HANG=FILE
 * in the environment its open creates FILE (the tests' sign that a worker
 * is inside open) and hangs, as a GPU runtime waiting on a wedged device.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "mtp/backend.h"

static enum mtp_status f_open(struct mtp_backend *be)
{
	const char *mark = getenv("MTP_FAULTY_OPEN_HANG");

	(void)be;
	if (mark) {
		int fd = open(mark, O_WRONLY | O_CREAT, 0600);

		if (fd >= 0)
			close(fd);
		sleep(1000);
	}
	return MTP_OK;
}

static bool f_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return c->op->id == MTP_OP_RMSNORM;
}

static enum mtp_status f_launch(struct mtp_backend *be,
				const struct mtp_call *c)
{
	if (c->dims.r == 1)
		raise(SIGSEGV);
	if (c->dims.r == 2)
		sleep(1000);
	return mtp_backend_fail(be, MTP_ERR_DEVICE,
				"faultyError: the device fell over (%s)",
				c->op->name);
}

static const struct mtp_backend_iface faulty = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "faulty",
	.description = "a broken backend for the tests",
	.open = f_open,
	.alloc = mtp_host_alloc,
	.free = mtp_host_free,
	.upload = mtp_host_copy,
	.download = mtp_host_copy,
	.supports = f_supports,
	.launch = f_launch,
};

const struct mtp_backend_iface *mtp_backend_entry(void)
{
	return &faulty;
}
