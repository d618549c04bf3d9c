package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// BenchmarkDynamicStartup: start-up of a dynamically linked program, whole
// process (exec, ld.so loading and relocating libc, the program, exit),
// under uvm and under qemu-user in the same run, with the ratio. The
// program is `ls` of an empty directory: this x86-64 host's own /bin/ls,
// and Debian's arm64 ls from the sysroot TestSysrootPrograms uses. uvm is
// the test binary re-executed as uvm (TestMain), so both sides pay a
// process start. Run with
//
//	go test ./cmd/uvm -run '^$' -bench DynamicStartup -benchtime 20x
func BenchmarkDynamicStartup(b *testing.B) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		b.Skip("the x86-64 case is this host's /bin/ls")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	empty := b.TempDir()
	root := os.Getenv("UVM_SYSROOT_ARM64")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache/uvm/sysroot-arm64")
	}
	for _, c := range []struct {
		arch, qemu string
		sysroot    string // "" = the host's libraries
		ls         string
	}{
		{"amd64", "qemu-x86_64", "", "/bin/ls"},
		{"arm64", "qemu-aarch64", root, filepath.Join(root, "bin/ls")},
	} {
		b.Run(c.arch, func(b *testing.B) {
			if _, err := os.Stat(c.ls); err != nil {
				b.Skip(c.ls + " not present (scripts/sysroot arm64 " + root + " coreutils)")
			}
			var uvmArgs, qemuArgs []string
			if c.sysroot != "" {
				uvmArgs = []string{"-L", c.sysroot}
				qemuArgs = []string{"-L", c.sysroot}
			}
			uvmCmd := append(append([]string{exe, "run", "-U", asUVMEnv, "--clean-env"}, uvmArgs...), c.ls, empty)
			uvm := timeCommand(b, uvmCmd, []string{asUVMEnv + "=1", "HOME=/"})
			b.ReportMetric(uvm.Seconds()*1e3, "uvm-ms/op")
			if q, err := exec.LookPath(c.qemu); err == nil {
				qemu := timeCommand(b, append(append([]string{q}, qemuArgs...), c.ls, empty), []string{"HOME=/"})
				b.ReportMetric(qemu.Seconds()*1e3, "qemu-ms/op")
				b.ReportMetric(float64(uvm)/float64(qemu), "uvm/qemu")
			}
		})
	}
}

// timeCommand runs argv b.N times and returns the mean wall time of one
// run; a failing run fails the benchmark.
func timeCommand(b *testing.B, argv, env []string) time.Duration {
	b.Helper()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
		total += time.Since(start)
	}
	return total / time.Duration(b.N)
}
