/*
 * The python backend's calls: the attribute dict and the tensor views that
 * an op receives, adapter.bind() once per distinct call (cached while its
 * buffers live, so that a launch in bench is one Python call), supports(),
 * graph replay, and Python exceptions turned into one-line messages that
 * become the case's verdict.
 */
#include "py_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- exceptions -------------------------------------------------------- */

static void fetch(PyObject **type, PyObject **value, PyObject **tb)
{
#if PY_VERSION_HEX >= 0x030C0000
	*value = PyErr_GetRaisedException();
	*type = *value ? Py_NewRef((PyObject *)Py_TYPE(*value)) : NULL;
	*tb = *value ? PyException_GetTraceback(*value) : NULL;
#else
	PyErr_Fetch(type, value, tb);
	PyErr_NormalizeException(type, value, tb);
#endif
}

/* "file:line" of the innermost frame of a traceback into buf. */
static void where(PyObject *tb, char *buf, size_t n)
{
	PyObject *t = tb ? Py_NewRef(tb) : NULL;

	buf[0] = 0;
	while (t) {
		PyObject *next = PyObject_GetAttrString(t, "tb_next");

		if (!next || next == Py_None) {
			Py_XDECREF(next);
			break;
		}
		Py_DECREF(t);
		t = next;
	}
	if (t) {
		PyObject *line = PyObject_GetAttrString(t, "tb_lineno");
		PyObject *frame = PyObject_GetAttrString(t, "tb_frame");
		PyObject *code =
			frame ? PyObject_GetAttrString(frame, "f_code") : NULL;
		PyObject *name =
			code ? PyObject_GetAttrString(code, "co_filename")
			     : NULL;
		const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
		const char *base = s ? strrchr(s, '/') : NULL;

		if (s && line)
			snprintf(buf, n, " (%s:%ld)", base ? base + 1 : s,
				 PyLong_AsLong(line));
		Py_XDECREF(name);
		Py_XDECREF(code);
		Py_XDECREF(frame);
		Py_XDECREF(line);
		Py_DECREF(t);
	}
	PyErr_Clear();
}

/* A multi-line message (NumPy's import advice) folded into one line. */
static void one_line(char *s)
{
	char *w = s;
	bool space = false;

	for (char *r = s; *r; r++) {
		bool ws = *r == '\n' || *r == '\r' || *r == '\t' || *r == ' ';

		if (ws && (space || w == s))
			continue;
		*w++ = ws ? ' ' : *r;
		space = ws;
	}
	*w = 0;
}

enum mtp_status mtp_py_fail(struct mtp_backend *be, enum mtp_status st,
			    const char *what)
{
	PyObject *type, *value, *tb, *msg = NULL;
	const char *tname = "error", *m = NULL;
	char loc[160];

	fetch(&type, &value, &tb);
	if (type)
		tname = ((PyTypeObject *)type)->tp_name;
	msg = value ? PyObject_Str(value) : NULL;
	m = msg ? PyUnicode_AsUTF8(msg) : NULL;
	if (!m)
		PyErr_Clear();
	where(tb, loc, sizeof(loc));
	mtp_backend_fail(be, st, "python %s: %s%s%s%s", what, tname,
			 m && *m ? ": " : "", m ? m : "", loc);
	one_line(be->error);
	Py_XDECREF(msg);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
	return st;
}

static void restore(PyObject *type, PyObject *value, PyObject *tb)
{
#if PY_VERSION_HEX >= 0x030C0000
	Py_XDECREF(type);
	Py_XDECREF(tb);
	PyErr_SetRaisedException(value);
#else
	PyErr_Restore(type, value, tb);
#endif
}

bool mtp_py_unavailable(PyObject *pkg)
{
	PyObject *type, *value, *tb, *cls;
	bool hit;

	fetch(&type, &value, &tb);
	if (!type)
		return false;
	cls = PyObject_GetAttrString(pkg, "Unavailable");
	PyErr_Clear();
	hit = PyErr_GivenExceptionMatches(type, PyExc_ImportError) ||
	      (cls && PyErr_GivenExceptionMatches(type, cls));
	Py_XDECREF(cls);
	restore(type, value, tb);
	return hit;
}

PyObject *mtp_py_method(struct py_ctx *x, const char *method, PyObject *args)
{
	PyObject *fn, *r = NULL;

	if (!args && PyErr_Occurred())
		return NULL; /* building the arguments failed */
	fn = PyObject_GetAttrString(x->adapter, method);
	if (fn)
		r = args ? PyObject_Call(fn, args, NULL)
			 : PyObject_CallNoArgs(fn);
	Py_XDECREF(fn);
	Py_XDECREF(args);
	return r;
}

