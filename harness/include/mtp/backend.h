/*
 * The backend interface: one const table of function pointers per backend,
 * built for devices from the first day. Buffers live in the backend's memory
 * and move through explicit copies; launch() may return before the kernel
 * finishes and synchronize() waits; device timers are optional. The CPU
 * backends implement the same calls trivially.
 *
 * A backend declares per call whether it implements it (supports()); the
 * harness reports an unsupported call as UNIMPLEMENTED and never computes it
 * another way. Every vendor call's failure is returned as a status with the
 * vendor's message in be->error; the harness turns it into a verdict on that
 * case and carries on.
 *
 * External backends are shared libraries built against this header that
 * export `const struct mtp_backend_iface *mtp_backend_entry(void)` and are
 * loaded with --backend-lib; api_version must be from 2 to
 * MTP_BACKEND_API_VERSION (a member added in a later version is read only
 * from a table that declares it). A plugin runs only under the name it declares
 * (iface->name), which must not be the name of a built-in backend.
 *
 * The harness runs every backend in a worker process (docs/CI.md,
 * "Guarantees: backends"): a backend that crashes, hangs or ends the process
 * costs the case in flight, never the run (while opening: its cases).
 * Strings a backend hands back (be->error, device_info) are cut at their
 * buffer's end and cleaned (invalid UTF-8, control characters) before any
 * report sees them.
 */
#ifndef MTP_BACKEND_H
#define MTP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/op.h"
#include "mtp/status.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

/* 2: copy and graph_* added; 3: opaque_buffers added; 4:
 * graph_capture_calls added */
#define MTP_BACKEND_API_VERSION 4
#define MTP_BACKEND_GUARD_BYTES 256 /* guard zone on each side of an output */
#define MTP_BACKEND_ERR_MAX 512
/* A device line (device_info) as the reports keep it, cleaned and cut. */
#define MTP_BACKEND_DEVICE_MAX 256

struct mtp_backend;

struct mtp_backend_iface {
	int api_version;
	const char *name;
	const char *description;

	/* Required. Opens the device; MTP_ERR_UNAVAILABLE with the reason in
	 * be->error when there is no driver or device. */
	enum mtp_status (*open)(struct mtp_backend *be);
	void (*close)(struct mtp_backend *be);

	/* Required. Device memory and explicit copies. */
	enum mtp_status (*alloc)(struct mtp_backend *be, size_t bytes,
				 void **ptr);
	void (*free)(struct mtp_backend *be, void *ptr);
	enum mtp_status (*upload)(struct mtp_backend *be, void *dst,
				  const void *src, size_t bytes);
	enum mtp_status (*download)(struct mtp_backend *be, void *dst,
				    const void *src, size_t bytes);

	/* Required. Whether this call (op, family, dtypes, contract) is
	 * implemented. Must not touch tensor data. */
	bool (*supports)(struct mtp_backend *be, const struct mtp_call *call);
	/* Required. Enqueues the call; may return before it completes. */
	enum mtp_status (*launch)(struct mtp_backend *be,
				  const struct mtp_call *call);
	/* Optional (NULL: launches are synchronous). */
	enum mtp_status (*synchronize)(struct mtp_backend *be);

	/* Optional device timer around launches (NULL: host monotonic clock
	 * around launch + synchronize). */
	enum mtp_status (*timer_begin)(struct mtp_backend *be);
	enum mtp_status (*timer_end)(struct mtp_backend *be, double *seconds);

	/* Optional one-line description of the device, for reports. */
	void (*device_info)(struct mtp_backend *be, char *buf, size_t n);

	/* Optional device-to-device copy (the bandwidth probe uses it; NULL:
	 * the probe is skipped and no peak is reported). */
	enum mtp_status (*copy)(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes);

	/* Optional graph replay (CUDA graphs, HIP graphs): capture one launch
	 * of the call, replay it, free it. NULL: --graph is not available. */
	enum mtp_status (*graph_capture)(struct mtp_backend *be,
					 const struct mtp_call *call,
					 void **graph);
	enum mtp_status (*graph_launch)(struct mtp_backend *be, void *graph);
	void (*graph_destroy)(struct mtp_backend *be, void *graph);

	/* Since api_version 3. Whether alloc() returns handles rather than byte
	 * addresses (OpenCL's cl_mem). false, the default: buffers are
	 * addresses (host or device) that the harness may offset by a multiple
	 * of 256 bytes, which it does to put guard zones before and after every
	 * output (MTP_BACKEND_GUARD_BYTES each, filled through upload() and
	 * checked through download() after the launch). A backend of version 2
	 * or with opaque buffers gets no guard zones. */
	bool opaque_buffers;

	/* Since api_version 4, optional: capture the n launches calls[0..n-1],
	 * in order, into one graph (replayed by graph_launch, freed by
	 * graph_destroy), as a decode step's graph runs its kernels back to
	 * back: `mtpcheck bench --graph --launches N`. */
	enum mtp_status (*graph_capture_calls)(struct mtp_backend *be,
					       const struct mtp_call *calls,
					       int n, void **graph);
};

/* Which conventions other than the v1 values a backend computes. */
enum mtp_conv_support {
	MTP_CONV_SUPPORT_V1,	   /* none: only the v1 values */
	MTP_CONV_SUPPORT_CAPTURED, /* every one, in the captured-block form */
	MTP_CONV_SUPPORT_ALL,	   /* every one, in every form */
};

