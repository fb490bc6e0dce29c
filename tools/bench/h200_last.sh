#!/usr/bin/env bash
# A short H200 call (about 5 minutes): the torch.compile suite in 16 shards
# after the adapter's fixes (subnormal scale, eager islands for the
# correctly rounded divisions), the cuda quick suite, and hc_head's decode
# and per-token paths around the automatic threshold (T = 16, 32, 48).
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_last 280
cstep_build 90
cstep quick 20 $m run --backend cuda --json "$out/quick.json"
bench="$m bench --backend cuda --op hc_head --T 16,32,48 --H 7168 --M 4 --graph --no-unfused --min-time 0.05 --launches 128"
cstep head_decode 20 env MTP_CUDA_HC_PATH=decode $bench --json "$out/head-decode.json"
cstep head_token 20 env MTP_CUDA_HC_PATH=token $bench --json "$out/head-token.json"
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
compiled=python:mtpcheck.adapters.torch:compile
cstep torch_compile 400 sh -c "for i in \$(seq 0 15); do
	$m run --backend $compiled --shard \$i/16 --json $out/torch-compile-\$i.json \
		>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
echo "total $SECONDS s"
