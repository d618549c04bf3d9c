package gdbstub

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Options configure a session.
type Options struct {
	// PacketSize is the largest payload accepted and sent
	// (DefaultPacketSize when 0; at least 256).
	PacketSize int
	// Attached is qAttached's answer: true when the debugger attached to
	// a running process (quitting gdb detaches), false when the process
	// was started for it (quitting gdb kills it).
	Attached bool
	// Log, when not nil, receives one line per protocol error.
	Log io.Writer
}

// Serve runs one debugger session on conn until the client detaches,
// kills the target or goes away. initial is the stop the target is in
// when the session starts (what '?' reports). The target is left running
// (detached) when the client disconnects without a kill.
func Serve(conn io.ReadWriter, t Target, initial Stop, opts Options) error {
	s := newSession(conn, t, initial, opts)
	go s.readLoop()
	defer close(s.quit)
	defer s.closeFiles()
	return s.serve()
}

type frameEvent struct {
	kind frameKind
	data []byte
	err  error
}

type session struct {
	t      Target
	arch   *Arch
	opts   Options
	max    int
	w      *bufio.Writer
	noAck  bool
	last   Stop
	exited bool
	// gThread is the thread of g/G/p/P/m (Hg); 0: the last stop's.
	gThread int
	// cThread is the thread of c/s/C/S (Hc); 0 or -1: every thread.
	cThread int
	frames  chan frameEvent
	quit    chan struct{} // closed when the session ends (stops readLoop)
	fr      *frameReader
	// lastReply is resent on a '-' (ack mode).
	lastReply []byte
	regs      []byte
	// multi: the multiprocess extensions are on (thread ids pPID.TID);
	// events: the process events the client asked for (EventReporter).
	multi  bool
	events Events
	// forkKept is the child of the last fork or vfork stop until gdb
	// detaches it or follows it (0: none).
	forkKept int
	// files are the client's host I/O descriptors (hostio.go).
	files map[uint64]File
}

func newSession(conn io.ReadWriter, t Target, initial Stop, opts Options) *session {
	max := opts.PacketSize
	if max == 0 {
		max = DefaultPacketSize
	}
	if max < 256 {
		max = 256
	}
	s := &session{t: t, arch: t.Arch(), opts: opts, max: max, w: bufio.NewWriter(conn), last: initial,
		frames: make(chan frameEvent), quit: make(chan struct{}), regs: make([]byte, t.Arch().Size())}
	s.fr = newFrameReader(conn, max)
	s.exited = initial.Kind != StopSignal
	return s
}

// readLoop turns the client's bytes into frames for serve. Payloads are
// copied (the reader reuses its buffers).
func (s *session) readLoop() {
	for {
		k, data, err := s.fr.next()
		ev := frameEvent{kind: k, err: err}
		if data != nil {
			ev.data = append([]byte(nil), data...)
		}
		select {
		case s.frames <- ev:
		case <-s.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *session) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "gdbstub: "+format+"\n", args...)
	}
}

