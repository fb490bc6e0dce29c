/*
 * The op embed (Step V3-0): the rows of the embedding table that the input
 * ids name. Only those rows are read (gathered), which its bytes count.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"input_ids", "T", MTP_TC_INDEX, 0},
				       {"embed_table", "V,H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"out", "T,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_embed(mtp_refio_in(io, "embed_table"),
		      mtp_refio_iin(io, "input_ids"), c->dims.t, c->dims.h,
		      mtp_refio_out(io, "out"));
	return MTP_OK;
}

const struct mtp_op mtp_row_embed = {
	.id = MTP_OP_EMBED,
	.name = "embed",
	.section = "Step V3-0",
	.summary = "row gather from the embedding table",
	ROW_BASE,
	.attrs = "",
	.gathered = "embed_table",
};
