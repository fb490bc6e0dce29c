/*
 * Host tensors: a shape, a dtype and a row-major buffer, plus the named lists
 * that hold a problem's inputs and outputs ("embeds", "layer.1/hc_head_fn",
 * "step.2/recycled").
 */
#ifndef MTP_TENSOR_H
#define MTP_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/dtype.h"
#include "mtp/status.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

#define MTP_MAX_DIMS 6
#define MTP_NAME_MAX 96

struct mtp_tensor {
	enum mtp_dtype dtype;
	int ndim;
	int64_t shape[MTP_MAX_DIMS];
	void *data; /* owned, malloc'ed; NULL for an empty tensor */
};

/* A per-output tolerance override from a fixture (FORMAT.md). */
struct mtp_tol_override {
	bool set;
	double rtol, atol;
	char origin[128];
};

struct mtp_named {
	char name[MTP_NAME_MAX];
	struct mtp_tensor t;
	struct mtp_tol_override tol;
};

struct mtp_tensor_list {
	int n, cap;
	struct mtp_named *items;
};

int64_t mtp_tensor_numel(const struct mtp_tensor *t);
size_t mtp_tensor_nbytes(const struct mtp_tensor *t);
/* Allocates a zeroed buffer for the given shape; any previous data is freed. */
enum mtp_status mtp_tensor_alloc(struct mtp_tensor *t, enum mtp_dtype dt,
				 int ndim, const int64_t *shape);
void mtp_tensor_fini(struct mtp_tensor *t);
/* "[3,4,64]" into buf. */
const char *mtp_shape_str(const struct mtp_tensor *t, char *buf, size_t n);
bool mtp_tensor_same_shape(const struct mtp_tensor *a,
			   const struct mtp_tensor *b);
/* Widens every element to double; *out is malloc'ed (NULL for numel 0). */
enum mtp_status mtp_tensor_to_double(const struct mtp_tensor *t, double **out);
/* Stores n doubles into t's buffer, rounding to t's dtype. */
void mtp_tensor_from_double(struct mtp_tensor *t, const double *v);

void mtp_list_init(struct mtp_tensor_list *l);
void mtp_list_fini(struct mtp_tensor_list *l);
/* Appends an empty entry named `name`; NULL on allocation failure. */
struct mtp_named *mtp_list_add(struct mtp_tensor_list *l, const char *name);
struct mtp_named *mtp_list_find(const struct mtp_tensor_list *l,
				const char *name);

#ifdef __cplusplus
}
#endif

#endif
