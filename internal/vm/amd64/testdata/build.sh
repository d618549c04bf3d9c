#!/bin/sh
# Builds the SSE/x87 test programs (static, x86-64) next to their sources.
# ssefns: glibc string/format/libm/fenv/long double exercise; compare
#   ./ssefns with `uvm run ./ssefns` (the output must be identical).
set -e
cd "$(dirname "$0")"
gcc -O2 -static -fno-builtin -o ssefns ssefns.c -lm