struct mtp_backend {
	const struct mtp_backend_iface *iface;
	void *ctx;		  /* the backend's private state */
	struct mtp_backend *base; /* wrapped backend (mutants), or NULL */
	char name[128];		  /* as the user named it */
	char error[MTP_BACKEND_ERR_MAX]; /* the last vendor message */
	void *dl_handle;		 /* for --backend-lib */
	/* Set by the registry from the backend's row: it reads float8 inputs
	 * and the captured-block form (mtp_backend_reads_fp8); when false the
	 * harness asks it nothing about such calls. */
	bool reads_v2;
	/* Set by the registry from the backend's row: which engine conventions
	 * other than the v1 values [SPEC.md §12.1] it computes (mtp_conv_backend_ok
	 * asks the innermost base); a plugin computes none. */
	enum mtp_conv_support conv_support;
};

/* Thin wrappers: the only way the harness calls a backend. */
enum mtp_status mtp_backend_alloc(struct mtp_backend *be, size_t bytes,
				  void **ptr);
void mtp_backend_free(struct mtp_backend *be, void *ptr);
enum mtp_status mtp_backend_upload(struct mtp_backend *be, void *dst,
				   const void *src, size_t bytes);
enum mtp_status mtp_backend_download(struct mtp_backend *be, void *dst,
				     const void *src, size_t bytes);
bool mtp_backend_supports(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_backend_launch(struct mtp_backend *be,
				   const struct mtp_call *c);
enum mtp_status mtp_backend_synchronize(struct mtp_backend *be);
void mtp_backend_device_info(struct mtp_backend *be, char *buf, size_t n);

/* Sets be->error from a printf format; returns st. */
enum mtp_status mtp_backend_fail(struct mtp_backend *be, enum mtp_status st,
				 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Guard zones (MTP_BACKEND_GUARD_BYTES on each side of an output): the
 * pattern they are filled with, into g; how far a write reached into one
 * read back (the zone before an output: bytes before its start; after it:
 * bytes past its end; 0: untouched); and be->error set to "wrote N bytes
 * past (before) output NAME (guard zone)", MTP_ERR_CORRUPT. The harness
 * puts them around the outputs of backends whose buffers are addresses; the
 * python backend, whose buffers are objects, around its own. */
void mtp_guard_fill(unsigned char *g);
size_t mtp_guard_reach(const unsigned char *g, bool before);
enum mtp_status mtp_guard_fail(struct mtp_backend *be, size_t before,
			       size_t past, const char *name);

/* Methods for a backend whose buffers are host memory (ref, the test
 * plugins, examples/backend): alloc is malloc (NOMEM named in be->error),
 * free is free, and copy, for upload, download and copy, is memcpy. */
enum mtp_status mtp_host_alloc(struct mtp_backend *be, size_t bytes,
			       void **ptr);
void mtp_host_free(struct mtp_backend *be, void *ptr);
enum mtp_status mtp_host_copy(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes);

/* ---- registry --------------------------------------------------------- */

/* The built-in backends, in the order `mtpcheck list backends` shows them. */
int mtp_backend_builtin_count(void);
const struct mtp_backend_iface *mtp_backend_builtin(int i);
/* The backends a command runs when none is named, into names[max]: the
 * reference (the first built-in), or with `all` every built-in (ref, and
 * cpu when built: selftest and bench compare them). Returns how many. */
int mtp_backend_defaults(bool all, const char **names, int max);
/* Whether be is the reference backend itself (not a mutant over it). */
bool mtp_backend_is_reference(const struct mtp_backend *be);
/* Every backend name this mtpcheck knows, each once: the built-in ones,
 * then the modules, present in this build or not; NULL past the last. */
const char *mtp_backend_name(int i);
/* Whether name is one of them, or a name that a module reads further
 * (opencl:VARIANT, opencl@PLATFORM, python:ADAPTER[:MODE]). */
bool mtp_backend_known(const char *name);
/* Whether the backend named `name` (its iface's) reads float8 inputs
 * [SPEC.md §12.2], and the captured-block form of mtp_step and draft_chain
 * [§12.3], whose signature differs: the registry's rows say (today ref, cpu,
 * python, which asks its adapter, and a mutant, which asks its base). Every
 * other backend is asked nothing about such a call: it is UNIMPLEMENTED
 * there, so a backend written before them can never misread the bytes. */
bool mtp_backend_reads_fp8(const char *name);
bool mtp_backend_reads_captured(const char *name);
/* Why a backend this build knows of is absent from it ("configured
 * without CUDA"), or NULL if the name is unknown. */
const char *mtp_backend_absent_reason(const char *name);

/* Opens a backend by name: a built-in ("ref", "cpu", "cuda"), a mutant
 * ("mutant:PRE_NORM_RECYCLE[:base]"), or a shared library path given
 * through lib. On MTP_ERR_UNAVAILABLE / MTP_ERR_INVALID, why says why. */
enum mtp_status mtp_backend_open(const char *name, const char *lib,
				 struct mtp_backend **out, char *why,
				 size_t whyn);
void mtp_backend_close(struct mtp_backend *be);

/* ---- running one call on a backend ------------------------------------ */

/* Copies host inputs in, launches, synchronises and copies the outputs back
 * into host tensors `out` (allocated here with the call's shapes). The call's
 * tensors are host tensors; device copies are made and freed inside. Where
 * the backend's buffers are addresses, each output has a guard zone on both
 * sides; a write into one returns MTP_ERR_CORRUPT with "wrote N bytes past
 * output X" (or "before") in be->error. be->error is NUL-terminated after
 * every call. */
enum mtp_status mtp_backend_execute(struct mtp_backend *be,
				    const struct mtp_call *host_call,
				    struct mtp_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
