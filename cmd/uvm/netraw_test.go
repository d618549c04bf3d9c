package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNetHostRaw: with --net=host, raw IP sockets (SOCK_RAW IPPROTO_ICMP
// and IPPROTO_ICMPV6) and ICMP ping sockets are host sockets:
// testdata/src/sock_raw.c pings 127.0.0.1 and ::1 and prints the reply
// (with the IPv4 header for the ICMP raw socket, without one for
// ICMPv6), or the errno the host gives (EPERM without CAP_NET_RAW,
// EACCES for a ping socket outside ping_group_range). The oracle is the
// same program run natively by this test process, so it has the same
// privileges. Without --net=host (the in-kernel network, which has no IP
// layer) every raw socket is EPROTONOSUPPORT, logged as unimplemented.
func TestNetHostRaw(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host (the native run is the oracle)")
	}
	native, err := exec.Command("../../testdata/bin/amd64/sock_raw").Output()
	if err != nil {
		t.Fatalf("native run: %v", err)
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_raw"))
			out, errOut, code := runNetHost(t, nil, bin)
			if code != 0 || out != string(native) {
				t.Fatalf("status %d\nstdout:\n%s\nnative:\n%s\nstderr:\n%s", code, out, native, errOut)
			}
			var o, e bytes.Buffer
			if code := run([]string{"run", "--clean-env", bin}, strings.NewReader(""), &o, &e); code != 0 {
				t.Fatalf("loopback: status %d stderr %s", code, e.String())
			}
			for _, what := range []string{"raw icmp", "raw icmpv6", "ping icmp", "ping icmpv6"} {
				if !strings.Contains(o.String(), what+": socket: Protocol not supported\n") {
					t.Errorf("loopback %s: want EPROTONOSUPPORT, got\n%s", what, o.String())
				}
			}
			if !strings.Contains(e.String(), "unimplemented socket AF_INET type 3 protocol 1 ") {
				t.Errorf("loopback: the raw socket is not logged as unimplemented: %s", e.String())
			}
		})
	}
}
