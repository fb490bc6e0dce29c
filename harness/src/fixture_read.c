/*
 * Reading FORMAT.md v1 files. The HDF5 library's own error printing is
 * switched off; every failure is turned into one line naming the file, the
 * object and the rule it breaks. Shapes, dtypes and sizes are validated from
 * the metadata before any tensor data is allocated.
 */
#include "mtp/fixture.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_guard.h"
#include "mtp/textio.h"

struct reader {
	struct mtp_fixture *fx;
	const struct mtp_limits *lim;
	char *err;
	size_t errn;
	enum mtp_status st;
};

static enum mtp_status fail(struct reader *r, enum mtp_status st,
			    const char *obj, const char *fmt, const char *arg)
{
	char why[MTP_ERR_MAX];

	snprintf(why, sizeof(why), fmt, arg ? arg : "");
	snprintf(r->err, r->errn, "%s: %s: %s", r->fx->path, obj, why);
	for (char *p = r->err; *p; p++) /* names from the file: keep one line */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	r->st = st;
	return st;
}

/* Reads a string attribute (fixed or variable length) into buf. */
static bool read_str_attr(hid_t obj, const char *name, char *buf, size_t n)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	bool ok = false;

	if (a < 0)
		return false;
	hid_t ft = H5Aget_type(a);
	hid_t sp = H5Aget_space(a);

	if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING &&
	    H5Sget_simple_extent_npoints(sp) == 1) {
		hid_t mt = H5Tcopy(H5T_C_S1);

		if (H5Tis_variable_str(ft) > 0) {
			char *s = NULL;

			H5Tset_size(mt, H5T_VARIABLE);
			H5Tset_cset(mt, H5Tget_cset(ft));
			if (H5Aread(a, mt, &s) >= 0 && s) {
				snprintf(buf, n, "%s", s);
				ok = true;
			}
			if (s)
				H5free_memory(s);
		} else {
			/* one byte more than stored: a NULLPAD or SPACEPAD string of
			 * full width keeps its last character in a NULLTERM type */
			size_t sz = H5Tget_size(ft);
			char *tmp = calloc(1, sz + 2);

			H5Tset_size(mt, sz + 1);
			H5Tset_strpad(mt, H5T_STR_NULLTERM);
			H5Tset_cset(mt, H5Tget_cset(ft));
			if (tmp && H5Aread(a, mt, tmp) >= 0) {
				snprintf(buf, n, "%s", tmp);
				ok = true;
			}
			free(tmp);
		}
		H5Tclose(mt);
	}
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	H5Aclose(a);
	return ok;
}

/* Reads a scalar numeric attribute as a double. */
static bool read_num_attr(hid_t obj, const char *name, double *v)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	bool ok = false;

	if (a < 0)
		return false;
	hid_t ft = H5Aget_type(a);
	hid_t sp = H5Aget_space(a);
	H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;

	if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && sp >= 0 &&
	    H5Sget_simple_extent_npoints(sp) == 1)
		ok = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	H5Aclose(a);
	return ok;
}

static bool read_u64_attr(hid_t obj, const char *name, uint64_t *v)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	bool ok = false;

	if (a < 0)
		return false;
	hid_t ft = H5Aget_type(a);

	if (ft >= 0 && H5Tget_class(ft) == H5T_INTEGER)
		ok = H5Aread(a, H5T_NATIVE_UINT64, v) >= 0;
	if (ft >= 0)
		H5Tclose(ft);
	H5Aclose(a);
	return ok;
}

/* Whether the stored HDF5 type is the one FORMAT.md requires for dt. */
static bool storage_matches(hid_t ft, enum mtp_dtype dt)
{
	H5T_class_t cls = H5Tget_class(ft);
	size_t sz = H5Tget_size(ft);

	switch (dt) {
	case MTP_F64:
	case MTP_F32: return cls == H5T_FLOAT && sz == mtp_dtype_size(dt);
	case MTP_F16:
	case MTP_BF16:
		return cls == H5T_INTEGER && sz == 2 &&
		       H5Tget_sign(ft) == H5T_SGN_NONE;
	case MTP_F8E4M3: /* FORMAT.md version 2: U8 bit patterns */
	case MTP_F8E8M0:
		return cls == H5T_INTEGER && sz == 1 &&
		       H5Tget_sign(ft) == H5T_SGN_NONE;
	case MTP_I64:
	case MTP_I32:
		return cls == H5T_INTEGER && sz == mtp_dtype_size(dt) &&
		       H5Tget_sign(ft) == H5T_SGN_2;
	default: return false;
	}
}

static hid_t mem_type(enum mtp_dtype dt)
{
	switch (dt) {
	case MTP_F64: return H5T_NATIVE_DOUBLE;
	case MTP_F32: return H5T_NATIVE_FLOAT;
	case MTP_F16:
	case MTP_BF16: return H5T_NATIVE_UINT16;
	case MTP_F8E4M3:
	case MTP_F8E8M0: return H5T_NATIVE_UINT8;
	case MTP_I64: return H5T_NATIVE_INT64;
	default: return H5T_NATIVE_INT32;
	}
}

