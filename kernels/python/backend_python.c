/*
 * The python backend (module mtp_backend_python.so): `--backend
 * python:ADAPTER[:MODE]` runs the ops of a Python adapter (docs/PYTHON.md)
 * through an embedded CPython. This file holds the adapter's loading and
 * the memory (with guard zones), timer and copy methods; interp.c starts
 * the interpreter, call.c binds and launches calls.
 *
 * Threads: the interpreter is started with the GIL released, and every
 * method takes it for its own duration (PyGILState), so any harness thread
 * may call in. Buffers are the adapter's objects; ones that expose the
 * buffer protocol (NumPy arrays) are filled with memcpy, others (torch
 * tensors on a GPU) through the adapter's upload/download hooks.
 */
#include "py_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "python:SPEC[:MODE]" into x->spec and x->mode. */
static enum mtp_status parse_name(struct mtp_backend *be, struct py_ctx *x)
{
	const char *s =
		strncmp(be->name, "python:", 7) == 0 ? be->name + 7 : "";
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (n == 0 || n >= sizeof(x->spec))
		return mtp_backend_fail(be, MTP_ERR_INVALID,
					"the python backend needs an adapter: "
					"--backend python:ADAPTER[:MODE] "
					"(a module such as "
					"mtpcheck.adapters.numpy, or a .py "
					"file)");
	memcpy(x->spec, s, n);
	x->spec[n] = 0;
	snprintf(x->mode, sizeof(x->mode), "%s", colon ? colon + 1 : "");
	return MTP_OK;
}

/* A missing framework: which interpreter lacks it, and how to pick
 * another, appended to the skip reason (the console shows it once per
 * backend, the reports once per case). */
static void say_interpreter(struct mtp_backend *be)
{
	char v[64];
	size_t n = strlen(be->error);
	const char *venv = getenv("MTP_PYTHON");

	mtp_py_version(v, sizeof(v));
	snprintf(be->error + n, sizeof(be->error) - n,
		 "; the embedded Python is %s (%s%s%s), fixed when mtpcheck "
		 "was built: cmake -DPython3_EXECUTABLE=/path/to/python3 "
		 "that has it picks another (docs/PYTHON.md)",
		 MTP_PY_EXECUTABLE, v, venv && *venv ? ", venv " : "",
		 venv && *venv ? venv : "");
}

/* Imports the adapter and calls its adapter(mode). A missing module, a
 * syntax error or a bad mode is a usage error (exit 2); a missing framework
 * (ImportError of a dependency, Unavailable) is a SKIPPED backend. */
static enum mtp_status load_adapter(struct mtp_backend *be, struct py_ctx *x)
{
	PyObject *pkg = PyImport_ImportModule("mtpcheck.adapters");
	PyObject *r = NULL;
	enum mtp_status st = MTP_OK;

	if (pkg)
		r = PyObject_CallMethod(pkg, "open_adapter", "ss", x->spec,
					x->mode[0] ? x->mode : NULL);
	if (!r) {
		bool skip = pkg && mtp_py_unavailable(pkg);

		st = mtp_py_fail(be,
				 skip ? MTP_ERR_UNAVAILABLE : MTP_ERR_INVALID,
				 x->spec);
		if (skip)
			say_interpreter(be);
	}
	Py_XDECREF(pkg);
	x->adapter = r;
	return st;
}

static void py_close(struct mtp_backend *be)
{
	struct py_ctx *x = py_ctx(be);
	PyGILState_STATE g;

	if (!x)
		return;
	if (Py_IsInitialized()) { /* not when the name was refused first */
		g = PyGILState_Ensure();
		mtp_py_cache_clear(x);
		Py_XDECREF(x->adapter);
		PyGILState_Release(g);
	}
	free(x);
	be->ctx = NULL;
}

static const struct mtp_backend_iface py_iface_timed;

static enum mtp_status py_open(struct mtp_backend *be)
{
	struct py_ctx *x = calloc(1, sizeof(*x));
	enum mtp_status st;
	PyGILState_STATE g;

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	be->ctx = x;
	st = parse_name(be, x);
	if (st)
		goto fail;
	st = mtp_py_start(be);
	if (st)
		goto fail;
	g = PyGILState_Ensure();
	st = load_adapter(be, x);
	/* device timers where the adapter offers them (torch CUDA events),
	 * else the harness's host clock around launch + synchronize */
	if (!st && PyObject_HasAttrString(x->adapter, "timer_begin")) {
		PyObject *t = PyObject_GetAttrString(x->adapter, "timer_begin");

		if (t && t != Py_None)
			be->iface = &py_iface_timed;
		Py_XDECREF(t);
		PyErr_Clear();
	}
	PyGILState_Release(g);
	if (!st)
		return MTP_OK;
fail:
	py_close(be);
	return st;
}

/* ---- memory ------------------------------------------------------------ */

