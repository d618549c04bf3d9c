//go:build linux && amd64

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func init() {
	if _, why := uprobePMUType(); why != "" {
		return
	}
	oracleLive = liveOracle
	oracleLiveVersion = func() string {
		var u unix.Utsname
		unix.Uname(&u)
		return unix.ByteSliceToString(u.Release[:])
	}
}

// liveOracle runs the case natively under a perf uprobe on its function
// (and once without, to tell the kernel's own effect on the program).
func liveOracle(t *testing.T, bin string, c *oracleCase) (oracleResult, bool) {
	pmu, why := uprobePMUType()
	if why != "" {
		return oracleResult{}, false
	}
	off, err := elfFileOffset(bin, "c_"+c.name)
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, c.name}
	r := oracleResult{Bytes: oracleCaseBytes(bin, c.name)}
	k := kernelRun(t, pmu, bin, off, false, nil, argv)
	if k.TimedOut {
		t.Logf("%s never finishes natively on this host (CPU %s): no live comparison, the golden stands", c.name, hostCPUName())
		return oracleResult{}, false
	}
	if k.Errno != 0 {
		r.Fate, r.Errno = "rejected", int(k.Errno)
		return r, true
	}
	r.Fate, r.Hits = "accepted", k.Hits
	r.Out = normOracleOut(string(k.Stdout), c)
	if k.Status != 0 {
		r.Out += fmt.Sprintf("status %d\n", k.Status)
	}
	p := kernelRun(t, pmu, bin, noProbe, false, nil, argv)
	if p.TimedOut {
		t.Logf("%s never finishes natively without a probe on this host: no live comparison", c.name)
		return oracleResult{}, false
	}
	r.Plain = normOracleOut(string(p.Stdout), c)
	if p.Status != 0 {
		r.Plain += fmt.Sprintf("status %d\n", p.Status)
	}
	if r.Plain == r.Out {
		r.Plain = ""
	}
	return r, true
}

// hostCPUName is /proc/cpuinfo's first model name, for logs.
func hostCPUName() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
