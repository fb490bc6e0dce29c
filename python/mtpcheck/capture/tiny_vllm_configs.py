"""The tiny config.json of each model type tiny_vllm.py builds (H = 64,
V = 256): vLLM's or transformers' config fields, set so that the draft layer
and its target build on a CPU (dense layers, attention kinds the stand-in
replaces), each with the reason it differs from a released checkpoint.

Why apart: tiny_vllm.py holds the building and the stand-ins' wiring; the
configs are data that grows with every family the sweep covers."""

from __future__ import annotations

H, V, I = 64, 256, 96  # hidden, vocabulary, dense MLP width

BASE = {
    "hidden_size": H, "intermediate_size": I, "moe_intermediate_size": 32, "vocab_size": V,
    "num_hidden_layers": 2, "num_nextn_predict_layers": 1, "num_attention_heads": 2,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-6, "first_k_dense_replace": 100,
    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "n_group": 1,
    "topk_group": 1, "hidden_act": "silu", "max_position_embeddings": 512,
    "torch_dtype": "bfloat16", "rope_theta": 10000.0, "routed_scaling_factor": 1.0,
    "norm_topk_prob": True, "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1,
}
CONFIGS = {
    "deepseek_v3": dict(BASE, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                        kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=16,
                        qk_rope_head_dim=8, v_head_dim=16, topk_method="noaux_tc",
                        scoring_func="sigmoid"),
    "glm4_moe": dict(BASE, architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe",
                     head_dim=32, partial_rotary_factor=0.5, attention_bias=False, use_qk_norm=False),
    "glm4_moe_lite": dict(BASE, architectures=["Glm4MoeLiteForCausalLM"], model_type="glm4_moe_lite",
                          kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=16,
                          qk_rope_head_dim=8, v_head_dim=16, topk_method="noaux_tc",
                          scoring_func="sigmoid", rms_norm_eps=1e-5),
    "glm_ocr": {"architectures": ["GlmOcrForConditionalGeneration"], "model_type": "glm_ocr",
                "text_config": dict(BASE, model_type="glm_ocr_text", head_dim=32,
                                    partial_rotary_factor=0.5, attention_bias=False,
                                    rms_norm_eps=1e-5),
                "vision_config": {"depth": 1, "hidden_size": 32, "num_heads": 2,
                                  "out_hidden_size": H, "intermediate_size": 32},
                "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    "longcat_flash": dict(BASE, architectures=["LongcatFlashForCausalLM"], model_type="longcat_flash",
                          num_layers=1, ffn_hidden_size=I, expert_ffn_hidden_size=32,
                          kv_lora_rank=16, q_lora_rank=16, qk_nope_head_dim=16,
                          qk_rope_head_dim=8, v_head_dim=16, head_dim=24, moe_topk=2,
                          zero_expert_num=0, mla_scale_q_lora=False, mla_scale_kv_lora=False,
                          rms_norm_eps=1e-5),
    # OpenPangu Ultra MoE: its config class is remote code (no class for
    # `pangu_ultra_moe` in transformers); DeepSeek V3's fields, registered under
    # that name by _register_config
    "pangu_ultra_moe": dict(BASE, architectures=["PanguUltraMoEForCausalLM"],
                            model_type="pangu_ultra_moe", kv_lora_rank=16, q_lora_rank=None,
                            qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16,
                            topk_method="noaux_tc", scoring_func="sigmoid"),
    "hy_v3": dict(BASE, architectures=["HYV3ForCausalLM"], model_type="hy_v3", head_dim=32,
                  num_experts=4, num_shared_experts=1, rms_norm_eps=1e-5),
    # Bailing V2.5 (Ring-2.5) and V3: one config class (`bailing_hybrid`); the
    # architecture picks the MTP module (vllm/config/speculative.py)
    "bailing_hybrid": dict(BASE, architectures=["BailingMoeV2_5ForCausalLM"],
                           model_type="bailing_hybrid", num_experts=4, num_shared_experts=1,
                           moe_shared_expert_intermediate_size=32, kv_lora_rank=16,
                           q_lora_rank=None, qk_nope_head_dim=16, qk_rope_head_dim=8,
                           v_head_dim=16, head_dim=24),
    "bailing_v3": dict(BASE, architectures=["BailingMoeV3ForCausalLM"],
                       model_type="bailing_hybrid", num_experts=4, num_shared_experts=1,
                       moe_shared_expert_intermediate_size=32, kv_lora_rank=16,
                       q_lora_rank=None, qk_nope_head_dim=16, qk_rope_head_dim=8,
                       v_head_dim=16, head_dim=24),
    # MiMo-V2: remote-code config (registered by _register_config); its MTP
    # layer reads the SWA attention fields and `layernorm_epsilon`
    "mimo_v2": dict(BASE, architectures=["MiMoV2ForCausalLM"], model_type="mimo_v2",
                    layernorm_epsilon=1e-5, swa_num_attention_heads=2,
                    swa_num_key_value_heads=2, swa_head_dim=32, attention_bias=False,
                    head_dim=32, hybrid_layer_pattern=[0, 0], moe_layer_freq=[0, 0],
                    sliding_window_size=128, sliding_window=128),
    # EXAONE MoE: its MTP decoder layer is dense (`is_mtp`); the target's layers
    # dense too, so that it runs here (the MoE does not)
    "exaone_moe": dict(BASE, architectures=["ExaoneMoEForCausalLM"], model_type="exaone_moe",
                       head_dim=32, num_experts=4, num_shared_experts=1, first_k_dense_replace=2,
                       layer_types=["full_attention"] * 2, mlp_layer_types=["dense", "dense"],
                       rms_norm_eps=1e-5),
    # Nemotron-H: the target is attention and a dense MLP (no Mamba layer, no MoE,
    # so that it runs here); the MTP block is two sublayers, attention then MoE ("*E")
    "nemotron_h": dict(BASE, architectures=["NemotronHForCausalLM"], model_type="nemotron_h",
                       hybrid_override_pattern="*-", mtp_hybrid_override_pattern="*E",
                       head_dim=32, layer_norm_epsilon=1e-5, n_routed_experts=4,
                       moe_shared_expert_intermediate_size=32, mlp_hidden_act="relu2"),
    # Step-3.5 (`step3p5`: vLLM maps it to the upstream Step3p7TextConfig): dense
    # layers, GQA (`num_attention_groups`), the MTP layer a sliding-window one as
    # Step-3.5's (a full-attention MTP layer asks the heterogeneous config for a
    # per-layer entry past num_hidden_layers); its norms are zero-centred (GemmaRMSNorm)
    "step3p5": dict(BASE, architectures=["Step3p5ForCausalLM"], model_type="step3p5",
                    head_dim=32, num_attention_groups=2,
                    layer_types=["sliding_attention", "full_attention"],
                    mtp_layer_types=["sliding_attention"], mlp_layer_types=["dense"] * 2,
                    mtp_mlp_layer_types=["dense"], moe_num_experts=4, moe_top_k=2,
                    share_expert_dim=32, max_position_embeddings=512, sliding_window=128),
    # EXAONE 4.5: its MTP predictor reads `vocab_size` from the top-level config
    "exaone4_5": {"architectures": ["Exaone4_5_ForConditionalGeneration"],
                  "model_type": "exaone4_5", "vocab_size": V,
                  "text_config": dict(BASE, model_type="exaone4", head_dim=32,
                                      layer_types=["full_attention"] * 2, rms_norm_eps=1e-5),
                  "vision_config": {"depth": 1, "hidden_size": 32, "num_heads": 2,
                                    "num_key_value_heads": 2, "out_hidden_size": H,
                                    "intermediate_size": 32},
                  "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    # MiMo-7B: a Qwen2 model with MTP layers; its config class is remote code
    # (MiMoConfig, a Qwen2Config with num_nextn_predict_layers), registered by
    # _register_config under `mimo`
    "mimo": dict(BASE, architectures=["MiMoForCausalLM"], model_type="mimo", rms_norm_eps=1e-5,
                 attention_dropout=0.0, use_sliding_window=False),
    # ERNIE 4.5 (MoE checkpoints): every layer dense (moe_layer_start_index above them)
    "ernie4_5_moe": dict(BASE, architectures=["Ernie4_5_MoeForCausalLM"], model_type="ernie4_5_moe",
                         rms_norm_eps=1e-5, head_dim=32, use_bias=False, moe_num_experts=4,
                         moe_k=2, moe_layer_start_index=100, moe_intermediate_size=32,
                         moe_num_shared_experts=0),
}
# MiMo-V2-Omni: MiMo-V2's flat text config with a vision tower's
CONFIGS["mimo_v2_omni"] = dict(CONFIGS["mimo_v2"], architectures=["MiMoV2OmniForCausalLM"],
                               vision_config={"depth": 1, "hidden_size": 32, "num_heads": 2,
                                              "intermediate_size": 32, "out_hidden_size": H,
                                              "kv_channels": 16, "qk_channels": 16,
                                              "num_query_groups": 2, "num_key_value_heads": 2,
                                              "use_sink": False, "fullatt_block_indexes": [0]})
# the DSA lightning indexer's fields (HY V4, Dots3Note, V3.2, GLM-5): read at
# construction (V3.2's MTP layer sizes its top-k index buffer by index_topk)
DSA_INDEXER = {"index_topk": 8, "index_head_dim": 16, "index_n_heads": 2}
# HY V4 (vLLM's own HYV4Config): MLA layers (stood in), every layer dense,
# the MTP layer too (vLLM extends mlp_layer_types to it with the last entry); the
# target with independent hyper-connections (iHC, 2 channels), which the MTP
# block is built without (HYV4MultiTokenPredictorLayer sets enable_ihc False)
CONFIGS["hy_v4"] = dict(BASE, architectures=["HYV4ForCausalLM"], model_type="hy_v4",
                        kv_lora_rank=16, q_lora_rank=16, qk_nope_head_dim=16,
                        qk_rope_head_dim=8, v_head_dim=16, rms_norm_eps=1e-5,
                        layer_types=["full_attention"] * 2, mlp_layer_types=["dense"] * 2,
                        hc_mult=2, **DSA_INDEXER)
# Dots3Note (vLLM's Dots3NoteConfig, DeepSeek V3's fields): sliding-window and
# DSA attention layers (stood in), dense layers; the MTP layer a sliding one
# (vLLM's default `mtp_layer_types`)
CONFIGS["dots3_note"] = dict(CONFIGS["deepseek_v3"], architectures=["Dots3NoteForCausalLM"],
                             model_type="dots3_note",
                             layer_types=["sliding_attention", "full_attention"],
                             sliding_window=128, **DSA_INDEXER)
# DeepSeek V3.2 (`deepseek_v32`, which vLLM reads with transformers'
# DeepseekV3Config) and GLM-5 (`glm_moe_dsa`, transformers' GlmMoeDsaConfig):
# DSA layers (MLA plus the lightning indexer, stood in), every layer dense, a q
# LoRA rank as released (SGLang's transformers config class wants an int);
# GLM-5's own eps, every layer's indexer a full one (SGLang's sweep builds both
# from these configs too)
CONFIGS["deepseek_v32"] = dict(CONFIGS["deepseek_v3"], architectures=["DeepseekV32ForCausalLM"],
                               model_type="deepseek_v32", q_lora_rank=16, **DSA_INDEXER)
CONFIGS["glm_moe_dsa"] = dict(CONFIGS["deepseek_v3"], architectures=["GlmMoeDsaForCausalLM"],
                              model_type="glm_moe_dsa", q_lora_rank=16, rms_norm_eps=1e-5,
                              indexer_types=["full", "full"],
                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                              **DSA_INDEXER)
# V3.2 built from vLLM's ROCm modules (models/deepseek_v32/amd/): the same config
CONFIGS["deepseek_v32_amd"] = CONFIGS["deepseek_v32"]
# Step5 (vLLM's Step5Config): GQA layers (stood in), dense (use_moe off), its
# defaults otherwise (zero-centred bf16 norms, no fp32 residual stream); the
# layer types list every layer, the MTP one included
CONFIGS["step5"] = {"architectures": ["Step5ForCausalLM"], "model_type": "step5",
                    "hidden_size": H, "intermediate_size": I, "num_attention_heads": 2,
                    "num_attention_groups": 2, "head_dim": 32, "num_hidden_layers": 2,
                    "vocab_size": V, "rms_norm_eps": 1e-5, "num_nextn_predict_layers": 1,
                    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                    "sliding_window": 128, "max_position_embeddings": 512,
                    "torch_dtype": "bfloat16", "tie_word_embeddings": False,
                    "bos_token_id": 0, "eos_token_id": 1,
                    # vLLM refuses a checkpoint without this section; disabled: dense attention
                    "sparse_config": {"enabled": False}}
# GLM-5-Next (transformers' Glm5NextConfig, multimodal): DSA (NoPE MLA)
# layers stood in, no KDA layer, no mHC, every layer dense
CONFIGS["glm5_next"] = {
    "architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next",
    "text_config": dict(CONFIGS["deepseek_v3"], model_type="glm5_next_text", architectures=None,
                        layer_types=["full_attention"] * 2, mlp_layer_types=["dense"] * 2,
                        mhc=False, q_lora_rank=16, qk_rope_head_dim=0, qk_nope_head_dim=24,
                        mla_use_nope=True),
    "vision_config": {"depth": 1, "hidden_size": 32, "num_heads": 2, "out_hidden_size": H,
                      "intermediate_size": 32},
    "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# Qwen3-Next (zero-centred norms, SPEC.md §2.6): every layer full attention (no
# gated-delta linear-attention layers, GPU work), every layer dense by its own
# config (`mlp_only_layers`; SGLang's decoder is sparse whatever it says and is
# given the dense MLP instead, tiny_sglang)
CONFIGS["qwen3_next"] = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": H,
    "intermediate_size": I, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "vocab_size": V, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
    "head_dim": 32, "rms_norm_eps": 1e-6, "num_experts": 4, "num_experts_per_tok": 2,
    "decoder_sparse_step": 1, "mlp_only_layers": [0, 1], "norm_topk_prob": True,
    "hidden_act": "silu", "full_attention_interval": 1,
    "layer_types": ["full_attention", "full_attention"], "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
    "linear_num_value_heads": 2, "partial_rotary_factor": 0.25, "max_position_embeddings": 512,
    "rope_theta": 10000.0, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    "bos_token_id": 0, "eos_token_id": 1, "num_nextn_predict_layers": 1}
# Qwen3.5 dense, text only (its text config subclasses Qwen3-Next's)
CONFIGS["qwen3_5_text"] = dict(CONFIGS["qwen3_next"], architectures=["Qwen3_5ForCausalLM"],
                               model_type="qwen3_5_text", num_experts=0)
# Qwen3.5 as released: the multimodal config around that text config
CONFIGS["qwen3_5"] = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": dict(CONFIGS["qwen3_5_text"], architectures=None),
    "vision_config": {"depth": 1, "hidden_size": 32, "num_heads": 2, "out_hidden_size": H,
                      "intermediate_size": 32},
    "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# Qwen3.5-MoE as released: the MoE text config forces the sparse block in every
# decoder layer (qwen3_5.py picks the MLP by model type), given the dense
# stand-in instead (MOE_STANDIN)
CONFIGS["qwen3_5_moe"] = dict(
    CONFIGS["qwen3_5"], architectures=["Qwen3_5MoeForConditionalGeneration"],
    model_type="qwen3_5_moe",
    text_config=dict(CONFIGS["qwen3_5_text"], architectures=None, model_type="qwen3_5_moe_text",
                     num_experts=4))
# InternS2-Mobius: a remote-code config (registered by _register_config as
# Qwen3.5-MoE's) whose MTP layer is Qwen3_5MoeMTP's; vLLM's speculative config
# renames its text config to `qwen3_5_moe_text` and reads the MTP expert counts
CONFIGS["interns2_mobius"] = dict(
    CONFIGS["qwen3_5_moe"], architectures=["InternS2MobiusForConditionalGeneration"],
    model_type="interns2_mobius", image_token_id=5,
    text_config=dict(CONFIGS["qwen3_5_moe"]["text_config"], mtp_num_experts=4,
                     mtp_num_experts_per_tok=2, mtp_num_hidden_layers=1, num_blocks=1))
# DeepSeek V4 (transformers' DeepseekV4Config): 4 mHC streams and 20 Sinkhorn
# iterations as released; its sparse attention and MoE are stood in (the
# captured block), so their fields only need to build; every layer a plain MoE
# layer (no hash-routed layers, which would want input_ids)
CONFIGS["deepseek_v4"] = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": H,
    "moe_intermediate_size": I, "vocab_size": V, "num_hidden_layers": 2,
    "num_nextn_predict_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
    "head_dim": 32, "q_lora_rank": 16, "o_lora_rank": 16, "o_groups": 1, "qk_rope_head_dim": 8,
    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
    "index_n_heads": 2, "index_head_dim": 16, "index_topk": 8, "sliding_window": 128,
    "layer_types": ["sliding_attention"] * 2, "mlp_layer_types": ["moe"] * 2,
    "hc_mult": 4, "hc_sinkhorn_iters": 20, "hc_eps": 1e-6, "swiglu_limit": 10.0,
    "rms_norm_eps": 1e-6, "hidden_act": "silu", "max_position_embeddings": 512,
    "torch_dtype": "bfloat16", "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1}
# Kimi K3 (vLLM's KimiK3Config: a KimiLinearConfig text model and a Kimi-K2.5
# vision tower): NoPE MLA layers (stood in; Kimi K3's MLA is NoPE-only), no KDA
# layer (an empty `kda_layers`: the KDA kernels and their Mamba state are GPU
# work), every layer dense (first_k_dense_replace above the MTP layer's index
# 2), no AttnRes (`attn_res_block_size` None: the MTP block is built without
# it whatever the target uses), SiTU activations as released
CONFIGS["kimi_k3"] = {
    "architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3",
    "text_config": {"model_type": "kimi_linear", "hidden_size": H, "intermediate_size": I,
                    "vocab_size": V, "num_hidden_layers": 2, "num_attention_heads": 2,
                    "num_key_value_heads": 2, "rms_norm_eps": 1e-5, "hidden_act": "situ",
                    "activation_situ_beta": 4.0, "activation_situ_linear_beta": 25.0,
                    "num_experts": 4, "num_experts_per_token": 2, "moe_intermediate_size": 32,
                    "first_k_dense_replace": 100, "q_lora_rank": 16, "kv_lora_rank": 16,
                    "qk_nope_head_dim": 24, "qk_rope_head_dim": 0, "v_head_dim": 16,
                    "mla_use_nope": True, "mla_use_output_gate": True,
                    "linear_attn_config": {"kda_layers": [], "full_attn_layers": [1, 2, 3]},
                    "num_nextn_predict_layers": 1, "max_position_embeddings": 512,
                    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
                    "bos_token_id": 0, "eos_token_id": 1},
    "vision_config": {"vt_num_hidden_layers": 1, "vt_hidden_size": 32,
                      "vt_num_attention_heads": 2, "vt_intermediate_size": 32},
    "media_placeholder_token_id": 5, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# Kimi K3 built from its amd modules (vLLM's choice on ROCm): the same checkpoint
CONFIGS["kimi_k3_amd"] = CONFIGS["kimi_k3"]
# MiniMax M3 (vLLM's MiniMaxM3Config: a `minimax_m3_vl` checkpoint whose
# text_config the speculative config promotes to the `minimax_m3_mtp` draft,
# speculative.py): every layer dense (`moe_layer_freq` 0; the MTP block builds
# its MoE whatever it says, force_moe: stood in) and full attention
# (`sparse_attention_freq` 0; the MTP block's sparse attention is forced, and
# stood in like the target's), SwiGLU-OAI as released; `num_mtp_modules` is the
# MTP layer count (tiny_vllm.LAYER_COUNT). A one-block vision tower.
_M3_TEXT = {
    "model_type": "minimax_m3_text", "hidden_size": H, "intermediate_size": 32,
    "dense_intermediate_size": I, "shared_intermediate_size": 32, "vocab_size": V,
    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
    "rotary_dim": 16, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
    "max_position_embeddings": 512, "rms_norm_eps": 1e-6, "num_local_experts": 4,
    "num_experts_per_tok": 2, "n_shared_experts": 1, "num_mtp_modules": 1,
    "moe_layer_freq": [0, 0],
    "sparse_attention_config": {"use_sparse_attention": True, "sparse_index_dim": 16,
                                "sparse_num_index_heads": 1, "sparse_topk_blocks": 4,
                                "sparse_block_size": 16, "sparse_disable_index_value": [0, 0],
                                "sparse_score_type": "max", "sparse_init_block": 0,
                                "sparse_local_block": 1, "sparse_attention_freq": [0, 0]},
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "bos_token_id": 0, "eos_token_id": 1}
CONFIGS["minimax_m3"] = {
    "architectures": ["MiniMaxM3SparseForConditionalGeneration"], "model_type": "minimax_m3_vl",
    "text_config": _M3_TEXT,
    "vision_config": {"hidden_size": 32, "intermediate_size": 32, "num_hidden_layers": 1,
                      "num_attention_heads": 2, "num_channels": 3, "patch_size": 14,
                      "image_size": 56, "layer_norm_eps": 1e-5,
                      "img_token_compression_config": {"spatial_merge_size": 2}},
    "image_token_index": 5, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# MiniMax M3 built from its amd modules (vLLM's choice on ROCm): the same checkpoint
CONFIGS["minimax_m3_amd"] = CONFIGS["minimax_m3"]
# Inkling (vLLM's InklingModelConfig, `inkling_model`; the speculative config
# promotes it to the `inkling_mtp` draft from its `mtp_config`, speculative.py):
# every layer dense (n_routed_experts 0 and dense_mlp_idx above the layers: the
# MTP depth forces its dense MLP anyway), full attention (no local_layer_ids),
# the backbone embed_norm, the chain norm and a mup width multiplier as the
# served checkpoint's comments describe them (mtp.py), short convolutions on
# (they run as the identity without the GPU speculator's SWA-cache metadata:
# short_conv.py). One depth.
CONFIGS["inkling"] = {
    "architectures": ["InklingForCausalLM"], "model_type": "inkling_model", "hidden_size": H,
    "intermediate_size": I, "dense_intermediate_size": I, "vocab_size": V,
    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
    "rms_norm_eps": 1e-6, "use_embed_norm": True, "use_sconv": True, "sconv_kernel_size": 4,
    "dense_mlp_idx": 100, "n_routed_experts": 0, "logits_mup_width_multiplier": 4.0,
    "max_position_embeddings": 512, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "bos_token_id": 0, "eos_token_id": 1,
    "mtp_config": {"num_nextn_predict_layers": 1, "chain_hidden_post_norm": True,
                   "local_layer_ids": []}}
# Inkling built from its amd modules (vLLM's choice on ROCm): the same checkpoint
CONFIGS["inkling_amd"] = CONFIGS["inkling"]