static void py_free(struct mtp_backend *be, void *ptr)
{
	struct py_buf *b = ptr;
	PyGILState_STATE g = PyGILState_Ensure();

	mtp_py_cache_clear(py_ctx(be)); /* bound calls may view this buffer */
	Py_XDECREF(b->obj);
	Py_XDECREF(b->whole);
	PyGILState_Release(g);
	free(b);
}

/* Copies between host memory and the buffer object obj: memcpy through the
 * buffer protocol where the object has it, else adapter.upload/download. */
static enum mtp_status transfer(struct mtp_backend *be, PyObject *obj,
				void *host, size_t bytes, bool up)
{
	PyGILState_STATE g = PyGILState_Ensure();
	enum mtp_status st = MTP_OK;
	Py_buffer view;

	if (PyObject_CheckBuffer(obj) &&
	    PyObject_GetBuffer(obj, &view, PyBUF_CONTIG) == 0) {
		if ((size_t)view.len < bytes)
			st = mtp_backend_fail(be, MTP_ERR_INVALID,
					      "python: buffer of %zd bytes, "
					      "%zu copied",
					      view.len, bytes);
		else if (up)
			memcpy(view.buf, host, bytes);
		else
			memcpy(host, view.buf, bytes);
		PyBuffer_Release(&view);
	} else {
		PyObject *mv;
		PyObject *r;

		PyErr_Clear();
		mv = PyMemoryView_FromMemory(host, (Py_ssize_t)bytes,
					     up ? PyBUF_READ : PyBUF_WRITE);
		r = mv ? mtp_py_method(py_ctx(be), up ? "upload" : "download",
				       up ? Py_BuildValue("(OO)", obj, mv)
					  : Py_BuildValue("(OO)", mv, obj))
		       : NULL;
		if (!r)
			st = mtp_py_fail(be, MTP_ERR_DEVICE,
					 up ? "upload" : "download");
		Py_XDECREF(r);
		Py_XDECREF(mv);
	}
	PyGILState_Release(g);
	return st;
}

/* whole[from, from + n) as a new object (a view: NumPy arrays, tensors). */
static PyObject *slice(PyObject *whole, size_t from, size_t n)
{
	PyObject *a = PyLong_FromSize_t(from), *z = PyLong_FromSize_t(from + n);
	PyObject *sl = a && z ? PySlice_New(a, z, NULL) : NULL;
	PyObject *r = sl ? PyObject_GetItem(whole, sl) : NULL;

	Py_XDECREF(sl);
	Py_XDECREF(z);
	Py_XDECREF(a);
	return r;
}

/* Copies one guard zone of b (the one before its bytes, or after them)
 * between host memory g and the buffer. */
static enum mtp_status guard_io(struct mtp_backend *be, struct py_buf *b,
				bool before, unsigned char *g, bool up)
{
	const size_t gn = MTP_BACKEND_GUARD_BYTES;
	PyGILState_STATE gil = PyGILState_Ensure();
	PyObject *z = slice(b->whole, before ? 0 : gn + b->bytes, gn);
	enum mtp_status st =
		z ? MTP_OK : mtp_py_fail(be, MTP_ERR_DEVICE, "guard zone");

	PyGILState_Release(gil);
	if (!st)
		st = transfer(be, z, g, gn, up);
	gil = PyGILState_Ensure();
	Py_XDECREF(z);
	PyGILState_Release(gil);
	return st;
}

/* Reads both guard zones of an output back, as the harness does for the
 * backends whose buffers are addresses (core/backend.c). */
static enum mtp_status guard_check(struct mtp_backend *be, struct py_buf *b)
{
	unsigned char g[MTP_BACKEND_GUARD_BYTES];
	size_t before = 0, past = 0;
	enum mtp_status st = guard_io(be, b, true, g, false);

	if (!st)
		before = mtp_guard_reach(g, true);
	if (!st)
		st = guard_io(be, b, false, g, false);
	if (!st)
		past = mtp_guard_reach(g, false);
	if (st || (!before && !past))
		return st;
	return mtp_guard_fail(be, before, past, b->name ? b->name : "?");
}

/* adapter.alloc of bytes and a guard zone on each side; b->obj is the
 * middle. An adapter whose buffers cannot be sliced gets no guard zones. */
static enum mtp_status alloc_guarded(struct mtp_backend *be, struct py_buf *b,
				     size_t bytes)
{
	const size_t gn = MTP_BACKEND_GUARD_BYTES;
	PyGILState_STATE g = PyGILState_Ensure();
	enum mtp_status st = MTP_OK;

	b->bytes = bytes;
	b->whole = mtp_py_method(
		py_ctx(be), "alloc",
		Py_BuildValue("(n)", (Py_ssize_t)(bytes + 2 * gn)));
	b->obj = b->whole ? slice(b->whole, gn, bytes) : NULL;
	if (b->whole && !b->obj) { /* no slices: the whole, unguarded */
		PyErr_Clear();
		b->obj = b->whole;
		b->whole = NULL;
	}
	if (!b->obj)
		st = mtp_py_fail(be, MTP_ERR_NOMEM, "alloc");
	PyGILState_Release(g);
	return st;
}

