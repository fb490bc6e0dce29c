/*
 * Writing FORMAT.md v1 files (dumps of observed outputs, fixtures made in
 * process, test files). Strings are variable-length UTF-8, numbers scalar
 * float64 (int64 for seed and integer attributes); the file is written under a
 * temporary name and renamed, so a reader never sees half a file.
 */
#include "mtp/fixture.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static herr_t put_str(hid_t obj, const char *name, const char *val)
{
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a;
	herr_t e;

	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	e = a < 0 ? -1 : H5Awrite(a, t, &val);
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
	return e;
}

static herr_t put_num(hid_t obj, const char *name, double v, bool integer)
{
	hid_t sp = H5Screate(H5S_SCALAR), a;
	herr_t e;
	int64_t iv = (int64_t)v;

	a = H5Acreate2(obj, name, integer ? H5T_STD_I64LE : H5T_IEEE_F64LE, sp,
		       H5P_DEFAULT, H5P_DEFAULT);
	e = a < 0 ? -1
		  : H5Awrite(a, integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE,
			     integer ? (const void *)&iv : (const void *)&v);
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(sp);
	return e;
}

static hid_t file_type(enum mtp_dtype dt)
{
	switch (dt) {
	case MTP_F64: return H5T_IEEE_F64LE;
	case MTP_F32: return H5T_IEEE_F32LE;
	case MTP_I64: return H5T_STD_I64LE;
	case MTP_I32: return H5T_STD_I32LE;
	case MTP_F8E4M3:
	case MTP_F8E8M0: return H5T_STD_U8LE;
	default: return H5T_STD_U16LE;
	}
}

static hid_t native_type(enum mtp_dtype dt)
{
	switch (dt) {
	case MTP_F64: return H5T_NATIVE_DOUBLE;
	case MTP_F32: return H5T_NATIVE_FLOAT;
	case MTP_I64: return H5T_NATIVE_INT64;
	case MTP_I32: return H5T_NATIVE_INT32;
	case MTP_F8E4M3:
	case MTP_F8E8M0: return H5T_NATIVE_UINT8;
	default: return H5T_NATIVE_UINT16;
	}
}

/* Writes "a/b" under grp, creating the intermediate group if needed. */
static herr_t put_tensor(hid_t grp, const struct mtp_named *e)
{
	char path[MTP_NAME_MAX];
	hsize_t dims[MTP_MAX_DIMS];
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), sp, d;
	herr_t err = -1;

	snprintf(path, sizeof(path), "%s", e->name);
	H5Pset_create_intermediate_group(lcpl, 1);
	for (int i = 0; i < e->t.ndim; i++)
		dims[i] = (hsize_t)e->t.shape[i];
	sp = e->t.ndim ? H5Screate_simple(e->t.ndim, dims, NULL)
		       : H5Screate(H5S_SCALAR);
	d = H5Dcreate2(grp, path, file_type(e->t.dtype), sp, lcpl, H5P_DEFAULT,
		       H5P_DEFAULT);
	if (d >= 0) {
		err = e->t.data ? H5Dwrite(d, native_type(e->t.dtype), H5S_ALL,
					   H5S_ALL, H5P_DEFAULT, e->t.data)
				: 0;
		if (err >= 0)
			err = put_str(d, "dtype", mtp_dtype_name(e->t.dtype));
		if (err >= 0 && e->tol.set) {
			err = put_num(d, "rtol", e->tol.rtol, false);
			if (err >= 0)
				err = put_num(d, "atol", e->tol.atol, false);
			if (err >= 0)
				err = put_str(d, "tolerance_origin",
					      e->tol.origin);
		}
		H5Dclose(d);
	}
	H5Sclose(sp);
	H5Pclose(lcpl);
	return err;
}

static herr_t put_list(hid_t cg, const char *part,
		       const struct mtp_tensor_list *l)
{
	hid_t g;
	herr_t e = 0;

	if (l->n == 0)
		return 0;
	g = H5Gcreate2(cg, part, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return -1;
	for (int i = 0; e >= 0 && i < l->n; i++)
		e = put_tensor(g, &l->items[i]);
	H5Gclose(g);
	return e;
}

static herr_t put_case(hid_t cases, const struct mtp_case *c)
{
	hid_t cg =
		H5Gcreate2(cases, c->id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	herr_t e;

	if (cg < 0)
		return -1;
	e = put_str(cg, "op", c->op->name);
	if (e >= 0)
		e = put_str(cg, "family", mtp_family_name(c->family));
	if (e >= 0)
		e = put_num(cg, "seed", (double)c->seed, true);
	for (int i = 0; e >= 0 && i < c->attrs.n; i++) {
		const struct mtp_attr *a = &c->attrs.items[i];

		if (a->is_string)
			e = put_str(cg, a->name, a->str);
		else
			e = put_num(cg, a->name, a->num,
				    a->num == floor(a->num) &&
					    fabs(a->num) >= 1);
	}
	if (e >= 0)
		e = put_list(cg, "inputs", &c->inputs);
	if (e >= 0)
		e = put_list(cg, "expected", &c->expected);
	if (e >= 0)
		e = put_list(cg, "observed", &c->observed);
	H5Gclose(cg);
	return e;
}

enum mtp_status mtp_fixture_write(const char *path, const char *generator,
				  const struct mtp_case *cases, int n,
				  char *err, size_t errn)
{
	char tmp[MTP_PATH_MAX + 32], when[32];
	time_t t = time(NULL);
	herr_t e;
	hid_t f, g;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0) {
		snprintf(err, errn, "%s: cannot create the file", path);
		return MTP_ERR_IO;
	}
	e = put_str(f, "format", MTP_FORMAT_NAME);
	if (e >= 0)
		e = put_num(f, "format_version", MTP_FORMAT_VERSION, true);
	if (e >= 0)
		e = put_str(f, "generator", generator);
	if (e >= 0)
		e = put_str(f, "created", when);
	g = e >= 0 ? H5Gcreate2(f, "cases", H5P_DEFAULT, H5P_DEFAULT,
				H5P_DEFAULT)
		   : -1;
	for (int i = 0; g >= 0 && e >= 0 && i < n; i++)
		e = put_case(g, &cases[i]);
	if (g >= 0)
		H5Gclose(g);
	if (H5Fclose(f) < 0 || g < 0 || e < 0 || rename(tmp, path) != 0) {
		remove(tmp);
		snprintf(err, errn, "%s: cannot write the file", path);
		return MTP_ERR_IO;
	}
	return MTP_OK;
}
