#!/usr/bin/env bash
# Builds and checks uvm's guest test programs. See README.md.
#
#   ./build.sh [bin]   compile src/*.c into bin/arm64/ and bin/amd64/
#   ./build.sh check   run every MANIFEST program natively (amd64) and under
#                      qemu-aarch64 (arm64) and compare with expected/
#   ./build.sh expected
#                      regenerate expected/*.out from native amd64 runs (and
#                      arm64 runs under qemu for the per-arch programs), then
#                      run check
#
# Needs gcc, aarch64-linux-gnu-gcc, go and qemu-aarch64 (check/expected);
# an x86-64 Linux host for the native runs.
set -euo pipefail
cd "$(dirname "$0")"

CC_amd64=${CC_amd64:-gcc}
CC_arm64=${CC_arm64:-aarch64-linux-gnu-gcc}
# -g0: no DWARF, but the symbol table stays (uprobes and pprof need it).
CFLAGS=${CFLAGS:--O2 -g0 -Wall}
# Extra flags per program: fibfp is the guest profiler's test program (frame
# pointers for the unwinder, DWARF line tables with relative paths).
declare -A EXTRA_CFLAGS=([fibfp]="-fno-omit-frame-pointer -g -fdebug-prefix-map=$PWD=.")
# Programs whose output legitimately differs between the arches; they get
# expected/NAME.amd64.out and expected/NAME.arm64.out instead of NAME.out.
PER_ARCH="printf_ld"
# Programs linked dynamically (PT_INTERP, libc.so.6): not in MANIFEST, they
# need the arch's libraries (the host's for amd64, the cross toolchain's
# /usr/aarch64-linux-gnu for arm64); cmd/uvm's TestDynamic runs them.
DYNAMIC="dynhello"
# x86-64-only programs (not in MANIFEST; cmd/uvm's TestX86Ext compares them
# with expected/NAME.amd64.out and, on a host with the features, with a
# native run), with their own flags: x86_bmi uses BMI1/BMI2/LZCNT/MOVBE/ADX
# and RDTSCP/RDPID/FSGSBASE, x86_mmx MMX and SSE-on-MMX, x86_vsyscall the
# legacy vsyscall page, x86_traps the traps and exceptions (TestX86Traps).
declare -A AMD64_ONLY=(
	[x86_bmi]="-march=x86-64-v3 -O2 -mno-avx -mrdpid -mfsgsbase -g0 -Wall"
	[x86_mmx]="-O2 -mssse3 -g0 -Wall"
	[x86_vsyscall]="-O2 -g0 -Wall"
	[x86_traps]="-O2 -g0 -Wall"
)
# Programs whose arm64 run under qemu-user is no oracle (check skips it):
# creds calls fchmodat2, which qemu 7.2 does not know (ENOSYS); procfs
# reads qemu's own /proc (its threads, its environment); the native amd64
# run is its oracle (smaps and dumpable too); sock_mmsg: qemu 7.2 ignores
# recvmmsg's timeout; pathexec execs a copy of itself, an arm64 program
# the host cannot run without binfmt_misc (ENOEXEC); nsclone: qemu 7.2 answers
# clone with namespace flags EINVAL where Linux says EPERM; ptrace: qemu-user
# has no ptrace (ENOSYS).
QEMU_SKIP="creds procfs smaps dumpable sock_mmsg pathexec nsclone ptrace"
ARCHES="amd64 arm64"

