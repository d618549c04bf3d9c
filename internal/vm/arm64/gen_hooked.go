//go:build ignore

// gen_hooked writes exec_hooked.go from exec.go (go generate ./internal/vm/arm64;
// the rules are in internal/hookgen).
package main

import (
	"fmt"
	"os"

	"github.com/uvm-emu/uvm/internal/vm/arm64/internal/hookgen"
)

func main() {
	src, err := os.ReadFile("exec.go")
	if err == nil {
		var out []byte
		if out, err = hookgen.Generate(string(src)); err == nil {
			err = os.WriteFile("exec_hooked.go", out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen_hooked:", err)
		os.Exit(1)
	}
}
