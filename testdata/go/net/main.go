// Command net uses Go's net package over uvm's in-kernel loopback: a TCP
// echo server on 127.0.0.1:0 with a goroutine per connection (the
// runtime's netpoller: non-blocking sockets, epoll edge-triggered), TCP
// over [::1], half-close, a refused dial, UDP, and a unix socket pair
// over a path in a temporary directory. All printed values are
// independent of ports and scheduling.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

func echoServer(l net.Listener, wg *sync.WaitGroup) {
	defer wg.Done()
	var conns sync.WaitGroup
	for {
		c, err := l.Accept()
		if err != nil {
			conns.Wait()
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					io.WriteString(c, strings.ToUpper(line))
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func tcp(network, addr string) {
	l, err := net.Listen(network, addr)
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go echoServer(l, &wg)
	la := l.Addr().(*net.TCPAddr)
	fmt.Printf("%s listening on %s (port set %v)\n", network, la.IP, la.Port != 0)
	var clients sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		clients.Add(1)
		go func() {
			defer clients.Done()
			c, err := net.Dial(network, la.String())
			if err != nil {
				results[i] = "dial: " + err.Error()
				return
			}
			defer c.Close()
			var sb strings.Builder
			r := bufio.NewReader(c)
			for j := 0; j < 3; j++ {
				fmt.Fprintf(c, "client %d line %d\n", i, j)
				line, err := r.ReadString('\n')
				if err != nil {
					sb.WriteString("read: " + err.Error())
					break
				}
				sb.WriteString(strings.TrimSpace(line) + "; ")
			}
			c.(*net.TCPConn).CloseWrite()
			rest, err := io.ReadAll(r)
			fmt.Fprintf(&sb, "eof after half-close (%d bytes, err %v)", len(rest), err)
			results[i] = sb.String()
		}()
	}
	clients.Wait()
	for _, r := range results {
		fmt.Println(" ", r)
	}
	l.Close()
	wg.Wait()
	_, err = net.Dial(network, la.String())
	fmt.Println("  dial after close refused:", errors.Is(err, syscall.ECONNREFUSED))
}

func udp() {
	a, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("udp:", err)
		return
	}
	defer a.Close()
	b, err := net.Dial("udp", a.LocalAddr().String())
	if err != nil {
		fmt.Println("udp dial:", err)
		return
	}
	defer b.Close()
	for i := 0; i < 3; i++ {
		fmt.Fprintf(b, "datagram %d", i)
	}
	buf := make([]byte, 64)
	for i := 0; i < 3; i++ {
		n, from, err := a.ReadFrom(buf)
		if err != nil {
			fmt.Println("udp read:", err)
			return
		}
		fmt.Printf("udp got %q from the dialer: %v\n", buf[:n], from.String() == b.LocalAddr().String())
		a.WriteTo([]byte("ack"), from)
	}
	n, err := b.Read(buf)
	fmt.Printf("udp reply %q %v\n", buf[:n], err)
}

func unix() {
	dir, err := os.MkdirTemp("", "uvm-net")
	if err != nil {
		fmt.Println("mkdtemp:", err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("unix listen:", err)
		return
	}
	fi, err := os.Stat(path)
	fmt.Println("unix socket file:", err == nil && fi.Mode()&os.ModeSocket != 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go echoServer(l, &wg)
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("unix dial:", err)
		return
	}
	fmt.Fprintln(c, "over a unix socket")
	line, err := bufio.NewReader(c).ReadString('\n')
	fmt.Printf("unix echo %q %v\n", line, err)
	c.Close()
	l.Close()
	wg.Wait()
}

func main() {
	tcp("tcp4", "127.0.0.1:0")
	tcp("tcp6", "[::1]:0")
	udp()
	unix()
	fmt.Println("done")
}
