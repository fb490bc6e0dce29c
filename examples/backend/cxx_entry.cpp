// The backend interface from C++: the installed headers declare their
// functions extern "C", so a module written in C++ (SYCL, a C++ kernel
// library) links against libmtpcheck_backend.a and exports the C entry
// point. It declines every op (all UNIMPLEMENTED); tools/ci/install.sh links
// it with -Wl,--no-undefined, which fails if a header lost its C linkage.
#include "mtp/backend.h"

static enum mtp_status cxx_open(struct mtp_backend *) { return MTP_OK; }

static bool cxx_supports(struct mtp_backend *, const struct mtp_call *c)
{
	return mtp_call_tensor(c, false, nullptr, "x") != nullptr && false;
}

static enum mtp_status cxx_launch(struct mtp_backend *be,
				  const struct mtp_call *c)
{
	return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED, "cxx: %s",
				c->op->name);
}

static const mtp_backend_iface cxx = [] {
	mtp_backend_iface i{};
	i.api_version = MTP_BACKEND_API_VERSION;
	i.name = "cxx";
	i.description = "C++ linkage probe: declines every op";
	i.open = cxx_open;
	i.alloc = mtp_host_alloc;
	i.free = mtp_host_free;
	i.upload = i.download = mtp_host_copy;
	i.supports = cxx_supports;
	i.launch = cxx_launch;
	return i;
}();

extern "C" const mtp_backend_iface *mtp_backend_entry(void)
{
	return &cxx;
}
