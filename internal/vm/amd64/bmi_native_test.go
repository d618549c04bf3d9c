package amd64

import (
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Differential tests of the scalar integer extensions (BMI1, BMI2, LZCNT,
// TZCNT, ADX, MOVBE, FSGSBASE) against the host CPU, with the harness of
// native_test.go. Templates whose feature the host lacks are skipped.

const (
	mSZCO = rfSF | rfZF | rfCF | rfOF | rfDF
	mZCO  = rfZF | rfCF | rfOF | rfDF
	mZC   = rfZF | rfCF | rfDF
)

var extTemplates = []struct {
	feature string // /proc/cpuinfo flag
	tp      nativeTemplate
}{
	{"bmi1", nativeTemplate{mSZCO, kPlain, "andn eax, ebx, ecx", "c4e260f2c1"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "andn rax, rbx, rcx", "c4e2e0f2c1"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "andn rax, rbx, qword ptr [r8]", "c4c2e0f200"}},
	{"bmi1", nativeTemplate{mZCO, kBextr, "bextr eax, ebx, ecx", "c4e270f7c3"}},
	{"bmi1", nativeTemplate{mZCO, kBextr, "bextr rax, rbx, rcx", "c4e2f0f7c3"}},
	{"bmi1", nativeTemplate{mZCO, kBextr, "bextr eax, dword ptr [r8], ecx", "c4c270f700"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsi eax, ebx", "c4e278f3db"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsi rax, qword ptr [r8]", "c4c2f8f318"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsmsk eax, ebx", "c4e278f3d3"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsmsk rax, rbx", "c4e2f8f3d3"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsr eax, ebx", "c4e278f3cb"}},
	{"bmi1", nativeTemplate{mSZCO, kPlain, "blsr rax, qword ptr [r8]", "c4c2f8f308"}},
	{"bmi1", nativeTemplate{mZC, kPlain, "tzcnt eax, ebx", "f30fbcc3"}},
	{"bmi1", nativeTemplate{mZC, kPlain, "tzcnt ax, bx", "66f30fbcc3"}},
	{"bmi1", nativeTemplate{mZC, kPlain, "tzcnt rax, qword ptr [r8]", "f3490fbc00"}},
	{"abm", nativeTemplate{mZC, kPlain, "lzcnt eax, ebx", "f30fbdc3"}},
	{"abm", nativeTemplate{mZC, kPlain, "lzcnt ax, bx", "66f30fbdc3"}},
	{"abm", nativeTemplate{mZC, kPlain, "lzcnt rax, rbx", "f3480fbdc3"}},
	{"abm", nativeTemplate{mZC, kPlain, "lzcnt eax, dword ptr [r8]", "f3410fbd00"}},
	{"bmi2", nativeTemplate{mSZCO, kCnt, "bzhi eax, ebx, ecx", "c4e270f5c3"}},
	{"bmi2", nativeTemplate{mSZCO, kCnt, "bzhi rax, rbx, rcx", "c4e2f0f5c3"}},
	{"bmi2", nativeTemplate{mSZCO, kCnt, "bzhi rax, qword ptr [r8], rcx", "c4c2f0f500"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "mulx rax, rbx, rcx", "c4e2e3f6c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "mulx eax, ebx, ecx", "c4e263f6c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "mulx rax, rbx, qword ptr [r8]", "c4c2e3f600"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "mulx rax, rax, rcx", "c4e2fbf6c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "pdep rax, rbx, rcx", "c4e2e3f5c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "pdep eax, ebx, ecx", "c4e263f5c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "pext rax, rbx, rcx", "c4e2e2f5c1"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "pext eax, ebx, dword ptr [r8]", "c4c262f500"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "rorx rax, rbx, 13", "c4e3fbf0c30d"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "rorx eax, ebx, 31", "c4e37bf0c31f"}},
	{"bmi2", nativeTemplate{mStatus, kPlain, "rorx eax, dword ptr [r8], 0", "c4c37bf00000"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "sarx eax, ebx, ecx", "c4e272f7c3"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "sarx rax, rbx, rcx", "c4e2f2f7c3"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "shlx eax, ebx, ecx", "c4e271f7c3"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "shlx rax, qword ptr [r8], rcx", "c4c2f1f700"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "shrx eax, ebx, ecx", "c4e273f7c3"}},
	{"bmi2", nativeTemplate{mStatus, kCnt, "shrx rax, rbx, rcx", "c4e2f3f7c3"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adcx eax, ebx", "660f38f6c3"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adcx rax, rbx", "66480f38f6c3"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adcx rax, qword ptr [r8]", "66490f38f600"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adox eax, ebx", "f30f38f6c3"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adox rax, rbx", "f3480f38f6c3"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adox eax, dword ptr [r8]", "f3410f38f600"}},
	{"adx", nativeTemplate{mStatus, kPlain, "adcx rax, rbx; adox rcx, rdx; adcx rsi, r9; adox rdi, r10", "66480f38f6c3f3480f38f6ca66490f38f6f1f3490f38f6fa"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe eax, dword ptr [r8]", "410f38f000"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe rax, qword ptr [r8]", "490f38f000"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe ax, word ptr [r8]", "66410f38f000"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe dword ptr [r8], ebx", "410f38f118"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe qword ptr [r8+8], rbx", "490f38f15808"}},
	{"movbe", nativeTemplate{mStatus, kPlain, "movbe word ptr [r8+2], bx", "66410f38f15802"}},
	{"fsgsbase", nativeTemplate{mStatus, kCanon, "rdgsbase rcx; wrgsbase rbx; rdgsbase rax; rdgsbase edx; wrgsbase rcx", "f3480faec9f3480faedbf3480faec8f30faecaf3480faed9"}},
	{"fsgsbase", nativeTemplate{mStatus, kCanon, "rdgsbase rcx; wrgsbase ebx; rdgsbase rax; wrgsbase rcx", "f3480faec9f30faedbf3480faec8f3480faed9"}},
}

// hostCPUFlags returns the flags line of /proc/cpuinfo as a set, plus
// "fsgsbase" only when the kernel enabled it for user space
// (AT_HWCAP2 bit HWCAP2_FSGSBASE).
func hostCPUFlags() map[string]bool {
	f := map[string]bool{}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return f
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, w := range strings.Fields(v) {
				f[w] = true
			}
			break
		}
	}
	delete(f, "fsgsbase")
	if aux, err := os.ReadFile("/proc/self/auxv"); err == nil {
		for i := 0; i+16 <= len(aux); i += 16 {
			if binary.LittleEndian.Uint64(aux[i:]) == vm.AT_HWCAP2 && binary.LittleEndian.Uint64(aux[i+8:])&2 != 0 {
				f["fsgsbase"] = true
			}
		}
	}
	return f
}

func TestExtNativeDifferential(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a linux/amd64 host")
	}
	flags := hostCPUFlags()
	var tps []nativeTemplate
	var missing []string
	for _, e := range extTemplates {
		if flags[e.feature] {
			tps = append(tps, e.tp)
		} else {
			missing = append(missing, e.tp.asm)
		}
	}
	if len(missing) > 0 {
		t.Logf("host lacks the feature of %d templates, not compared: %s", len(missing), strings.Join(missing, "; "))
	}
	if len(tps) == 0 {
		t.Skip("host has none of BMI1/BMI2/ABM/ADX/MOVBE/FSGSBASE")
	}
	per := 80
	if testing.Short() {
		per = 15
	}
	t.Run("specialised", func(t *testing.T) { runNativeTemplates(t, tps, per) })
	t.Run("generic", func(t *testing.T) {
		decode.X86Specialize = false
		defer func() { decode.X86Specialize = true }()
		runNativeTemplates(t, tps, per/4)
	})
}

// TestTSCAux checks RDTSCP and RDPID against the TSC_AUX value tasks set.
func TestTSCAux(t *testing.T) {
	// rdtscp; mov r8, rcx; rdpid r9
	c := newTestCPU(t, h("0f01f9 4989c8 f3410fc7f9"), false)
	c.TSCAux = 3
	c.TSC = func(n, _ uint64) uint64 { return 0x1234567890 + n }
	c.SetReg(1, ^uint64(0))
	runToEnd(t, c, 3+3+5)
	checkReg(t, c, "r8 (rdtscp ecx)", 8, 3)
	checkReg(t, c, "r9 (rdpid)", 9, 3)
	checkReg(t, c, "rdx", 2, 0x12)
	if a := c.Reg(0); a < 0x34567890 || a > 0x34567890+4 {
		t.Errorf("rax = %#x, want the TSC's low half", a)
	}
}

// TestFSGSBaseNonCanonical: WRFSBASE of a non-canonical address is #GP.
func TestFSGSBaseNonCanonical(t *testing.T) {
	c := newTestCPU(t, h("f3480faed0"), false) // wrfsbase rax
	c.SetReg(0, 0x0000800000000000)
	if e := runTest(t, c); e.Reason != vm.ExitPrivileged {
		t.Fatalf("exit %v, want ExitPrivileged (#GP)", e.Reason)
	}
	c = newTestCPU(t, h("f3480faed0 f3480faec3"), false) // wrfsbase rax; rdfsbase rbx
	c.SetReg(0, 0x00007fffdeadb000)
	runToEnd(t, c, 10)
	checkReg(t, c, "rbx", 3, 0x00007fffdeadb000)
	if c.TLS() != 0x00007fffdeadb000 {
		t.Errorf("FS base %#x", c.TLS())
	}
}
