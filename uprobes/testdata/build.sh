#!/usr/bin/env bash
# Builds the uprobes guest test programs into bin/{arm64,amd64}/ and
# (with "check") runs them natively / under qemu-aarch64 against expected/.
set -euo pipefail
cd "$(dirname "$0")"
CC_amd64=${CC_amd64:-gcc}
CC_arm64=${CC_arm64:-aarch64-linux-gnu-gcc}
# -g0: no DWARF, but the symbol table stays (uprobes need it).
CFLAGS=${CFLAGS:--O2 -g0 -Wall}
if [ "${1:-bin}" = bin ]; then
	for arch in amd64 arm64; do
		cc=CC_$arch
		mkdir -p "bin/$arch"
		for src in src/*.c; do
			# shellcheck disable=SC2086
			${!cc} -static $CFLAGS -pthread -o "bin/$arch/$(basename "$src" .c)" "$src"
		done
	done
	exit 0
fi
# check: every line of expected/probetargets.cases is "ARGS<TAB>OUTPUT-FILE".
fail=0
while IFS=$'\t' read -r args out; do
	[ -z "$args" ] && continue
	for arch in amd64 arm64; do
		run=""
		[ "$arch" = arm64 ] && run="qemu-aarch64"
		# shellcheck disable=SC2086
		got=$($run "bin/$arch/probetargets" $args)
		if [ "$got" != "$(cat "expected/$out")" ]; then
			echo "FAIL $arch probetargets $args"
			fail=1
		fi
	done
done <expected/probetargets.cases
exit $fail
