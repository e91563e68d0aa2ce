#!/usr/bin/env bash
# Builds the runtime library and the C examples (run_model, classify_digits, train_on_device).
#
#     examples/c/build.sh [OUT_DIR]          # default: examples/c/build
#
# Runs `cargo build --release -p anfora-runtime` and links each example statically against
# libanfora_runtime.a (with -lpthread -ldl -lm). Environment:
#   CC           the C compiler (default: cc)
#   CFLAGS       extra flags (the tests add -Werror)
#   ANFORA_LIB   a libanfora_runtime.a or .so already built: cargo is not run; a .so is
#                linked with an rpath to its directory
#   CARGO_TARGET_DIR  where cargo builds (default: target/ in the repository)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/build}"
cc="${CC:-cc}"

lib="${ANFORA_LIB:-}"
if [ -z "$lib" ]; then
    cargo build --release -p anfora-runtime --manifest-path "$root/Cargo.toml"
    lib="${CARGO_TARGET_DIR:-$root/target}/release/libanfora_runtime.a"
fi
if [ ! -f "$lib" ]; then
    echo "build.sh: $lib does not exist" >&2
    exit 1
fi
case "$lib" in
    *.so) link=("$lib" "-Wl,-rpath,$(cd "$(dirname "$lib")" && pwd)") ;;
    *) link=("$lib" -lpthread -ldl -lm) ;;
esac

mkdir -p "$out"
for example in run_model classify_digits train_on_device; do
    # shellcheck disable=SC2086 # CFLAGS is a list of flags
    "$cc" -std=c11 -O2 -Wall -Wextra ${CFLAGS:-} -I"$root/crates/anfora-runtime/include" \
        "$here/$example.c" "${link[@]}" -o "$out/$example"
    echo "built $out/$example"
done
