package uprobes

import (
	"fmt"
	"strconv"
	"strings"
)

// Kernel versions (--uprobe-opt kernel=VERSION): the switches of Options
// that follow a kernel release, set together as that release behaves
// (spec §0's version map; 6.18 checked against the live 6.18.44 kernel by
// cmd/uvm's uprobe oracle).
//
//	TreeLock             rwlock before 6.12, rcu since
//	X86UretprobeSyscall  since 6.11
//	XOLFlushElision      since 6.13 (arm64)
//	ARM64SimulateNOP     since 6.13
//	XOLMremapDenied      since 6.13
//	ReturnInstancePool   since 6.14
//	SingleStepSiglock    before 6.15
//	X86NopForms          since 6.18 (the nop5 optimisation series; release approximate)
//
// Mechanisms without a switch are modelled as in 6.18 whatever the
// version: the hprobe/ri_timer uretprobe lifetime (6.13), arm64 LDR
// (literal) no longer simulated (6.12, backported to stable), the x86
// first-byte tables (good_insns_64 has had 0x0F set since the 2014 rework,
// so every non-VEX 0F xx is accepted in all of these versions).

// Kernel releases that kernel=VERSION accepts: 6.OldestKernelMinor …
// 6.NewestKernelMinor.
const (
	OldestKernelMinor = 10
	NewestKernelMinor = 18
)

// DefaultKernel is the release DefaultOptions behaves as.
const DefaultKernel = "6.18"

// ParseKernelVersion reads a release as uname -r prints it ("6.18",
// "v6.13", "6.18.44-fc-v669"): its major and minor numbers.
func ParseKernelVersion(s string) (major, minor int, err error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	a, rest, ok := strings.Cut(t, ".")
	if !ok {
		return 0, 0, fmt.Errorf("kernel version %q (want MAJOR.MINOR, e.g. %s): %w", s, DefaultKernel, ErrInvalid)
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end < len(rest) && !strings.ContainsRune(".-+_", rune(rest[end])) {
		end = 0
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil || end > 3 {
		return 0, 0, fmt.Errorf("kernel version %q (want MAJOR.MINOR, e.g. %s): %w", s, DefaultKernel, ErrInvalid)
	}
	return major, minor, nil
}

// SetKernel sets the version-dependent switches to the behaviour of the
// release v (other fields are kept). Releases outside 6.10 … 6.18 are
// refused.
func (o *Options) SetKernel(v string) error {
	major, minor, err := ParseKernelVersion(v)
	if err != nil {
		return err
	}
	if major != 6 || minor < OldestKernelMinor || minor > NewestKernelMinor {
		return fmt.Errorf("kernel %d.%d is not modelled (kernel=VERSION knows 6.%d … 6.%d): %w",
			major, minor, OldestKernelMinor, NewestKernelMinor, ErrInvalid)
	}
	o.Kernel = fmt.Sprintf("6.%d", minor)
	o.TreeLock = TreeLockRCU
	if minor < 12 {
		o.TreeLock = TreeLockRWLock
	}
	o.X86UretprobeSyscall = minor >= 11
	o.XOLFlushElision = minor >= 13
	o.ARM64SimulateNOP = minor >= 13
	o.XOLMremapDenied = minor >= 13
	o.ReturnInstancePool = minor >= 14
	o.SingleStepSiglock = minor < 15
	o.X86NopForms = minor >= 18
	return nil
}
