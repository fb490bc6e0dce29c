/* Helpers to build small cases and fixture files in the harness tests. */
#ifndef MTP_TEST_UTIL_H
#define MTP_TEST_UTIL_H

#include "mtp/fixture.h"

/* Adds a tensor of dtype dt and shape to list, filled from vals (n values,
 * rounded to dt) or zeros if vals is NULL. */
struct mtp_named *tu_add(struct mtp_tensor_list *l, const char *name,
			 enum mtp_dtype dt, int ndim, const int64_t *shape,
			 const double *vals);
void tu_attr_num(struct mtp_case *c, const char *name, double v);
void tu_attr_str(struct mtp_case *c, const char *name, const char *v);
/* An rmsnorm case: x [rows,h] all equal to `xval`, weight all 1, eps 1e-6,
 * eager rounding, expected y all equal to `yval` (bf16). */
void tu_rmsnorm_case(struct mtp_case *c, const char *id, int64_t rows,
		     int64_t h, double xval, double yval);
/* Writes the n cases to a fixture file at path (the test fails if it
 * cannot). */
void tu_write_cases(const char *path, struct mtp_case *c, int n);
/* A temporary file name under /tmp. */
void tu_tmpname(char *buf, size_t n, const char *tag);
/* Reads a whole file into a malloc'ed string. */
char *tu_slurp(const char *path);

#endif
