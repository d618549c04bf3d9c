package gdbstub

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// memTarget is a Target over a byte array and a register file, for
// protocol tests (the real one is tasks' debugger, tested with gdb in
// cmd/uvm).
type memTarget struct {
	mu       sync.Mutex
	arch     *Arch
	mem      [0x1000]byte // at 0x10000
	regs     map[int][]byte
	breaks   map[uint64]bool
	detached bool
	killed   bool
	// catch: the last CatchSyscalls (catchOn, catchNrs).
	catchOn  bool
	catchNrs []uint64
}

func newMemTarget(a *Arch) *memTarget {
	t := &memTarget{arch: a, regs: map[int][]byte{}, breaks: map[uint64]bool{}}
	for _, id := range []int{1001, 1002} {
		r := make([]byte, a.Size())
		for i := range r {
			r[i] = byte(i + id)
		}
		t.regs[id] = r
	}
	return t
}

func (t *memTarget) Arch() *Arch { return t.arch }
func (t *memTarget) Pid() int    { return 1001 }
func (t *memTarget) Threads() []Thread {
	return []Thread{{ID: 1001, Name: "main"}, {ID: 1002, Name: "w<1>"}}
}
func (t *memTarget) ReadRegisters(tid int, buf []byte) error {
	r, ok := t.regs[tid]
	if !ok {
		return errors.New("no thread")
	}
	copy(buf, r)
	return nil
}
func (t *memTarget) WriteRegisters(tid int, buf []byte) error {
	r, ok := t.regs[tid]
	if !ok {
		return errors.New("no thread")
	}
	copy(r, buf)
	return nil
}
func (t *memTarget) ReadMemory(addr uint64, buf []byte) (int, error) {
	if addr < 0x10000 || addr >= 0x11000 {
		return 0, errors.New("fault")
	}
	n := copy(buf, t.mem[addr-0x10000:])
	if n < len(buf) {
		return n, errors.New("fault")
	}
	return n, nil
}
func (t *memTarget) WriteMemory(addr uint64, data []byte) error {
	if addr < 0x10000 || addr+uint64(len(data)) > 0x11000 || addr+uint64(len(data)) < addr {
		return errors.New("fault")
	}
	copy(t.mem[addr-0x10000:], data)
	return nil
}
func (t *memTarget) SetBreakpoint(kind BreakKind, addr, length uint64, insert bool) error {
	if kind != BreakSoftware {
		return ErrUnsupported
	}
	t.breaks[addr] = insert
	return nil
}
func (t *memTarget) CatchSyscalls(on bool, nrs []uint64) error {
	t.catchOn, t.catchNrs = on, nrs
	return nil
}
func (t *memTarget) Resume(acts []ResumeAction) <-chan Stop {
	ch := make(chan Stop, 1)
	if t.catchOn {
		ch <- Stop{Kind: StopSignal, Signal: 5, Thread: 1002, Break: -1, Event: EventSyscallReturn, Syscall: 0xac}
		return ch
	}
	for _, a := range acts {
		if a.Step {
			ch <- Stop{Kind: StopSignal, Signal: 5, Thread: a.Thread, Break: -1}
			return ch
		}
	}
	ch <- Stop{Kind: StopExited, Code: 3}
	return ch
}
func (t *memTarget) Interrupt() {}
func (t *memTarget) Kill()      { t.mu.Lock(); t.killed = true; t.mu.Unlock() }
func (t *memTarget) Detach()    { t.mu.Lock(); t.detached = true; t.mu.Unlock() }
func (t *memTarget) Auxv() ([]byte, error) {
	return []byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0}, nil
}
func (t *memTarget) ExecFile() (string, error) { return "/bin/prog", nil }

