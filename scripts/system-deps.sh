#!/usr/bin/env bash
# The Debian packages building and testing anfora needs, installed when missing (idempotent):
# graphviz (the .dot test renders with `dot`), gcc and g++ (the C API tests and the demo
# compile C and C++), OpenMPI and libclang (anfora.distributed: the mpi crate's build
# generates its bindings with bindgen, and the tests run `mpirun`). scripts/setup.sh and
# scripts/demo.sh run it.
set -euo pipefail

MISSING=()
command -v dot >/dev/null 2>&1 || MISSING+=(graphviz)
command -v cc >/dev/null 2>&1 || MISSING+=(gcc libc6-dev)
command -v c++ >/dev/null 2>&1 || MISSING+=(g++)
# OpenMPI for anfora.distributed; libclang because the mpi crate's build generates its
# bindings with bindgen.
command -v mpirun >/dev/null 2>&1 || MISSING+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h ] || [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] \
    || MISSING+=(libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 \
    || MISSING+=(libclang-dev)
if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "system-deps: installing ${MISSING[*]}"
    SUDO=""
    if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${MISSING[@]}" >/dev/null
fi