// serve is the command loop.
func (s *session) serve() error {
	for ev := range s.frames {
		if ev.err != nil {
			if !s.exited {
				s.t.Detach()
			}
			if ev.err == io.EOF {
				return nil
			}
			return ev.err
		}
		done, err := s.frame(ev)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// frame handles one frame while the target is stopped.
func (s *session) frame(ev frameEvent) (done bool, err error) {
	switch ev.kind {
	case frameAck, frameInterrupt:
		return false, nil
	case frameNak:
		if !s.noAck && s.lastReply != nil {
			_, err = s.w.Write(s.lastReply)
			if err == nil {
				err = s.w.Flush()
			}
		}
		return false, err
	case frameBadSum:
		s.logf("bad checksum")
		if !s.noAck {
			s.w.WriteByte('-')
			return false, s.w.Flush()
		}
		return false, nil
	case frameTooLong, frameBadEncode:
		s.logf("packet refused (too long or malformed)")
		if !s.noAck {
			s.w.WriteByte('+')
		}
		return false, s.reply([]byte("E01"))
	}
	if !s.noAck {
		s.w.WriteByte('+')
	}
	reply, done, err := s.handle(ev.data)
	if err != nil {
		return true, err
	}
	if reply != nil {
		if err := s.reply(reply); err != nil {
			return true, err
		}
	}
	if bytes.Equal(ev.data, []byte("QStartNoAckMode")) {
		s.noAck = true
	}
	return done, nil
}

// reply sends one packet.
func (s *session) reply(payload []byte) error {
	if len(payload) > s.max {
		payload = []byte("E01")
	}
	s.lastReply = encodePacket(s.lastReply[:0], payload)
	if _, err := s.w.Write(s.lastReply); err != nil {
		return err
	}
	return s.w.Flush()
}

var (
	replyOK    = []byte("OK")
	replyEmpty = []byte{}
)

func errReply(n int) []byte { return []byte(fmt.Sprintf("E%02x", n)) }

// handle executes one command. reply nil means send nothing (k).
func (s *session) handle(p []byte) (reply []byte, done bool, err error) {
	if len(p) == 0 {
		return replyEmpty, false, nil
	}
	switch p[0] {
	case '?':
		if s.last.Kind == StopThreadExited {
			// The thread is gone; the process stays stopped.
			return s.stopReply(Stop{Kind: StopSignal, Signal: 5, Thread: s.curThread(), Break: -1}), false, nil
		}
		return s.stopReply(s.last), false, nil
	case 'q', 'Q':
		return s.query(p), false, nil
	case 'H':
		return s.setThread(p), false, nil
	case 'T':
		id, ok := parseThreadID(p[1:])
		if ok && !s.exited && s.alive(id) {
			return replyOK, false, nil
		}
		return errReply(1), false, nil
	case 'g':
		return s.readRegs(), false, nil
	case 'G':
		return s.writeRegs(p[1:]), false, nil
	case 'p':
		return s.readReg(p[1:]), false, nil
	case 'P':
		return s.writeReg(p[1:]), false, nil
	case 'm':
		return s.readMem(p[1:]), false, nil
	case 'M', 'X':
		return s.writeMem(p[0], p[1:]), false, nil
	case 'Z', 'z':
		return s.breakpoint(p), false, nil
	case 'c', 's', 'C', 'S':
		return s.resumeLegacy(p)
	case 'v':
		return s.vPacket(p)
	case 'b':
		return s.reverse(p) // reverse.go
	case 'D':
		if pid, ok := s.otherProcess(p[1:]); ok {
			// D;PID of a fork child gdb does not follow: it is not
			// debugged, it already runs on.
			if pid < 0 {
				return errReply(1), false, nil
			}
			if pid == s.forkKept {
				s.forkKept = 0
			}
			if ff, ok := s.t.(ForkFollower); ok {
				ff.DetachProcess(pid) // a held vfork parent goes on
			}
			return replyOK, false, nil
		}
		if reply, ok := s.followFork(p[1:]); ok {
			return reply, false, nil
		}
		if !s.exited {
			s.t.Detach()
		}
		if err := s.reply(replyOK); err != nil {
			return nil, true, err
		}
		return nil, true, nil
	case 'k':
		if !s.exited {
			s.t.Kill()
		}
		return nil, true, nil
	}
	return replyEmpty, false, nil
}

func (s *session) query(p []byte) []byte {
	name, args, _ := bytes.Cut(p, []byte(":"))
	switch string(name) {
	case "qSupported":
		b := []byte(fmt.Sprintf("PacketSize=%x;QStartNoAckMode+;qXfer:features:read+;qXfer:threads:read+;"+
			"qXfer:auxv:read+;qXfer:exec-file:read+;qXfer:libraries-svr4:read+;swbreak+;hwbreak+;vContSupported+", s.max))
		if _, ok := s.t.(SyscallCatcher); ok {
			b = append(b, ";QCatchSyscalls+"...)
		}
		if _, ok := s.t.(Reverser); ok {
			b = append(b, ";ReverseStep+;ReverseContinue+"...)
		}
		if _, ok := s.t.(ThreadEventReporter); ok {
			b = append(b, ";QThreadEvents+"...)
		}
		return append(b, s.clientFeatures(args)...)
	case "QCatchSyscalls":
		return s.catchSyscalls(args)
	case "QThreadEvents":
		te, ok := s.t.(ThreadEventReporter)
		switch {
		case !ok:
			return replyEmpty
		case string(args) != "0" && string(args) != "1":
			return errReply(1)
		}
		te.SetThreadEvents(args[0] == '1')
		return replyOK
	case "QStartNoAckMode":
		return replyOK
	case "qAttached":
		if s.opts.Attached {
			return []byte("1")
		}
		return []byte("0")
	case "qC":
		if s.exited {
			return errReply(1)
		}
		return fmt.Appendf([]byte("QC"), "%s", s.threadID(s.curThread()))
	case "qfThreadInfo":
		if s.exited {
			return []byte("l")
		}
		b := []byte{'m'}
		for i, th := range s.t.Threads() {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, s.threadID(th.ID)...)
		}
		if len(b) == 1 {
			return []byte("l")
		}
		return b
	case "qsThreadInfo":
		return []byte("l")
	case "qSymbol":
		return replyOK
	case "qXfer":
		return s.xfer(args)
	}
	if bytes.HasPrefix(p, []byte("qThreadExtraInfo,")) {
		id, ok := parseThreadID(p[len("qThreadExtraInfo,"):])
		if !ok || s.exited {
			return errReply(1)
		}
		for _, th := range s.t.Threads() {
			if th.ID == id {
				return appendHex(nil, []byte(th.Name))
			}
		}
		return errReply(1)
	}
	return replyEmpty
}

// xfer answers qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH.
func (s *session) xfer(args []byte) []byte {
	parts := bytes.SplitN(args, []byte(":"), 4)
	if len(parts) != 4 || string(parts[1]) != "read" {
		return replyEmpty
	}
	offS, lenS, ok := bytes.Cut(parts[3], []byte(","))
	off, ok1 := parseHex(offS)
	n, ok2 := parseHex(lenS)
	if !ok || !ok1 || !ok2 {
		return errReply(1)
	}
	var data []byte
	switch string(parts[0]) {
	case "features":
		if string(parts[2]) != "target.xml" {
			return errReply(0)
		}
		data = []byte(s.arch.XML())
	case "threads":
		if s.exited {
			return errReply(1)
		}
		var b bytes.Buffer
		b.WriteString("<?xml version=\"1.0\"?>\n<threads>\n")
		for _, th := range s.t.Threads() {
			fmt.Fprintf(&b, "<thread id=\"%s\" name=\"%s\"/>\n", s.threadID(th.ID), xmlEscape(th.Name))
		}
		b.WriteString("</threads>\n")
		data = b.Bytes()
	case "auxv":
		if s.exited {
			return errReply(1)
		}
		var err error
		if data, err = s.t.Auxv(); err != nil {
			return errReply(1)
		}
	case "libraries-svr4":
		if s.exited {
			return errReply(1)
		}
		var err error
		if data, err = svr4Libraries(s.t); err != nil { // svr4.go
			return errReply(1)
		}
	case "exec-file":
		name, err := s.t.ExecFile()
		if err != nil {
			return errReply(1)
		}
		data = []byte(name)
	default:
		return replyEmpty
	}
	if off > uint64(len(data)) {
		return errReply(1)
	}
	// Escaping may double a binary byte: keep the reply within max.
	n = min(n, uint64(s.max-1)/2)
	rest := data[off:]
	if uint64(len(rest)) <= n {
		return append([]byte{'l'}, rest...)
	}
	return append([]byte{'m'}, rest[:n]...)
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, c := range []byte(s) {
		switch {
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '&':
			b.WriteString("&amp;")
		case c == '"':
			b.WriteString("&quot;")
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "&#%d;", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// parseThreadID parses a thread id: hex, or -1 (all threads, returned as
// -1). 0 means "any thread". The multiprocess form pPID.TID gives TID (pPID
// alone: all of the process's threads, -1); the stub debugs one process,
// so the pid is not checked here.
func parseThreadID(p []byte) (int, bool) {
	if len(p) > 0 && p[0] == 'p' {
		pid, tid, dot := bytes.Cut(p[1:], []byte("."))
		if _, ok := parseThreadID(pid); !ok {
			return 0, false
		}
		if !dot {
			return -1, true
		}
		p = tid
	}
	if string(p) == "-1" {
		return -1, true
	}
	v, ok := parseHex(p)
	if !ok || v > 1<<31-1 {
		return 0, false
	}
	return int(v), true
}

func (s *session) alive(id int) bool {
	for _, th := range s.t.Threads() {
		if th.ID == id {
			return true
		}
	}
	return false
}

// curThread is the thread g/m packets address: Hg's, else the last
// stop's, else the first live one.
func (s *session) curThread() int {
	if s.gThread > 0 && s.alive(s.gThread) {
		return s.gThread
	}
	if s.last.Thread > 0 && s.alive(s.last.Thread) {
		return s.last.Thread
	}
	if ths := s.t.Threads(); len(ths) > 0 {
		return ths[0].ID
	}
	return 0
}

func (s *session) setThread(p []byte) []byte {
	if len(p) < 3 {
		return errReply(1)
	}
	id, ok := parseThreadID(p[2:])
	if ok {
		s.followVfork(p[2:])
	}
	if !ok || (id > 0 && !s.alive(id)) {
		return errReply(1)
	}
	switch p[1] {
	case 'g':
		s.gThread = id
	case 'c':
		s.cThread = id
	default:
		return errReply(1)
	}
	return replyOK
}

func (s *session) readRegs() []byte {
	if s.exited {
		return errReply(1)
	}
	if err := s.t.ReadRegisters(s.curThread(), s.regs); err != nil {
		return errReply(1)
	}
	return appendHex(nil, s.regs)
}

func (s *session) writeRegs(hx []byte) []byte {
	if s.exited || len(hx) != 2*len(s.regs) {
		return errReply(1)
	}
	b, ok := decodeHex(make([]byte, 0, len(s.regs)), hx)
	if !ok {
		return errReply(1)
	}
	if err := s.t.WriteRegisters(s.curThread(), b); err != nil {
		return errReply(1)
	}
	return replyOK
}

func (s *session) regSpan(n uint64) (int, int, bool) {
	if n >= uint64(len(s.arch.Regs())) {
		return 0, 0, false
	}
	off := s.arch.Offset(int(n))
	return off, off + s.arch.Regs()[n].Bits/8, true
}

func (s *session) readReg(p []byte) []byte {
	n, ok := parseHex(p)
	lo, hi, ok2 := s.regSpan(n)
	if !ok || !ok2 || s.exited {
		return errReply(1)
	}
	if err := s.t.ReadRegisters(s.curThread(), s.regs); err != nil {
		return errReply(1)
	}
	return appendHex(nil, s.regs[lo:hi])
}

func (s *session) writeReg(p []byte) []byte {
	ns, hx, ok := bytes.Cut(p, []byte("="))
	n, ok1 := parseHex(ns)
	lo, hi, ok2 := s.regSpan(n)
	if !ok || !ok1 || !ok2 || s.exited || len(hx) != 2*(hi-lo) {
		return errReply(1)
	}
	tid := s.curThread()
	if err := s.t.ReadRegisters(tid, s.regs); err != nil {
		return errReply(1)
	}
	if _, ok := decodeHex(s.regs[lo:lo], hx); !ok {
		return errReply(1)
	}
	if err := s.t.WriteRegisters(tid, s.regs); err != nil {
		return errReply(1)
	}
	return replyOK
}

// addrLen parses "ADDR,LEN".
func addrLen(p []byte) (uint64, uint64, bool) {
	a, l, ok := bytes.Cut(p, []byte(","))
	addr, ok1 := parseHex(a)
	n, ok2 := parseHex(l)
	return addr, n, ok && ok1 && ok2
}

func (s *session) readMem(p []byte) []byte {
	addr, n, ok := addrLen(p)
	if !ok || s.exited {
		return errReply(1)
	}
	n = min(n, uint64(s.max/2))
	buf := make([]byte, n)
	got, err := s.t.ReadMemory(addr, buf)
	if got == 0 && (err != nil || n > 0) {
		return errReply(0x0e) // EFAULT
	}
	return appendHex(nil, buf[:got])
}

func (s *session) writeMem(kind byte, p []byte) []byte {
	hdr, data, ok := bytes.Cut(p, []byte(":"))
	addr, n, ok2 := addrLen(hdr)
	if !ok || !ok2 || s.exited {
		return errReply(1)
	}
	if kind == 'M' {
		if uint64(len(data)) != 2*n {
			return errReply(1)
		}
		b, ok := decodeHex(make([]byte, 0, n), data)
		if !ok {
			return errReply(1)
		}
		data = b
	} else if uint64(len(data)) != n {
		return errReply(1)
	}
	if len(data) == 0 {
		return replyOK // gdb probes X support with an empty write
	}
	if err := s.t.WriteMemory(addr, data); err != nil {
		return errReply(0x0e)
	}
	return replyOK
}

func (s *session) breakpoint(p []byte) []byte {
	insert := p[0] == 'Z'
	f := bytes.Split(p[1:], []byte(","))
	if len(f) < 3 || len(f[0]) != 1 || f[0][0] < '0' || f[0][0] >= '0'+breakKindsCount || s.exited {
		return errReply(1)
	}
	kind := BreakKind(f[0][0] - '0')
	addr, ok1 := parseHex(f[1])
	kindS, _, _ := bytes.Cut(f[2], []byte(";")) // conditions: not advertised, ignored
	length, ok2 := parseHex(kindS)
	if !ok1 || !ok2 {
		return errReply(1)
	}
	switch err := s.t.SetBreakpoint(kind, addr, length, insert); err {
	case nil:
		return replyOK
	case ErrUnsupported:
		return replyEmpty
	default:
		return errReply(1)
	}
}

func (s *session) vPacket(p []byte) ([]byte, bool, error) {
	switch {
	case string(p) == "vCont?":
		return []byte("vCont;c;C;s;S"), false, nil
	case bytes.HasPrefix(p, []byte("vCont;")):
		acts, ok := s.parseVCont(p[len("vCont;"):])
		if !ok {
			return errReply(1), false, nil
		}
		return s.resume(acts)
	case bytes.HasPrefix(p, []byte("vFile:")):
		return s.hostIO(p), false, nil // hostio.go
	case bytes.HasPrefix(p, []byte("vKill")):
		if _, ok := s.otherProcess(p[len("vKill"):]); ok {
			return errReply(1), false, nil // not ours to kill
		}
		if !s.exited {
			s.t.Kill()
			s.exited = true
			s.last = Stop{Kind: StopTerminated, Signal: 9}
		}
		return replyOK, false, nil
	}
	return replyEmpty, false, nil // vMustReplyEmpty and everything else
}

// parseVCont parses the actions of a vCont packet.
func (s *session) parseVCont(p []byte) ([]ResumeAction, bool) {
	var acts []ResumeAction
	var named [][]byte // the thread ids, for followVfork
	seen := map[int]bool{}
	for _, a := range bytes.Split(p, []byte(";")) {
		act, tidS, hasTid := bytes.Cut(a, []byte(":"))
		if len(act) == 0 {
			return nil, false
		}
		var ra ResumeAction
		switch act[0] {
		case 'c', 's':
			if len(act) != 1 {
				return nil, false
			}
		case 'C', 'S':
			v, ok := parseHex(act[1:])
			sig, ok2 := LinuxSignal(int(v))
			if !ok || len(act) != 3 || !ok2 {
				return nil, false
			}
			ra.Signal = sig
		default:
			return nil, false
		}
		ra.Step = act[0] == 's' || act[0] == 'S'
		if hasTid {
			id, ok := parseThreadID(tidS)
			if !ok {
				return nil, false
			}
			named = append(named, tidS)
			if id > 0 {
				ra.Thread = id
			}
		}
		if seen[ra.Thread] {
			continue // the leftmost action for a thread applies
		}
		seen[ra.Thread] = true
		acts = append(acts, ra)
	}
	if len(acts) == 0 {
		return nil, false
	}
	for _, id := range named {
		s.followVfork(id)
	}
	return acts, true
}

// resumeLegacy handles c/s/C/S [;ADDR].
func (s *session) resumeLegacy(p []byte) ([]byte, bool, error) {
	ra := ResumeAction{Step: p[0] == 's' || p[0] == 'S'}
	rest := p[1:]
	if p[0] == 'C' || p[0] == 'S' {
		sigS, r, _ := bytes.Cut(rest, []byte(";"))
		v, ok := parseHex(sigS)
		sig, ok2 := LinuxSignal(int(v))
		if !ok || !ok2 {
			return errReply(1), false, nil
		}
		ra.Signal, rest = sig, r
	}
	if len(rest) > 0 {
		addr, ok := parseHex(rest)
		if !ok || s.exited {
			return errReply(1), false, nil
		}
		// Resume at ADDR: set the pc of the thread first.
		tid := s.curThread()
		if err := s.t.ReadRegisters(tid, s.regs); err != nil {
			return errReply(1), false, nil
		}
		off := s.arch.Offset(s.arch.PC)
		for i := 0; i < 8; i++ {
			s.regs[off+i] = byte(addr >> (8 * i))
		}
		if err := s.t.WriteRegisters(tid, s.regs); err != nil {
			return errReply(1), false, nil
		}
	}
	var acts []ResumeAction
	if ra.Step {
		ra.Thread = s.cThread
		if ra.Thread <= 0 {
			ra.Thread = s.curThread()
		}
		acts = append(acts, ra, ResumeAction{}) // others continue (gdb's scheduler-locking off)
	} else {
		if s.cThread > 0 {
			ra.Thread = s.cThread
			acts = append(acts, ra, ResumeAction{})
		} else {
			acts = append(acts, ra)
		}
	}
	return s.resume(acts)
}

// resume runs the target until it stops, forwarding interrupts.
func (s *session) resume(acts []ResumeAction) ([]byte, bool, error) {
	if s.exited {
		return s.stopReply(s.last), false, nil
	}
	if s.forkKept > 0 {
		// gdb keeps both processes (detach-on-fork off): say so, the
		// child is not debugged.
		msg := fmt.Sprintf("uvm: fork child %d is not debugged (one process at a time: detach-on-fork off is not supported); it runs on\n", s.forkKept)
		s.forkKept = 0
		if err := s.reply(appendHex([]byte{'O'}, []byte(msg))); err != nil {
			return nil, true, err
		}
	}
	return s.wait(s.t.Resume(acts))
}

// wait waits for the resumed target's stop, forwarding interrupts.
func (s *session) wait(ch <-chan Stop) ([]byte, bool, error) {
	for {
		select {
		case st := <-ch:
			if st.Err != "" {
				return errText(st.Err), false, nil
			}
			s.last = st
			s.gThread = 0
			if st.Event == EventFork || st.Event == EventVfork {
				s.forkKept = st.ChildPid
			}
			if st.Kind == StopExited || st.Kind == StopTerminated {
				s.exited = true
			}
			return s.stopReply(st), false, nil
		case ev := <-s.frames:
			switch {
			case ev.err != nil:
				// The client went away with the target running: stop
				// it, take the breakpoints out and let it run on.
				s.t.Interrupt()
				if st := <-ch; st.Kind == StopSignal {
					s.t.Detach()
				}
				return nil, true, nil
			case ev.kind == frameInterrupt:
				s.t.Interrupt()
			case ev.kind == framePacket:
				// All-stop: nothing but ^C is expected while running.
				if !s.noAck {
					s.w.WriteByte('+')
					s.w.Flush()
				}
				s.logf("packet %q while the target runs: ignored", ev.data)
			}
		}
	}
}

// stopReply formats a stop as T/W/X.
func (s *session) stopReply(st Stop) []byte {
	switch st.Kind {
	case StopExited, StopTerminated:
		b := fmt.Appendf(nil, "W%02x", st.Code&0xff)
		if st.Kind == StopTerminated {
			b = fmt.Appendf(nil, "X%02x", GDBSignal(st.Signal)&0xff)
		}
		if s.multi {
			b = fmt.Appendf(b, ";process:%x", s.t.Pid())
		}
		return b
	case StopThreadExited:
		return fmt.Appendf(nil, "w%x;%s", st.Code&0xff, s.threadID(st.Thread))
	}
	b := []byte(fmt.Sprintf("T%02x", GDBSignal(st.Signal)&0xff))
	switch BreakKind(st.Break) {
	case BreakSoftware:
		b = append(b, "swbreak:;"...)
	case BreakHardware:
		b = append(b, "hwbreak:;"...)
	case WatchWrite:
		b = fmt.Appendf(b, "watch:%x;", st.WatchAddr)
	case WatchRead:
		b = fmt.Appendf(b, "rwatch:%x;", st.WatchAddr)
	case WatchAccess:
		b = fmt.Appendf(b, "awatch:%x;", st.WatchAddr)
	}
	if st.Break < 0 || st.Break >= breakKindsCount {
		b = b[:3]
	}
	if st.HistoryBegin {
		b = append(b[:3], "replaylog:begin;"...)
	}
	switch st.Event {
	case EventSyscallEntry:
		b = fmt.Appendf(b[:3], "syscall_entry:%x;", st.Syscall)
	case EventSyscallReturn:
		b = fmt.Appendf(b[:3], "syscall_return:%x;", st.Syscall)
	}
	switch st.Event {
	case EventFork:
		b = fmt.Appendf(b[:3], "fork:p%x.%x;", st.ChildPid, st.ChildTid)
	case EventVfork:
		b = fmt.Appendf(b[:3], "vfork:p%x.%x;", st.ChildPid, st.ChildTid)
	case EventVforkDone:
		b = append(b[:3], "vforkdone:;"...)
	case EventExec:
		b = append(appendHex(append(b[:3], "exec:"...), []byte(st.ExecPath)), ';')
	case EventThreadCreated:
		b = append(b[:3], "create:;"...)
	}
	if st.Thread > 0 {
		b = fmt.Appendf(b, "thread:%s;", s.threadID(st.Thread))
	}
	return b
}

// followFork handles the D;PID of the target's own process at a fork
// event (gdb follows the child and detaches the parent): the child
// becomes the target. ok false: D detaches the whole session.
func (s *session) followFork(p []byte) (reply []byte, ok bool) {
	ff, can := s.t.(ForkFollower)
	if len(p) == 0 || s.exited || s.last.Event != EventFork || s.last.ChildPid <= 0 || s.forkKept != s.last.ChildPid || !can {
		return nil, false
	}
	if err := ff.FollowFork(s.last.ChildPid); err != nil {
		s.logf("follow fork child %d: %v", s.last.ChildPid, err)
		return errReply(1), true
	}
	s.last = Stop{Kind: StopSignal, Thread: s.last.ChildTid, Signal: s.last.Signal, Break: -1}
	s.gThread, s.cThread, s.forkKept = 0, 0, 0
	return replyOK, true
}

// followVfork makes the vfork child of the last stop the target when
// the client names it in thread id p (Hg, vCont): gdb's follow-fork-mode
// child at a vfork switches to the child and resumes it alone, keeping
// the parent, which it detaches (D;PID) once the child exec'd or exited
// (the Target holds it until then). A follow that fails leaves the
// target as it was (the id then names no thread of it).
func (s *session) followVfork(p []byte) {
	ff, can := s.t.(ForkFollower)
	if !can || len(p) == 0 || p[0] != 'p' || s.exited || s.last.Event != EventVfork || s.last.ChildPid <= 0 || s.forkKept != s.last.ChildPid {
		return
	}
	pidS, _, _ := bytes.Cut(p[1:], []byte("."))
	if pid, ok := parseHex(pidS); !ok || pid != uint64(s.last.ChildPid) {
		return
	}
	if err := ff.FollowFork(s.last.ChildPid); err != nil {
		s.logf("follow vfork child %d: %v", s.last.ChildPid, err)
		return
	}
	s.last = Stop{Kind: StopSignal, Thread: s.last.ChildTid, Signal: s.last.Signal, Break: -1}
	s.gThread, s.cThread, s.forkKept = 0, 0, 0
}

// otherProcess parses the ";PID" of D and vKill: ok when it names a
// process other than the target's (pid -1 when malformed).
func (s *session) otherProcess(p []byte) (pid int, ok bool) {
	if len(p) == 0 {
		return 0, false
	}
	v, ok1 := parseHex(p[1:])
	if p[0] != ';' || !ok1 || v > 1<<31-1 {
		return -1, true
	}
	if int(v) == s.t.Pid() {
		return 0, false
	}
	return int(v), true
}

// threadID formats a thread id for the client (pPID.TID with the
// multiprocess extensions).
func (s *session) threadID(tid int) string {
	if s.multi {
		return fmt.Sprintf("p%x.%x", s.t.Pid(), tid)
	}
	return strconv.FormatUint(uint64(tid), 16)
}

// clientFeatures reads the features gdb offers in qSupported and turns
// on those the stub and target share.
func (s *session) clientFeatures(args []byte) []byte {
	er, ok := s.t.(EventReporter)
	if !ok {
		return nil
	}
	for _, f := range bytes.Split(args, []byte(";")) {
		switch string(f) {
		case "multiprocess+":
			s.multi = true
		case "fork-events+":
			s.events.Fork = true
		case "vfork-events+":
			s.events.Vfork = true
		case "exec-events+":
			s.events.Exec = true
		}
	}
	if !s.multi {
		// Fork events name another process: pPID.TID only.
		s.events.Fork, s.events.Vfork = false, false
	}
	er.SetEvents(s.events)
	var reply []byte
	for _, f := range []struct {
		on   bool
		name string
	}{{s.multi, ";multiprocess+"}, {s.events.Fork, ";fork-events+"}, {s.events.Vfork, ";vfork-events+"}, {s.events.Exec, ";exec-events+"}} {
		if f.on {
			reply = append(reply, f.name...)
		}
	}
	return reply
}

// catchSyscalls handles QCatchSyscalls:0 and QCatchSyscalls:1[;NR]...
func (s *session) catchSyscalls(args []byte) []byte {
	c, ok := s.t.(SyscallCatcher)
	if !ok {
		return replyEmpty
	}
	if s.exited {
		return errReply(1)
	}
	f := bytes.Split(args, []byte(";"))
	var err error
	switch {
	case len(f) == 1 && string(f[0]) == "0":
		err = c.CatchSyscalls(false, nil)
	case string(f[0]) == "1":
		var nrs []uint64
		if len(f) > 1 {
			nrs = make([]uint64, 0, len(f)-1) // bounded by the packet size
			for _, x := range f[1:] {
				nr, ok := parseHex(x)
				if !ok || nr >= 1<<16 {
					return errReply(1)
				}
				nrs = append(nrs, nr)
			}
		}
		err = c.CatchSyscalls(true, nrs)
	default:
		return errReply(1)
	}
	if err != nil {
		return errReply(1)
	}
	return replyOK
}
