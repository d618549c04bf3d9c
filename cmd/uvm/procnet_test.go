package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// sockstatHostWide masks the sockstat fields that count the whole host's
// sockets and memory, not the namespace's (sockets used also lags
// natively while freed sockets wait for RCU), so they cannot be compared.
var sockstatHostWide = regexp.MustCompile(`(used|alloc|mem) \d+`)

// TestProcNetNative compares uvm's /proc/net in the loopback network with
// the host kernel's in a new network namespace whose lo is up (the
// network uvm models): the namespace-wide files verbatim (dev, if_inet6,
// route, ipv6_route, igmp, igmp6, sockstat, sockstat6) and the socket
// tables of the procnet guest, on both arches and in both schedulers.
// Skipped where unshare -n is not permitted.
func TestProcNetNative(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	if exec.Command("unshare", "-n", "true").Run() != nil {
		t.Skip("unshare -n not permitted")
	}
	native, err := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$1" -ns`, "sh",
		"../../testdata/bin/amd64/procnet").Output()
	if err != nil {
		t.Skipf("native run in a network namespace: %v", err)
	}
	want := sockstatHostWide.ReplaceAllString(string(native), "$1 N")
	if !strings.Contains(want, "== tcp\ntcp-accepted:") {
		t.Fatalf("native run lists no sockets:\n%s", native)
	}
	for _, arch := range guestArches {
		for _, det := range []bool{false, true} {
			args := []string{"run"}
			if det {
				args = append(args, "--det")
			}
			args = append(args, "../../testdata/bin/"+arch+"/procnet", "-ns")
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			got := sockstatHostWide.ReplaceAllString(o.String(), "$1 N")
			if code != 0 || got != want {
				t.Errorf("%s det=%v: status %d\n--- uvm\n%s--- native (unshare -n)\n%s--- stderr\n%s", arch, det, code, got, want, e.String())
			}
		}
	}
}

// TestProcNetHost: with --net=host the guest was given the host's
// network, and /proc/net is the host's (it lists the host's interfaces,
// which the loopback network never does unless the host has only lo).
func TestProcNetHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--net=host needs Linux")
	}
	dev, err := exec.Command("cat", "/proc/net/dev").Output()
	if err != nil || !bytes.Contains(dev, []byte("lo:")) {
		t.Skip("no host /proc/net/dev")
	}
	for _, net := range []string{"host", "loopback"} {
		var o, e bytes.Buffer
		code := run([]string{"run", "--net=" + net, "../../testdata/bin/amd64/procnet", "-cat", "dev"}, nil, &o, &e)
		if code != 0 {
			t.Fatalf("--net=%s: status %d: %s", net, code, e.String())
		}
		lines := strings.Count(o.String(), "\n") - 1 // the "== dev" line
		hostLines := strings.Count(string(dev), "\n")
		switch net {
		case "host":
			if lines != hostLines {
				t.Errorf("--net=host: %d lines, the host's /proc/net/dev has %d:\n%s", lines, hostLines, o.String())
			}
		case "loopback":
			if lines != 3 || !strings.Contains(o.String(), "    lo:") {
				t.Errorf("--net=loopback: want the header and lo only:\n%s", o.String())
			}
		}
	}
}