/* An integer array attribute of at most max values; -1 if absent or not. */
static int read_int_array_attr(hid_t obj, const char *name, int64_t *v, int max)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	int n = -1;

	if (a < 0)
		return -1;
	hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
	hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;

	if (ft >= 0 && H5Tget_class(ft) == H5T_INTEGER && np >= 0 &&
	    np <= max && H5Aread(a, H5T_NATIVE_INT64, v) >= 0)
		n = (int)np;
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	H5Aclose(a);
	return n;
}

/* A weight by reference (FORMAT.md v2): an empty [0] placeholder whose
 * shape is ref_shape; recorded in the case, read at load time. */
static enum mtp_status scan_ref(struct reader *r, hid_t d, const char *obj,
				struct mtp_named *e, int nd, int *ndim,
				hsize_t *dims)
{
	struct mtp_case *c = &r->fx->cases[r->fx->n_cases - 1];
	struct mtp_weight_ref w = {0}, *refs;
	int64_t shape[MTP_MAX_DIMS];
	char why[MTP_ERR_MAX];
	int n = read_int_array_attr(d, "ref_shape", shape, MTP_MAX_DIMS);

	if (!strstr(obj, "/inputs/") || nd != 1 || dims[0] != 0)
		return fail(r, MTP_ERR_INVALID, obj,
			    "a weight by reference is an empty [0] input%s",
			    "");
	snprintf(w.name, sizeof(w.name), "%s", e->name);
	if (!read_str_attr(d, "ref_file", w.file, sizeof(w.file)) ||
	    !read_str_attr(d, "ref_tensor", w.tensor, sizeof(w.tensor)) ||
	    !read_str_attr(d, "ref_sha256", w.sha256, sizeof(w.sha256)) ||
	    n < 0)
		return fail(r, MTP_ERR_INVALID, obj,
			    "a weight by reference needs string ref_file, "
			    "ref_tensor, ref_sha256 and integer ref_shape%s",
			    "");
	if (mtp_weight_ref_check(&w, why, sizeof(why)))
		return fail(r, MTP_ERR_INVALID, obj, "%s", why);
	for (int i = 0; i < n; i++) {
		if (shape[i] < 0)
			return fail(r, MTP_ERR_INVALID, obj,
				    "ref_shape holds a negative size%s", "");
		dims[i] = (hsize_t)shape[i];
	}
	refs = realloc(c->refs, (size_t)(c->n_refs + 1) * sizeof(*refs));
	if (!refs)
		return fail(r, MTP_ERR_NOMEM, obj, "out of memory%s", "");
	c->refs = refs;
	c->refs[c->n_refs++] = w;
	*ndim = n;
	return MTP_OK;
}

/* live_sha256 (rule 14): the hash of the parameter the engine held. */
static enum mtp_status scan_live(struct reader *r, hid_t d, const char *obj,
				 const struct mtp_named *e)
{
	struct mtp_case *c = &r->fx->cases[r->fx->n_cases - 1];
	struct mtp_weight_ref w = {0}, *l;

	if (!read_str_attr(d, "live_sha256", w.sha256, sizeof(w.sha256)))
		return MTP_OK;
	if (strlen(w.sha256) != 64 ||
	    strspn(w.sha256, "0123456789abcdefABCDEF") != 64)
		return fail(r, MTP_ERR_INVALID, obj,
			    "live_sha256 is not 64 hex digits%s", "");
	snprintf(w.name, sizeof(w.name), "%s", e->name);
	l = realloc(c->live, (size_t)(c->n_live + 1) * sizeof(*l));
	if (!l)
		return fail(r, MTP_ERR_NOMEM, obj, "out of memory%s", "");
	c->live = l;
	c->live[c->n_live++] = w;
	return MTP_OK;
}

/* full_rows (rule 2): a scalar integer on a weight that may be a row
 * subset (subset.c says which); the declared shape gets full_rows rows. */
static enum mtp_status scan_full_rows(struct reader *r, hid_t d,
				      const char *obj, struct mtp_named *e)
{
	struct mtp_case *c = &r->fx->cases[r->fx->n_cases - 1];
	char why[MTP_ERR_MAX];
	int64_t v[2];
	enum mtp_status st;

	if (read_int_array_attr(d, "full_rows", v, 1) != 1 || v[0] <= 0)
		return fail(r, MTP_ERR_INVALID, obj,
			    "full_rows must be a positive scalar integer%s",
			    "");
	if (!strstr(obj, "/inputs/") || e->t.ndim != 2)
		return fail(
			r, MTP_ERR_INVALID, obj,
			"full_rows sits on a 2-D weight input (docs/FORMAT.md "
			"v2 rule 2)%s",
			"");
	st = mtp_subset_declare(c, e->name, v[0], e->t.shape[0], why,
				sizeof(why));
	if (st)
		return fail(r, st, obj, "%s", why);
	e->t.shape[0] = v[0];
	return MTP_OK;
}