static enum mtp_status py_alloc(struct mtp_backend *be, size_t bytes,
				void **ptr)
{
	struct py_buf *b = calloc(1, sizeof(*b));
	unsigned char g[MTP_BACKEND_GUARD_BYTES];
	enum mtp_status st;

	*ptr = NULL;
	if (!b)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	st = alloc_guarded(be, b, bytes);
	mtp_guard_fill(g);
	if (!st && b->whole)
		st = guard_io(be, b, true, g, true);
	if (!st && b->whole)
		st = guard_io(be, b, false, g, true);
	if (st) {
		py_free(be, b);
		return st;
	}
	*ptr = b;
	return MTP_OK;
}

static enum mtp_status py_upload(struct mtp_backend *be, void *dst,
				 const void *src, size_t bytes)
{
	return transfer(be, ((struct py_buf *)dst)->obj, (void *)src, bytes,
			true);
}

/* An output comes home after its launch: its guard zones are read first
 * (not timed: downloads are outside the timed launches). */
static enum mtp_status py_download(struct mtp_backend *be, void *dst,
				   const void *src, size_t bytes)
{
	struct py_buf *b = (struct py_buf *)src;
	enum mtp_status st = b->whole ? guard_check(be, b) : MTP_OK;

	return st ? st : transfer(be, b->obj, dst, bytes, false);
}

/* Calls adapter.method(*Py_BuildValue(fmt, ...)) (fmt NULL: no arguments)
 * for its effect; the arguments are built under the GIL too. */
static enum mtp_status call_void(struct mtp_backend *be, const char *method,
				 const char *fmt, ...)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *args = NULL, *r;
	enum mtp_status st;
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		args = Py_VaBuildValue(fmt, ap);
		va_end(ap);
	}
	r = mtp_py_method(py_ctx(be), method, args);
	st = r ? MTP_OK : mtp_py_fail(be, MTP_ERR_DEVICE, method);
	Py_XDECREF(r);
	PyGILState_Release(g);
	return st;
}

static enum mtp_status py_copy(struct mtp_backend *be, void *dst,
			       const void *src, size_t bytes)
{
	const struct py_buf *d = dst, *s = src;

	return call_void(be, "copy", "(OOn)", d->obj, s->obj,
			 (Py_ssize_t)bytes);
}

static enum mtp_status py_synchronize(struct mtp_backend *be)
{
	return call_void(be, "synchronize", NULL);
}

static enum mtp_status py_timer_begin(struct mtp_backend *be)
{
	return call_void(be, "timer_begin", NULL);
}

static enum mtp_status py_timer_end(struct mtp_backend *be, double *seconds)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r = mtp_py_method(py_ctx(be), "timer_end", NULL);
	enum mtp_status st = MTP_OK;

	*seconds = r ? PyFloat_AsDouble(r) : -1.0;
	if (!r || PyErr_Occurred())
		st = mtp_py_fail(be, MTP_ERR_DEVICE, "timer_end");
	Py_XDECREF(r);
	PyGILState_Release(g);
	return st;
}

static void py_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r = mtp_py_method(py_ctx(be), "describe", NULL);
	const char *s = r ? PyUnicode_AsUTF8(r) : NULL;

	snprintf(buf, n, "python %s (%s%s%s), Python %d.%d", s ? s : "adapter",
		 py_ctx(be)->spec, py_ctx(be)->mode[0] ? ":" : "",
		 py_ctx(be)->mode, PY_MAJOR_VERSION, PY_MINOR_VERSION);
	if (!s)
		PyErr_Clear();
	Py_XDECREF(r);
	PyGILState_Release(g);
}

#define PY_IFACE_COMMON                                                        \
	.api_version = MTP_BACKEND_API_VERSION, .name = "python",              \
	.description = "ops of a Python adapter run by an embedded CPython "   \
		       "(--backend python:ADAPTER[:MODE])",                    \
	.open = py_open, .close = py_close, .alloc = py_alloc,                 \
	.free = py_free, .upload = py_upload, .download = py_download,         \
	.supports = mtp_py_supports, .launch = mtp_py_launch,                  \
	.synchronize = py_synchronize, .device_info = py_device_info,          \
	.copy = py_copy, .graph_capture = mtp_py_graph_capture,                \
	.graph_launch = mtp_py_graph_launch,                                   \
	.graph_destroy = mtp_py_graph_destroy, .opaque_buffers = true

/* Host clock (the harness times launch + synchronize) ... */
static const struct mtp_backend_iface py_iface = {PY_IFACE_COMMON};
/* ... or the adapter's device timers, chosen at open. */
static const struct mtp_backend_iface py_iface_timed = {
	PY_IFACE_COMMON,
	.timer_begin = py_timer_begin,
	.timer_end = py_timer_end,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &py_iface;
}
