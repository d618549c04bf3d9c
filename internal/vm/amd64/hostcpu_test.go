package amd64

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
)

// hostCPUVendor returns the host CPU's vendor string from /proc/cpuinfo
// ("GenuineIntel", "AuthenticAMD"), or "" where it cannot be read.
var hostCPUVendor = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			return strings.TrimSpace(v)
		}
	}
	return ""
})

// acceptDppsNaNPayloads makes the differential tests accept the one
// documented implementation-specific part of DPPS/VDPPS on hosts that
// are not Intel CPUs: which NaN payload a lane gets when several products
// are NaNs. uvm (a GenuineIntel CPU by CPUID) adds the products in
// Intel's per-lane order (sse_exec_fp.go), and the tests compare every
// bit on Intel hosts; other CPUs may add them in the SDM pseudocode's
// order, (t0+t1)+(t2+t3) in every lane. Each float32 lane of xmm (one
// register's bytes) where both results are NaNs takes want's value; the
// lanes must still agree on being NaNs, and every other lane and MXCSR
// are compared as usual.
func acceptDppsNaNPayloads(asm string, got, want []byte) {
	if hostCPUVendor() == "GenuineIntel" || !(strings.HasPrefix(asm, "dpps ") || strings.HasPrefix(asm, "vdpps ")) {
		return
	}
	isNaN := func(b []byte) bool { return binary.LittleEndian.Uint32(b)&0x7fffffff > 0x7f800000 }
	for i := 0; i+4 <= len(got); i += 4 {
		if isNaN(got[i:i+4]) && isNaN(want[i:i+4]) {
			copy(got[i:i+4], want[i:i+4])
		}
	}
}