/* ---- what an op receives ----------------------------------------------- */

static const char *const class_names[] = {
	[MTP_TC_ACT] = "act",	    [MTP_TC_PARAM] = "param",
	[MTP_TC_INDEX] = "index",   [MTP_TC_LOGITS] = "logits",
	[MTP_TC_TOKEN] = "token",   [MTP_TC_QWEIGHT] = "qweight",
	[MTP_TC_QSCALE] = "qscale",
};

/* A class's name; one the table does not know yet is "?" (never past it). */
static const char *class_name(enum mtp_tclass c)
{
	size_t i = (size_t)c;

	return i < sizeof(class_names) / sizeof(class_names[0]) &&
			       class_names[i]
		       ? class_names[i]
		       : "?";
}

/* The attributes and bound dimensions, as one dict. */
static PyObject *attrs(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	const struct mtp_dims *d = &c->dims;
	PyObject *a = Py_BuildValue(
		"{s:s,s:s,s:s,s:O,s:d,s:s,s:d,s:d,s:d,s:d,s:i,s:d,s:d,s:s,s:s,"
		"s:L,s:L,s:L,s:i,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}",
		"op", c->op->name, "act", mtp_dtype_name(c->act), "family",
		mtp_family_name(p->family), "mhc",
		mtp_family_mhc(p->family) ? Py_True : Py_False, "eps", p->eps,
		"rounding",
		p->rounding == MTP_ROUNDING_EAGER ? "eager" : "fused",
		"rms_eps", p->hc.rms_eps, "pre_eps", p->hc.pre_eps,
		"sinkhorn_eps", p->hc.sinkhorn_eps, "post_mult",
		p->hc.post_mult, "sinkhorn_iters", p->hc.sinkhorn_iters,
		"norm_eps", p->hc.norm_eps, "hc_eps", p->hc_eps, "variant",
		p->variant == MTP_HC_HEAD_CUDA ? "cuda" : "rocm",
		"block_contract",
		p->contract == MTP_CONTRACT_DEFERRED ? "deferred" : "internal",
		"hc_mult", (long long)p->hc_mult, "num_steps",
		(long long)p->num_steps, "num_layers", (long long)p->num_layers,
		"pass_step_idx", (int)p->pass_step_idx, "T", (long long)d->t,
		"H", (long long)d->h, "M", (long long)d->m, "V",
		(long long)d->v, "F", (long long)d->f, "R", (long long)d->r,
		"P", (long long)d->p, "K", (long long)d->k, "L",
		(long long)d->l);

	/* the family's other choices: ask them, as "mhc", not the name */
	if (a &&
	    (PyDict_SetItemString(
		     a, "hidden_first",
		     mtp_family_hidden_first(p->family) ? Py_True : Py_False) ||
	     PyDict_SetItemString(a, "recycles_pre_norm",
				  mtp_family_recycles_pre_norm(p->family)
					  ? Py_True
					  : Py_False))) {
		Py_DECREF(a);
		return NULL;
	}
	return a;
}

/* FORMAT.md version 2 and SPEC.md §12.1-§12.2: the block form, the chain's
 * position clamp, the FP8 scheme and the conventions (the declared value,
 * or the v1 default when undeclared: the judge tries the others). */
static PyObject *attrs_v2(const struct mtp_params *p)
{
	static const char *const quant[] = {"none", "fp8_w", "fp8_w8a8"};
	/* SPEC.md §2.5, Step V3-8: "" is the undeclared (exact) order */
	static const char *const order[] = {"", "one_shot", "two_shot", "ring",
					    "tree"};
	static const char *const at[] = {"moe", "after_block", "final_norm"};
	const struct mtp_conventions *cv = &p->conv;
	unsigned q = (unsigned)p->proj_quant;

	return Py_BuildValue(
		"{s:s,s:L,s:s,s:d,s:s,s:s,s:s,s:s,s:i,s:i,s:L,s:s,s:s}",
		"block", p->v2.captured ? "captured" : "synthetic",
		"max_position", (long long)p->v2.max_position, "proj_quant",
		q < sizeof(quant) / sizeof(quant[0]) ? quant[q] : "?",
		"act_quant_eps", p->act_quant_eps, "add_norm_input",
		cv->add_norm_input == MTP_ADD_NORM_SUM ? "sum" : "residual",
		"final_add",
		cv->final_add == MTP_FINAL_ADD_FUSED ? "fused" : "unfused",
		"silu_mul_rounding",
		cv->silu_mul_rounding == MTP_SILU_TWICE ? "twice" : "once",
		"logits_dtype",
		cv->logits_dtype == MTP_LOGITS_BFLOAT16 ? "bfloat16"
							: "float32",
		"pos0_mask", cv->pos0_mask == MTP_POS0_UNMASKED ? 0 : 1,
		"tp_step", p->tp.step ? 1 : 0, "tp_rank", (long long)p->tp.rank,
		"reduce_order", order[p->tp.order], "reduce_at", at[p->tp.at]);
}

