#!/usr/bin/env bash
# Installs what mtpcheck needs on a Debian 12 machine (root), only if missing.
set -euo pipefail
pkgs=(cmake gcc make pkg-config dpkg-dev clang-format libhdf5-dev hdf5-tools libcriterion-dev
      libcjson-dev python3-numpy python3-h5py python3-dev
      pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers libze-dev
      clang-14 llvm-14 llvm-spirv-14 spirv-tools libclang-rt-14-dev time chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi
