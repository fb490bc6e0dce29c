/*
 * The one place that lists backends: the built-in ones linked into mtpcheck,
 * the GPU ones built as modules and loaded at run time (so that one binary
 * runs on every vendor's machine and a missing runtime is a clean SKIPPED),
 * and external ones given as a shared library. Mutants wrap another backend.
 */
#include "mtp/backend.h"
#include "mtp/config.h"
#include "mtp/mutant.h"
#include "util/util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct mtp_backend_iface mtp_ref_backend;
#if MTP_HAVE_CPU
extern const struct mtp_backend_iface mtp_cpu_backend;
#endif

/* A row's reads_v2: it reads float8 inputs [SPEC.md §12.2] and the
 * captured-block form of mtp_step and draft_chain [§12.3] (mtp/quant.h);
 * every other backend is asked nothing about such calls. Its conv: the
 * engine conventions other than v1 it computes [§12.1]. */
static const struct builtin_def {
	const struct mtp_backend_iface *iface;
	bool reads_v2;
	enum mtp_conv_support conv;
} builtins[] = {
	{&mtp_ref_backend, true, MTP_CONV_SUPPORT_ALL},
#if MTP_HAVE_CPU
	/* its captured-block step implements every one that form exercises */
	{&mtp_cpu_backend, true, MTP_CONV_SUPPORT_CAPTURED},
#endif
};

/* GPU backends: a module each, present in this build or not. */
struct module_def {
	const char *name;
	const char *file;
	bool built;
	const char *absent;
	bool reads_v2; /* python: its adapter is asked; the GPU modules: the
			* composition layer's supports() (kernels/gpu/ops.c) */
	enum mtp_conv_support conv;
};

static const struct module_def modules[] = {
	{"cpu", NULL, MTP_HAVE_CPU,
	 "the optimized CPU backend is not written yet", true,
	 MTP_CONV_SUPPORT_CAPTURED},
	{"cuda", "mtp_backend_cuda.so", MTP_HAVE_CUDA,
	 "this build has no CUDA backend (configured without nvcc or with "
	 "MTP_WITH_CUDA=OFF)",
	 true, MTP_CONV_SUPPORT_CAPTURED},
	{"hip", "mtp_backend_hip.so", MTP_HAVE_HIP,
	 "this build has no HIP backend (configured without ROCm's HIP, "
	 "libamdhip64-dev and hipcc, or with MTP_WITH_HIP=OFF)",
	 true, MTP_CONV_SUPPORT_CAPTURED},
	{"level_zero", "mtp_backend_level_zero.so", MTP_HAVE_LEVEL_ZERO,
	 "this build has no Level Zero backend (configured without the Level "
	 "Zero loader, libze-dev, or with MTP_WITH_LEVEL_ZERO=OFF)",
	 true, MTP_CONV_SUPPORT_CAPTURED},
	{"opencl", "mtp_backend_opencl.so", MTP_HAVE_OPENCL,
	 "this build has no OpenCL backend (configured without the OpenCL "
	 "headers and ICD loader, or with MTP_WITH_OPENCL=OFF)",
	 true, MTP_CONV_SUPPORT_CAPTURED},
	{"python", "mtp_backend_python.so", MTP_HAVE_PYTHON,
	 "this build has no python backend (configured without Python 3 "
	 "development files, python3-dev, or with MTP_WITH_PYTHON=OFF)",
	 /* the conventions reach the adapter as attributes, and its
	  * supports() declines those it does not implement */
	 true, MTP_CONV_SUPPORT_ALL},
};

int mtp_backend_builtin_count(void)
{
	return (int)(sizeof(builtins) / sizeof(builtins[0]));
}

const struct mtp_backend_iface *mtp_backend_builtin(int i)
{
	return i >= 0 && i < mtp_backend_builtin_count() ? builtins[i].iface
							 : NULL;
}

int mtp_backend_defaults(bool all, const char **names, int max)
{
	int n = 0;

	for (int i = 0; i < mtp_backend_builtin_count() && n < max; i++)
		if (all || i == 0)
			names[n++] = builtins[i].iface->name;
	return n;
}

bool mtp_backend_is_reference(const struct mtp_backend *be)
{
	return be && be->iface == builtins[0].iface;
}

