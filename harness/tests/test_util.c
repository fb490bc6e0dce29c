/* Helpers to build small cases and fixture files in the harness tests. */
#include "test_util.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mtp_named *tu_add(struct mtp_tensor_list *l, const char *name,
			 enum mtp_dtype dt, int ndim, const int64_t *shape,
			 const double *vals)
{
	struct mtp_named *e = mtp_list_add(l, name);

	if (!e || mtp_tensor_alloc(&e->t, dt, ndim, shape))
		abort();
	for (int64_t i = 0; vals && i < mtp_tensor_numel(&e->t); i++)
		mtp_store(dt, e->t.data, (size_t)i, vals[i]);
	return e;
}

static struct mtp_attr *next_attr(struct mtp_case *c, const char *name)
{
	struct mtp_attr *a = &c->attrs.items[c->attrs.n++];

	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	return a;
}

void tu_attr_num(struct mtp_case *c, const char *name, double v)
{
	next_attr(c, name)->num = v;
}

void tu_attr_str(struct mtp_case *c, const char *name, const char *v)
{
	struct mtp_attr *a = next_attr(c, name);

	a->is_string = true;
	snprintf(a->str, sizeof(a->str), "%s", v);
}

static double *filled(int64_t n, double v)
{
	double *p = malloc((size_t)n * sizeof(*p));

	for (int64_t i = 0; i < n; i++)
		p[i] = v;
	return p;
}

void tu_rmsnorm_case(struct mtp_case *c, const char *id, int64_t rows,
		     int64_t h, double xval, double yval)
{
	int64_t s2[2] = {rows, h}, s1[1] = {h};
	double *x = filled(rows * h, xval), *w = filled(h, 1.0);
	double *y = filled(rows * h, yval);

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->op = mtp_op_find("rmsnorm");
	c->family = MTP_FAMILY_DEEPSEEK_V3;
	c->seed = 7;
	c->has_seed = true;
	tu_attr_num(c, "eps", 1e-6);
	tu_attr_str(c, "rounding", "eager");
	tu_add(&c->inputs, "x", MTP_BF16, 2, s2, x);
	tu_add(&c->inputs, "weight", MTP_BF16, 1, s1, w);
	tu_add(&c->expected, "y", MTP_BF16, 2, s2, y);
	free(x);
	free(w);
	free(y);
}

void tu_tmpname(char *buf, size_t n, const char *tag)
{
	static int k;

	snprintf(buf, n, "/tmp/mtptest_%ld_%d_%s.h5", (long)getpid(), k++, tag);
}

char *tu_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *s;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = calloc(1, (size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = 0;
	fclose(f);
	return s;
}

void tu_write_cases(const char *path, struct mtp_case *c, int n)
{
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_write(path, "test", c, n, err, sizeof(err)),
		     MTP_OK);
}
