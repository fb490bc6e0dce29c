/*
 * What the python backend's two files share: the context (the adapter
 * object, its optional hooks, the cache of bound calls), the buffer handle
 * that the harness sees as a device pointer, and the helpers that turn a
 * Python exception into be->error. Every function here expects the caller
 * to hold the GIL.
 */
#ifndef MTP_PY_INTERNAL_H
#define MTP_PY_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

#include "mtp/backend.h"

/* A "device pointer": the adapter's buffer object of `bytes` bytes. obj
 * is the slice [G, G + bytes) of whole, an allocation with a guard zone of
 * G = MTP_BACKEND_GUARD_BYTES on each side (NULL where the adapter's
 * buffers cannot be sliced: no guard zones); name is the output the last
 * launch wrote into it, for the message. */
struct py_buf {
	PyObject *obj, *whole;
	size_t bytes;
	const char *name;
};

#define PY_CACHE 16

/* One call bound by adapter.bind(): reused while its buffers live. */
struct py_bound {
	enum mtp_op_id op;
	struct mtp_dims dims;
	enum mtp_dtype act;
	int n;	       /* pointers in key */
	void **key;    /* input then output data pointers */
	PyObject *run; /* zero-argument callable */
};

struct py_ctx {
	PyObject *adapter;
	char spec[128], mode[64];
	struct py_bound cache[PY_CACHE];
	int next; /* round-robin slot */
};

static inline struct py_ctx *py_ctx(struct mtp_backend *be)
{
	return be->ctx;
}

/* Sets be->error to "python: TYPE: message (file:line)" from the pending
 * exception, which it clears; returns st. */
enum mtp_status mtp_py_fail(struct mtp_backend *be, enum mtp_status st,
			    const char *what);
/* Whether the pending exception says the framework or device is missing
 * (an ImportError, or pkg.Unavailable of the mtpcheck.adapters package pkg);
 * the exception stays pending. */
bool mtp_py_unavailable(PyObject *pkg);

/* Calls adapter.<method>(*args), stealing args (NULL: no arguments, or a
 * failed Py_BuildValue if an exception is pending); a new reference, or
 * NULL with the exception pending. */
PyObject *mtp_py_method(struct py_ctx *x, const char *method, PyObject *args);

/* interp.c: starts the interpreter once per process (be->error says why
 * not: UNAVAILABLE, or INVALID for an MTP_PYTHON that cannot work); the
 * version of libpython ("3.11.7"). Called without the GIL. */
enum mtp_status mtp_py_start(struct mtp_backend *be);
void mtp_py_version(char *buf, size_t n);

/* call.c: supports, launch, graphs, the bound-call cache. */
bool mtp_py_supports(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_py_launch(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_py_graph_capture(struct mtp_backend *be,
				     const struct mtp_call *c, void **graph);
enum mtp_status mtp_py_graph_launch(struct mtp_backend *be, void *graph);
void mtp_py_graph_destroy(struct mtp_backend *be, void *graph);
void mtp_py_cache_clear(struct py_ctx *x);

#endif
