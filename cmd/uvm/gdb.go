package main

// `uvm run -g PORT | -g unix:PATH [--gdb-wait]`: a gdb remote stub
// (package gdbstub) on the kernel's debugger (tasks/debug.go). This file
// is the glue: the listener, and gdb's register layouts over the two
// CPUs' register files.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uvm-emu/uvm/internal/gdbstub"
	"github.com/uvm-emu/uvm/internal/tasks"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// gdbServer is one -g listener.
type gdbServer struct {
	ln   net.Listener
	dbg  *tasks.Debugger
	wait bool
	log  io.Writer
	done chan struct{} // closed when the session ends
	// accepted is set when a debugger connected.
	accepted atomic.Bool
	// rev re-creates the run for reverse execution (nil without --det);
	// live is the run debugged now (gdb_reverse.go).
	rev  *reverseRun
	live liveRun
	// cancel is closed by gdb's ^C to abandon the reverse command in
	// progress (nil: none; protected by cancelMu).
	cancelMu sync.Mutex
	cancel   chan struct{}
}

// listenGDB opens the -g address: a TCP port on localhost, HOST:PORT, or
// unix:PATH.
func listenGDB(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return nil, errors.New("-g unix: needs a path")
		}
		return net.Listen("unix", path)
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = "localhost:" + addr
	}
	return net.Listen("tcp", addr)
}

// startGDB listens and attaches the kernel's debugger before the guest
// starts (with wait, its first thread stops before its first instruction
// until the debugger resumes it).
func startGDB(k *tasks.Kernel, addr string, wait bool, log io.Writer) (*gdbServer, error) {
	ln, err := listenGDB(addr)
	if err != nil {
		return nil, err
	}
	s := &gdbServer{ln: ln, dbg: k.NewDebugger(wait), wait: wait, log: log, done: make(chan struct{})}
	fmt.Fprintf(log, "uvm: waiting for gdb on %s\n", ln.Addr())
	return s, nil
}

// serve accepts one debugger connection and runs the session (after
// the guest has started: tg is the debugged process).
func (s *gdbServer) serve(k *tasks.Kernel, tg *tasks.ThreadGroup) {
	s.dbg.Attach(tg)
	s.live.k, s.live.tg, s.live.replaced = k, tg, make(chan struct{})
	go func() {
		defer close(s.done)
		conn, err := s.ln.Accept()
		s.ln.Close()
		if err != nil {
			return
		}
		s.accepted.Store(true)
		defer conn.Close()
		first := <-s.dbg.Stopped()
		t := &gdbTarget{d: s.dbg, srv: s, hw: map[uint64]bool{}}
		t.arch = gdbstub.AArch64
		if s.dbg.Arch() == vm.ArchAMD64 {
			t.arch = gdbstub.AMD64
		}
		if err := gdbstub.Serve(conn, t, t.stop(first), gdbstub.Options{Attached: !s.wait}); err != nil {
			fmt.Fprintf(s.log, "uvm: gdb session: %v\n", err)
		}
		// Nobody debugs any more: what the session still held (a vfork
		// parent gdb did not detach after its followed child exited) runs on.
		t.d.Detach()
	}()
}

// finish waits (a little) for the session to report the guest's exit to
// the debugger, then closes the listener.
func (s *gdbServer) finish() {
	if s.accepted.Load() {
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	}
	s.ln.Close()
	if u, ok := s.ln.Addr().(*net.UnixAddr); ok {
		os.Remove(u.Name)
	}
}

// gdbTarget is gdbstub.Target over tasks.Debugger.
type gdbTarget struct {
	d    *tasks.Debugger
	srv  *gdbServer
	arch *gdbstub.Arch
	// hw holds the addresses inserted as Z1 (reported as hwbreak).
	hw map[uint64]bool
}

func (t *gdbTarget) Arch() *gdbstub.Arch { return t.arch }
func (t *gdbTarget) Pid() int            { return int(t.d.Pid()) }

func (t *gdbTarget) Threads() []gdbstub.Thread {
	var out []gdbstub.Thread
	for _, th := range t.d.Threads() {
		out = append(out, gdbstub.Thread{ID: int(th.Tid), Name: th.Name})
	}
	return out
}

