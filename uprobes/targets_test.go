package uprobes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeTargets checks the fate of each target's first instruction in
// the guest test program (testdata/src/probetargets.c), per architecture.
func TestProbeTargets(t *testing.T) {
	fates := map[string]map[string]string{
		"arm64": {"t_nop": "simulate nop", "t_push": "xol", "t_ret": "simulate br/blr/ret",
			"t_branch": "simulate b/bl", "t_riprel": "simulate adr/adrp", "t_literal": "reject",
			"t_store": "xol", "t_recurse": "xol", "t_deep": "xol", "t_forkret": "xol"},
		"amd64": {"t_nop": "emulate branch", "t_push": "emulate push", "t_ret": "xol",
			"t_branch": "emulate branch", "t_riprel": "xol FIX_IP|FIX_RIP_SI", "t_literal": "xol FIX_IP",
			"t_store": "xol FIX_IP"},
	}
	for arch, want := range fates {
		t.Run(arch, func(t *testing.T) {
			path := "testdata/bin/" + arch + "/probetargets"
			ex, err := New(DefaultOptions()).OpenExecutable(path)
			require.NoError(t, err)
			for sym, fate := range want {
				addr, _, err := ex.Address(sym)
				require.NoError(t, err, sym)
				off, err := ex.FileOffset(addr)
				require.NoError(t, err)
				var b [16]byte
				n, err := copyInsn(ex.ref, off, b[:insnSize(ex.ref.arch)])
				require.NoError(t, err)
				var got, detail string
				if ex.ref.arch == ArchARM64 {
					got, detail = A64Fate(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24, true)
				} else {
					got, detail = X86Fate(b[:n])
				}
				if got != "reject" && detail != "" {
					got += " " + detail
				}
				assert.Equal(t, fate, got, sym)
				err = ex.Analyze(off)
				if fate == "reject" {
					assert.ErrorIs(t, err, ErrRejected, sym)
					assert.ErrorIs(t, err, EINVAL, sym)
				} else {
					assert.NoError(t, err, sym)
				}
			}
		})
	}
}
