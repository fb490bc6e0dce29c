/* Host tensors and named tensor lists. */
#include "mtp/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t mtp_tensor_numel(const struct mtp_tensor *t)
{
	int64_t n = 1;

	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

size_t mtp_tensor_nbytes(const struct mtp_tensor *t)
{
	return (size_t)mtp_tensor_numel(t) * mtp_dtype_size(t->dtype);
}

enum mtp_status mtp_tensor_alloc(struct mtp_tensor *t, enum mtp_dtype dt,
				 int ndim, const int64_t *shape)
{
	mtp_tensor_fini(t);
	if (ndim < 0 || ndim > MTP_MAX_DIMS)
		return MTP_ERR_INVALID;
	t->dtype = dt;
	t->ndim = ndim;
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return MTP_ERR_INVALID;
		t->shape[i] = shape[i];
	}
	size_t n = mtp_tensor_nbytes(t);

	if (n == 0)
		return MTP_OK;
	t->data = calloc(1, n);
	return t->data ? MTP_OK : MTP_ERR_NOMEM;
}

void mtp_tensor_fini(struct mtp_tensor *t)
{
	free(t->data);
	t->data = NULL;
}

const char *mtp_shape_str(const struct mtp_tensor *t, char *buf, size_t n)
{
	size_t k = 0;

	k += (size_t)snprintf(buf + k, n - k, "[");
	for (int i = 0; i < t->ndim && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				      (long long)t->shape[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

bool mtp_tensor_same_shape(const struct mtp_tensor *a,
			   const struct mtp_tensor *b)
{
	if (a->ndim != b->ndim)
		return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i])
			return false;
	return true;
}

enum mtp_status mtp_tensor_to_double(const struct mtp_tensor *t, double **out)
{
	int64_t n = mtp_tensor_numel(t);

	*out = NULL;
	if (n == 0)
		return MTP_OK;
	double *v = malloc((size_t)n * sizeof(*v));

	if (!v)
		return MTP_ERR_NOMEM;
	for (int64_t i = 0; i < n; i++)
		v[i] = mtp_load(t->dtype, t->data, (size_t)i);
	*out = v;
	return MTP_OK;
}

void mtp_tensor_from_double(struct mtp_tensor *t, const double *v)
{
	int64_t n = mtp_tensor_numel(t);

	for (int64_t i = 0; i < n; i++)
		mtp_store(t->dtype, t->data, (size_t)i, v[i]);
}

void mtp_list_init(struct mtp_tensor_list *l)
{
	memset(l, 0, sizeof(*l));
}

void mtp_list_fini(struct mtp_tensor_list *l)
{
	for (int i = 0; i < l->n; i++)
		mtp_tensor_fini(&l->items[i].t);
	free(l->items);
	mtp_list_init(l);
}

struct mtp_named *mtp_list_add(struct mtp_tensor_list *l, const char *name)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct mtp_named *it =
			realloc(l->items, (size_t)cap * sizeof(*it));

		if (!it)
			return NULL;
		l->items = it;
		l->cap = cap;
	}
	struct mtp_named *e = &l->items[l->n++];

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	return e;
}

struct mtp_named *mtp_list_find(const struct mtp_tensor_list *l,
				const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}
