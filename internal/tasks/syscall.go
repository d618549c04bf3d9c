package tasks

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// errRet encodes -errno as the syscall return value.
func errRet(e Errno) uint64 { return uint64(-int64(e)) }

// arg returns syscall argument i.
func (t *Task) arg(i int) uint64 { return t.cpu.Reg(t.tg.arch.args[i]) }

// syscall handles one syscall exit. It returns true when the task must
// stop running (exit, exit_group), and the result for signal handling.
func (t *Task) syscall() (stop bool, sc syscallResult, restartable bool) {
	a := t.tg.arch
	nr := t.cpu.Reg(a.nr)
	ent := a.entry(nr)
	no := ent.no
	k := t.tg.k
	k.syscalls[no].Add(1)
	args := t.syscallArgs(a) // syscallargs.go
	orig0 := args[0]
	var ret uint64
	var done bool
	switch no {
	case sysExit:
		k.traceSyscall(t, no, nr, args, nil)
		t.exitThread(int(int32(t.arg(0))))
		return true, sc, false
	case sysExitGroup:
		k.traceSyscall(t, no, nr, args, nil)
		t.tg.exitGroup(ExitStatus{Code: int(t.arg(0) & 0xff)})
		return true, sc, false
	case sysExecve, sysExecveat:
		var r uint64
		var replaced bool
		if no == sysExecve {
			r, replaced = t.sysExecve(atFDCWD, t.arg(0), t.arg(1), t.arg(2), 0)
		} else {
			r, replaced = t.sysExecve(int32(t.arg(0)), t.arg(1), t.arg(2), t.arg(3), t.arg(4))
		}
		if replaced {
			k.traceSyscall(t, no, nr, args, &r)
			return t.killed.Load(), sc, false
		}
		t.cpu.SetReg(a.ret, r)
		k.traceSyscall(t, no, nr, args, &r)
		return t.killed.Load(), syscallResult{ret: int64(r), origArg0: orig0, nr: nr}, true
	case sysRtSigreturn:
		t.sysRtSigreturn()
		ret := t.cpu.Reg(a.ret)
		k.traceSyscall(t, no, nr, args, &ret)
		return t.killed.Load(), sc, false
	default:
		if h := ent.handler; h != nil {
			if ent.byName {
				k.countNamed(ent.name)
			}
			ret, done = h(t, args), true
		}
	}
	if !done {
		name := fmt.Sprintf("syscall %d", nr)
		if no != sysNone {
			name = fmt.Sprintf("syscall %s (%d)", no, nr)
		} else if n, ok := a.names[nr]; ok {
			name = fmt.Sprintf("syscall %s (%d)", n, nr)
		}
		if t.tg.k.noteUnimplemented(name) {
			t.tg.k.logf("unimplemented %s at pc 0x%x", name, t.cpu.PC())
		}
		ret = errRet(ENOSYS)
	}
	t.cpu.SetReg(a.ret, ret)
	if k.tracing() {
		k.traceSyscall(t, no, nr, args, &ret)
	}
	return t.killed.Load(), syscallResult{ret: int64(ret), origArg0: orig0, nr: nr}, true
}

// traceSyscall records one syscall event (ret nil: it did not return).
func (k *Kernel) traceSyscall(t *Task, no sysno, nr uint64, args [6]uint64, ret *uint64) {
	if !k.tracing() {
		return
	}
	var b strings.Builder
	name := t.tg.arch.names[nr]
	if no == sysNone && namedSyscalls[name] != nil {
		fmt.Fprintf(&b, "%d %s(", t.tid, name)
	} else if no == sysNone {
		fmt.Fprintf(&b, "%d syscall_%d(", t.tid, nr)
	} else {
		fmt.Fprintf(&b, "%d %s(", t.tid, no)
	}
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		if sa, ok := t.traceSockaddrArg(name, i, args, ret); ok && no == sysNone {
			b.WriteString(sa) // socket_trace.go
			continue
		}
		fmt.Fprintf(&b, "%#x", a)
	}
	switch {
	case ret == nil:
		b.WriteString(") = ?")
	case int64(*ret) < 0 && int64(*ret) > -4096:
		fmt.Fprintf(&b, ") = -%d", -int64(*ret))
	default:
		fmt.Fprintf(&b, ") = %#x", *ret)
	}
	k.event("%s", b.String())
}

// syscallHandler implements one syscall from its six argument registers
// and returns the result register (a negative errno, or a restart code).
type syscallHandler func(t *Task, a [6]uint64) uint64

// namedSyscalls are the syscalls implemented outside the sysno enum, by
// their Linux name as both arches' tables spell it (sysnames.go). A file
// that implements a family of syscalls registers them in its init with
// registerSyscall, and touches nothing else. Read-only after init.
var namedSyscalls = map[string]syscallHandler{}

// registerSyscall adds a named syscall (at init time only).
func registerSyscall(name string, h syscallHandler) {
	if _, dup := namedSyscalls[name]; dup {
		panic("tasks: syscall " + name + " registered twice")
	}
	if !knownSyscallName(name) {
		panic("tasks: no arch has a syscall named " + name)
	}
	namedSyscalls[name] = h
}

func knownSyscallName(name string) bool {
	for _, names := range []map[uint64]string{arm64SysNames, amd64SysNames} {
		for _, n := range names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// countNamed counts a call of a named syscall for --stats.
func (k *Kernel) countNamed(name string) {
	k.mu.Lock()
	k.namedCalls[name]++
	k.mu.Unlock()
}

func errOr0(e Errno) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return 0
}

func retOr(e Errno, v uint64) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return v
}

func retFD(fd int32, e Errno) uint64 {
	if e != 0 {
		return errRet(e)
	}
	return uint64(fd)
}

// putU64 writes a little-endian value into guest memory.
func (t *Task) putU64(addr, v uint64) Errno {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if t.tg.mm.WriteAt(b[:], addr) != nil {
		return EFAULT
	}
	return 0
}

func (t *Task) putU32(addr uint64, v uint32) Errno {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if t.tg.mm.WriteAt(b[:], addr) != nil {
		return EFAULT
	}
	return 0
}

func (t *Task) getU64(addr uint64) (uint64, Errno) {
	var b [8]byte
	if t.tg.mm.ReadAt(b[:], addr) != nil {
		return 0, EFAULT
	}
	return binary.LittleEndian.Uint64(b[:]), 0
}

// readBuf copies guest memory into a new slice (EFAULT on failure).
// Callers bound n (writes go through writeGuest's chunks).
func (t *Task) readBuf(addr, n uint64) ([]byte, Errno) {
	if n > 1<<24 {
		return nil, EINVAL
	}
	b := make([]byte, n)
	if t.tg.mm.ReadAt(b, addr) != nil {
		return nil, EFAULT
	}
	return b, 0
}

// readPath reads a NUL-terminated path argument.
func (t *Task) readPath(addr uint64) (string, Errno) {
	if addr == 0 {
		return "", EFAULT
	}
	s, err := t.tg.mm.ReadString(addr, 4096)
	if err != nil {
		if strings.Contains(err.Error(), "too long") {
			return "", ENAMETOOLONG
		}
		return "", EFAULT
	}
	return s, 0
}
