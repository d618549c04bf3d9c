package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// goV3 builds the Go guests with GOAMD64=v3 (the compiler then uses
// BMI1/BMI2, LZCNT, MOVBE, FMA and the runtime's and crypto's AVX2 paths
// without checking CPUID) once per test binary.
var goV3 struct {
	once sync.Once
	dir  string
	err  error
}

// TestGoGuestsGOAMD64v3 runs Go guests built for x86-64-v3 under
// --cpu x86-64-v3 and compares them with the corpus' expected output.
func TestGoGuestsGOAMD64v3(t *testing.T) {
	goV3.once.Do(func() {
		goV3.dir, goV3.err = os.MkdirTemp("", "uvm-go-v3")
		if goV3.err != nil {
			return
		}
		cmd := exec.Command(goTool(), "build", "-o", goV3.dir+string(filepath.Separator), "./...")
		cmd.Dir = "../../testdata/go"
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "GOAMD64=v3", "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			goV3.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if goV3.err != nil {
		t.Fatalf("building Go guests with GOAMD64=v3: %v", goV3.err)
	}
	for _, name := range []string{"hello", "goroutines", "sha", "maps", "floats", "sortstr", "deeprec", "cpufeat"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile("../../testdata/expected/go-" + name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range [][]string{{"--det"}, {}} {
				var o, e bytes.Buffer
				args := append(append([]string{"run", "--clean-env", "--cpu", "x86-64-v3"}, mode...), filepath.Join(goV3.dir, name))
				if code := run(args, nil, &o, &e); code != 0 || o.String() != string(want) {
					t.Errorf("%v: exit %d\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", mode, code, o.String(), want, e.String())
				}
			}
		})
	}
}