/* Validates one dataset's metadata and records its dtype and shape. */
static enum mtp_status scan_dataset(struct reader *r, hid_t grp,
				    const char *link, const char *obj,
				    struct mtp_named *e)
{
	char dts[32];
	hid_t d = H5Dopen2(grp, link, H5P_DEFAULT);
	enum mtp_status st = MTP_OK;

	if (d < 0)
		return fail(
			r, MTP_ERR_INVALID, obj,
			"cannot open the dataset (broken or dangling link?)%s",
			"");
	hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
	int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
	hsize_t dims[MTP_MAX_DIMS];

	char why[MTP_ERR_MAX];

	if (!mtp_fxg_storage_ok(d, why, sizeof(why)))
		st = fail(r, MTP_ERR_INVALID, obj, "%s", why);
	else if (!read_str_attr(d, "dtype", dts, sizeof(dts)))
		st = fail(r, MTP_ERR_INVALID, obj,
			  "missing string attribute 'dtype'%s", "");
	else if (!mtp_dtype_parse(dts, &e->t.dtype))
		st = fail(r, MTP_ERR_INVALID, obj,
			  "dtype '%s' is not a docs/FORMAT.md dtype", dts);
	else if (ft < 0 || !storage_matches(ft, e->t.dtype))
		st = fail(r, MTP_ERR_INVALID, obj,
			  "stored HDF5 type does not match dtype '%s' (16-bit "
			  "floats are stored as uint16)",
			  dts);
	else if (nd < 0 || nd > MTP_MAX_DIMS)
		st = fail(r, MTP_ERR_INVALID, obj, "unsupported rank%s", "");
	if (st)
		goto out;
	H5Sget_simple_extent_dims(sp, dims, NULL);
	if (H5Aexists(d, "ref_file") > 0)
		st = scan_ref(r, d, obj, e, nd, &nd, dims);
	if (!st)
		st = scan_live(r, d, obj, e);
	if (st)
		goto out;
	e->t.ndim = nd;
	double bytes = (double)mtp_dtype_size(e->t.dtype);

	for (int i = 0; i < nd; i++) {
		e->t.shape[i] = (int64_t)dims[i];
		bytes *= (double)dims[i];
	}
	if (H5Aexists(d, "full_rows") > 0)
		st = scan_full_rows(r, d, obj, e);
	if (!st && bytes > (double)r->lim->max_dataset_bytes) {
		char b[64];

		snprintf(b, sizeof(b), "%.0f bytes", bytes);
		st = fail(r, MTP_ERR_LIMIT, obj,
			  "%s is over the per-dataset limit (--max-bytes)", b);
	}
	double tol;

	if (!st && read_num_attr(d, "rtol", &tol)) {
		e->tol.set = true;
		e->tol.rtol = tol;
		e->tol.atol = read_num_attr(d, "atol", &tol) ? tol : 0;
		if (!read_str_attr(d, "tolerance_origin", e->tol.origin,
				   sizeof(e->tol.origin)))
			snprintf(e->tol.origin, sizeof(e->tol.origin),
				 "fixture");
		if (!(e->tol.rtol >= 0 && e->tol.atol >= 0 &&
		      e->tol.rtol < 1e3))
			st = fail(r, MTP_ERR_INVALID, obj,
				  "rtol/atol must be finite and >= 0%s", "");
	}
out:
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	H5Dclose(d);
	return st;
}

struct group_walk {
	struct reader *r;
	struct mtp_tensor_list *list;
	const char *base;   /* "/cases/x/inputs" */
	const char *prefix; /* "" or "layer.0/" */
	int depth;
};

static herr_t walk_link(hid_t grp, const char *name, const H5L_info_t *info,
			void *arg);

/* Whether a group path "/cases/<id>/observed[/...]" is in observed/. */
static bool in_observed(const char *base)
{
	const char *p = strchr(base + (base[0] == '/'), '/');

	p = p ? strchr(p + 1, '/') : NULL;
	return p && strncmp(p + 1, "observed", 8) == 0 &&
	       (p[9] == '/' || p[9] == 0);
}

static enum mtp_status walk_group(struct reader *r, hid_t grp,
				  struct mtp_tensor_list *list,
				  const char *base, const char *prefix,
				  int depth)
{
	struct group_walk w = {r, list, base, prefix, depth};
	hsize_t idx = 0;

	if (H5Literate(grp, H5_INDEX_NAME, H5_ITER_INC, &idx, walk_link, &w) <
		    0 &&
	    !r->st)
		return fail(r, MTP_ERR_INVALID, base, "cannot list the group%s",
			    "");
	return r->st;
}

/* A <p>_rows or logits_rows companion (FORMAT.md v2) goes to the case's
 * companions as "<part>/<name>"; anything else to the walked list. */
