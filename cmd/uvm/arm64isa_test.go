package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The arm64 ISA programs (testdata/src/arm64, built by testdata/build.sh
// for Armv8.1+ targets and committed as bin/arm64/NAME) must print what
// qemu-aarch64 -cpu max printed (expected/NAME.arm64.out), in
// deterministic and in parallel mode (their threads race on atomics).
func TestArm64ISAPrograms(t *testing.T) {
	srcs, err := filepath.Glob("../../testdata/src/arm64/*.c")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no arm64 ISA programs: %v", err)
	}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".c")
		t.Run(name, func(t *testing.T) {
			bin, _ := filepath.Abs("../../testdata/bin/arm64/" + name)
			want, err := os.ReadFile("../../testdata/expected/" + name + ".arm64.out")
			if err != nil {
				t.Fatal(err)
			}
			modes := []bool{false}
			if !raceEnabled {
				modes = append(modes, true)
			}
			for _, par := range modes {
				out, errOut, code := runGuestMode(t, par, bin, nil, nil, nil, "")
				if out != string(want) || code != 0 {
					t.Errorf("parallel=%v: exit %d\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", par, code, out, want, errOut)
				}
			}
		})
	}
}

// goV81 builds the Go guests with GOARM64=v8.1 (LSE atomics used
// unconditionally by the runtime and sync/atomic; the runtime also checks
// ID_AA64ISAR0_EL1 with MRS at start-up) once per test binary.
var goV81 struct {
	once sync.Once
	dir  string
	err  error
}

// TestGoGuestsGOARM64v81 runs Go guests built for Armv8.1 and compares
// them with the corpus' expected output.
func TestGoGuestsGOARM64v81(t *testing.T) {
	goV81.once.Do(func() {
		goV81.dir, goV81.err = os.MkdirTemp("", "uvm-go-v81")
		if goV81.err != nil {
			return
		}
		cmd := exec.Command(goTool(), "build", "-o", goV81.dir+string(filepath.Separator), "./...")
		cmd.Dir = "../../testdata/go"
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "GOARM64=v8.1", "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			goV81.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if goV81.err != nil {
		t.Fatalf("building Go guests with GOARM64=v8.1: %v", goV81.err)
	}
	for _, name := range []string{"goroutines", "sha", "maps", "cpufeat"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile("../../testdata/expected/go-" + name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runGuest(t, filepath.Join(goV81.dir, name), nil, nil, nil, "")
			if out != string(want) || code != 0 {
				t.Errorf("exit %d\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", code, out, want, errOut)
			}
		})
	}
}