build_bin() {
	local arch cc src name
	for arch in $ARCHES; do
		cc=CC_$arch
		cc=${!cc}
		mkdir -p "bin/$arch"
		for src in src/*.c; do
			name=$(basename "$src" .c)
			if [[ -n ${AMD64_ONLY[$name]:-} ]]; then
				if [[ $arch == amd64 ]]; then
					# shellcheck disable=SC2086
					$cc -static ${AMD64_ONLY[$name]} -o "bin/$arch/$name" "$src"
				fi
				continue
			fi
			# -pthread is a no-op for glibc >= 2.34 but harmless.
			# shellcheck disable=SC2086 # word splitting of the flags is intended
			if [[ " $DYNAMIC " == *" $name "* ]]; then
				# shellcheck disable=SC2086
				$cc $CFLAGS -o "bin/$arch/$name" "$src"
				continue
			fi
			$cc -static $CFLAGS ${EXTRA_CFLAGS[$name]:-} -pthread -o "bin/$arch/$name" "$src"
		done
		$cc -static-pie $CFLAGS -o "bin/$arch/hello-pie" src/hello.c
		# vdsoclock also linked dynamically: ld.so's setup_vdso path
		# (cmd/uvm's TestVDSOClockC; needs the arch's libraries).
		$cc $CFLAGS -o "bin/$arch/vdsoclock-dyn" src/vdsoclock.c
		if [[ $arch == amd64 ]]; then
			# x86-64-v3 programs (src/amd64/, not in MANIFEST: run with
			# uvm --cpu x86-64-v3 by cmd/uvm's TestAVXGuest).
			for src in src/amd64/*.c; do
				$cc -static -O3 -g0 -Wall -march=x86-64-v3 \
					-include unistd.h -o "bin/amd64/$(basename "$src" .c)" "$src"
			done
		fi
		echo "built bin/$arch: $(ls "bin/$arch" | wc -l) programs"
	done
	build_isa
}

# Arm64-only programs (src/arm64/NAME.c): the ISA extensions uvm's arm64 CPU
# implements beyond Armv8.0, each built for its target. Not in MANIFEST (they
# do not build for x86-64); cmd/uvm/arm64isa_test.go runs them and compares
# with expected/NAME.arm64.out, which `./build.sh expected` takes from
# qemu-aarch64 -cpu max.
declare -A ISA_CFLAGS=(
	[isa_atomics]="-march=armv8.1-a -mno-outline-atomics"
	[isa_crypto]="-march=armv8.2-a+crypto+sha3 -O3"
	[isa_fp16]="-march=armv8.2-a+fp16 -O3 -fno-math-errno"
	[isa_fhm]="-march=armv8.4-a+fp16+fp16fml"
	[cycdiv]="-march=armv8-a" # the cycle-clock profile's guest (cmd/uvm/pprofclock_test.go)
)

build_isa() {
	local src name
	mkdir -p bin/arm64
	for src in src/arm64/*.c; do
		name=$(basename "$src" .c)
		# shellcheck disable=SC2086
		$CC_arm64 -static $CFLAGS ${ISA_CFLAGS[$name]} -pthread -o "bin/arm64/$name" "$src"
	done
	echo "built $(ls src/arm64/*.c | wc -l) arm64 ISA programs"
}

expected_isa() {
	local src name
	for src in src/arm64/*.c; do
		name=$(basename "$src" .c)
		qemu-aarch64 -cpu max "bin/arm64/$name" >"expected/$name.arm64.out"
		echo "$name: exit $?"
	done
}

# build_go DIR: builds every Go guest for both arches into DIR/ARCH/ (go/NAME
# becomes DIR/ARCH/NAME, as in the Go test harness, so that guests that run
# their siblings, like go-exec, find them under the same names).
build_go() {
	local out=$1 arch
	for arch in $ARCHES; do
		mkdir -p "$out/$arch"
		(cd go && GOOS=linux GOARCH=$arch CGO_ENABLED=0 \
			go build -o "$out/$arch/" ./...)
	done
}

# stage_arm64 BIN STAGE: prints the path to run BIN from under qemu-aarch64.
# qemu-aarch64 does not follow execve into aarch64 programs by itself (the
# host kernel would need a binfmt_misc handler), so every arm64 guest runs
# from STAGE: a copy of BIN (qemu resolves /proc/self/exe to it) next to, for
# each other program in BIN's directory, a script of the same name that runs
# the real program under qemu-aarch64. Guests that execute their siblings
# (proc_exec, go-exec) thus work as they do under uvm.
stage_arm64() {
	local bin=$1 stage=$2 qemu f
	qemu=$(command -v qemu-aarch64)
	cp "$bin" "$stage/"
	for f in "$(dirname "$bin")"/*; do
		[[ -f $f && -x $f ]] || continue
		[[ $(basename "$f") == "$(basename "$bin")" ]] && continue
		# shellcheck disable=SC2016 # $0 and $@ belong to the script
		printf '#!/bin/sh\nexec %q -0 "$0" %q "$@"\n' "$qemu" "$(realpath "$f")" \
			>"$stage/$(basename "$f")"
		chmod +x "$stage/$(basename "$f")"
	done
	echo "$stage/$(basename "$bin")"
}

# manifest: prints the MANIFEST lines without comments and blank lines.
manifest() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' MANIFEST
}

# run ARCH BINDIR GOBINDIR OUTFILE NAME ARGS...: runs one guest the way the
# harness does (empty environment plus expected/NAME.env, stdin from
# expected/NAME.stdin or /dev/null, $TMP replaced by a fresh directory);
# prints the exit status.
run() {
	local arch=$1 bindir=$2 gobindir=$3 out=$4 name=$5
	shift 5
	local bin tmp stage a rc stdin=/dev/null
	local -a args=() envv=()
	case $name in
	go-*) bin=$gobindir/$arch/${name#go-} ;;
	*) bin=$bindir/$arch/$name ;;
	esac
	tmp=$(mktemp -d)
	stage=$(mktemp -d)
	for a in "$@"; do
		args+=("${a//\$TMP/$tmp}")
	done
	[[ -f expected/$name.stdin ]] && stdin=expected/$name.stdin
	if [[ -f expected/$name.env ]]; then
		mapfile -t envv <expected/$name.env
	fi
	local -a runner=()
	if [[ $arch == arm64 ]]; then
		runner=(qemu-aarch64)
		bin=$(stage_arm64 "$bin" "$stage")
	fi
	set +e
	(ulimit -c 0; exec env -i "${envv[@]}" "${runner[@]}" "$bin" "${args[@]}") \
		<"$stdin" >"$out" 2>"$out.stderr"
	rc=$?
	set -e
	rm -rf "$tmp" "$stage"
	echo "$rc"
}

# expected_file NAME ARCH EXT: the expected file that applies to ARCH.
expected_file() {
	if [[ -f expected/$1.$2.$3 ]]; then
		echo "expected/$1.$2.$3"
	else
		echo "expected/$1.$3"
	fi
}

check_args_files() {
	local name rest want have
	while read -r name rest; do
		want=$(tr -s ' \t' '\n\n' <<<"$rest" | sed '/^$/d')
		have=""
		[[ -f expected/$name.args ]] && have=$(cat "expected/$name.args")
		if [[ $want != "$have" ]]; then
			echo "MANIFEST arguments of $name differ from expected/$name.args" >&2
			return 1
		fi
	done < <(manifest)
}

check() {
	local work fails=0 name rest arch rc want_rc out
	work=$(mktemp -d)
	trap 'rm -rf "$work"' RETURN
	check_args_files || fails=$((fails + 1))
	build_go "$work/go"
	while read -r name rest; do
		# shellcheck disable=SC2086 # word splitting of the arguments is intended
		set -- $rest
		for arch in $ARCHES; do
			if [[ $arch == arm64 && " $QEMU_SKIP " == *" $name "* ]]; then
				echo "skip $name ($arch): qemu-user is no oracle for it"
				continue
			fi
			out=$work/$name.$arch.out
			rc=$(run "$arch" bin "$work/go" "$out" "$name" "$@")
			want_rc=0
			f=$(expected_file "$name" "$arch" exit)
			[[ -f $f ]] && want_rc=$(cat "$f")
			f=$(expected_file "$name" "$arch" out)
			if [[ $rc != "$want_rc" ]] || ! cmp -s "$out" "$f"; then
				echo "FAIL $name ($arch): exit $rc (want $want_rc)"
				diff "$f" "$out" | head -20 || true
				head -5 "$out.stderr"
				fails=$((fails + 1))
			else
				echo "ok   $name ($arch)"
			fi
		done
	done < <(manifest)
	if ((fails)); then
		echo "$fails failures"
		return 1
	fi
	echo "all guests match"
}

expected() {
	local work name rest rc
	work=$(mktemp -d)
	trap 'rm -rf "$work"' RETURN
	build_go "$work/go"
	while read -r name rest; do
		# shellcheck disable=SC2086
		set -- $rest
		if [[ " $PER_ARCH " == *" $name "* ]]; then
			run amd64 bin "$work/go" "expected/$name.amd64.out" "$name" "$@" >/dev/null
			run arm64 bin "$work/go" "expected/$name.arm64.out" "$name" "$@" >/dev/null
			rm -f "expected/$name.amd64.out.stderr" "expected/$name.arm64.out.stderr"
		else
			rc=$(run amd64 bin "$work/go" "expected/$name.out" "$name" "$@")
			rm -f "expected/$name.out.stderr"
			echo "$name: exit $rc"
		fi
	done < <(manifest)
	expected_isa
	check
}

case ${1:-bin} in
bin) build_bin ;;
check) check ;;
expected) expected ;;
*)
	echo "usage: $0 [bin|check|expected]" >&2
	exit 2
	;;
esac