static struct mtp_named *companion_add(struct group_walk *w, const char *name,
				       const char *full)
{
	struct mtp_case *c = &w->r->fx->cases[w->r->fx->n_cases - 1];
	size_t len = strlen(full), plen;
	/* "/cases/<id>/<part>[/layer.0]": the part after the case id */
	const char *part = strchr(w->base + 7, '/');
	char cname[MTP_NAME_MAX + 16];

	(void)name;
	if (len < 5 || strcmp(full + len - 5, "_rows") || !part)
		return mtp_list_add(w->list, full);
	part++;
	plen = strcspn(part, "/");
	snprintf(cname, sizeof(cname), "%.*s/%s", (int)plen, part, full);
	return strlen(cname) < MTP_NAME_MAX
		       ? mtp_list_add(&c->companions, cname)
		       : NULL;
}

static herr_t walk_link(hid_t grp, const char *name, const H5L_info_t *info,
			void *arg)
{
	struct group_walk *w = arg;
	char obj[MTP_PATH_MAX], full[MTP_NAME_MAX + 8], why[MTP_ERR_MAX];
	bool observed = in_observed(w->base);
	H5O_info_t oi;

	snprintf(obj, sizeof(obj), "%s/%s", w->base, name);
	if (!mtp_fxg_link_ok(grp, name, info, !observed, why, sizeof(why)))
		return fail(w->r, MTP_ERR_INVALID, obj, "%s", why), -1;
	snprintf(full, sizeof(full), "%s%s", w->prefix, name);
	if (strlen(full) >= MTP_NAME_MAX)
		return fail(w->r, MTP_ERR_INVALID, obj, "name too long%s", ""),
		       -1;
	if (H5Oget_info_by_name(grp, name, &oi, H5P_DEFAULT) < 0)
		return fail(w->r, MTP_ERR_INVALID, obj,
			    "cannot resolve the object (dangling soft link?)%s",
			    ""),
		       -1;
	if (oi.type == H5O_TYPE_GROUP) {
		if (w->depth >= 1)
			return fail(w->r, MTP_ERR_INVALID, obj,
				    "groups nest at most one level "
				    "(layer.<l>/, step.<s>/)%s",
				    ""),
			       -1;
		hid_t g = H5Gopen2(grp, name, H5P_DEFAULT);
		char pfx[MTP_NAME_MAX + 8];

		snprintf(pfx, sizeof(pfx), "%s/", full);
		enum mtp_status st = g < 0 ? MTP_ERR_INVALID
					   : walk_group(w->r, g, w->list, obj,
							pfx, w->depth + 1);
		if (g >= 0)
			H5Gclose(g);
		return st ? -1 : 0;
	}
	if (oi.type != H5O_TYPE_DATASET)
		return fail(w->r, MTP_ERR_INVALID, obj, "not a dataset%s", ""),
		       -1;
	if (observed && oi.rc > 1)
		return fail(w->r, MTP_ERR_INVALID, obj,
			    "an observed/ dataset is linked from elsewhere "
			    "too (never a link target)%s",
			    ""),
		       -1;
	struct mtp_named *e = companion_add(w, name, full);

	if (!e)
		return fail(w->r, MTP_ERR_NOMEM, obj, "out of memory%s", ""),
		       -1;
	return scan_dataset(w->r, grp, name, obj, e) ? -1 : 0;
}

static bool valid_case_id(const char *s)
{
	if (!*s || strlen(s) >= sizeof(((struct mtp_case *)0)->id))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      *s == '-'))
			return false;
	return true;
}

static bool attr_is_int(hid_t obj, const char *name)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
	bool is_int = ft >= 0 && H5Tget_class(ft) == H5T_INTEGER;

	if (ft >= 0)
		H5Tclose(ft);
	if (a >= 0)
		H5Aclose(a);
	return is_int;
}

static herr_t collect_attr(hid_t obj, const char *name, const H5A_info_t *ai,
			   void *arg)
{
	struct mtp_attr_list *l = arg;
	struct mtp_attr *a;

	(void)ai;
	if (l->n >= (int)(sizeof(l->items) / sizeof(l->items[0])))
		return 0; /* only known attributes matter; extras are ignored */
	a = &l->items[l->n];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	if (read_str_attr(obj, name, a->str, sizeof(a->str)))
		a->is_string = true;
	else if (!read_num_attr(obj, name, &a->num))
		a->num = NAN; /* arrays, enums...: refused where a known
				 attribute must be a number */
	else
		a->is_int = attr_is_int(obj, name);
	l->n++;
	return 0;
}

static enum mtp_status scan_part(struct reader *r, hid_t cg, const char *id,
				 const char *part, struct mtp_tensor_list *l)
{
	char base[MTP_PATH_MAX];

	snprintf(base, sizeof(base), "/cases/%s/%s", id, part);
	char why[MTP_ERR_MAX];

	if (H5Lexists(cg, part, H5P_DEFAULT) <= 0)
		return MTP_OK;
	if (!mtp_fxg_hard_link(cg, part, why, sizeof(why)))
		return fail(r, MTP_ERR_INVALID, base, "%s", why);
	hid_t g = H5Gopen2(cg, part, H5P_DEFAULT);

	if (g < 0)
		return fail(r, MTP_ERR_INVALID, base, "is not a group%s", "");
	enum mtp_status st = walk_group(r, g, l, base, "", 0);

	H5Gclose(g);
	return st;
}

