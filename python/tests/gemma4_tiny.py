"""The tiny Gemma4 target and assistant configs of the Gemma4 contract tests
(test_vllm_gemma4_contract.py, test_sglang_gemma4_contract.py): one file, so
that both engines read the same checkpoint shape (docs/SPEC.md §14)."""

import json

HB, HD, V = 48, 32, 256  # the target's width (sqrt(48) is not a bf16), the draft's, vocab
SOFTCAP = 30.0  # final_logit_softcapping of both text configs


def text_config(hidden: int, kv_shared: int = 0) -> dict:
    """A tiny `gemma4_text` config: one sliding and one full layer."""
    rope = {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}
    return {"model_type": "gemma4_text", "vocab_size": V, "hidden_size": hidden,
            "intermediate_size": 2 * hidden, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 16, "global_head_dim": 16,
            "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 8,
            "hidden_size_per_layer_input": 0, "vocab_size_per_layer_input": 0,
            "final_logit_softcapping": SOFTCAP, "max_position_embeddings": 256,
            "num_kv_shared_layers": kv_shared, "rope_parameters": rope}


def write_configs(tmp_path, centroids: bool = False) -> tuple:
    """(target dir, draft dir): a Gemma4 text target and a `gemma4_assistant`
    draft (the checkpoint's model type; vLLM's SpeculativeConfig renames it,
    SGLang promotes its NEXTN / EAGLE to FROZEN_KV_MTP), with the centroid
    head (`use_ordered_embeddings`) when asked."""
    target = dict(text_config(HB), architectures=["Gemma4ForCausalLM"], torch_dtype="bfloat16")
    draft = {"model_type": "gemma4_assistant", "architectures": ["Gemma4AssistantForCausalLM"],
             "backbone_hidden_size": HB, "text_config": text_config(HD, kv_shared=2),
             "torch_dtype": "bfloat16"}
    if centroids:
        draft.update(use_ordered_embeddings=True, num_centroids=8, centroid_intermediate_top_k=2)
    dirs = []
    for name, cfg in (("target", target), ("draft", draft)):
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps(cfg))
        dirs.append(str(d))
    return tuple(dirs)
