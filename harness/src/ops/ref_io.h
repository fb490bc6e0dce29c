/*
 * Internal to the harness: a call's host tensors widened for the reference
 * (floats to double, indices to int64), looked up by name, and the outputs
 * narrowed back. Shared by the op rows' reference runners (rows/<name>.c), the
 * reference run (refglue) and the bug hypotheses of the diagnoses
 * (diag_hyp.c), which compose the same pieces.
 */
#ifndef MTP_REF_IO_H
#define MTP_REF_IO_H

#include "mtp/op.h"

struct mtp_ref_io {
	const struct mtp_call *c;
	double **fin;	/* float inputs, NULL where absent or integer */
	int64_t **iin;	/* integer inputs */
	double **fout;	/* float outputs */
	int64_t **iout; /* integer outputs */
};

/* Widens the inputs and allocates double/int64 outputs. */
enum mtp_status mtp_refio_open(struct mtp_ref_io *io, const struct mtp_call *c);
/* Stores the outputs into the call's output tensors (rounding to dtype). */
void mtp_refio_store(const struct mtp_ref_io *io);
void mtp_refio_close(struct mtp_ref_io *io);

const double *mtp_refio_in(const struct mtp_ref_io *io, const char *name);
const int64_t *mtp_refio_iin(const struct mtp_ref_io *io, const char *name);
double *mtp_refio_out(const struct mtp_ref_io *io, const char *name);
int64_t *mtp_refio_iout(const struct mtp_ref_io *io, const char *name);
/* A weight input and its block scale, if it has one [§12.2]. */
struct mtp_ref_qweight mtp_refio_qweight(const struct mtp_ref_io *io,
					 const char *name);
/* The same with a "layer.1/" or "step.0/" prefix. */
const double *mtp_refio_inp(const struct mtp_ref_io *io, const char *pfx,
			    const char *name);
void mtp_refio_cfg(const struct mtp_call *c, struct mtp_ref_step_cfg *cfg,
		   struct mtp_ref_dims *d);
void mtp_refio_v3_layer(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v3_layer *w);
void mtp_refio_v4_block(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v4_block *b);
void mtp_refio_v4_layer(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v4_layer *w);
void mtp_refio_step_out(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_step_out *o);

#endif
