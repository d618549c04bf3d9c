#!/bin/sh
# Builds the uprobe oracle program from harness.S, harness.c and the
# generated cases.S (cmd/uvm: go test -run Oracle -update regenerates
# cases.S, runs this script and rewrites golden.txt).
set -eu
cd "$(dirname "$0")"
${CC:-gcc} -O1 -g0 -nostdlib -static -no-pie -fno-pie -fno-stack-protector -fno-builtin \
	-fno-asynchronous-unwind-tables -Wl,--build-id=none -Wl,-z,noseparate-code -o oracle harness.S harness.c cases.S
# progs: the whole-program scenarios (glibc, static).
${CC:-gcc} -O1 -g0 -static -pthread -fno-inline -fno-optimize-sibling-calls -Wl,--build-id=none -o progs progs.c
