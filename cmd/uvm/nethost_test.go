package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNetHost: with --net=host the guest's AF_INET sockets are host
// sockets. A host listener on 127.0.0.1 that the guest connects to (non-
// blocking connect, poll, SO_ERROR, options, a line each way), a blocking
// connect to a closed host port, and a guest server (epoll, accept4) that
// the host connects to; the outputs are what the same program prints
// natively (x86-64) and under qemu-aarch64. Skipped where binding is not
// allowed. --det refuses --net=host with one error line.
func TestNetHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--net=host needs a Linux host")
	}
	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot bind 127.0.0.1 on the host: %v", err)
	}
	probe.Close()
	t.Run("det-refused", func(t *testing.T) {
		var o, e bytes.Buffer
		bin, _ := filepath.Abs("../../testdata/bin/amd64/sock_hostnet")
		code := run([]string{"run", "--det", "--net=host", bin, "server"}, nil, &o, &e)
		if code == 0 || strings.Count(strings.TrimSpace(e.String()), "\n") != 0 || !strings.Contains(e.String(), "--net=host needs parallel mode") {
			t.Fatalf("--det --net=host: code %d, stderr %q", code, e.String())
		}
	})
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_hostnet"))
			t.Run("client", func(t *testing.T) {
				ln, err := net.Listen("tcp4", "127.0.0.1:0")
				if err != nil {
					t.Skipf("cannot bind: %v", err)
				}
				defer ln.Close()
				go func() {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					defer c.Close()
					c.SetDeadline(time.Now().Add(30 * time.Second))
					line, _ := bufio.NewReader(c).ReadString('\n')
					io.WriteString(c, "pong: "+line)
				}()
				port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
				out, errOut, code := runNetHost(t, nil, bin, "client", port)
				want := "connect: Operation now in progress\npoll: 1 revents=0x4\nSO_ERROR: 0\nTCP_NODELAY: 1\n" +
					"peer: 127.0.0.1 port ok=1\nsend: 17\nreply: pong: hello from guest\neof: 0\n"
				if code != 0 || out != want {
					t.Fatalf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
				}
			})
			t.Run("refused", func(t *testing.T) {
				ln, err := net.Listen("tcp4", "127.0.0.1:0")
				if err != nil {
					t.Skipf("cannot bind: %v", err)
				}
				port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
				ln.Close()
				out, errOut, code := runNetHost(t, nil, bin, "refused", port)
				if want := "connect: Connection refused\n"; code != 0 || out != want {
					t.Fatalf("status %d stdout %q want %q stderr %q", code, out, want, errOut)
				}
			})
			t.Run("recvmmsg-timeout", func(t *testing.T) {
				// The corpus's sock_mmsg (recvmmsg's timeout, checked
				// after each datagram) on host UDP sockets.
				want, err := os.ReadFile("../../testdata/expected/sock_mmsg.out")
				if err != nil {
					t.Fatal(err)
				}
				mm, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_mmsg"))
				out, errOut, code := runNetHost(t, nil, mm)
				if code != 0 || out != string(want) || errOut != "" {
					t.Fatalf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
				}
			})
			t.Run("cmsg", func(t *testing.T) {
				// sock_hostcmsg: IP_PKTINFO/TOS/TTL, SO_TIMESTAMP(NS)
				// and the IPv6 forms through sendmsg/recvmsg control
				// messages, MSG_CTRUNC, and the refusals. The oracle is
				// the amd64 binary run natively where it can be (the
				// host kernel answers), else the recorded native output.
				want, err := os.ReadFile("../../testdata/expected/sock_hostcmsg.out")
				if err != nil {
					t.Fatal(err)
				}
				if runtime.GOARCH == "amd64" {
					native, err := exec.Command(filepath.Join("../../testdata/bin/amd64/sock_hostcmsg")).Output()
					if err != nil {
						t.Fatalf("native run: %v", err)
					}
					want = native
				}
				cm, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_hostcmsg"))
				out, errOut, code := runNetHost(t, nil, cm)
				if code != 0 || out != string(want) || errOut != "" {
					t.Fatalf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
				}
			})
			t.Run("go-net", func(t *testing.T) {
				// The corpus's Go net guest (netpoller, TCP over 127.0.0.1
				// and [::1], UDP, a refused dial), now on host sockets.
				want, err := os.ReadFile("../../testdata/expected/go-net.out")
				if err != nil {
					t.Fatal(err)
				}
				out, errOut, code := runNetHost(t, nil, filepath.Join(goGuestDir(t, arch), "net"))
				if code != 0 || out != string(want) || errOut != "" {
					t.Fatalf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
				}
			})
			t.Run("server", func(t *testing.T) {
				portc := make(chan string, 1)
				w := &lineWatch{prefix: "port ", found: portc}
				done := make(chan struct{})
				var errOut string
				var code int
				go func() {
					defer close(done)
					_, errOut, code = runNetHost(t, w, bin, "server")
				}()
				var port string
				select {
				case port = <-portc:
				case <-done:
					t.Fatalf("guest ended before listening: status %d, stdout %q, stderr %q", code, w.buf.String(), errOut)
				case <-time.After(60 * time.Second):
					t.Fatal("guest did not print its port")
				}
				c, err := net.DialTimeout("tcp4", "127.0.0.1:"+port, 30*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(30 * time.Second))
				io.WriteString(c, "hello from host\n")
				reply, _ := io.ReadAll(c)
				c.Close()
				<-done
				if string(reply) != "echo: hello from host\n" {
					t.Fatalf("reply %q", reply)
				}
				want := "port " + port + "\nepoll: 1\naccepted from 127.0.0.1\nwrite: 22\neof: 0\n"
				if code != 0 || w.buf.String() != want {
					t.Fatalf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, w.buf.String(), want, errOut)
				}
			})
		})
	}
}

