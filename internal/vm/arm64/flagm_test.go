package arm64

import (
	"fmt"
	"math/rand"
	"testing"
)

// genV84Cases: LRCPC2 loads/stores with aligned offsets (uvm has no
// FEAT_LSE2, so misaligned ones are alignment faults) and the FlagM
// instructions on every NZCV value.
func genV84Cases(rng *rand.Rand) []diffCase {
	var cases []diffCase
	add := func(mem bool, text string) {
		cases = append(cases, diffCase{text: text, mem: mem, desc: text})
	}
	for i := 0; i < 120; i++ {
		size := uint32(rng.Intn(4))
		opc := uint32(rng.Intn(4))
		if opc == 2 && size == 3 || opc == 3 && size >= 2 {
			continue
		}
		off := (rng.Intn(129) - 64) &^ (1<<size - 1)
		raw := size<<30 | 0x19000000 | opc<<22 | uint32(off)&0x1ff<<12 | pickBase(rng)<<5 | pickReg(rng)
		add(true, fmt.Sprintf(".inst 0x%08x", raw))
	}
	for k := 0; k < 16; k++ {
		for _, op := range []string{"cfinv", "xaflag", "axflag"} {
			add(false, fmt.Sprintf("mov x9, #%d\nmsr nzcv, x9\n%s", k<<28, op))
		}
	}
	for i := 0; i < 60; i++ {
		add(false, fmt.Sprintf("rmif x%d, #%d, #%d", rng.Intn(7), rng.Intn(64), rng.Intn(16)))
		add(false, fmt.Sprintf("setf%d w%d", 8<<rng.Intn(2), rng.Intn(7)))
	}
	return cases
}

// TestV84DiffQemu compares LRCPC2 and FlagM with qemu-aarch64 -cpu max.
func TestV84DiffQemu(t *testing.T) {
	rng := rand.New(rand.NewSource(84))
	runDiffCases(t, genV84Cases(rng), rng, "-march=armv8.5-a+rcpc")
}