static enum mtp_status scan_case_attrs(struct reader *r, hid_t cg,
				       const char *obj, struct mtp_case *c)
{
	char s[64];
	hsize_t idx = 0;

	if (!read_str_attr(cg, "op", s, sizeof(s)))
		return fail(r, MTP_ERR_INVALID, obj,
			    "missing string attribute 'op'%s", "");
	c->op = mtp_op_find(s);
	if (!c->op)
		return fail(r, MTP_ERR_INVALID, obj,
			    "unknown op '%s' (mtpcheck list ops)", s);
	if (!read_str_attr(cg, "family", s, sizeof(s)))
		return fail(r, MTP_ERR_INVALID, obj,
			    "missing string attribute 'family'%s", "");
	if (!mtp_family_parse(s, &c->family))
		return fail(
			r, MTP_ERR_INVALID, obj,
			"family '%s' is not deepseek_v3, glm or deepseek_v4",
			s);
	c->has_seed = read_u64_attr(cg, "seed", &c->seed);
	if (!c->has_seed)
		return fail(r, MTP_ERR_INVALID, obj,
			    "missing integer attribute 'seed'%s", "");
	H5Aiterate2(cg, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr,
		    &c->attrs);
	return MTP_OK;
}

static enum mtp_status scan_case(struct reader *r, hid_t cases, const char *id,
				 struct mtp_case *c)
{
	char obj[MTP_PATH_MAX], why[MTP_ERR_MAX];
	struct mtp_signature *sig;
	struct mtp_dims dims;
	enum mtp_dtype act;
	enum mtp_status st;

	snprintf(obj, sizeof(obj), "/cases/%s", id);
	snprintf(c->file, sizeof(c->file), "%s", r->fx->path);
	if (!valid_case_id(id))
		return fail(r, MTP_ERR_INVALID, obj,
			    "case id must match [A-Za-z0-9_.-]+%s", "");
	snprintf(c->id, sizeof(c->id), "%s", id);
	hid_t cg = H5Gopen2(cases, id, H5P_DEFAULT);

	if (cg < 0)
		return fail(r, MTP_ERR_INVALID, obj, "is not a group%s", "");
	st = scan_case_attrs(r, cg, obj, c);
	if (!st)
		st = scan_part(r, cg, id, "inputs", &c->inputs);
	if (!st)
		st = scan_part(r, cg, id, "expected", &c->expected);
	if (!st)
		st = scan_part(r, cg, id, "observed", &c->observed);
	H5Gclose(cg);
	if (st)
		return st;
	st = mtp_fixture_v2_check(r->fx, c, why, sizeof(why));
	if (st)
		return fail(r, st, obj, "%s", why);
	if (c->expected.n == 0 && c->observed.n == 0)
		return fail(r, MTP_ERR_INVALID, obj,
			    "has neither expected/ nor observed/ datasets%s",
			    "");
	sig = malloc(sizeof(*sig));
	if (!sig)
		return fail(r, MTP_ERR_NOMEM, obj, "out of memory%s", "");
	st = mtp_case_check(c, sig, &dims, &act, why, sizeof(why));
	if (!st)
		st = mtp_fixture_rules_scan(c, sig, &dims, act, why,
					    sizeof(why));
	free(sig);
	if (st)
		return fail(r, st, obj, "%s", why);
	return MTP_OK;
}

static herr_t scan_case_cb(hid_t cases, const char *name,
			   const H5L_info_t *info, void *arg)
{
	struct reader *r = arg;
	struct mtp_fixture *fx = r->fx;
	struct mtp_case *c;
	char obj[MTP_PATH_MAX], why[MTP_ERR_MAX];

	snprintf(obj, sizeof(obj), "/cases/%s", name);
	if (!mtp_fxg_link_ok(cases, name, info, false, why, sizeof(why)))
		return fail(r, MTP_ERR_INVALID, obj, "%s", why), -1;
	c = realloc(fx->cases, (size_t)(fx->n_cases + 1) * sizeof(*c));
	if (!c)
		return fail(r, MTP_ERR_NOMEM, "/cases", "out of memory%s", ""),
		       -1;
	fx->cases = c;
	c = &fx->cases[fx->n_cases++];
	memset(c, 0, sizeof(*c));
	return scan_case(r, cases, name, c) ? -1 : 0;
}

/*
 * HDF5 1.10 decodes a global heap collection (where variable-length strings
 * live) without bounds checks: an object of index 0 and size 0 never
 * advances, so the library loops forever, and a size past the collection's
 * end makes it read out of bounds. Before HDF5 sees a file, every "GCOL"
 * collection in it is walked as the library walks it, and the file is
 * refused if the walk would not end inside the collection. One extra read of
 * the file; only files with 8-byte lengths (h5py's, ours) are checked.
 */