/* hc_head_variant is the step's name for the same attribute. */
static PyObject *attrs_full(const struct mtp_call *c)
{
	PyObject *a = attrs(c), *v2 = a ? attrs_v2(c->params) : NULL, *v;

	if (!v2 || PyDict_Update(a, v2) < 0)
		goto fail;
	v = PyDict_GetItemString(a, "variant"); /* borrowed */
	if (PyDict_SetItemString(a, "hc_head_variant", v) < 0)
		goto fail;
	Py_DECREF(v2);
	return a;
fail:
	Py_XDECREF(v2);
	Py_XDECREF(a);
	return NULL;
}

/* The harness has no buffer for an empty tensor (T = 0), nor for an absent
 * optional input: no buffer and elements due is the absent one. */
static bool absent(const struct mtp_tensor *t)
{
	return !t->data && mtp_tensor_numel(t) != 0;
}

static PyObject *view(struct py_ctx *x, const struct mtp_tensor *t)
{
	const struct py_buf *b = t->data;
	PyObject *shape;

	/* view(None) makes an empty tensor */
	if (absent(t))
		return Py_NewRef(Py_None);
	shape = PyTuple_New(t->ndim);
	for (int i = 0; shape && i < t->ndim; i++)
		PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t->shape[i]));
	if (!shape)
		return NULL;
	return mtp_py_method(x, "view",
			     Py_BuildValue("(OsN)", b ? b->obj : Py_None,
					   mtp_dtype_name(t->dtype), shape));
}

