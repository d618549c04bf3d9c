#!/usr/bin/env bash
# Builds the embedded bench guests (trigger-amd64, trigger-arm64).
# Needs gcc and aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu).
set -euo pipefail
cd "$(dirname "$0")"
gcc -static -O2 -g0 -pthread -o trigger-amd64 trigger.c
aarch64-linux-gnu-gcc -static -O2 -g0 -pthread -o trigger-arm64 trigger.c
strip --strip-debug trigger-amd64
aarch64-linux-gnu-strip --strip-debug trigger-arm64
ls -la trigger-amd64 trigger-arm64
