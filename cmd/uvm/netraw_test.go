package main

import (
	"bytes"
	"os"
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
// privileges. Without --net=host the in-kernel network answers the raw
// sockets itself, with the same lines (internal/tasks/socket_rawip.go;
// EPERM when uvm's user lacks CAP_NET_RAW, as natively), and the ping
// sockets, which it does not have, are EPROTONOSUPPORT, logged as
// unimplemented.
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
			for _, what := range []string{"raw icmp:", "raw icmpv6:"} {
				if got, want := linesWith(o.String(), what), linesWith(string(native), what); got != want {
					t.Errorf("loopback %s\n%s\nnative:\n%s", what, got, want)
				}
			}
			for _, what := range []string{"ping icmp", "ping icmpv6"} {
				if !strings.Contains(o.String(), what+": socket: Protocol not supported\n") {
					t.Errorf("loopback %s: want EPROTONOSUPPORT, got\n%s", what, o.String())
				}
			}
			if !strings.Contains(e.String(), "unimplemented socket AF_INET type 2 protocol 1 ") {
				t.Errorf("loopback: the ping socket is not logged as unimplemented: %s", e.String())
			}
		})
	}
}

// linesWith is the lines of out that start with prefix.
func linesWith(out, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestRawIPLoopback: raw IP sockets in the in-kernel loopback network
// (internal/tasks/socket_rawip.go). testdata/src/sock_rawip.c sends ICMP
// echoes, IP_HDRINCL packets and another protocol's datagrams to
// 127.0.0.1 and ::1 and prints what each raw socket reads back (headers,
// checksums, addresses, filters, errors). Without --det the guest is
// uvm's own user: as root, the output must equal
// testdata/expected/sock_rawip.out, recorded natively as root on Linux
// 6.18 x86-64, and, on an x86-64 Linux host, the program's native run
// by this test process. In --det the guest is unprivileged and its
// first raw socket is EPERM.
func TestRawIPLoopback(t *testing.T) {
	want, err := os.ReadFile("../../testdata/expected/sock_rawip.out")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" && os.Geteuid() == 0 {
		native, err := exec.Command("../../testdata/bin/amd64/sock_rawip").Output()
		if err != nil {
			t.Fatalf("native run: %v", err)
		}
		if string(native) != string(want) {
			t.Logf("this host's kernel differs from the recording (the native run is the oracle):\n%s", native)
			want = native
		}
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_rawip"))
			if os.Geteuid() == 0 {
				var o, e bytes.Buffer
				code := run([]string{"run", "--clean-env", bin}, strings.NewReader(""), &o, &e)
				if code != 0 || o.String() != string(want) {
					t.Errorf("status %d\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", code, o.String(), want, e.String())
				}
			}
			out, errOut, code := runGuest(t, bin, nil, nil, nil, "")
			if code != 0 || !strings.Contains(out, "raw icmp: socket: Operation not permitted\n") {
				t.Errorf("--det: status %d\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}