/* Modules whose open() reads NAME:VARIANT and NAME@PLATFORM itself. */
static bool takes_variants(const char *module)
{
	return strcmp(module, "opencl") == 0;
}

static const struct module_def *module_find(const char *name)
{
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		size_t n = strlen(modules[i].name);

		if (strncmp(modules[i].name, name, n) == 0 &&
		    (name[n] == 0 || (takes_variants(modules[i].name) &&
				      (name[n] == ':' || name[n] == '@'))))
			return &modules[i];
	}
	return NULL;
}

const char *mtp_backend_absent_reason(const char *name)
{
	const struct module_def *m = module_find(name);

	return m && !m->built ? m->absent : NULL;
}

static enum mtp_status load_lib(const char *path, void **handle,
				const struct mtp_backend_iface **iface,
				char *why, size_t whyn)
{
	const struct mtp_backend_iface *(*entry)(void);

	/* NODELETE: a vendor runtime keeps state behind its globals until exit;
	 * unmapping it at dlclose would orphan that state (LeakSanitizer saw
	 * the HIP runtime's as leaks from an unknown module) */
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!*handle) {
		snprintf(why, whyn, "cannot load %s: %s", path, dlerror());
		return MTP_ERR_UNAVAILABLE;
	}
	*(void **)&entry = dlsym(*handle, "mtp_backend_entry");
	*iface = entry ? entry() : NULL;
	if (!*iface) {
		snprintf(why, whyn, "%s: no mtp_backend_entry()", path);
		goto bad;
	}
	if ((*iface)->api_version < 2 ||
	    (*iface)->api_version > MTP_BACKEND_API_VERSION) {
		snprintf(why, whyn,
			 "%s: api_version %d, this mtpcheck needs 2 to %d",
			 path, (*iface)->api_version, MTP_BACKEND_API_VERSION);
		goto bad;
	}
	if (!(*iface)->open || !(*iface)->alloc || !(*iface)->free ||
	    !(*iface)->upload || !(*iface)->download || !(*iface)->supports ||
	    !(*iface)->launch) {
		snprintf(why, whyn, "%s: a required method is missing", path);
		goto bad;
	}
	return MTP_OK;
bad:
	dlclose(*handle);
	*handle = NULL;
	return MTP_ERR_INVALID;
}

static bool builtin_named(const char *name)
{
	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		if (strcmp(builtins[i].iface->name, name) == 0)
			return true;
	return false;
}

const char *mtp_backend_name(int i)
{
	int n = mtp_backend_builtin_count();

	if (i >= 0 && i < n)
		return builtins[i].iface->name;
	for (size_t k = 0; i >= n && k < sizeof(modules) / sizeof(modules[0]);
	     k++)
		if (!builtin_named(modules[k].name) && i-- == n)
			return modules[k].name;
	return NULL;
}

bool mtp_backend_known(const char *name)
{
	/* python:ADAPTER[:MODE]: the python module reads the rest itself */
	return builtin_named(name) ||
	       module_find(strncmp(name, "python:", 7) ? name : "python");
}

/* A mutant asks its base (mutant.c); a plugin reads neither. */
static bool reads_v2(const char *name)
{
	const struct module_def *m = module_find(name);

	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		if (strcmp(builtins[i].iface->name, name) == 0)
			return builtins[i].reads_v2;
	return strcmp(name, "mutant") == 0 || (m && m->reads_v2);
}

/* A mutant's conventions are its base's (mtp_conv_backend_ok asks it); a
 * plugin's the v1 values. */
static enum mtp_conv_support conv_support(const char *name)
{
	const struct module_def *m = module_find(name);

	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		if (strcmp(builtins[i].iface->name, name) == 0)
			return builtins[i].conv;
	return m ? m->conv : MTP_CONV_SUPPORT_V1;
}

bool mtp_backend_reads_fp8(const char *name)
{
	return reads_v2(name);
}

bool mtp_backend_reads_captured(const char *name)
{
	return reads_v2(name);
}

/* A built-in or module name (which a plugin may not take), or not. */
static bool name_reserved(const char *name)
{
	return mtp_backend_known(name) || strcmp(name, "mutant") == 0 ||
	       strncmp(name, "mutant:", 7) == 0;
}

