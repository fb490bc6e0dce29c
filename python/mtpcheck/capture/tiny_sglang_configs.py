"""The tiny config.json of the model types tiny_sglang.py builds from
configs of its own (H = 64, V = 256, as tiny_vllm_configs'): SGLang's own
config classes, or fields SGLang reads that vLLM's do not, each with the
reason it differs from tiny_vllm_configs' config or a released checkpoint.

Why apart: tiny_sglang.py holds the building and the stand-ins' wiring; the
configs are data that grows with every family the SGLang sweep covers."""

from __future__ import annotations

from .tiny_vllm_configs import CONFIGS, H, V

# Step-3.5 as SGLang's own Step3p5Config reads it (the draft ModelConfig's
# class): per-layer lists indexed by layer id, 48 entries as Step-3.5 Flash's
# config.json (45 layers and 3 MTP layers), because SGLang's MTP block is
# built as layer 45 whatever the layer count (`layer_id = 45  # FIXME`,
# step3p5_mtp.py); every layer sliding-window and dense (moe_layers_enum names
# none of them), 3 MTP layers (one a draft step)
_STEP3P5_LAYERS = 48
STEP3P5 = dict(
    {k: v for k, v in CONFIGS["step3p5"].items() if "layer_types" not in k},
    num_hidden_layers=45, num_nextn_predict_layers=3,
    layer_types=["sliding_attention"] * _STEP3P5_LAYERS,
    rope_theta=[10000.0] * _STEP3P5_LAYERS, partial_rotary_factors=[1.0] * _STEP3P5_LAYERS,
    attention_other_setting={"num_attention_heads": 2, "num_attention_groups": 2},
    moe_layers_enum=str(_STEP3P5_LAYERS), use_head_wise_attn_gate=False, yarn_only_types=[],
    swiglu_limits_shared=None, swiglu_limits=None)