func TestDecodePayload(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		err       error
	}{
		{"abc", "abc", nil},
		{"}\x03x", "#x", nil},     // '}' '#'^0x20
		{"0* ", "0000", nil},      // ' ' = 32: 3 repeats
		{"a*\"b", "aaaaaab", nil}, // '"' = 34: 5 more
		{"}", "", errBadEncoding},
		{"*!", "", errBadEncoding}, // nothing to repeat
		{"a*\x01", "", errBadEncoding},
	} {
		got, err := decodePayload(nil, []byte(c.raw), 64)
		if err != c.err || (err == nil && string(got) != c.want) {
			t.Errorf("decode %q = %q, %v; want %q, %v", c.raw, got, err, c.want, c.err)
		}
	}
	if _, err := decodePayload(nil, []byte("a*~a*~a*~"), 100); err != errTooLong {
		t.Errorf("run lengths past the limit: %v, want errTooLong", err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	payload := []byte("x$#}*\x00\xff")
	frame := encodePacket(nil, payload)
	fr := newFrameReader(bytes.NewReader(frame), 64)
	k, got, err := fr.next()
	if err != nil || k != framePacket || !bytes.Equal(got, payload) {
		t.Fatalf("round trip: %v %v %q", k, err, got)
	}
}

// client is the test's end of a session.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func startSession(t *testing.T, tg Target, opts Options) (*client, chan error) {
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(b, tg, Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1}, opts)
		b.Close()
	}()
	t.Cleanup(func() { a.Close() })
	return &client{t: t, c: a, r: bufio.NewReader(a)}, done
}

func (c *client) send(raw string) {
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c.c, raw); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// expect reads one ack byte (when ack) and a reply packet.
func (c *client) reply(ack bool) string {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if ack {
		b, err := c.r.ReadByte()
		if err != nil || b != '+' {
			c.t.Fatalf("ack: %q %v", b, err)
		}
	}
	fr := &frameReader{r: c.r, max: 1 << 20}
	k, p, err := fr.next()
	if err != nil || k != framePacket {
		c.t.Fatalf("reply: %v %v", k, err)
	}
	if ack {
		c.send("+")
	}
	return string(p)
}

func (c *client) cmd(p string) string {
	c.t.Helper()
	c.send(string(encodePacket(nil, []byte(p))))
	return c.reply(false)
}