func (t *gdbTarget) cpu(tid int) (vm.CPU, error) {
	for _, th := range t.d.Threads() {
		if int(th.Tid) == tid {
			return th.CPU, nil
		}
	}
	return nil, errors.New("no such thread")
}

func (t *gdbTarget) ReadRegisters(tid int, buf []byte) error {
	c, err := t.cpu(tid)
	if err != nil {
		return err
	}
	switch c := c.(type) {
	case *arm64.CPU:
		arm64ToGDB(c.Regs(), buf)
	case *amd64.CPU:
		amd64ToGDB(c.Regs(), buf)
	default:
		return errors.New("unknown CPU")
	}
	return nil
}

func (t *gdbTarget) WriteRegisters(tid int, buf []byte) error {
	c, err := t.cpu(tid)
	if err != nil {
		return err
	}
	if old := make([]byte, len(buf)); t.ReadRegisters(tid, old) != nil || !bytes.Equal(old, buf) {
		t.d.Taint() // a change reverse execution cannot re-execute
	}
	switch c := c.(type) {
	case *arm64.CPU:
		arm64FromGDB(c.Regs(), buf)
	case *amd64.CPU:
		r := *c.Regs()
		amd64FromGDB(&r, buf)
		c.SetRegs(&r)
	default:
		return errors.New("unknown CPU")
	}
	return nil
}

func (t *gdbTarget) ReadMemory(addr uint64, buf []byte) (int, error) {
	return t.d.ReadMemory(addr, buf)
}

func (t *gdbTarget) WriteMemory(addr uint64, data []byte) error {
	if old := make([]byte, len(data)); !bytes.Equal(old[:t.readN(addr, old)], data) {
		t.d.Taint() // a change reverse execution cannot re-execute
	}
	return t.d.WriteMemory(addr, data)
}

func (t *gdbTarget) SetBreakpoint(kind gdbstub.BreakKind, addr, length uint64, insert bool) error {
	switch kind {
	case gdbstub.BreakSoftware, gdbstub.BreakHardware:
		t.d.SetBreakpoint(addr, insert)
		if kind == gdbstub.BreakHardware {
			t.hw[addr] = insert
		}
		return nil
	case gdbstub.WatchWrite:
		return t.d.SetWatchpoint(vm.WatchWrite, addr, length, insert)
	case gdbstub.WatchRead:
		return t.d.SetWatchpoint(vm.WatchRead, addr, length, insert)
	case gdbstub.WatchAccess:
		return t.d.SetWatchpoint(vm.WatchAccess, addr, length, insert)
	}
	return gdbstub.ErrUnsupported
}

func (t *gdbTarget) Resume(acts []gdbstub.ResumeAction) <-chan gdbstub.Stop {
	da := make([]tasks.DebugAction, len(acts))
	for i, a := range acts {
		da[i] = tasks.DebugAction{Tid: int32(a.Thread), Step: a.Step, Signal: a.Signal}
	}
	in := t.d.Resume(da)
	out := make(chan gdbstub.Stop, 1)
	go func() { out <- t.stop(<-in) }()
	return out
}

func (t *gdbTarget) stop(st tasks.DebugStop) gdbstub.Stop {
	switch {
	case st.Exited && st.Status.Signal != 0:
		return gdbstub.Stop{Kind: gdbstub.StopTerminated, Signal: st.Status.Signal, Break: -1}
	case st.Exited:
		return gdbstub.Stop{Kind: gdbstub.StopExited, Code: st.Status.Code, Break: -1}
	}
	if st.Event == tasks.DebugEventThreadExit {
		return gdbstub.Stop{Kind: gdbstub.StopThreadExited, Thread: int(st.Tid), Code: st.Status.Code, Break: -1}
	}
	out := gdbstub.Stop{Kind: gdbstub.StopSignal, Thread: int(st.Tid), Signal: st.Signal, Break: st.Break, WatchAddr: st.WatchAddr}
	switch st.Syscall {
	case tasks.DebugSyscallEntry:
		out.Event, out.Syscall = gdbstub.EventSyscallEntry, st.SyscallNr
	case tasks.DebugSyscallReturn:
		out.Event, out.Syscall = gdbstub.EventSyscallReturn, st.SyscallNr
	}
	switch st.Event {
	case tasks.DebugEventFork:
		out.Event, out.ChildPid, out.ChildTid = gdbstub.EventFork, int(st.ChildPid), int(st.ChildPid)
	case tasks.DebugEventVfork:
		out.Event, out.ChildPid, out.ChildTid = gdbstub.EventVfork, int(st.ChildPid), int(st.ChildPid)
	case tasks.DebugEventVforkDone:
		out.Event = gdbstub.EventVforkDone
	case tasks.DebugEventExec:
		out.Event, out.ExecPath = gdbstub.EventExec, st.ExecPath
	case tasks.DebugEventThreadCreate:
		out.Event = gdbstub.EventThreadCreated
	}
	if st.Break == 0 {
		if c, err := t.cpu(int(st.Tid)); err == nil && t.hw[c.PC()] {
			out.Break = int(gdbstub.BreakHardware)
		}
	}
	return out
}