#define GCOL_HDR 16u	     /* magic, version, reserved, size */
#define GCOL_MAX (16u << 20) /* larger ones are not walked */

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static bool gcol_walk_ok(const unsigned char *c, uint64_t size)
{
	uint64_t off = GCOL_HDR;

	while (off + GCOL_HDR <= size) { /* a shorter tail is free space */
		unsigned idx = c[off] | (unsigned)c[off + 1] << 8;
		uint64_t osz = le64(c + off + 8);

		if (osz > size)
			return false;
		uint64_t need =
			idx ? GCOL_HDR + ((osz + 7) & ~(uint64_t)7) : osz;

		if (need == 0 || need > size - off)
			return false;
		off += need;
	}
	return true;
}

/* Whether the collection at `at` (signature and version seen) walks. */
static bool gcol_ok(FILE *f, off_t at)
{
	unsigned char hdr[GCOL_HDR], *c;
	uint64_t size;
	bool ok;

	if (fseeko(f, at, SEEK_SET) || fread(hdr, 1, GCOL_HDR, f) != GCOL_HDR)
		return true; /* HDF5 cannot read it either */
	size = le64(hdr + 8);
	if (size < GCOL_HDR || size > GCOL_MAX)
		return true;	     /* HDF5 refuses or cannot allocate it */
	c = calloc(1, (size_t)size); /* past the end of the file reads as 0 */
	if (!c)
		return true;
	if (fseeko(f, at, SEEK_SET) == 0)
		(void)!fread(c, 1, (size_t)size, f);
	ok = gcol_walk_ok(c, size);
	free(c);
	return ok;
}

/* The size of lengths in the superblock at offset 0, or 0. */
static unsigned sizeof_lengths(FILE *f)
{
	unsigned char sb[16];

	if (fread(sb, 1, sizeof(sb), f) != sizeof(sb) ||
	    memcmp(sb, "\x89HDF\r\n\x1a\n", 8))
		return 0;
	return sb[8] <= 1 ? sb[14] : sb[10];
}

static bool global_heaps_ok(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[(1 << 16) + 4];
	size_t keep = 0, n;
	off_t base = 0;
	bool ok = true;

	if (!f)
		return true;
	if (sizeof_lengths(f) != 8)
		goto out;
	rewind(f);
	while (ok && (n = fread(buf + keep, 1, sizeof(buf) - keep, f)) > 0) {
		size_t len = keep + n;
		off_t next = ftello(f);

		for (size_t i = 0; ok && i + 5 <= len; i++)
			if (buf[i] == 'G' && memcmp(buf + i, "GCOL\1", 5) == 0)
				ok = gcol_ok(f, base + (off_t)i);
		keep = len < 4 ? len : 4;
		memmove(buf, buf + len - keep, keep);
		base += (off_t)(len - keep);
		if (fseeko(f, next, SEEK_SET))
			break;
	}
out:
	fclose(f);
	return ok;
}

static enum mtp_status check_root(struct reader *r, hid_t f)
{
	char fmt[64];
	int64_t ver;
	bool is_int;

	if (!read_str_attr(f, "format", fmt, sizeof(fmt)))
		return fail(r, MTP_ERR_INVALID, "/",
			    "missing string attribute 'format'%s", "");
	if (strcmp(fmt, MTP_FORMAT_NAME) != 0)
		return fail(r, MTP_ERR_INVALID, "/",
			    "format is '%s', not 'mtpcheck-fixture'", fmt);
	if (!mtp_fxg_int_attr(f, "format_version", &ver, &is_int))
		return fail(r, MTP_ERR_INVALID, "/",
			    "missing integer attribute 'format_version'%s", "");
	if (!is_int)
		return fail(r, MTP_ERR_INVALID, "/",
			    "format_version must be an integer attribute (a "
			    "float or a string is refused)%s",
			    "");
	if (ver != 1 && ver != MTP_FORMAT_VERSION_MAX) {
		snprintf(fmt, sizeof(fmt), "%lld", (long long)ver);
		return fail(r, MTP_ERR_INVALID, "/",
			    "format_version %s is not supported (this reader "
			    "knows 1 and 2)",
			    fmt);
	}
	r->fx->format_version = (int)ver;
	if (!read_str_attr(f, "generator", r->fx->generator,
			   sizeof(r->fx->generator)))
		snprintf(r->fx->generator, sizeof(r->fx->generator), "unknown");
	return MTP_OK;
}

