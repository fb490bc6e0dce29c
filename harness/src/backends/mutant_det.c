/*
 * Mutants of determinism (docs/DIAGNOSES.md "Determinism"), over any base
 * backend: each flips the last bit of a hashed sixteenth of the finite,
 * non-zero elements of every bfloat16/float16 output the base computed (the
 * activations, as ROUNDING_BIAS's mutant: a float32-only case, such as
 * the fp32 norms, is one these cannot break). One ulp is
 * within every tolerance, and a flipped last bit moves odd and even
 * mantissas in opposite directions, so ROUNDING_BIAS stays silent: only
 * the determinism modes can see these.
 *  - BATCH_VARIANT: only in a call of more than one row, at positions of
 *    the batch, as a kernel chosen by the batch size would: a token alone
 *    (T = 1) or at another row gets other bits (run --invariance);
 *  - NONDETERMINISTIC: positions hashed with a count of the calls, as
 *    atomics would: every call gives other bits (run --repeat N --bitwise).
 */
#include "mutant_int.h"

#include <stdlib.h>
#include <string.h>

bool mtp_mutant_det(enum mtp_diag d)
{
	return d == MTP_DIAG_BATCH_VARIANT || d == MTP_DIAG_NONDETERMINISTIC;
}

static bool flip_here(size_t i, uint32_t salt)
{
	uint32_t h = ((uint32_t)i ^ salt) * 2654435761u;

	return (h >> 28) == 5; /* one in 16 */
}

/* The last bit of element i of a float buffer, unless 0, Inf or NaN. */
static void flip_last_bit(enum mtp_dtype dt, void *buf, size_t i)
{
	double v = mtp_load(dt, buf, i);
	size_t sz = mtp_dtype_size(dt);

	if (v == 0 || v != v || v - v != 0)
		return;
	((unsigned char *)buf)[i * sz] ^= 1u; /* little endian hosts */
}

static enum mtp_status flip_output(struct mtp_backend *base,
				   const struct mtp_tensor *t, uint32_t salt)
{
	size_t n = (size_t)mtp_tensor_numel(t), nb = mtp_tensor_nbytes(t);
	void *h;
	enum mtp_status st;

	if ((t->dtype != MTP_BF16 && t->dtype != MTP_F16) || !t->data || !n)
		return MTP_OK;
	h = malloc(nb);
	if (!h)
		return MTP_ERR_NOMEM;
	st = mtp_backend_download(base, h, t->data, nb);
	for (size_t i = 0; !st && i < n; i++)
		if (flip_here(i, salt))
			flip_last_bit(t->dtype, h, i);
	if (!st)
		st = mtp_backend_upload(base, t->data, h, nb);
	free(h);
	return st;
}

enum mtp_status mtp_mutant_det_launch(struct mtp_backend *base, enum mtp_diag d,
				      const struct mtp_call *c)
{
	static uint32_t calls; /* a worker process runs one mutant */
	enum mtp_status st = mtp_backend_launch(base, c);
	bool batch = c->dims.t > 1 || c->dims.r > 1;
	uint32_t salt = 0;

	if (!st)
		st = mtp_backend_synchronize(base);
	if (d == MTP_DIAG_BATCH_VARIANT && !batch)
		return st;
	if (d == MTP_DIAG_NONDETERMINISTIC)
		salt = ++calls * 0x9e3779b9u;
	for (int k = 0; !st && k < c->n_out; k++)
		st = flip_output(base, &c->out[k], salt);
	return st;
}
