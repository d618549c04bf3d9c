package arm64

import (
	"os"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm/arm64/internal/hookgen"
)

// TestHookedLoopUpToDate fails when exec_hooked.go is not what
// gen_hooked.go makes of exec.go (regenerate with go generate ./internal/vm/arm64).
func TestHookedLoopUpToDate(t *testing.T) {
	src, err := os.ReadFile("exec.go")
	if err != nil {
		t.Fatal(err)
	}
	want, err := hookgen.Generate(string(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("exec_hooked.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("exec_hooked.go is out of date with exec.go: run go generate ./internal/vm/arm64")
	}
}
