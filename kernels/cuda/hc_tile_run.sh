# The tiled hc_pre run on the H200 (device tool, one call): builds mtpcheck
# and the cuda module for sm_90, runs the hc suite twice (default dispatch,
# then MTP_CUDA_HC_TILE_MIN_T=1 so every supported shape takes the tiled
# kernel), then times hc_pre and hc_head under graph replay. Logs in $OUT.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
( timeout 170 cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CPU=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 >"$out/build.log" 2>&1 &&
  timeout 170 cmake --build build -j"$(nproc)" --target mtpcheck mtp_backend_cuda >>"$out/build.log" 2>&1 ) || { tail -30 "$out/build.log"; exit 1; }
echo "build ok $SECONDS s"
timeout 60 ./build/mtpcheck run --backend cuda --filter 'hc_*' 2>&1 | tee "$out/run_default.txt" | tail -4
echo "run default rc=$? $SECONDS s"
MTP_CUDA_HC_TILE_MIN_T=1 timeout 60 ./build/mtpcheck run --backend cuda --filter 'hc_*' 2>&1 | tee "$out/run_forced.txt" | tail -4
echo "run forced rc=$? $SECONDS s"
grep -iE "fail|error" "$out/run_forced.txt" "$out/run_default.txt" | head -10
timeout 230 ./build/mtpcheck bench --backend cuda --op hc_pre,hc_head --T 1,64,512,4096,16384 --H 4096,7168 --M 4 --graph --no-unfused --min-time 0.1 --json "$out/hc.json" >"$out/hc.txt" 2>&1
echo "bench rc=$? $SECONDS s"
grep -vE '^\s*$' "$out/hc.txt" | cut -c1-140
