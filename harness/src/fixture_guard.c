/*
 * What a fixture file may make the HDF5 library do, checked before it does
 * it (FIXTURES.md v2 rules 12 and 13): links stay inside the file (hard
 * links, and soft links to a dataset under /cases reached through hard links
 * only; nothing in observed/ is a link or a link's target), and datasets are
 * contiguous or chunked, stored in the file itself, with only the deflate,
 * shuffle and fletcher32 filters. Every check looks at link and property
 * metadata only: no link is followed, no external file is opened.
 */
#include "fixture_guard.h"

#include <stdio.h>
#include <string.h>

static const char *link_kind(H5L_type_t t)
{
	switch (t) {
	case H5L_TYPE_HARD: return "hard";
	case H5L_TYPE_SOFT: return "soft";
	case H5L_TYPE_EXTERNAL: return "external";
	default: return "user-defined";
	}
}

/* Every component of an absolute path is a hard link (none is followed). */
static bool path_all_hard(hid_t file, const char *target, char *why, size_t n)
{
	char prefix[MTP_PATH_MAX];
	size_t len = strlen(target);

	if (len >= sizeof(prefix)) {
		snprintf(why, n, "soft link target too long");
		return false;
	}
	for (size_t i = 1; i <= len; i++) {
		H5L_info_t li;

		if (target[i] != '/' && target[i] != 0)
			continue;
		memcpy(prefix, target, i);
		prefix[i] = 0;
		if (H5Lexists(file, prefix, H5P_DEFAULT) <= 0 ||
		    H5Lget_info(file, prefix, &li, H5P_DEFAULT) < 0) {
			snprintf(why, n, "soft link to '%s': '%s' is missing",
				 target, prefix);
			return false;
		}
		if (li.type != H5L_TYPE_HARD) {
			snprintf(why, n,
				 "soft link to '%s': '%s' is itself a %s link "
				 "(a target must name a dataset)",
				 target, prefix, link_kind(li.type));
			return false;
		}
	}
	return true;
}

/* Rule 12 for a soft link: "/cases/<id>/<part>/..." naming a dataset,
 * outside observed/, reached through hard links only. */
static bool soft_target_ok(hid_t grp, const char *name, size_t vlen, char *why,
			   size_t n)
{
	char target[MTP_PATH_MAX], id[MTP_PATH_MAX], part[16];
	hid_t file = H5Iget_file_id(grp);
	H5O_info_t oi;
	bool ok = false;

	if (file < 0 || vlen == 0 || vlen > sizeof(target) ||
	    H5Lget_val(grp, name, target, sizeof(target), H5P_DEFAULT) < 0) {
		snprintf(why, n, "soft link whose target cannot be read");
		goto out;
	}
	target[sizeof(target) - 1] = 0;
	if (sscanf(target, "/cases/%511[^/]/%15[^/]/", id, part) != 2) {
		snprintf(why, n,
			 "soft link to '%s': a target must be an absolute "
			 "path /cases/<id>/<group>/... naming a dataset",
			 target);
		goto out;
	}
	if (strcmp(part, "observed") == 0) {
		snprintf(why, n,
			 "soft link to '%s': observed/ datasets are never "
			 "link targets",
			 target);
		goto out;
	}
	if (!path_all_hard(file, target, why, n))
		goto out;
	if (H5Oget_info_by_name(file, target, &oi, H5P_DEFAULT) < 0 ||
	    oi.type != H5O_TYPE_DATASET) {
		snprintf(why, n,
			 "soft link to '%s': the target is not a dataset",
			 target);
		goto out;
	}
	ok = true;
out:
	if (file >= 0)
		H5Fclose(file);
	return ok;
}

bool mtp_fxg_link_ok(hid_t grp, const char *name, const H5L_info_t *info,
		     bool soft_ok, char *why, size_t n)
{
	if (info->type == H5L_TYPE_HARD)
		return true;
	if (info->type == H5L_TYPE_SOFT && soft_ok)
		return soft_target_ok(grp, name, info->u.val_size, why, n);
	snprintf(why, n,
		 "is a%s %s link: only hard links and soft links to a dataset "
		 "in this file are read%s",
		 info->type == H5L_TYPE_EXTERNAL ? "n" : "",
		 link_kind(info->type),
		 info->type == H5L_TYPE_SOFT ? " (never in observed/)" : "");
	return false;
}

bool mtp_fxg_hard_link(hid_t loc, const char *name, char *why, size_t n)
{
	H5L_info_t li;

	if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0) {
		snprintf(why, n, "cannot read the link");
		return false;
	}
	return mtp_fxg_link_ok(loc, name, &li, false, why, n);
}

static const char *filter_name(H5Z_filter_t id, const char *stored)
{
	switch (id) {
	case H5Z_FILTER_SZIP: return "szip";
	case H5Z_FILTER_NBIT: return "nbit";
	case H5Z_FILTER_SCALEOFFSET: return "scaleoffset";
	default: return stored[0] ? stored : "unknown";
	}
}

bool mtp_fxg_storage_ok(hid_t dset, char *why, size_t n)
{
	hid_t dcpl = H5Dget_create_plist(dset);
	bool ok = false;
	int nf;

	if (dcpl < 0) {
		snprintf(why, n, "cannot read the storage properties");
		return false;
	}
	H5D_layout_t lay = H5Pget_layout(dcpl);

	if (lay != H5D_CONTIGUOUS && lay != H5D_CHUNKED) {
		snprintf(why, n,
			 "storage layout %s is refused (contiguous or chunked "
			 "only)",
			 lay == H5D_VIRTUAL   ? "virtual (data in other files)"
			 : lay == H5D_COMPACT ? "compact"
					      : "unknown");
		goto out;
	}
	if (H5Pget_external_count(dcpl) != 0) {
		snprintf(why, n,
			 "its data is stored in external files: refused");
		goto out;
	}
	nf = H5Pget_nfilters(dcpl);
	for (int i = 0; i < nf; i++) {
		unsigned flags, cd[8];
		size_t ncd = 8;
		char fname[64] = "";
		H5Z_filter_t id =
			H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd,
				       sizeof(fname), fname, NULL);

		fname[sizeof(fname) - 1] = 0;
		if (id == H5Z_FILTER_DEFLATE || id == H5Z_FILTER_SHUFFLE ||
		    id == H5Z_FILTER_FLETCHER32)
			continue;
		for (char *p = fname; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		snprintf(why, n,
			 "filter %d (%s) is refused: only deflate, shuffle "
			 "and fletcher32 are allowed",
			 (int)id, filter_name(id, fname));
		goto out;
	}
	ok = nf >= 0;
	if (!ok)
		snprintf(why, n, "cannot read the filters");
out:
	H5Pclose(dcpl);
	return ok;
}

bool mtp_fxg_int_attr(hid_t obj, const char *name, int64_t *v, bool *is_int)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	bool ok = false;

	*is_int = false;
	if (a < 0)
		return false;
	hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);

	if (ft >= 0 && sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1) {
		ok = true;
		*is_int = H5Tget_class(ft) == H5T_INTEGER &&
			  H5Aread(a, H5T_NATIVE_INT64, v) >= 0;
	}
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	H5Aclose(a);
	return ok;
}