func TestSessionCommands(t *testing.T) {
	tg := newMemTarget(AArch64)
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+;swbreak+"))))
	if r := c.reply(true); !strings.Contains(r, "PacketSize=4000") || !strings.Contains(r, "QStartNoAckMode+") {
		t.Fatalf("qSupported: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	if r := c.reply(true); r != "OK" {
		t.Fatalf("QStartNoAckMode: %q", r)
	}
	// From here on: no acks.
	if r := c.cmd("?"); r != "T05thread:3e9;" {
		t.Errorf("?: %q", r)
	}
	if r := c.cmd("qfThreadInfo"); r != "m3e9,3ea" {
		t.Errorf("qfThreadInfo: %q", r)
	}
	if r := c.cmd("qXfer:features:read:target.xml:0,ffff"); !strings.HasPrefix(r, "l<?xml") || !strings.Contains(r, `<reg name="v31" bitsize="128" type="aarch64v" regnum="65"/>`) {
		t.Errorf("target.xml: %.200q", r)
	}
	if r := c.cmd("qXfer:threads:read::0,fff"); !strings.Contains(r, `<thread id="3ea" name="w&lt;1&gt;"/>`) {
		t.Errorf("threads: %q", r)
	}
	if r := c.cmd("qXfer:exec-file:read:3e9:0,fff"); r != "l/bin/prog" {
		t.Errorf("exec-file: %q", r)
	}
	if r := c.cmd("qXfer:exec-file:read::3,2"); r != "mn/" {
		t.Errorf("exec-file chunk: %q", r)
	}
	g := c.cmd("g")
	if len(g) != 2*AArch64.Size() || g[:4] != "e9ea" {
		t.Errorf("g: %d hex digits, %.8q", len(g), g)
	}
	if r := c.cmd("Hg3ea"); r != "OK" {
		t.Errorf("Hg: %q", r)
	}
	if r := c.cmd("p20"); r != "eaebecedeeeff0f1" { // pc: reg 32 at offset 256, byte i = i+1002
		t.Errorf("p20: %q", r)
	}
	if r := c.cmd("P20=0100000000000000"); r != "OK" {
		t.Errorf("P: %q", r)
	}
	if r := c.cmd("p20"); r != "0100000000000000" {
		t.Errorf("p20 after P: %q", r)
	}
	if r := c.cmd("Hg3eb"); r[0] != 'E' {
		t.Errorf("Hg of a missing thread: %q", r)
	}
	if r := c.cmd("M10000,4:deadbeef"); r != "OK" {
		t.Errorf("M: %q", r)
	}
	if r := c.cmd("m10000,4"); r != "deadbeef" {
		t.Errorf("m: %q", r)
	}
	if r := c.cmd("X10004,4:$#}*"); r != "OK" { // encodePacket escapes them
		t.Errorf("X: %q", r)
	}
	if r := c.cmd("m10004,4"); r != "24237d2a" {
		t.Errorf("m after X: %q", r)
	}
	if r := c.cmd("m10ffe,8"); r != "0000" {
		t.Errorf("partial read: %q", r)
	}
	if r := c.cmd("m0,8"); r[0] != 'E' {
		t.Errorf("unreadable: %q", r)
	}
	if r := c.cmd("Z0,10000,4"); r != "OK" || !tg.breaks[0x10000] {
		t.Errorf("Z0: %q", r)
	}
	if r := c.cmd("Z3,10000,4"); r != "" {
		t.Errorf("Z3 on a target without it: %q", r)
	}
	for _, bad := range []string{"m", "m1", "mzz,1", "M1,2:zz", "X10000,5:ab", "G00", "p", "pffff", "P0=", "Z9,0,0", "Zx",
		"vCont;q", "vCont;C", "vCont;Czz", "H", "Hq1", "qXfer:features:read:target.xml:zz", "m10000,ffffffffffffffffff", "T"} {
		if r := c.cmd(bad); r != "" && r[0] != 'E' {
			t.Errorf("%q: %q, want an error or empty reply", bad, r)
		}
	}
	if r := c.cmd("vCont?"); r != "vCont;c;C;s;S" {
		t.Errorf("vCont?: %q", r)
	}
	if r := c.cmd("vCont;s:3e9;c"); r != "T05thread:3e9;" {
		t.Errorf("step: %q", r)
	}
	if r := c.cmd("vCont;c"); r != "W03" {
		t.Errorf("continue to the end: %q", r)
	}
	c.c.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestSessionBadInput(t *testing.T) {
	tg := newMemTarget(AMD64)
	c, done := startSession(t, tg, Options{PacketSize: 256})
	// Ack mode: a bad checksum is NAKed.
	c.send("$g#00")
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := c.r.ReadByte(); b != '-' {
		t.Errorf("bad checksum: %q, want '-'", b)
	}
	// An oversized packet: acked and refused, and the session goes on.
	c.send(string(encodePacket(nil, bytes.Repeat([]byte("a"), 1000))))
	if r := c.reply(true); r != "E01" {
		t.Errorf("oversized: %q", r)
	}
	// Run lengths expanding past the limit.
	c.send(string(encodePacket(nil, []byte("M10000,100:"+strings.Repeat("0*~", 10)))))
	if r := c.reply(true); r != "E01" {
		t.Errorf("run lengths past the limit: %q", r)
	}
	c.send("noise" + string(encodePacket(nil, []byte("qC"))))
	if r := c.reply(true); r != "QC3e9" {
		t.Errorf("qC after noise: %q", r)
	}
	// A client that goes away in the middle of a packet: Serve returns
	// and the target is detached (it runs on).
	c.send("$m10000,")
	c.c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the client went away")
	}
	if !tg.detached || tg.killed {
		t.Errorf("detached=%v killed=%v, want detached", tg.detached, tg.killed)
	}
}

func TestSessionKill(t *testing.T) {
	tg := newMemTarget(AMD64)
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("k"))))
	if err := <-done; err != nil || !tg.killed {
		t.Errorf("k: err %v killed %v", err, tg.killed)
	}
}

