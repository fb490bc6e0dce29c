"""The tiny vLLM MTP models of the engine tests: the package's builder
(mtpcheck.capture.tiny_vllm), which the sweep uses too."""

from mtpcheck.capture.tiny_vllm import (  # noqa: F401
    CONFIGS,
    H,
    I,
    LinearAttention,
    V,
    build,
    draft,
    proposer_returns_tuple,
)
