/*
 * A checkpoint folder for the weight audit (`audit-weights --checkpoint`):
 * its tensor names, dtypes and shapes from the safetensors headers and the
 * index file, read by the one safetensors reader (mtp/safetensors.h) with
 * its strict bounds. No tensor data is read. A folder whose index and
 * headers disagree cannot be judged: a one-line error naming the file.
 */
#include "mtp/safetensors.h"
#include "mtp/weightmap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INDEX_NAME "model.safetensors.index.json"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct mtp_st_tensor *)a)->name,
		      ((const struct mtp_st_tensor *)b)->name);
}

static bool join(char *buf, size_t n, const char *dir, const char *file)
{
	return (size_t)snprintf(buf, n, "%s/%s", dir, file) < n;
}

static int by_entry(const void *a, const void *b)
{
	return strcmp(((const struct mtp_st_index_entry *)a)->name,
		      ((const struct mtp_st_index_entry *)b)->name);
}

/* Appends the tensors of dir/file. With an index (sorted by name), each
 * must be listed there under this file. */
static enum mtp_status add_file(struct mtp_wm_ckpt *k, const char *dir,
				const char *file, const struct mtp_st_index *ix,
				char *err, size_t errn)
{
	struct mtp_safetensors st;
	char path[1024];
	enum mtp_status r;
	void *v;

	if (!join(path, sizeof(path), dir, file)) {
		snprintf(err, errn, "%.200s: a file name too long", dir);
		return MTP_ERR_INVALID;
	}
	if ((r = mtp_safetensors_open(path, &st, err, errn)))
		return r;
	v = realloc(k->t, (size_t)(k->n + st.n + 1) * sizeof(*k->t));
	if (!v)
		r = MTP_ERR_NOMEM;
	else
		k->t = v;
	for (int i = 0; i < st.n && !r; i++) {
		const struct mtp_st_index_entry *e =
			ix ? bsearch(st.tensors[i].name, ix->v, (size_t)ix->n,
				     sizeof(*ix->v), by_entry)
			   : NULL;

		if (ix && (!e || strcmp(e->file, file))) {
			snprintf(err, errn,
				 "%s: %.120s: in this file's header but %s",
				 path, st.tensors[i].name,
				 e ? "the index names another file for it"
				   : "not in " INDEX_NAME);
			r = MTP_ERR_INVALID;
			break;
		}
		k->t[k->n++] = st.tensors[i];
		r = mtp_wm_names_add(&k->keys, st.tensors[i].name);
	}
	mtp_safetensors_close(&st);
	k->n_files++;
	return r;
}

/* Every *.safetensors file of dir, in name order. */
static enum mtp_status read_folder(struct mtp_wm_ckpt *k, const char *dir,
				   char *err, size_t errn)
{
	struct mtp_wm_names files = {0};
	enum mtp_status r = MTP_OK;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		snprintf(err, errn, "%s: cannot read the folder: %s", dir,
			 strerror(errno));
		return MTP_ERR_IO;
	}
	while (!r && (e = readdir(d))) {
		size_t n = strlen(e->d_name), m = strlen(".safetensors");

		if (e->d_name[0] != '.' && n > m &&
		    !strcmp(e->d_name + n - m, ".safetensors"))
			r = mtp_wm_names_add(&files, e->d_name);
	}
	closedir(d);
	if (!r && !files.n) {
		snprintf(err, errn, "%s: no %s and no *.safetensors file", dir,
			 INDEX_NAME);
		r = MTP_ERR_INVALID;
	}
	mtp_wm_names_sort(&files);
	for (int i = 0; i < files.n && !r; i++)
		r = add_file(k, dir, files.v[i], NULL, err, errn);
	mtp_wm_names_fini(&files);
	return r;
}

/* The files an index names, each read once: every header tensor must be in
 * the index under its file, and (no name twice) the counts then equal. */
static enum mtp_status read_indexed(struct mtp_wm_ckpt *k, const char *dir,
				    const char *index, char *err, size_t errn)
{
	struct mtp_st_index ix;
	struct mtp_wm_names files = {0};
	enum mtp_status r = mtp_safetensors_index_open(index, &ix, err, errn);

	if (r)
		return r;
	for (int i = 0; !r && i < ix.n; i++)
		r = mtp_wm_names_add(&files, ix.v[i].file);
	mtp_wm_names_sort(&files);
	qsort(ix.v, (size_t)ix.n, sizeof(*ix.v), by_entry);
	for (int i = 0; !r && i < files.n; i++)
		r = add_file(k, dir, files.v[i], &ix, err, errn);
	if (!r && k->n != ix.n) {
		snprintf(err, errn,
			 "%s: weight_map: names %d tensors, the headers of its "
			 "%d files hold %d of them",
			 index, ix.n, files.n, k->n);
		r = MTP_ERR_INVALID;
	}
	mtp_wm_names_fini(&files);
	mtp_safetensors_index_close(&ix);
	return r;
}

enum mtp_status mtp_wm_read_checkpoint(const char *dir, struct mtp_wm_ckpt *out,
				       char *err, size_t errn)
{
	char index[1024];
	struct stat sb;
	enum mtp_status r;

	memset(out, 0, sizeof(*out));
	if (!join(index, sizeof(index), dir, INDEX_NAME)) {
		snprintf(err, errn, "%.200s: folder name too long", dir);
		return MTP_ERR_INVALID;
	}
	out->indexed = stat(index, &sb) == 0;
	r = out->indexed ? read_indexed(out, dir, index, err, errn)
			 : read_folder(out, dir, err, errn);
	if (r == MTP_ERR_NOMEM)
		snprintf(err, errn, "%s: out of memory", dir);
	else if (r == MTP_ERR_INVALID && !err[0])
		snprintf(err, errn, "%.200s: a file name too long", dir);
	if (!r && out->n) {
		qsort(out->t, (size_t)out->n, sizeof(*out->t), by_name);
		for (int i = 1; !r && i < out->n; i++) {
			if (strcmp(out->t[i].name, out->t[i - 1].name))
				continue;
			snprintf(err, errn,
				 "%s: tensor \"%.120s\" is in two of its files",
				 dir, out->t[i].name);
			r = MTP_ERR_INVALID;
		}
	}
	if (!r && !out->n) {
		snprintf(err, errn, "%s: the checkpoint holds no tensor", dir);
		r = MTP_ERR_INVALID;
	}
	if (r)
		mtp_wm_ckpt_fini(out);
	return r;
}

const struct mtp_st_tensor *mtp_wm_ckpt_find(const struct mtp_wm_ckpt *k,
					     const char *name)
{
	struct mtp_st_tensor key;

	if (!k->n || strlen(name) >= sizeof(key.name))
		return NULL;
	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, k->t, (size_t)k->n, sizeof(*k->t), by_name);
}

void mtp_wm_ckpt_fini(struct mtp_wm_ckpt *k)
{
	mtp_wm_names_fini(&k->keys);
	free(k->t);
	memset(k, 0, sizeof(*k));
}
