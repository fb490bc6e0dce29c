"""The accuracy of a bf16 GEMM on this GPU at eh_proj's shape (issue 15).

X0 = W [e; p] with W [H, 2H] and the input [T, 2H] bf16, at H = 7168 and
T = 64, 512: torch's bf16 GEMM (cuBLAS, tensor cores), with a bf16 output
and, where torch offers it (mm's out_dtype), a float32 output of the same
bf16 product, against float64. The accumulation error is shown against
sum_k |w_k x_k| (what a float32 sum's error is proportional to) in units
of 2^-24, its signed mean telling a truncating accumulation (one-sided)
from round to nearest; the bf16 output's error in ulps of the output.
"""
import torch

torch.manual_seed(1)
dev = "cuda"
H = 7168
u = 2.0**-24
w = (torch.randn(H, 2 * H, device=dev) * (2 * H) ** -0.5).to(torch.bfloat16)
for T in (64, 512):
    x = torch.randn(T, 2 * H, device=dev).to(torch.bfloat16)
    exact = x.double() @ w.double().t()
    scale = x.double().abs() @ w.double().abs().t()
    ulp = torch.ldexp(torch.ones_like(exact), torch.frexp(exact)[1] - 8)
    yb = torch.matmul(x, w.t())
    e = (yb.double() - exact) / ulp
    print(f"T={T} bf16 out: |err| <= {e.abs().max().item():.1f} ulp, > 1 ulp in {(e.abs() > 1).double().mean().item():.2e}"
          f" of the elements, mean signed {e.clamp(-4, 4).mean().item():+.4f} ulp")
    outs = []
    try:
        outs.append(("bf16 GEMM, float32 out", torch.mm(x, w.t(), out_dtype=torch.float32)))
    except Exception as exc:  # noqa: BLE001 -- older torch: no out_dtype
        print(f"T={T} float32 out: not offered by this torch ({type(exc).__name__})")
    torch.backends.cuda.matmul.allow_tf32 = False
    outs.append(("float32 GEMM of the bf16 values (no TF32)", torch.matmul(x.float(), w.float().t())))
    for name, y in outs:
        a = (y.double() - exact) / scale / u
        print(f"T={T} {name}: |err| <= {a.abs().max().item():.2f} x 2^-24 sum|wx|, mean signed {a.mean().item():+.3f},"
              f" spread {a.std().item():.3f} (K = {2 * H}: sqrt K = {(2 * H) ** 0.5:.0f})")