/* {name: view} of the inputs (out = false) or outputs. */
static PyObject *views(struct py_ctx *x, const struct mtp_call *c, bool out)
{
	int n = out ? c->n_out : c->n_in;
	const struct mtp_tspec *spec = out ? c->sig->out : c->sig->in;
	PyObject *d = PyDict_New();

	for (int i = 0; d && i < n; i++) {
		PyObject *v = view(x, out ? &c->out[i] : &c->in[i]);

		if (!v || PyDict_SetItemString(d, spec[i].name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

/* ---- the bound-call cache ---------------------------------------------- */

static void bound_fini(struct py_bound *b)
{
	Py_CLEAR(b->run);
	PyMem_Free(b->key);
	memset(b, 0, sizeof(*b));
}

void mtp_py_cache_clear(struct py_ctx *x)
{
	for (int i = 0; x && i < PY_CACHE; i++)
		bound_fini(&x->cache[i]);
}

static bool bound_matches(const struct py_bound *b, const struct mtp_call *c)
{
	if (!b->run || b->op != c->op->id || b->act != c->act ||
	    b->n != c->n_in + c->n_out ||
	    memcmp(&b->dims, &c->dims, sizeof(c->dims)) != 0)
		return false;
	for (int i = 0; i < c->n_in; i++)
		if (b->key[i] != c->in[i].data)
			return false;
	for (int i = 0; i < c->n_out; i++)
		if (b->key[c->n_in + i] != c->out[i].data)
			return false;
	return true;
}

/* adapter.bind(op, ins, outs, a) into a cache slot; borrowed callable. */
static PyObject *bind(struct py_ctx *x, const struct mtp_call *c)
{
	struct py_bound *b = &x->cache[x->next];
	PyObject *ins, *outs, *a;

	bound_fini(b);
	b->key =
		PyMem_Malloc(sizeof(void *) * (size_t)(c->n_in + c->n_out + 1));
	if (!b->key)
		return PyErr_NoMemory();
	ins = views(x, c, false);
	outs = ins ? views(x, c, true) : NULL;
	a = outs ? attrs_full(c) : NULL;
	if (a)
		b->run = mtp_py_method(
			x, "bind",
			Py_BuildValue("(sOOO)", c->op->name, ins, outs, a));
	Py_XDECREF(ins);
	Py_XDECREF(outs);
	Py_XDECREF(a);
	if (!b->run) {
		bound_fini(b);
		return NULL;
	}
	b->op = c->op->id;
	b->act = c->act;
	b->dims = c->dims;
	b->n = c->n_in + c->n_out;
	for (int i = 0; i < c->n_in; i++)
		b->key[i] = c->in[i].data;
	for (int i = 0; i < c->n_out; i++)
		b->key[c->n_in + i] = c->out[i].data;
	x->next = (x->next + 1) % PY_CACHE;
	return b->run;
}

/* The bound call of c (launch, graph capture); names its output buffers
 * for the guard zones' message. */
static PyObject *bound_get(struct py_ctx *x, const struct mtp_call *c)
{
	for (int i = 0; i < c->n_out; i++)
		if (c->out[i].data)
			((struct py_buf *)c->out[i].data)->name =
				c->sig->out[i].name;
	for (int i = 0; i < PY_CACHE; i++)
		if (bound_matches(&x->cache[i], c))
			return x->cache[i].run;
	return bind(x, c);
}

/* ---- the interface's call methods --------------------------------------- */

/* {name: (dtype, class)} of the present tensors, for supports(). */
static PyObject *tensor_kinds(const struct mtp_call *c)
{
	PyObject *d = PyDict_New();

	for (int i = 0; d && i < c->n_in + c->n_out; i++) {
		bool out = i >= c->n_in;
		int k = out ? i - c->n_in : i;
		const struct mtp_tensor *t = out ? &c->out[k] : &c->in[k];
		const struct mtp_tspec *s =
			out ? &c->sig->out[k] : &c->sig->in[k];
		PyObject *v;

		if (!out && absent(t))
			continue; /* an empty one (T = 0) is present */
		v = Py_BuildValue("(ss)", mtp_dtype_name(t->dtype),
				  class_name(s->cls));
		if (!v || PyDict_SetItemString(d, s->name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

bool mtp_py_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	PyGILState_STATE g;
	PyObject *a, *k, *r = NULL;
	bool yes = false;

	/* a zero-centred family's norms (SPEC.md §2.6): the attributes a Python
	 * backend receives do not say the norm form yet, so it is not asked */
	if (mtp_call_norm_offset(c) != 0.0)
		return false;
	/* Inkling's row (SPEC.md Step V3-9): neither its two embedding norms nor its
	 * mup head */
	if (c->params && (mtp_family_embed_pre_norm(c->params->family) ||
			  mtp_family_logits_mup(c->params->family)))
		return false;
	g = PyGILState_Ensure();
	a = attrs_full(c);
	k = tensor_kinds(c);

	if (a && k)
		r = mtp_py_method(py_ctx(be), "supports",
				  Py_BuildValue("(sOO)", c->op->name, a, k));
	if (r)
		yes = PyObject_IsTrue(r) == 1;
	if (!r || PyErr_Occurred()) {
		/* no verdict carries this: say it once per case on stderr */
		mtp_py_fail(be, MTP_ERR_INVALID, "supports");
		fprintf(stderr, "mtpcheck: %s: %s\n", be->name, be->error);
		yes = false;
	}
	Py_XDECREF(r);
	Py_XDECREF(a);
	Py_XDECREF(k);
	PyGILState_Release(g);
	return yes;
}

enum mtp_status mtp_py_launch(struct mtp_backend *be, const struct mtp_call *c)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *run = bound_get(py_ctx(be), c);
	PyObject *r = run ? PyObject_CallNoArgs(run) : NULL;
	enum mtp_status st = MTP_OK;

	if (!r)
		st = mtp_py_fail(be, MTP_ERR_DEVICE, c->op->name);
	Py_XDECREF(r);
	PyGILState_Release(g);
	return st;
}

enum mtp_status mtp_py_graph_capture(struct mtp_backend *be,
				     const struct mtp_call *c, void **graph)
{
	struct py_ctx *x = py_ctx(be);
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *fn = PyObject_GetAttrString(x->adapter, "graph");
	PyObject *run = NULL, *r = NULL;
	enum mtp_status st = MTP_OK;

	*graph = NULL;
	if (!fn || fn == Py_None) {
		PyErr_Clear();
		st = mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
				      "python adapter %s has no graph replay",
				      x->spec);
		goto out;
	}
	run = bound_get(x, c);
	r = run ? PyObject_CallOneArg(fn, run) : NULL;
	if (!r)
		st = mtp_py_fail(be, MTP_ERR_DEVICE, "graph");
	*graph = r;
out:
	Py_XDECREF(fn);
	PyGILState_Release(g);
	return st;
}

enum mtp_status mtp_py_graph_launch(struct mtp_backend *be, void *graph)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r = PyObject_CallMethod(graph, "replay", NULL);
	enum mtp_status st =
		r ? MTP_OK : mtp_py_fail(be, MTP_ERR_DEVICE, "graph replay");

	Py_XDECREF(r);
	PyGILState_Release(g);
	return st;
}

void mtp_py_graph_destroy(struct mtp_backend *be, void *graph)
{
	PyGILState_STATE g = PyGILState_Ensure();

	(void)be;
	Py_XDECREF((PyObject *)graph);
	PyGILState_Release(g);
}