enum mtp_status mtp_fixture_open_direct(const char *path,
					const struct mtp_limits *lim,
					struct mtp_fixture *fx, char *err,
					size_t errn)
{
	struct reader r = {fx, lim, err, errn, MTP_OK};
	char why[MTP_ERR_MAX];
	hsize_t idx = 0;
	hid_t f, cases;

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->path, sizeof(fx->path), "%s", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	int fd = mtp_open_regular(path, why, sizeof(why));

	if (fd < 0)
		return fail(&r, MTP_ERR_IO, "/", "cannot open the file: %s",
			    why);
	close(fd);
	if (H5Fis_hdf5(path) <= 0)
		return fail(&r, MTP_ERR_INVALID, "/",
			    "not an HDF5 file (corrupt or truncated?)%s", "");
	if (!global_heaps_ok(path))
		return fail(&r, MTP_ERR_INVALID, "/",
			    "corrupt global heap (variable-length strings)%s",
			    "");
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0)
		return fail(&r, MTP_ERR_INVALID, "/",
			    "HDF5 cannot open it (corrupt or truncated?)%s",
			    "");
	if (check_root(&r, f))
		goto out_close;
	if (H5Lexists(f, "cases", H5P_DEFAULT) > 0 &&
	    !mtp_fxg_hard_link(f, "cases", why, sizeof(why))) {
		fail(&r, MTP_ERR_INVALID, "/cases", "%s", why);
		goto out_close;
	}
	cases = H5Gopen2(f, "cases", H5P_DEFAULT);
	if (cases < 0) {
		fail(&r, MTP_ERR_INVALID, "/cases", "missing group%s", "");
		goto out_close;
	}
	if (H5Literate(cases, H5_INDEX_NAME, H5_ITER_INC, &idx, scan_case_cb,
		       &r) < 0 &&
	    !r.st)
		fail(&r, MTP_ERR_INVALID, "/cases",
		     "cannot list the cases (corrupt?)%s", "");
	H5Gclose(cases);
out_close:
	H5Fclose(f);
	if (r.st)
		mtp_fixture_close(fx);
	return r.st;
}

static const struct mtp_weight_ref *ref_of(const struct mtp_case *c,
					   const char *part, const char *name)
{
	for (int i = 0; strcmp(part, "inputs") == 0 && i < c->n_refs; i++)
		if (strcmp(c->refs[i].name, name) == 0)
			return &c->refs[i];
	return NULL;
}

/* Weights by reference, from --weights DIR (weights_ref.c), and the
 * live_sha256 of inputs against their data. */
static enum mtp_status load_refs(struct reader *r, struct mtp_case *c)
{
	char why[MTP_ERR_MAX], obj[MTP_PATH_MAX];

	for (int i = 0; i < c->n_refs; i++) {
		struct mtp_named *e =
			mtp_list_find(&c->inputs, c->refs[i].name);
		enum mtp_status st =
			mtp_weight_ref_load(r->fx->weights_dir, &c->refs[i],
					    &e->t, why, sizeof(why));

		snprintf(obj, sizeof(obj), "/cases/%s/inputs/%s", c->id,
			 e->name);
		if (st)
			return fail(r, st, obj, "%s", why);
	}
	for (int i = 0; i < c->n_live; i++) {
		const struct mtp_named *e =
			mtp_list_find(&c->inputs, c->live[i].name);
		char rows[MTP_NAME_MAX + 8];

		size_t len = strlen(c->live[i].name);

		if (len >= 7 && !strcmp(c->live[i].name + len - 7, "_weight"))
			len -= 7; /* <p>_weight -> <p>_rows (rule 1) */
		snprintf(rows, sizeof(rows), "%.*s_rows", (int)len,
			 c->live[i].name);
		if (!e || mtp_list_find(&c->inputs, rows) ||
		    mtp_weight_hash_ok(&e->t, c->live[i].sha256))
			continue; /* on a subset it is information (rule 14) */
		snprintf(obj, sizeof(obj), "/cases/%s/inputs/%s", c->id,
			 c->live[i].name);
		return fail(r, MTP_ERR_INVALID, obj,
			    "live_sha256 differs from the data: the engine "
			    "held another tensor than the one dumped (a "
			    "loader bug?)%s",
			    "");
	}
	return MTP_OK;
}

static enum mtp_status load_list(struct reader *r, hid_t cg,
				 const struct mtp_case *c, const char *part,
				 struct mtp_tensor_list *l)
{
	char obj[MTP_PATH_MAX];
	const char *id = c->id;

	for (int i = 0; i < l->n; i++) {
		struct mtp_tensor *t = &l->items[i].t;
		int64_t shape[MTP_MAX_DIMS];

		if (part && ref_of(c, part, l->items[i].name))
			continue;

		snprintf(obj, sizeof(obj), "/cases/%s/%s%s%s", id,
			 part ? part : "", part ? "/" : "", l->items[i].name);
		memcpy(shape, t->shape, sizeof(shape));
		if (part && !strcmp(part, "inputs") && t->ndim > 0)
			shape[0] = mtp_subset_load_rows(c, l->items[i].name,
							shape[0]);
		if (mtp_tensor_alloc(t, t->dtype, t->ndim, shape))
			return fail(r, MTP_ERR_NOMEM, obj, "out of memory%s",
				    "");
		if (!t->data)
			continue;
		hid_t d = H5Dopen2(cg, obj, H5P_DEFAULT);
		herr_t e = d < 0 ? -1
				 : H5Dread(d, mem_type(t->dtype), H5S_ALL,
					   H5S_ALL, H5P_DEFAULT, t->data);
		if (d >= 0)
			H5Dclose(d);
		if (e < 0)
			return fail(r, MTP_ERR_INVALID, obj,
				    "cannot read the data (corrupt or "
				    "truncated?)%s",
				    "");
	}
	return MTP_OK;
}