// runNetHost runs bin under uvm --net=host (parallel mode); stdout goes
// to w when not nil.
func runNetHost(t *testing.T, w io.Writer, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	if w == nil {
		w = &o
	}
	code = run(append([]string{"run", "--clean-env", "--net=host", bin}, args...), strings.NewReader(""), w, &e)
	return o.String(), e.String(), code
}

// lineWatch keeps what is written and sends the rest of the first line
// that starts with prefix to found.
type lineWatch struct {
	buf    bytes.Buffer
	prefix string
	found  chan string
	sent   bool
}

func (l *lineWatch) Write(p []byte) (int, error) {
	l.buf.Write(p)
	if !l.sent {
		for _, line := range strings.SplitAfter(l.buf.String(), "\n") {
			if strings.HasSuffix(line, "\n") && strings.HasPrefix(line, l.prefix) {
				l.sent = true
				l.found <- strings.TrimSuffix(strings.TrimPrefix(line, l.prefix), "\n")
				break
			}
		}
	}
	return len(p), nil
}

// TestTraceSockaddr: --strace shows socket addresses as strace does.
func TestTraceSockaddr(t *testing.T) {
	for _, arch := range guestArches {
		bin, _ := filepath.Abs(filepath.Join("../../testdata/bin", arch, "sock_inet"))
		var o, e bytes.Buffer
		if code := run([]string{"run", "--det", "--clean-env", "--strace=-", bin}, strings.NewReader(""), &o, &e); code != 0 {
			t.Fatalf("%s: status %d", arch, code)
		}
		for _, want := range []string{
			` bind(0x3, {sa_family=AF_INET, sin_port=htons(0), sin_addr=inet_addr("127.0.0.1")}, 0x10, `,
			` accept(0x3, {sa_family=AF_INET, sin_port=htons(32769), sin_addr=inet_addr("127.0.0.1")}, 0x`,
			`, inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, `,
		} {
			if !strings.Contains(e.String(), want) {
				t.Errorf("%s: no %q in the trace", arch, want)
			}
		}
	}
}