// CatchSyscalls implements gdbstub.SyscallCatcher.
func (t *gdbTarget) CatchSyscalls(on bool, nrs []uint64) error {
	t.d.CatchSyscalls(on, nrs)
	return nil
}

// SetEvents implements gdbstub.EventReporter.
func (t *gdbTarget) SetEvents(ev gdbstub.Events) { t.d.SetEvents(ev.Fork, ev.Vfork, ev.Exec) }

// SetThreadEvents implements gdbstub.ThreadEventReporter.
func (t *gdbTarget) SetThreadEvents(on bool) { t.d.SetThreadEvents(on) }

// FollowFork implements gdbstub.ForkFollower.
func (t *gdbTarget) FollowFork(pid int) error {
	if pid <= 0 || pid > 1<<31-1 {
		return fmt.Errorf("bad pid %d", pid)
	}
	return t.d.FollowFork(int32(pid))
}

// DetachProcess implements gdbstub.ForkFollower.
func (t *gdbTarget) DetachProcess(pid int) {
	if pid > 0 && pid <= 1<<31-1 {
		t.d.DetachProcess(int32(pid))
	}
}

// Interrupt implements gdbstub.Target: it abandons a reverse command in
// progress, or stops the running process.
func (t *gdbTarget) Interrupt() {
	if !t.srv.interrupt() {
		t.d.Interrupt()
	}
}

func (t *gdbTarget) Kill()                     { t.d.Kill() }
func (t *gdbTarget) Detach()                   { t.d.Detach() }
func (t *gdbTarget) Auxv() ([]byte, error)     { return t.d.Auxv() }
func (t *gdbTarget) ExecFile() (string, error) { return t.d.ExecFile() }

// gdb's aarch64 layout (gdbstub.AArch64): x0..x30, sp, pc, cpsr (32),
// v0..v31 (128), fpsr, fpcr (32), tpidr.
func arm64ToGDB(r *arm64.Regs, b []byte) {
	le := binary.LittleEndian
	for i := 0; i < 31; i++ {
		le.PutUint64(b[8*i:], r.X[i])
	}
	le.PutUint64(b[248:], r.SP)
	le.PutUint64(b[256:], r.PC)
	le.PutUint32(b[264:], uint32(r.NZCV)) // EL0t: only NZCV is set
	for i := 0; i < 32; i++ {
		le.PutUint64(b[268+16*i:], r.V[i][0])
		le.PutUint64(b[276+16*i:], r.V[i][1])
	}
	le.PutUint32(b[780:], r.FPSR)
	le.PutUint32(b[784:], r.FPCR)
	le.PutUint64(b[788:], r.TPIDR)
}

func arm64FromGDB(r *arm64.Regs, b []byte) {
	le := binary.LittleEndian
	for i := 0; i < 31; i++ {
		r.X[i] = le.Uint64(b[8*i:])
	}
	r.SP = le.Uint64(b[248:])
	r.PC = le.Uint64(b[256:])
	r.NZCV = uint64(le.Uint32(b[264:]) & 0xf0000000) // user mode: the rest of PSTATE is not writable
	for i := 0; i < 32; i++ {
		r.V[i][0] = le.Uint64(b[268+16*i:])
		r.V[i][1] = le.Uint64(b[276+16*i:])
	}
	r.FPSR = le.Uint32(b[780:])
	r.FPCR = le.Uint32(b[784:])
	r.TPIDR = le.Uint64(b[788:])
}

// amd64GDBOrder maps gdb's rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8..r15
// to the encoding order of amd64.Regs.GPR.
var amd64GDBOrder = [16]int{0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15}