/* Index inputs must address real rows: ids in [0, V), positions >= 0. */
static enum mtp_status check_indices(struct reader *r, struct mtp_case *c)
{
	const struct mtp_named *tab = mtp_list_find(&c->inputs, "embed_table");
	const struct mtp_subset_decl *sub =
		mtp_subset_decl_of(c, "embed_table");
	int64_t v = sub ? sub->full_rows : tab ? tab->t.shape[0] : 0;

	for (int i = 0; i < c->inputs.n; i++) {
		const struct mtp_named *e = &c->inputs.items[i];
		bool ids = strcmp(e->name, "input_ids") == 0 ||
			   strcmp(e->name, "next_tokens") == 0;
		char obj[MTP_PATH_MAX];

		if (e->t.dtype != MTP_I64 && e->t.dtype != MTP_I32)
			continue;
		for (int64_t k = 0; k < mtp_tensor_numel(&e->t); k++) {
			double x = mtp_load(e->t.dtype, e->t.data, (size_t)k);

			if (x >= 0 && (!ids || x < (double)v))
				continue;
			snprintf(obj, sizeof(obj), "/cases/%s/inputs/%s", c->id,
				 e->name);
			return fail(
				r, MTP_ERR_INVALID, obj,
				ids ? "an id is outside [0, V) of embed_table%s"
				    : "a negative value%s",
				"");
		}
	}
	return MTP_OK;
}

static enum mtp_status load_rules(struct reader *r, struct mtp_case *c)
{
	char obj[MTP_PATH_MAX], why[MTP_ERR_MAX];

	snprintf(obj, sizeof(obj), "/cases/%s", c->id);
	if (mtp_fixture_rules_load(c, why, sizeof(why)))
		return fail(r, MTP_ERR_INVALID, obj, "%s", why);
	return MTP_OK;
}

enum mtp_status mtp_fixture_load(struct mtp_fixture *fx, int i, char *err,
				 size_t errn)
{
	struct mtp_limits lim = {UINT64_MAX};
	struct reader r = {fx, &lim, err, errn, MTP_OK};
	struct mtp_case *c = &fx->cases[i];
	hid_t f;

	if (c->loaded)
		return MTP_OK;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fopen(fx->path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0)
		return fail(&r, MTP_ERR_IO, "/", "cannot reopen the file%s",
			    "");
	if (!load_list(&r, f, c, "inputs", &c->inputs) &&
	    !load_list(&r, f, c, "expected", &c->expected) &&
	    !load_list(&r, f, c, "observed", &c->observed) &&
	    !load_list(&r, f, c, NULL, &c->companions) && !load_refs(&r, c) &&
	    !check_indices(&r, c)) {
		char why[MTP_ERR_MAX], obj[MTP_PATH_MAX];

		snprintf(obj, sizeof(obj), "/cases/%s", c->id);
		if (mtp_subset_check_values(c, why, sizeof(why)))
			fail(&r, MTP_ERR_INVALID, obj, "%s", why);
		else if (!load_rules(&r, c))
			mtp_subset_expand(c);
	}
	H5Fclose(f);
	c->loaded = r.st == MTP_OK;
	if (r.st)
		mtp_fixture_unload(fx, i);
	return r.st;
}

static void list_unload(struct mtp_tensor_list *l)
{
	for (int i = 0; i < l->n; i++)
		mtp_tensor_fini(&l->items[i].t);
}

void mtp_fixture_unload(struct mtp_fixture *fx, int i)
{
	struct mtp_case *c = &fx->cases[i];

	list_unload(&c->inputs);
	list_unload(&c->expected);
	list_unload(&c->observed);
	list_unload(&c->companions);
	c->loaded = false;
}

void mtp_case_fini(struct mtp_case *c)
{
	free(c->refs);
	free(c->live);
	free(c->subsets);
	c->refs = c->live = NULL;
	c->subsets = NULL;
	c->n_refs = c->n_live = c->n_subsets = 0;
	mtp_list_fini(&c->inputs);
	mtp_list_fini(&c->expected);
	mtp_list_fini(&c->observed);
	mtp_list_fini(&c->companions);
}

void mtp_fixture_close(struct mtp_fixture *fx)
{
	for (int i = 0; i < fx->n_cases; i++)
		mtp_case_fini(&fx->cases[i]);
	free(fx->cases);
	fx->cases = NULL;
	fx->n_cases = 0;
}