/* The plugin of --backend-lib, bound to the one name it declares. */
static enum mtp_status load_plugin(const char *name, const char *lib,
				   void **handle,
				   const struct mtp_backend_iface **iface,
				   char *why, size_t whyn)
{
	enum mtp_status st = load_lib(lib, handle, iface, why, whyn);
	const char *decl;

	if (st)
		return st == MTP_ERR_INVALID ? st : MTP_ERR_INVALID;
	decl = (*iface)->name ? (*iface)->name : "";
	if (!memchr(decl, 0, 64) || !*decl) {
		snprintf(why, whyn, "%s declares no backend name", lib);
	} else if (name_reserved(decl)) {
		snprintf(why, whyn,
			 "%s declares the name '%s', which is a built-in "
			 "backend's",
			 lib, decl);
	} else if (strcmp(decl, name) != 0) {
		snprintf(why, whyn,
			 "unknown backend '%s' (%s declares '%s'; mtpcheck "
			 "list backends)",
			 name, lib, decl);
	} else {
		return MTP_OK;
	}
	dlclose(*handle);
	*handle = NULL;
	return MTP_ERR_INVALID;
}

/* Binds a name: built-ins and modules by their own name, whatever --backend-lib
 * says; any other name only to the plugin that declares it. */
static enum mtp_status find_iface(const char *name, const char *lib,
				  void **handle,
				  const struct mtp_backend_iface **iface,
				  char *why, size_t whyn)
{
	char path[1024];
	const struct module_def *m;

	*handle = NULL;
	for (int i = 0; i < mtp_backend_builtin_count(); i++) {
		if (strcmp(builtins[i].iface->name, name) == 0) {
			*iface = builtins[i].iface;
			return MTP_OK;
		}
	}
	/* python:ADAPTER[:MODE]: the python module reads the rest itself */
	m = module_find(strncmp(name, "python:", 7) ? name : "python");
	if (!m && lib)
		return load_plugin(name, lib, handle, iface, why, whyn);
	if (!m) {
		snprintf(why, whyn,
			 "unknown backend '%s' (mtpcheck list backends)", name);
		return MTP_ERR_INVALID;
	}
	if (!m->built || !m->file) {
		snprintf(why, whyn, "%s", m->absent);
		return MTP_ERR_UNAVAILABLE;
	}
	mtp_module_path(m->file, path, sizeof(path));
	return load_lib(path, handle, iface, why, whyn);
}

enum mtp_status mtp_backend_open(const char *name, const char *lib,
				 struct mtp_backend **out, char *why,
				 size_t whyn)
{
	const struct mtp_backend_iface *iface = NULL;
	struct mtp_backend *be;
	void *handle;
	enum mtp_status st;

	*out = NULL;
	if (strncmp(name, "mutant:", 7) == 0) {
		char spec[256]; /* the base defaults to the reference */

		snprintf(spec, sizeof(spec),
			 strchr(name + 7, ':') ? "%s" : "%s:%s", name + 7,
			 builtins[0].iface->name);
		st = mtp_mutant_open(spec, mtp_backend_open, out, why, whyn);
		if (*out)
			(*out)->reads_v2 = reads_v2((*out)->iface->name);
		return st;
	}
	st = find_iface(name, lib, &handle, &iface, why, whyn);
	if (st)
		return st;
	be = calloc(1, sizeof(*be));
	if (!be) {
		if (handle)
			dlclose(handle);
		snprintf(why, whyn, "out of memory");
		return MTP_ERR_NOMEM;
	}
	be->iface = iface;
	be->dl_handle = handle;
	be->reads_v2 = reads_v2(iface->name);
	be->conv_support = conv_support(iface->name);
	snprintf(be->name, sizeof(be->name), "%s", name);
	st = iface->open(be);
	if (st) {
		be->error[sizeof(be->error) - 1] = 0;
		snprintf(why, whyn, "%s",
			 be->error[0] ? be->error : mtp_status_name(st));
		mtp_backend_close(be);
		/* INVALID: a malformed name (a variant the module lacks) */
		return st == MTP_ERR_INVALID ? st : MTP_ERR_UNAVAILABLE;
	}
	*out = be;
	return MTP_OK;
}

void mtp_backend_close(struct mtp_backend *be)
{
	if (!be)
		return;
	if (be->iface && be->iface->close)
		be->iface->close(be);
	if (be->base)
		mtp_backend_close(be->base);
	if (be->dl_handle)
		dlclose(be->dl_handle);
	free(be);
}