// Linux's user selectors for a 64-bit process (__USER_CS, __USER_DS).
const userCS, userSS = 0x33, 0x2b

// gdb's amd64 layout (gdbstub.AMD64): 16 GPRs, rip, eflags, cs ss ds es
// fs gs (32), st0..st7 (80, in stack order), fctrl fstat ftag fiseg
// fioff foseg fooff fop (32), xmm0..15, mxcsr, orig_rax, fs_base, gs_base.
// uvm does not record the x87 last-instruction and last-operand pointers
// or the last opcode: they read as 0 (as after FNINIT).
func amd64ToGDB(r *amd64.Regs, b []byte) {
	le := binary.LittleEndian
	for i, g := range amd64GDBOrder {
		le.PutUint64(b[8*i:], r.GPR[g])
	}
	le.PutUint64(b[128:], r.RIP)
	le.PutUint32(b[136:], uint32(r.RFLAGS))
	le.PutUint32(b[140:], userCS)
	le.PutUint32(b[144:], userSS)
	for i := 148; i < 164; i++ {
		b[i] = 0 // ds, es, fs, gs: 0 for 64-bit processes
	}
	top := int(r.FSW>>11) & 7
	for i := 0; i < 8; i++ {
		st := r.ST[(top+i)&7]
		le.PutUint64(b[164+10*i:], st.Mant)
		le.PutUint16(b[172+10*i:], st.SignExp)
	}
	le.PutUint32(b[244:], uint32(r.FCW))
	le.PutUint32(b[248:], uint32(r.FSW))
	le.PutUint32(b[252:], uint32(fullTagWord(r)))
	for i := 256; i < 276; i++ {
		b[i] = 0
	}
	for i := 0; i < 16; i++ {
		le.PutUint64(b[276+16*i:], r.XMM[i][0])
		le.PutUint64(b[284+16*i:], r.XMM[i][1])
	}
	le.PutUint32(b[532:], r.MXCSR)
	le.PutUint64(b[536:], ^uint64(0)) // orig_rax: -1, not stopped in a syscall restart
	le.PutUint64(b[544:], r.FSBase)
	le.PutUint64(b[552:], r.GSBase)
}

func amd64FromGDB(r *amd64.Regs, b []byte) {
	le := binary.LittleEndian
	for i, g := range amd64GDBOrder {
		r.GPR[g] = le.Uint64(b[8*i:])
	}
	r.RIP = le.Uint64(b[128:])
	r.RFLAGS = uint64(le.Uint32(b[136:]))
	r.FCW = uint16(le.Uint32(b[244:]))
	r.FSW = uint16(le.Uint32(b[248:]))
	top := int(r.FSW>>11) & 7
	for i := 0; i < 8; i++ {
		r.ST[(top+i)&7] = amd64.F80{Mant: le.Uint64(b[164+10*i:]), SignExp: le.Uint16(b[172+10*i:])}
	}
	tag := le.Uint32(b[252:])
	r.FTW = 0
	for j := 0; j < 8; j++ {
		if tag>>(2*j)&3 != 3 {
			r.FTW |= 1 << j
		}
	}
	for i := 0; i < 16; i++ {
		r.XMM[i][0] = le.Uint64(b[276+16*i:])
		r.XMM[i][1] = le.Uint64(b[284+16*i:])
	}
	r.MXCSR = le.Uint32(b[532:])
	r.FSBase = le.Uint64(b[544:])
	r.GSBase = le.Uint64(b[552:])
}

// fullTagWord expands fxsave's abridged tag byte into the x87 tag word
// (2 bits per physical register: 0 valid, 1 zero, 2 special, 3 empty),
// as Linux's twd_fxsr_to_i387 does.
func fullTagWord(r *amd64.Regs) uint16 {
	var w uint16
	for j := 0; j < 8; j++ {
		tag := uint16(3)
		if r.FTW>>j&1 != 0 {
			st := r.ST[j]
			switch exp := st.SignExp & 0x7fff; {
			case exp == 0x7fff:
				tag = 2
			case exp == 0 && st.Mant == 0:
				tag = 1
			case exp == 0 || st.Mant>>63 == 0:
				tag = 2
			default:
				tag = 0
			}
		}
		w |= tag << (2 * j)
	}
	return w
}