func TestSignalNumbers(t *testing.T) {
	for linux, gdb := range map[int]int{5: 5, 7: 10, 10: 30, 11: 11, 12: 31, 17: 20, 19: 17, 31: 12, 34: 46, 64: 78} {
		if g := GDBSignal(linux); g != gdb {
			t.Errorf("GDBSignal(%d) = %d, want %d", linux, g, gdb)
		}
		if l, ok := LinuxSignal(gdb); !ok || l != linux {
			t.Errorf("LinuxSignal(%d) = %d, %v, want %d", gdb, l, ok, linux)
		}
	}
	if _, ok := LinuxSignal(143); ok {
		t.Error("LinuxSignal(unknown) ok")
	}
}

func TestArchLayout(t *testing.T) {
	for _, c := range []struct {
		a           *Arch
		name        string
		num, offset int
	}{
		{AArch64, "pc", 32, 256}, {AArch64, "cpsr", 33, 264}, {AArch64, "v0", 34, 268},
		{AArch64, "fpsr", 66, 268 + 512}, {AArch64, "tpidr", 68, 268 + 520},
		{AMD64, "rip", 16, 128}, {AMD64, "eflags", 17, 136}, {AMD64, "st0", 24, 164},
		{AMD64, "fctrl", 32, 244}, {AMD64, "xmm0", 40, 276}, {AMD64, "mxcsr", 56, 532},
		{AMD64, "orig_rax", 57, 536}, {AMD64, "fs_base", 58, 544}, {AMD64, "gs_base", 59, 552},
	} {
		n := c.a.RegNum(c.name)
		if n != c.num || c.a.Offset(n) != c.offset {
			t.Errorf("%s %s: regnum %d offset %d, want %d %d", c.a.Name, c.name, n, c.a.Offset(n), c.num, c.offset)
		}
	}
	if AMD64.Size() != 560 || AArch64.Size() != 796 {
		t.Errorf("sizes %d %d", AMD64.Size(), AArch64.Size())
	}
}

// rwBuf is a session's connection in the fuzzer: input from a reader,
// output discarded.
type rwBuf struct{ io.Reader }

func (rwBuf) Write(p []byte) (int, error) { return len(p), nil }

// FuzzPacket feeds arbitrary client bytes to a session: the stub must
// never panic, whatever arrives.
func FuzzPacket(f *testing.F) {
	for _, s := range []string{
		"+$qSupported:swbreak+#00", string(encodePacket(nil, []byte("QStartNoAckMode"))),
		string(encodePacket(nil, []byte("m10000,10"))), string(encodePacket(nil, []byte("X10000,3:}]*"))),
		string(encodePacket(nil, []byte("vCont;s:3e9;c"))), string(encodePacket(nil, []byte("qXfer:features:read:target.xml:0,10"))),
		string(encodePacket(nil, []byte("P10=0011223344556677"))), "$a*~*~}#" + "\x03", "$Z0,ffffffffffffffff,4#",
		string(encodePacket(nil, []byte("QCatchSyscalls:1;40;ac"))), string(encodePacket(nil, []byte("Z2,10008,8"))),
		string(encodePacket(nil, []byte("qSupported:multiprocess+;fork-events+"))), string(encodePacket(nil, []byte("D;3eb"))),
		string(encodePacket(nil, []byte("vCont;s:p3e9.3ea;c:p3e9.-1"))),
		string(encodePacket(nil, []byte("bs"))) + string(encodePacket(nil, []byte("bc"))), string(encodePacket(nil, []byte("bsbc"))),
		string(encodePacket(nil, []byte("qXfer:libraries-svr4:read::0,fff"))),
		string(encodePacket(nil, []byte("vFile:open:2f6c69622f6c6962632e736f2e36,0,0"))) + string(encodePacket(nil, []byte("vFile:pread:0,fff,0"))),
		string(encodePacket(nil, []byte("vFile:fstat:0"))) + string(encodePacket(nil, []byte("vFile:close:0"))),
		string(encodePacket(nil, []byte("vFile:readlink:2f70726f632f313030312f657865"))),
		string(encodePacket(nil, []byte("qSupported:multiprocess+;vfork-events+"))) + string(encodePacket(nil, []byte("vCont;c"))) +
			string(encodePacket(nil, []byte("Hgp3eb.3eb"))) + string(encodePacket(nil, []byte("vCont;c:p3eb.-1"))) + string(encodePacket(nil, []byte("D;3e9"))),
		string(encodePacket(nil, []byte("QThreadEvents:1"))) + string(encodePacket(nil, []byte("vCont;c"))) + string(encodePacket(nil, []byte("?"))),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files := svr4Target(0x10300)
		files.files = map[string][]byte{"/lib/libc.so.6": []byte("\x7fELF$#}*")}
		files.links = map[string]string{"/proc/1001/exe": "/bin/prog"}
		threads := newThreadTarget(Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1, Event: EventVfork, ChildPid: 1003, ChildTid: 1003},
			Stop{Kind: StopSignal, Signal: 5, Thread: 1002, Break: -1, Event: EventThreadCreated}, Stop{Kind: StopThreadExited, Thread: 1002, Break: -1})
		for _, tg := range []Target{newMemTarget(AArch64), &eventTarget{memTarget: newMemTarget(AMD64)}, newRevTarget(), files, threads} {
			// Feed the bytes twice: once as sent, once with every
			// frame given a correct checksum, so the fuzzer reaches
			// the command handlers.
			for _, in := range [][]byte{data, fixChecksums(data)} {
				s := newSession(rwBuf{bytes.NewReader(in)}, tg, Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1}, Options{PacketSize: 512})
				go s.readLoop()
				if err := s.serve(); err != nil {
					t.Fatal(err)
				}
				close(s.quit)
			}
		}
	})
}

