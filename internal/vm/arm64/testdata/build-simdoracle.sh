#!/bin/sh
# Rebuilds simdoracle (the qemu oracle driver of simd_oracle_test.go).
set -e
cd "$(dirname "$0")"
aarch64-linux-gnu-as -o /tmp/simdoracle.o simdoracle.S
aarch64-linux-gnu-ld -static -nostdlib -z max-page-size=4096 -Ttext=0x400000 -Tbss=0x500000 -o simdoracle /tmp/simdoracle.o
aarch64-linux-gnu-strip --strip-debug --remove-section=.comment simdoracle
rm -f /tmp/simdoracle.o
