"""The hooks on a module tree mirroring SGLang 0.5.23's qwen3_moe_mtp.py
(`Qwen3MoeForCausalLMMTP`): the draft model is its own MTP layer (fc over
[pre_fc_norm_embedding(e), pre_fc_norm_hidden(h)], one decoder layer
`model.layers.0`, the final add-norm `model.norm(hidden, residual)`, lm_head)
and calls its logits processor inside its own forward. The logits must go to
the step in flight, not to the previous one, and the block's outputs are read
at `model.norm`'s call. No SGLang needed (test_sglang.py runs the real class)."""

from conftest import judge, need

torch = need("torch")

from torch import nn

import mirrors
from mtpcheck import capture

H, V, F, T, K = 64, 128, 96, 4, 3
BF16 = torch.bfloat16


class Qwen3MoeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, H, dtype=BF16)
        self.layers = nn.ModuleList([mirrors.SyntheticBlock(H, F)])
        self.norm = mirrors.RMSNorm(H)

    def forward(self, input_ids, positions, forward_batch, input_embeds):
        hidden, residual = self.layers[0](positions, input_embeds, forward_batch)
        return self.norm(hidden, residual)[0]


class Qwen3MoeForCausalLMMTP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2 * H, H, bias=False, dtype=BF16)
        self.pre_fc_norm_embedding = mirrors.RMSNorm(H)
        self.pre_fc_norm_hidden = mirrors.RMSNorm(H)
        self.model = Qwen3MoeModel()
        self.lm_head = nn.Module()
        self.lm_head.weight = nn.Parameter(torch.zeros(V, H, dtype=BF16))
        self.logits_processor = mirrors.LogitsProcessor()

    def forward(self, input_ids, positions, forward_batch, input_embeds=None):
        e = self.pre_fc_norm_embedding(self.model.embed_tokens(input_ids))
        h = self.pre_fc_norm_hidden(forward_batch.spec_info.hidden_states)
        hidden = self.model(input_ids, positions, forward_batch, self.fc(torch.cat((e, h), -1)))
        return self.logits_processor(input_ids, hidden, self.lm_head, forward_batch)


def test_draft_model_as_its_own_layer(tmp_path):
    gen = torch.Generator().manual_seed(5)
    model = Qwen3MoeForCausalLMMTP()
    mirrors.randomize(model, gen)
    path = str(tmp_path / "fc.h5")
    cap = capture.install(engine="sglang", path=path, steps=K, model=model)
    ids = torch.randint(0, V, (T,), generator=gen)
    hidden = torch.randn(T, H, generator=gen).to(BF16)
    with torch.no_grad():
        mirrors.sglang_draft(model, ids, torch.arange(3, 3 + T), hidden, K)
    cases = cap.write()
    cap.remove()
    assert cases[0] == "chain0" and len(cases) == 1 + K
    v = judge(path)
    assert v.returncode == 0, v.text
    assert set(v.cases.values()) == {"PASSED"}, v.cases