// fixChecksums rewrites the checksum of every '$…#cc' frame in b.
func fixChecksums(b []byte) []byte {
	out := append([]byte(nil), b...)
	for i := 0; i < len(out); i++ {
		if out[i] != '$' {
			continue
		}
		var sum byte
		j := i + 1
		for ; j < len(out) && out[j] != '#' && out[j] != '$'; j++ {
			sum += out[j]
		}
		if j+2 < len(out) && out[j] == '#' {
			copy(out[j+1:], fmt.Sprintf("%02x", sum))
		}
		i = j - 1
	}
	return out
}

func TestSessionCatchSyscalls(t *testing.T) {
	tg := newMemTarget(AMD64)
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:swbreak+"))))
	if r := c.reply(true); !strings.Contains(r, ";QCatchSyscalls+") {
		t.Errorf("qSupported does not offer QCatchSyscalls: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	if r := c.cmd("QCatchSyscalls:1"); r != "OK" || !tg.catchOn || tg.catchNrs != nil {
		t.Errorf("catch all: %q on=%v nrs=%v", r, tg.catchOn, tg.catchNrs)
	}
	if r := c.cmd("QCatchSyscalls:1;40;ac"); r != "OK" || len(tg.catchNrs) != 2 || tg.catchNrs[1] != 0xac {
		t.Errorf("catch a list: %q nrs=%v", r, tg.catchNrs)
	}
	for _, bad := range []string{"QCatchSyscalls:", "QCatchSyscalls:2", "QCatchSyscalls:1;zz", "QCatchSyscalls:1;", "QCatchSyscalls:0;1",
		"QCatchSyscalls:1;" + strings.Repeat("1", 40)} {
		if r := c.cmd(bad); r != "E01" {
			t.Errorf("%q: %q, want E01", bad, r)
		}
	}
	if r := c.cmd("vCont;c"); r != "T05syscall_return:ac;thread:3ea;" {
		t.Errorf("syscall stop: %q", r)
	}
	if r := c.cmd("QCatchSyscalls:0"); r != "OK" || tg.catchOn {
		t.Errorf("catch none: %q on=%v", r, tg.catchOn)
	}
	c.c.Close()
	<-done
}

func TestStopReplies(t *testing.T) {
	s := &session{}
	for _, c := range []struct {
		st   Stop
		want string
	}{
		{Stop{Signal: 5, Thread: 7, Break: 0}, "T05swbreak:;thread:7;"},
		{Stop{Signal: 5, Thread: 7, Break: 2, WatchAddr: 0x4a92f0}, "T05watch:4a92f0;thread:7;"},
		{Stop{Signal: 5, Thread: 7, Break: 3, WatchAddr: 0x10}, "T05rwatch:10;thread:7;"},
		{Stop{Signal: 5, Thread: 7, Break: 4, WatchAddr: 0x10}, "T05awatch:10;thread:7;"},
		{Stop{Signal: 5, Thread: 7, Break: -1, Event: EventSyscallEntry, Syscall: 0x6e}, "T05syscall_entry:6e;thread:7;"},
		{Stop{Signal: 11, Thread: 7, Break: -1}, "T0bthread:7;"},
		{Stop{Kind: StopExited, Code: 42}, "W2a"},
		{Stop{Signal: 5, Thread: 7, Break: -1, Event: EventVforkDone}, "T05vforkdone:;thread:7;"},
		{Stop{Signal: 5, Thread: 7, Break: -1, Event: EventExec, ExecPath: "/a"}, "T05exec:2f61;thread:7;"},
	} {
		if got := string(s.stopReply(c.st)); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

// eventTarget is a memTarget that reports process events; its resume
// reports a fork.
type eventTarget struct {
	*memTarget
	ev Events
}

func (t *eventTarget) SetEvents(ev Events) { t.ev = ev }
func (t *eventTarget) Resume(acts []ResumeAction) <-chan Stop {
	ch := make(chan Stop, 1)
	ch <- Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1, Event: EventFork, ChildPid: 1003, ChildTid: 1003}
	return ch
}

func TestSessionMultiprocess(t *testing.T) {
	tg := &eventTarget{memTarget: newMemTarget(AMD64)}
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+;swbreak+;fork-events+;exec-events+"))))
	r := c.reply(true)
	for _, f := range []string{";multiprocess+", ";fork-events+", ";exec-events+"} {
		if !strings.Contains(r, f) {
			t.Errorf("qSupported lacks %s: %q", f, r)
		}
	}
	if strings.Contains(r, "vfork-events") || !tg.ev.Fork || tg.ev.Vfork || !tg.ev.Exec {
		t.Errorf("events %+v from %q", tg.ev, r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	for _, q := range []struct{ cmd, want string }{
		{"?", "T05thread:p3e9.3e9;"},
		{"qC", "QCp3e9.3e9"},
		{"qfThreadInfo", "mp3e9.3e9,p3e9.3ea"},
		{"Hgp3e9.3ea", "OK"},
		{"Hcp3e9.-1", "OK"},
		{"Tp3e9.3ea", "OK"},
		{"Tp3e9.3eb", "E01"},
		{"Hgpzz.1", "E01"},
		{"vCont;c:p3e9.-1", "T05fork:p3eb.3eb;thread:p3e9.3e9;"},
		{"D;3eb", "OK"}, // the fork child: not debugged, runs on
		{"D;zz", "E01"},
		{"vKill;3eb", "E01"},
	} {
		if got := c.cmd(q.cmd); got != q.want {
			t.Errorf("%s: %q, want %q", q.cmd, got, q.want)
		}
	}
	if tg.detached {
		t.Error("D;CHILD detached the debugged process")
	}
	if r := c.cmd("D;3e9"); r != "OK" || !tg.detached {
		t.Errorf("D;PID: %q detached=%v", r, tg.detached)
	}
	<-done
	// Without multiprocess, fork events are not offered.
	tg = &eventTarget{memTarget: newMemTarget(AMD64)}
	c, _ = startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:fork-events+;exec-events+"))))
	if r := c.reply(true); strings.Contains(r, "fork-events") || tg.ev.Fork || !tg.ev.Exec {
		t.Errorf("fork events without multiprocess: %q %+v", r, tg.ev)
	}
}
