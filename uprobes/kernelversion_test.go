package uprobes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKernelVersion(t *testing.T) {
	for _, tc := range []struct {
		in           string
		major, minor int
	}{
		{"6.18", 6, 18}, {"v6.13", 6, 13}, {"6.18.44-fc-v669", 6, 18}, {"6.12-rc3", 6, 12}, {" 6.10 ", 6, 10},
	} {
		maj, min, err := ParseKernelVersion(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, [2]int{tc.major, tc.minor}, [2]int{maj, min}, tc.in)
	}
	for _, bad := range []string{"", "6", "six.ten", "6.x", "6.1234", "6.18x"} {
		_, _, err := ParseKernelVersion(bad)
		assert.ErrorIs(t, err, ErrInvalid, bad)
	}
}

// TestSetKernel: kernel=VERSION sets each version-dependent switch as
// that release behaves, and refuses releases the model does not know.
func TestSetKernel(t *testing.T) {
	d := DefaultOptions()
	o := DefaultOptions()
	require.NoError(t, o.Set("kernel", DefaultKernel))
	assert.Equal(t, d.String(), o.String(), "the default is the newest kernel")

	type sw struct {
		tree                                                 TreeLock
		sysc, flush, simNOP, mremap, pool, siglock, nopForms bool
	}
	get := func(o Options) sw {
		return sw{o.TreeLock, o.X86UretprobeSyscall, o.XOLFlushElision, o.ARM64SimulateNOP, o.XOLMremapDenied,
			o.ReturnInstancePool, o.SingleStepSiglock, o.X86NopForms}
	}
	want := map[string]sw{
		"6.10": {TreeLockRWLock, false, false, false, false, false, true, false},
		"6.11": {TreeLockRWLock, true, false, false, false, false, true, false},
		"6.12": {TreeLockRCU, true, false, false, false, false, true, false},
		"6.13": {TreeLockRCU, true, true, true, true, false, true, false},
		"6.14": {TreeLockRCU, true, true, true, true, true, true, false},
		"6.15": {TreeLockRCU, true, true, true, true, true, false, false},
		"6.17": {TreeLockRCU, true, true, true, true, true, false, false},
		"6.18": {TreeLockRCU, true, true, true, true, true, false, true},
	}
	for v, w := range want {
		o := DefaultOptions()
		require.NoError(t, o.Set("Kernel", v))
		assert.Equal(t, w, get(o), v)
		assert.Equal(t, v, o.Kernel)
	}
	// Later switches override the version's.
	o = DefaultOptions()
	require.NoError(t, o.Set("kernel", "6.12"))
	require.NoError(t, o.Set("TreeLock", "spinlock"))
	assert.Equal(t, TreeLockSpinlock, o.TreeLock)
	assert.False(t, o.XOLFlushElision)

	for _, bad := range []string{"6.9", "6.19", "5.15", "7.0", "latest"} {
		o := DefaultOptions()
		err := o.Set("kernel", bad)
		assert.ErrorIs(t, err, ErrInvalid, bad)
		assert.Equal(t, d.String(), o.String(), "a refused version changes nothing")
	}
	err := o.Set("kernel", "6.9")
	assert.ErrorContains(t, err, "6.10 … 6.18")
}

// TestX86NopFormsByKernel: the NOP rule of branch_setup_xol_ops by
// release: since 6.18 the x86_nops[] forms are emulated as NOPs; before,
// only opcode 0x90 is, and 66 90 falls under the 66-prefix rule of
// branches (ENOTSUPP).
func TestX86NopFormsByKernel(t *testing.T) {
	for _, tc := range []struct {
		hex         string
		old, newest string // "emulate", "xol" or "reject"
	}{
		{"90", "emulate", "emulate"},
		{"f3 90", "emulate", "emulate"}, // pause: any prefix but 66
		{"41 90", "emulate", "emulate"}, // xchg r8d,eax: the long-standing quirk
		{"66 90", "reject", "emulate"},
		{"0f 1f 44 00 00", "xol", "emulate"},
		{"66 0f 1f 44 00 00", "xol", "emulate"},
		{"0f 1f 44 00 01", "xol", "xol"},
		{"66 eb 00", "reject", "reject"},
	} {
		for _, v := range []string{"6.17", "6.18"} {
			o := DefaultOptions()
			require.NoError(t, o.SetKernel(v))
			var au archUprobe
			n := copy(au.insn[:], unhex(t, tc.hex))
			e, why := analyzeX86(&au, n, o.X86NopForms)
			got := "xol"
			switch {
			case e == ENOTSUPP:
				got = "reject"
			case e != 0:
				t.Fatalf("%s: %v %s", tc.hex, e, why)
			case au.xops == x86OpsBranch:
				got = "emulate"
			}
			want := tc.newest
			if v == "6.17" {
				want = tc.old
			}
			assert.Equal(t, want, got, "%s on %s (%s)", tc.hex, v, why)
		}
	}
}