# tiny configs of families tiny_vllm does not build (same sizes); Qwen3-MoE's
# MTP layer is dense by its own config (`mlp_only_layers`)
SGLANG_CONFIGS = {
    "step3p5": STEP3P5,
    # GigaChat 3.5 (SGLang's own GigaChat35Config): DeepSeek V3's MLA fields,
    # every layer full attention (no gated-delta layers), plain RMSNorm
    # (`norm_type` LlamaRMSNorm), pre-norm layers, 3 MTP heads (one a step)
    "gigachat3_5": dict(CONFIGS["deepseek_v3"], architectures=["GigaChat35ForCausalLM"],
                        model_type="gigachat3_5", num_nextn_predict_layers=3,
                        layer_types=["full_attention"] * 2, norm_type="LlamaRMSNorm",
                        layernorm_type="pre"),
    # HY V4 (SGLang's own HYV4Config, which accepts only DSA layer types): every
    # layer dense (mlp_layer_types), the target's iHC streams with 2 channels
    "hy_v4": dict(CONFIGS["hy_v4"], layer_types=["deepseek_sparse_attention"] * 2),
    # GLM-5-Next (SGLang's own Glm5NextConfig): its vision config requires the
    # vision MLP's `swiglu_limit` (a float; the tower is not run here); the text
    # config names no architecture (SGLang's config copies the text config's
    # `architectures` over the top-level one, so a None there loses it)
    "glm5_next": dict(CONFIGS["glm5_next"],
                      text_config={k: v for k, v in CONFIGS["glm5_next"]["text_config"].items()
                                   if k != "architectures"},
                      vision_config=dict(CONFIGS["glm5_next"]["vision_config"], swiglu_limit=7.0)),
    # Dots3 (SGLang's own Dots3Config): its target asks a q_lora_rank (the
    # fused q/kv/gate projection; the draft takes the SWA geometry), and is
    # built without its omni towers (`language_only`)
    "dots3_note": dict(CONFIGS["dots3_note"], q_lora_rank=16, language_only=True),
    # Bailing V3: SGLang's BailingHybridConfig sets `use_kda` (the V3 code path)
    # from the presence of a short convolution
    "bailing_v3": dict(CONFIGS["bailing_v3"], short_conv_kernel_size=4),
    # Bailing MoE V2 (SGLang's own BailingMoeV2Config, registered under its
    # model type: SGLang registers no config class for it, CONFIG_CLASS): GQA,
    # every target layer dense (first_k_dense_replace above them)
    "bailing_moe_v2": {
        "architectures": ["BailingMoeV2ForCausalLM"], "model_type": "bailing_moe_v2",
        "hidden_size": H, "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
        "rms_norm_eps": 1e-6, "num_experts": 4, "num_shared_experts": 1,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 100,
        "use_bias": False, "use_qkv_bias": False, "hidden_act": "silu",
        "max_position_embeddings": 512, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
        "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 0,
        "num_nextn_predict_layers": 1},
    # MiMo-V2 (tiny_vllm's, remote-code config): 3 MTP layers, one a step
    "mimo_v2": dict(CONFIGS["mimo_v2"], num_nextn_predict_layers=3),
    "qwen3_moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": H,
        "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
        "rms_norm_eps": 1e-6, "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 1,
        "mlp_only_layers": [0], "norm_topk_prob": True, "hidden_act": "silu",
        "max_position_embeddings": 512, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
        "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1},
    # EXAONE MoE: layer 0 dense by its own config (first_k_dense_replace, mlp_layer_types)
    "exaone_moe": {
        "architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "hidden_size": H,
        "intermediate_size": 96, "moe_intermediate_size": 32, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
        "rms_norm_eps": 1e-6, "num_experts": 4, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "mlp_layer_types": ["dense", "sparse"],
        "is_moe_layer": [False, True],  # what SGLang's ExaoneMoEDecoderLayer reads
        "layer_types": ["full_attention", "full_attention"], "hidden_act": "silu",
        "max_position_embeddings": 512, "rope_parameters": {"rope_type": "default",
                                                            "rope_theta": 10000.0},
        "torch_dtype": "bfloat16", "tie_word_embeddings": False, "bos_token_id": 0,
        "eos_token_id": 1},
    # IQuest Q1 (SGLang's own IQuestQ1Config): GQA, 2 layers, every one full
    # attention (no hybrid pattern) and dense (mlp_only_layers); no RoPE-free
    # layers; its MTP draft is a separate checkpoint (DRAFT_CONFIGS)
    "iquest_q1": {
        "architectures": ["IQuestQ1ForCausalLM"], "model_type": "iquest_q1", "hidden_size": H,
        "dense_intermediate_size": 96, "intermediate_size": 96, "vocab_size": V,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
        "head_dim": 32, "rotary_dim": 32, "rms_norm_eps": 1e-6, "use_hybrid_layers": False,
        "use_sliding_window": False, "mlp_only_layers": [0, 1], "num_experts": 4,
        "num_experts_per_tok": 2, "hidden_act": "silu", "max_position_embeddings": 512,
        "rope_theta": 10000.0, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
        "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 0},
}

# DeepSeek V4 (SGLang reads its config.json as a DeepseekV3Config alias, so
# the fields its ModelConfig and layers ask for are given here): tiny_vllm's
# config, a compress ratio for each of the 2 layers and the NextN layer (0:
# no KV compression; the NextN layer's is forced to 0 anyway) and no
# hash-routed layers (which would route by input_ids, the MoE being stood in)
SGLANG_CONFIGS["deepseek_v4"] = dict(CONFIGS["deepseek_v4"], compress_ratios=[0, 0, 0],
                                     n_hash_layers=0)

# model types whose draft is a checkpoint of its own (SGLang asks an
# independent `speculative_draft_model_path`): its config.json. IQuest Q1's
# IQuestQ1MTPConfig (model type iquest_q1_mtp) takes the target's config and
# forces one layer, MoE, sliding-window attention; its output scales are
# set away from 1 so that a scale dropped would show inside the block
DRAFT_CONFIGS = {
    "iquest_q1": {
        "architectures": ["IQuestQ1MTP"], "model_type": "iquest_q1_mtp",
        "target_config": SGLANG_CONFIGS["iquest_q1"], "num_target_layers": 2,
        "num_draft_slots": 3, "first_layer_attn_out_scale": 0.75,
        "first_layer_ffn_out_scale": 0.5, "fp32_residual_connection": False,
        "torch_dtype": "bfloat16"},
}
