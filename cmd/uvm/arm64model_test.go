package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// arm64Models are the arm64 --cpu models with the AT_HWCAP and
// /proc/cpuinfo Features each must show (Linux's bit numbers and names,
// arch/arm64/include/uapi/asm/hwcap.h and kernel/cpuinfo.c).
var arm64Models = []struct {
	name     string
	hwcap    uint64
	features string
	part     string // /proc/cpuinfo's CPU implementer and part
}{
	{"armv8.0", 0x803, "fp asimd cpuid", "0x00 0x000"},
	{"armv8.1", 0x1983, "fp asimd crc32 atomics cpuid asimdrdm", "0x00 0x000"},
	{"armv8.2", 0x1f83, "fp asimd crc32 atomics fphp asimdhp cpuid asimdrdm", "0x00 0x000"},
	{"neoverse-n1", 0x109ffb, "fp asimd aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc asimddp", "0x41 0xd0c"},
	{"max", 0xcb2fffb, "fp asimd aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc sha3 asimddp sha512 asimdfhm ilrcpc flagm flagm2 frint", "0x00 0x000"},
}

// TestArm64CPUModels: with --cpu MODEL an arm64 guest sees the model's
// AT_HWCAP, ID registers (isa_fp16 hwcap reads them with MRS) and
// /proc/cpuinfo, and an instruction of a feature outside the model (LSE
// under armv8.0, FP16 under armv8.1) raises SIGILL; inside it, it runs.
func TestArm64CPUModels(t *testing.T) {
	fp16 := cacheGuest(t, "arm64", "isa_fp16")
	procfs := cacheGuest(t, "arm64", "procfs")
	for _, m := range arm64Models {
		t.Run(m.name, func(t *testing.T) {
			cpu := []string{"--cpu", m.name}
			out, stderr, code := runUVM(t, true, cpu, fp16, "hwcap")
			var hwcap uint64
			if _, err := fmt.Sscanf(out, "hwcap %x", &hwcap); err != nil || code != 0 {
				t.Fatalf("hwcap: exit %d, %q %v, stderr %s", code, out, err, stderr)
			}
			if hwcap != m.hwcap {
				t.Errorf("AT_HWCAP %#x, want %#x (%s)", hwcap, m.hwcap, out)
			}
			dump, stderr, code := runUVM(t, true, cpu, procfs, "dump")
			if code != 0 {
				t.Fatalf("procfs dump: exit %d, stderr %s", code, stderr)
			}
			var feat, impl, part string
			for _, l := range strings.Split(dump, "\n") {
				if v, ok := strings.CutPrefix(l, "Features\t: "); ok && feat == "" {
					feat = v
				}
				if v, ok := strings.CutPrefix(l, "CPU implementer\t: "); ok && impl == "" {
					impl = v
				}
				if v, ok := strings.CutPrefix(l, "CPU part\t: "); ok && part == "" {
					part = v
				}
			}
			if feat != m.features || impl+" "+part != m.part {
				t.Errorf("cpuinfo Features %q, implementer/part %s %s; want %q, %s", feat, impl, part, m.features, m.part)
			}
			has := func(bit uint) bool { return m.hwcap&(1<<bit) != 0 }
			for _, tc := range []struct {
				arg, want string
				bit       uint
			}{{"lse", "lse: 1 3\n", 8}, {"fp16", "fp16: 4200\n", 9}} {
				out, stderr, code := runUVM(t, true, cpu, fp16, tc.arg)
				switch {
				case has(tc.bit) && (code != 0 || out != tc.want):
					t.Errorf("%s: exit %d, output %q, want %q (stderr %s)", tc.arg, code, out, tc.want, stderr)
				case !has(tc.bit) && (code != 128+4 || !strings.Contains(stderr, "SIGILL") || !strings.Contains(stderr, "outside the CPU model")):
					t.Errorf("%s: exit %d, stderr %q; want SIGILL (exit 132)", tc.arg, code, stderr)
				}
			}
		})
	}
	if _, stderr, code := runUVM(t, true, []string{"--cpu", "armv7"}, fp16, "hwcap"); code == 0 || !strings.Contains(stderr, "unknown arm64 CPU model") {
		t.Errorf("--cpu armv7: exit %d, stderr %s", code, stderr)
	}
}

// TestArm64NeoverseN1MatchesQEMU: uvm's neoverse-n1 reads the same AT_HWCAP,
// ID registers and MIDR as qemu-aarch64 -cpu neoverse-n1, except for the
// features uvm does not implement: DCPOP (HWCAP bit 16, ID_AA64ISAR1 DPB).
func TestArm64NeoverseN1MatchesQEMU(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed")
	}
	bin, _ := filepath.Abs("../../testdata/bin/arm64/isa_fp16")
	q, err := exec.Command(qemu, "-cpu", "neoverse-n1", bin, "hwcap").Output()
	if err != nil {
		t.Skipf("qemu-aarch64 -cpu neoverse-n1: %v", err)
	}
	var hw, hw2, isar0, isar1, pfr0, midr uint64
	if _, err := fmt.Sscanf(string(q), "hwcap %x hwcap2 %x isar0 %x isar1 %x pfr0 %x midr %x", &hw, &hw2, &isar0, &isar1, &pfr0, &midr); err != nil {
		t.Fatalf("qemu output %q: %v", q, err)
	}
	want := fmt.Sprintf("hwcap %x hwcap2 %x isar0 %x isar1 %x pfr0 %x midr %x\n", hw&^(1<<16), hw2, isar0, isar1&^0xf, pfr0, midr)
	out, stderr, code := runUVM(t, true, []string{"--cpu", "neoverse-n1"}, bin, "hwcap")
	if code != 0 || out != want {
		t.Errorf("uvm: exit %d, %q\nwant (qemu less DCPOP) %q\nstderr %s", code, out, want, stderr)
	}
}
