/*
 * The op draft_chain (SPEC.md §5): K draft steps with recycling, step s on
 * layer spec_step_idx % L; its attributes num_steps and num_layers bind K
 * and L. Judged under the error budget along its flow, one step's worth
 * more for each step before the output's.
 */
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>

static void build_sig(struct mtp_sig_build *b, const struct mtp_params *p,
		      const struct mtp_tensor_list *present)
{
	static const struct mtp_tspec in[] = {
		{"embed_table", "V,H", MTP_TC_ACT, 0},
		{"input_ids", "T", MTP_TC_INDEX, 0},
		{"positions", "T", MTP_TC_INDEX, 0},
		{"prev_hidden", "T,H", MTP_TC_ACT, 0},
		{"prev_hidden", "T,M*H", MTP_TC_ACT, 0},
		{"next_tokens", "K-1,T", MTP_TC_INDEX, 0},
		{"next_tokens", "K-1,T", MTP_TC_INDEX, 1},
		ROW_END};
	bool v4 = mtp_family_mhc(p->family);
	char prefix[32];

	(void)present;
	for (int i = 0; i < 3; i++)
		mtp_sig_push(b, false, &in[i], NULL);
	mtp_sig_push(b, false, &in[v4 ? 4 : 3], NULL);
	mtp_sig_push(b, false, &in[p->num_steps > 1 ? 5 : 6], NULL);
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(prefix, sizeof(prefix), "layer.%lld/", (long long)l);
		mtp_sig_push_layer(b, p, prefix);
	}
	mtp_sig_push_target_head(b);
	for (int64_t s = 0; s < p->num_steps; s++) {
		snprintf(prefix, sizeof(prefix), "step.%lld/", (long long)s);
		mtp_sig_push_step_out(b, v4, p, prefix);
	}
}

/* Each layer's weights and each step's outputs, by their prefixes. */
static void bind_layers(const struct mtp_ref_io *io, bool v4,
			struct mtp_ref_v3_layer *l3,
			struct mtp_ref_v4_layer *l4,
			struct mtp_ref_step_out *so)
{
	const struct mtp_params *p = io->c->params;
	char pfx[32];

	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		if (v4)
			mtp_refio_v4_layer(io, pfx, &l4[l]);
		else
			mtp_refio_v3_layer(io, pfx, &l3[l]);
	}
	for (int64_t s = 0; s < p->num_steps; s++) {
		snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)s);
		mtp_refio_step_out(io, pfx, &so[s]);
	}
}

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	bool v4 = mtp_family_mhc(p->family);
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_chain_in in = {
		.k = p->num_steps,
		.l = p->num_layers,
		.pass_step_idx = p->pass_step_idx,
		.embed_table = mtp_refio_in(io, "embed_table"),
		.input_ids = mtp_refio_iin(io, "input_ids"),
		.positions = mtp_refio_iin(io, "positions"),
		.prev_hidden = mtp_refio_in(io, "prev_hidden"),
		.next_tokens = mtp_refio_iin(io, "next_tokens"),
	};
	struct mtp_ref_v3_layer *l3 =
		calloc((size_t)p->num_layers, sizeof(*l3));
	struct mtp_ref_v4_layer *l4 =
		calloc((size_t)p->num_layers, sizeof(*l4));
	struct mtp_ref_step_out *so = calloc((size_t)p->num_steps, sizeof(*so));
	enum mtp_status st = MTP_ERR_NOMEM;

	if (l3 && l4 && so) {
		mtp_refio_cfg(c, &cfg, &d);
		bind_layers(io, v4, l3, l4, so);
		in.v3 = v4 ? NULL : l3;
		in.v4 = v4 ? l4 : NULL;
		mtp_ref_draft_chain(&in, &d, &cfg, so);
		st = MTP_OK;
	}
	free(so);
	free(l4);
	free(l3);
	return st;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return (double)c->params->num_steps *
	       (mtp_flops_step(&s, mtp_family_mhc(c->params->family)) +
		mtp_flops_gemm(s.t, s.h, s.v));
}

const struct mtp_op mtp_row_draft_chain = {
	.id = MTP_OP_DRAFT_CHAIN,
	.name = "draft_chain",
	.section = "§5",
	.summary = "K draft steps with recycling, layer spec_step_idx % L",
	.attrs = "eps rounding num_steps num_layers "
		 "pass_step_idx logits_mup? " ROW_QUANT_ATTRS,
	.attrs_v4 = ROW_V4_STEP_ATTRS " hc_head_variant",
	.rows = MTP_ROWS_INDEPENDENT,
	.scope = MTP_SCOPE_CHAIN,
	.build_sig = build_sig,
	.captured_form = true,
	.attr_dims = "KL",
	.ref = ref,
	.flops = flops,
	.budget_depth = MTP_DEPTH_FLOW,
	.bias = MTP_BIAS_MHC,
};
