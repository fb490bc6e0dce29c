"""The accuracy of a bf16 GEMM on this GPU at eh_proj's shape (issue 15).

X0 = W [e; p] with W [H, 2H] and the input [T, 2H] bf16, at H = 7168 and
T = 64, 512: the result of torch.matmul (cuBLAS) in bf16 and with a float32
output, against float64, per element in bf16 ulps, and each error against
sum_k |w_k x_k| (the scale a float32 accumulation error is proportional
to). With and without torch's allow_bf16_reduced_precision_reduction.
The signed mean tells a truncating accumulation (one-sided) from round to
nearest. Prints one line per configuration.
"""
import torch

torch.manual_seed(1)
dev = "cuda"
H = 7168
w = (torch.randn(H, 2 * H, device=dev) * (2 * H) ** -0.5).to(torch.bfloat16)
for T in (64, 512):
    x = torch.randn(T, 2 * H, device=dev).to(torch.bfloat16)
    exact = x.double() @ w.double().t()
    scale = x.double().abs() @ w.double().abs().t()
    for reduced in (True, False):
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = reduced
        yb = torch.matmul(x, w.t())
        err_b = (yb.double() - exact)
        rel = (err_b.abs() / exact.abs().clamp_min(1e-30))
        ulp = torch.ldexp(torch.ones_like(exact), torch.frexp(exact)[1] - 8)
        e_ulp = err_b / ulp
        acc = (yb.double() - exact) / scale
        print(f"T={T} reduced_precision_reduction={reduced}: bf16 out: max |err|/ulp {e_ulp.abs().max().item():.2f}, "
              f"mean signed {e_ulp.clamp(-4, 4).mean().item():+.4f} ulp, frac > 1 ulp {(e_ulp.abs() > 1).double().mean().item():.2e}, "
              f"max rel {rel.max().item():.3g}, max |err|/sum|wx| {acc.abs().max().item():.3g} (2^-24 = 6.0e-8)")
    # float32 accumulation observed directly: a float32-output GEMM of the same bf16 operands
    torch.backends.cuda.matmul.allow_tf32 = False
    yf = torch.matmul(x.float(), w.float().t())
    a = (yf.double() - exact) / scale
    print(f"T={T} fp32 GEMM of the bf16 values: max |err|/sum|wx| {a.abs().max().item():.3g}, "
          f"mean signed {a.mean().item():+.3g} (one-sided if far from 0 against the spread {a.std().item():.3g})")
