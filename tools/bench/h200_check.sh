#!/usr/bin/env bash
# The H200 conformance job (device tool), two calls of under 10 minutes each
# (`h200_check.sh cuda`: steps 1-4; `h200_check.sh torch`: steps 1 and 5, the
# build reused when the machine is still warm):
#  1. build with CUDA for sm_90 (tests off: the image has no Criterion);
#  2. the default suite on cuda, and the nightly suite's composite entries
#     (mtp_step, draft_chain, hc_head, eh_proj, eh_proj_hc,
#     fused_mtp_input_rmsnorm), both with --json;
#  3. the ROUNDING_BIAS false-alarm count over both (tools/bias/bias_count.py,
#     docs/DIAGNOSES.md): no output may fire on a correct backend;
#  4. the mutant self-test over cuda;
#  5. with the python backend built against the image's torch: the eager
#     suite, the torch compile adapter's suite in parallel shards (one
#     torch.compile cache per shard process), and the side-by-side bench rows
#     of the GEMM and composite ops against cuda.
# Every step has its own time limit; a step cut short says so. The logs and
# JSON files go to a work folder, packed at the end into $OUT/h200_check.tgz
# (the device tool brings back few files); $OUT defaults to out/.
set -uo pipefail
dest=${OUT:-out}
out=$(mktemp -d /tmp/h200_check.XXXXXX)
py=${PY:-/opt/torch/.venv/bin/python}
mkdir -p "$dest"
trap 'tar -C "$out" -czf "$dest/h200_check.tgz" . ; cp "$out/bias.txt" "$dest/" 2>/dev/null' EXIT
. "$(dirname "$0")/step.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step build 200 sh -c "cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 \
	-DMTP_WITH_PYTHON=ON -DPython3_EXECUTABLE=$py && cmake --build build -j$(nproc)"
m=./build/mtpcheck
[ -x $m ] || exit 1
mode=${1:-cuda}
if [ "$mode" = cuda ]; then
ops=mtp_step,draft_chain,hc_head,eh_proj,eh_proj_hc,fused_mtp_input_rmsnorm
step quick 90 $m run --backend cuda --json "$out/cuda-quick.json"
step nightly 150 $m run --backend cuda --cases cases/nightly.case --op $ops --json "$out/cuda-nightly.json"
python3 tools/bias/bias_count.py "$out/cuda-quick.json" "$out/cuda-nightly.json" | tee "$out/bias.txt"
step selftest 150 $m selftest --backend cuda --json "$out/selftest.json"
elif [ -f build/mtp_backend_python.so ]; then
	export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
	step torch_eager 40 $m run --backend python:mtpcheck.adapters.torch:eager --json "$out/torch-eager.json"
	# 8 shards at once: torch.compile's work is per process
	step torch_compile 240 sh -c "for i in 0 1 2 3 4 5 6 7; do
		$m run --backend python:mtpcheck.adapters.torch:compile --shard \$i/8 \
			--json $out/torch-compile-\$i.json >$out/torch-compile-\$i.txt 2>&1 & done; wait;
		tail -qn1 $out/torch-compile-*.txt"
	# the side-by-side rows docs/BENCHMARKS.md still lacked: the GEMM and
	# composite ops, hc_pre and hc_head (graph replay, H = 7168, M = 4)
	step bench_more 200 $m bench --backend cuda,python:mtpcheck.adapters.torch:eager,python:mtpcheck.adapters.torch:compile \
		--op hc_pre,hc_head,hc_fused_post_pre,embed,fused_embed_eh_norm,eh_proj,eh_proj_hc,lm_head,all_reduce,mtp_block,mtp_step,draft_chain \
		--T 1,64,4096 --H 7168 --M 4 --graph --no-unfused --min-time 0.05 --json "$out/bench_more.json"
fi
echo "total $SECONDS s"
