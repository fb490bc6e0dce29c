"""The NumPy adapter's bfloat16 and float16 rounding against bit patterns
derived by hand: nearest, ties to even, overflow to Inf, NaN kept quiet with
its sign, signed zero, subnormals. Run: python3 test_rounding.py (exit 0)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../python"))
from mtpcheck.adapters.numpy import Kit, bf16_to_f32, f32_to_bf16  # noqa: E402

BF16 = [  # float32 bits -> bfloat16 bits
    (0x3F800000, 0x3F80),  # 1.0
    (0x3F808000, 0x3F80),  # 1 + 2^-8: a tie, to the even 1.0
    (0x3F818000, 0x3F82),  # 1 + 3*2^-8: a tie, to the even 0x3F82
    (0x3F808001, 0x3F81),  # just above the tie: up
    (0x7F7FFFFF, 0x7F80),  # float32 max: beyond bf16's max, Inf
    (0x7F7F7FFF, 0x7F7F),  # just below the tie at bf16's max: stays finite
    (0xFF800000, 0xFF80),  # -Inf
    (0x7FC00001, 0x7FC0),  # quiet NaN
    (0x7F800001, 0x7FC0),  # signalling NaN: quiet, not Inf
    (0xFF800001, 0xFFC0),  # negative NaN keeps its sign
    (0x80000000, 0x8000),  # -0
    (0x00008000, 0x0000),  # subnormal tie: to even 0
    (0x00018000, 0x0002),  # subnormal tie: to even 2
]


def main():
    src = np.array([b for b, _ in BF16], dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        got = f32_to_bf16(src)
    bad = [(hex(b), hex(w), hex(int(g))) for (b, w), g in zip(BF16, got) if g != w]
    back = bf16_to_f32(np.array([0x3F81, 0xC2F7], dtype=np.uint16))
    if list(back) != [1.0078125, -123.5]:
        bad.append(("decode", list(back)))
    with np.errstate(all="ignore"):
        f16 = Kit("float16").rnd(np.array([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 1e-8],
                                          dtype=np.float32))
    if list(f16) != [1.0, 1 + 2**-9, np.inf, np.float32(np.float16(1e-8))]:
        bad.append(("float16", list(f16)))
    for b in bad:
        print("MISMATCH", b)
    print("rounding: %d of %d checks passed" % (len(BF16) + 2 - len(bad), len(BF16) + 2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
