package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDifferential runs every C guest natively (amd64 guests on a
// linux/amd64 host) or under qemu-user (when installed) and under uvm, and
// compares stdout, stderr and exit status. Missing oracles skip cleanly.
func TestDifferential(t *testing.T) {
	entries := readManifest(t)
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			var oracle []string
			switch {
			case arch == "amd64" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64":
				oracle = nil // run natively
			default:
				q := map[string]string{"arm64": "qemu-aarch64", "amd64": "qemu-x86_64"}[arch]
				p, err := exec.LookPath(q)
				if err != nil {
					t.Skipf("no oracle for %s: %s not installed", arch, q)
				}
				oracle = []string{p}
			}
			for _, ent := range entries {
				if strings.HasPrefix(ent.name, "go-") {
					continue // Go guests: covered by TestGuests' golden files
				}
				t.Run(ent.name, func(t *testing.T) {
					if oracle != nil && ent.name == "proc_exec" {
						t.Skip("qemu-user cannot execve a foreign-arch binary without binfmt_misc")
					}
					if oracle != nil && ent.name == "procfs" {
						t.Skip("qemu-user shows its own process's /proc, not the guest's (the native run is procfs's oracle)")
					}
					if oracle != nil && ent.name == "hostile" {
						// qemu-user maps guest memory 1:1 into its own
						// host process: a 16 TiB reservation kills it,
						// and it leaves the kernel's iovec checks to the
						// host. The native run (amd64) is this guest's
						// oracle; its arm64 output must equal it.
						t.Skip("qemu-user is not an oracle for address-space attacks")
					}
					if oracle != nil && (ent.name == "smaps" || ent.name == "dumpable" || ent.name == "sock_mmsg") {
						// The native run (amd64) is their oracle.
						t.Skip("qemu-user shows its own /proc (smaps, dumpable) and ignores recvmmsg's timeout (sock_mmsg)")
					}
					if oracle != nil && ent.name == "pathexec" {
						// It execs a copy of itself: an arm64 program the
						// host cannot run without binfmt_misc (ENOEXEC
						// under qemu). The native run is its oracle.
						t.Skip("qemu-user cannot follow pathexec's execve of an arm64 program")
					}
					if oracle != nil && ent.name == "ptrace" {
						// The native run (amd64) is its oracle.
						t.Skip("qemu-user has no ptrace (ENOSYS)")
					}
					if oracle != nil && ent.name == "nsclone" {
						// The native run (amd64) is its oracle.
						t.Skip("qemu-user answers clone with namespace flags EINVAL where Linux says EPERM")
					}
					if ent.name == "creds" && (oracle != nil || os.Geteuid() != 0) {
						t.Skip("creds needs a native oracle started as root (it becomes uid 1000, uvm --det's identity); qemu 7.2 lacks fchmodat2")
					}
					if oracle != nil && ent.name == "pidfd_prctl" {
						// The native run (amd64) is this guest's oracle;
						// TestGuests checks arm64 against its output.
						t.Skip("qemu-user does not implement PR_SET_CHILD_SUBREAPER")
					}
					bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, ent.name))
					exp := "../../testdata/expected/" + ent.name
					stdin, _ := readOpt(exp + ".stdin")
					var env []string
					if b, ok := readOpt(exp + ".env"); ok {
						env = strings.Split(strings.TrimSpace(string(b)), "\n")
					}
					tmp := t.TempDir()
					args := make([]string, len(ent.args))
					for i, a := range ent.args {
						if a == "$TMP" {
							a = tmp
						}
						args[i] = a
					}
					cmdline := append(append(append([]string{}, oracle...), bin), args...)
					cmd := exec.Command(cmdline[0], cmdline[1:]...)
					cmd.Env = append([]string{}, env...) // non-nil: a clean environment, like uvm --clean-env
					cmd.Stdin = bytes.NewReader(stdin)
					var no, ne bytes.Buffer
					cmd.Stdout, cmd.Stderr = &no, &ne
					nativeCode := 0
					if err := cmd.Run(); err != nil {
						var ee *exec.ExitError
						if !errors.As(err, &ee) {
							t.Fatalf("oracle: %v", err)
						}
						nativeCode = ee.ExitCode()
						if ws, ok := exitSignal(ee); ok {
							nativeCode = 128 + ws
						}
					}
					os.RemoveAll(tmp)
					os.Mkdir(tmp, 0o755)
					out, errOut, code := runGuest(t, bin, args, env, stdin, "")
					if out != no.String() {
						t.Errorf("stdout differs\n--- uvm\n%s\n--- oracle\n%s", out, no.String())
					}
					if code != nativeCode {
						t.Errorf("status: uvm %d, oracle %d (uvm stderr %q)", code, nativeCode, errOut)
					}
					if nativeCode < 128 && errOut != dropQemuLines(ne.String()) {
						t.Errorf("stderr differs\n--- uvm\n%s\n--- oracle\n%s", errOut, ne.String())
					}
				})
			}
		})
	}
}

// dropQemuLines removes qemu-user's own reports ("qemu: uncaught target
// signal …") from an oracle's stderr.
func dropQemuLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "qemu: ") {
			b.WriteString(l)
		}
	}
	return b.String()
}
