package tasks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/uvm-emu/uvm/internal/vm"
)

// uid and gid are the kernel's initial identity (creds.go), for what has
// no calling thread.
func (k *Kernel) uid() uint32 { return k.initialCred().uid }
func (k *Kernel) gid() uint32 { return k.initialCred().gid }

// ppid is the parent's pid. The first process's parent is outside uvm; it
// reads as the pid just below the first guest pid (1000).
func (tg *ThreadGroup) ppid() int32 {
	tg.k.procMu.Lock()
	defer tg.k.procMu.Unlock()
	if p := tg.proc.parent; p != nil {
		return p.pid
	}
	return 1000
}

func (t *Task) exitThread(code int) {
	t.exitCode = code & 0xff
	t.tg.mu.Lock()
	last := len(t.tg.tasks) == 1
	t.tg.mu.Unlock()
	if last {
		t.tg.mu.Lock()
		if !t.tg.exiting {
			t.tg.exiting = true
			t.tg.status = ExitStatus{Code: code & 0xff}
		}
		t.tg.mu.Unlock()
	}
}

func (t *Task) sysUname(buf uint64) uint64 {
	machine := t.tg.arch.machine
	fields := []string{unameSysname, unameNodename, unameRelease, unameVersion, machine, "(none)"}
	b := make([]byte, 65*6)
	for i, f := range fields {
		copy(b[i*65:], f)
	}
	return errOr0(t.writeBytes(buf, b))
}

func (t *Task) sysSysinfo(buf uint64) uint64 {
	b := make([]byte, 112)
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(t.tg.k.uptimeNs()/1e9)+1)
	k := t.tg.k
	le.PutUint64(b[32:], uint64(k.memTotalBytes())) // totalram
	le.PutUint64(b[40:], uint64(k.memFreeBytes()))  // freeram
	le.PutUint16(b[80:], uint16(min(k.threads.Load(), 0xffff)))
	le.PutUint32(b[104:], 1) // mem_unit
	return errOr0(t.writeBytes(buf, b))
}

func (t *Task) sysTimes(buf uint64) uint64 {
	ticks := uint64(t.tg.k.uptimeNs() / 1e7)
	if buf != 0 {
		b := make([]byte, 32)
		binary.LittleEndian.PutUint64(b[0:], ticks)
		if e := t.writeBytes(buf, b); e != 0 {
			return errRet(e)
		}
	}
	return ticks
}

// gsBaser is implemented by the x86-64 CPU.
type gsBaser interface {
	GSBase() uint64
	SetGSBase(uint64)
}

func (t *Task) sysArchPrctl(code, addr uint64) uint64 {
	if t.tg.arch.vmArch != vm.ArchAMD64 {
		// arm64 has no arch_prctl (its number names nothing there).
		return errRet(EINVAL)
	}
	switch code {
	case 0x1002: // ARCH_SET_FS
		if addr >= vm.TaskSize {
			return errRet(EPERM)
		}
		t.cpu.SetTLS(addr)
		return 0
	case 0x1003: // ARCH_GET_FS
		return errOr0(t.putU64(addr, t.cpu.TLS()))
	case 0x1001: // ARCH_SET_GS
		if g, ok := t.cpu.(gsBaser); ok {
			g.SetGSBase(addr)
			return 0
		}
	case 0x1004: // ARCH_GET_GS
		if g, ok := t.cpu.(gsBaser); ok {
			return errOr0(t.putU64(addr, g.GSBase()))
		}
	}
	return errRet(EINVAL)
}

func (t *Task) sysSchedGetaffinity(size, mask uint64) uint64 {
	if size < 8 || size&7 != 0 {
		return errRet(EINVAL)
	}
	n := t.tg.k.guestCPUs()
	if n > 64 {
		n = 64
	}
	var bits uint64 = 1<<uint(n) - 1
	if n == 64 {
		bits = ^uint64(0)
	}
	if e := t.putU64(mask, bits); e != 0 {
		return errRet(e)
	}
	return 8
}

func (t *Task) sysGetrandom(buf, n uint64) uint64 {
	if n > 1<<20 {
		n = 1 << 20
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(t.tg.k.opts.Random, b); err != nil {
		return errRet(EIO)
	}
	return retOr(t.writeBytes(buf, b), n)
}

// Clocks (include/uapi/linux/time.h).
const (
	clockRealtime        = 0
	clockMonotonic       = 1
	clockProcessCPUTime  = 2
	clockThreadCPUTime   = 3
	clockMonotonicRaw    = 4
	clockRealtimeCoarse  = 5
	clockMonotonicCoarse = 6
	clockBoottime        = 7
)

// monoBase makes the guest's CLOCK_MONOTONIC look like a machine that has
// been up for a while (never zero).
const monoBase = 1000 * time.Second

// clockNow returns the clock's value in nanoseconds. CPU-time clocks are
// approximated by the time since uvm started.
func (t *Task) clockNow(id int32) (int64, Errno) {
	k := t.tg.k
	switch id {
	case clockRealtime, clockRealtimeCoarse:
		return k.realtimeNs(), 0
	case clockMonotonic, clockMonotonicRaw, clockMonotonicCoarse, clockBoottime:
		return k.uptimeNs() + int64(monoBase), 0
	case clockProcessCPUTime, clockThreadCPUTime:
		return t.tg.cpuNs(id, t), 0 // retired instructions (timers.go)
	}
	if id < 0 {
		// Dynamic CPU clocks (per pid/tid; timers.go).
		return t.dynamicCPUClockNs(id)
	}
	return 0, EINVAL
}

// DetEpoch is the wall-clock time at boot in deterministic mode.
var DetEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// uptimeNs is the time since the kernel started: virtual in deterministic
// mode, the host's otherwise.
func (k *Kernel) uptimeNs() int64 {
	if k.det != nil {
		return k.det.now()
	}
	return int64(time.Since(k.start))
}

func (k *Kernel) realtimeNs() int64 {
	if k.det != nil {
		return DetEpoch.UnixNano() + k.det.now()
	}
	return time.Now().UnixNano()
}

func (t *Task) putTimespec(addr uint64, ns int64) Errno {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(ns/1e9))
	binary.LittleEndian.PutUint64(b[8:], uint64(ns%1e9))
	return t.writeBytes(addr, b[:])
}

func (t *Task) readTimespec(addr uint64) (int64, Errno) {
	b, e := t.readBuf(addr, 16)
	if e != 0 {
		return 0, e
	}
	sec := int64(binary.LittleEndian.Uint64(b[0:]))
	nsec := int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return 0, EINVAL
	}
	if sec > 1<<33 {
		sec = 1 << 33
	}
	return sec*1e9 + nsec, 0
}

func (t *Task) sysClockGettime(id int32, addr uint64) uint64 {
	ns, e := t.clockNow(id)
	if e != 0 {
		return errRet(e)
	}
	return errOr0(t.putTimespec(addr, ns))
}

func (t *Task) sysClockGetres(id int32, addr uint64) uint64 {
	if _, e := t.clockNow(id); e != 0 {
		return errRet(e)
	}
	if addr == 0 {
		return 0
	}
	res := int64(1)
	if id == clockRealtimeCoarse || id == clockMonotonicCoarse {
		res = 4e6
	}
	return errOr0(t.putTimespec(addr, res))
}

func (t *Task) sysGettimeofday(addr, tz uint64) uint64 {
	if tz != 0 {
		// struct timezone: sys_tz, {0, 0} (uvm has no settimeofday).
		if e := t.putU64(tz, 0); e != 0 {
			return errRet(e)
		}
	}
	if addr == 0 {
		return 0
	}
	ns := t.tg.k.realtimeNs()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(ns/1e9))
	binary.LittleEndian.PutUint64(b[8:], uint64(ns%1e9/1e3))
	return errOr0(t.writeBytes(addr, b[:]))
}

func (t *Task) sysTime(addr uint64) uint64 {
	now := uint64(t.tg.k.realtimeNs() / 1e9)
	if addr != 0 {
		if e := t.putU64(addr, now); e != 0 {
			return errRet(e)
		}
	}
	return now
}

// Clone flags.
const (
	cloneVM            = 0x100
	cloneFS            = 0x200
	cloneFiles         = 0x400
	cloneSighand       = 0x800
	clonePidfd         = 0x1000
	cloneVfork         = 0x4000
	cloneParent        = 0x8000
	cloneThread        = 0x10000
	cloneSysvsem       = 0x40000
	cloneSettls        = 0x80000
	cloneParentSettid  = 0x100000
	cloneChildCleartid = 0x200000
	cloneDetached      = 0x400000
	cloneChildSettid   = 0x1000000
)

// sysClone creates a thread. Creating a process (fork, vfork, or clone
// without CLONE_VM) belongs to the process model and fails loudly here.
func (t *Task) sysClone(flags, stack, ptid, tls, ctid uint64) uint64 {
	const threadFlags = cloneVM | cloneThread | cloneSighand
	if flags&clonePidfd != 0 {
		// clone(2) returns the pidfd through the parent_tid argument.
		if flags&(cloneThread|cloneDetached|cloneParentSettid) != 0 {
			return errRet(EINVAL)
		}
		return t.clonePidfdResult(t.forkProcess(flags&^clonePidfd, stack, ptid, tls, ctid), ptid)
	}
	if flags&cloneThread == 0 {
		return t.forkProcess(flags, stack, ptid, tls, ctid)
	}
	if flags&threadFlags != threadFlags || flags&(cloneNewUser|cloneNewPID) != 0 {
		return errRet(EINVAL)
	}
	if flags&cloneNewAny != 0 {
		return t.notPermitted("clone of a namespace")
	}
	tg := t.tg
	if !tg.k.mayClone() {
		return errRet(EAGAIN)
	}
	tid := tg.k.allocPID()
	cpu := t.cpu.Clone(tg.mm)
	cpu.SetReg(tg.arch.ret, 0)
	if stack != 0 {
		cpu.SetSP(stack)
	}
	if flags&cloneSettls != 0 {
		cpu.SetTLS(tls)
	}
	if flags&cloneParentSettid != 0 {
		if e := t.putU32(ptid, uint32(tid)); e != 0 {
			return errRet(e)
		}
	}
	nt := tg.newTask(cpu, tid)
	nt.inheritCreds(t)
	nt.blocked = t.blocked
	tg.mu.Lock()
	nt.comm = t.comm
	tg.mu.Unlock()
	if t.utask != nil && nt.utask != nil {
		t.utask.CopyProcess(nt.utask, false)
	}
	if flags&cloneChildSettid != 0 {
		nt.putU32(ctid, uint32(tid))
	}
	if flags&cloneChildCleartid != 0 {
		nt.clearChildTID = ctid
	}
	tg.live.Add(1)
	tg.k.event("%d clone flags=%#x child=%d", t.tid, flags, tid)
	if tg.k.dbg != nil {
		t.debugClone(nt) // debug_threads.go
	}
	tg.k.startTask(nt)
	return uint64(tid)
}

func (t *Task) sysClone3(args, size uint64) uint64 {
	if size < 64 || size > 4096 {
		return errRet(EINVAL)
	}
	b, e := t.readBuf(args, 88)
	if e != 0 && size >= 88 {
		return errRet(e)
	}
	if b == nil {
		if b, e = t.readBuf(args, 64); e != 0 {
			return errRet(e)
		}
		b = append(b, make([]byte, 24)...)
	}
	le := binary.LittleEndian
	flags, ctid, ptid := le.Uint64(b[0:]), le.Uint64(b[16:]), le.Uint64(b[24:])
	if flags&0xff != 0 {
		return errRet(EINVAL)
	}
	flags |= le.Uint64(b[32:]) & 0xff // exit_signal
	stack, stackSize, tls := le.Uint64(b[40:]), le.Uint64(b[48:]), le.Uint64(b[56:])
	sp := uint64(0)
	if stack != 0 {
		sp = stack + stackSize
	}
	if flags&clonePidfd != 0 {
		if flags&(cloneThread|cloneDetached) != 0 {
			return errRet(EINVAL)
		}
		return t.clonePidfdResult(t.sysClone(flags&^clonePidfd, sp, ptid, tls, ctid), le.Uint64(b[8:]))
	}
	return t.sysClone(flags, sp, ptid, tls, ctid)
}

func (t *Task) sysFutex(addr uint64, op int, val uint32, timeout, addr2 uint64, val3 uint32) uint64 {
	cmd := op &^ (futexPrivateFlag | futexClockRealtime)
	private := op&futexPrivateFlag != 0
	ft := &t.tg.k.futexes
	switch cmd {
	case futexWait, futexWaitBitset:
		rel := int64(-1)
		if timeout != 0 {
			ns, e := t.readTimespec(timeout)
			if e != 0 {
				return errRet(e)
			}
			rel = ns
			if cmd == futexWaitBitset {
				// FUTEX_WAIT_BITSET takes an absolute time.
				id := int32(clockMonotonic)
				if op&futexClockRealtime != 0 {
					id = clockRealtime
				}
				now, _ := t.clockNow(id)
				rel = max(ns-now, 0)
			}
		}
		bitset := ^uint32(0)
		if cmd == futexWaitBitset {
			bitset = val3
		}
		return errOr0(ft.wait(t, addr, private, val, bitset, rel))
	case futexWake:
		return uint64(ft.wake(futexKeyOf(t.tg.mm, addr, private), int(val), ^uint32(0)))
	case futexWakeBitset:
		if val3 == 0 {
			return errRet(EINVAL)
		}
		return uint64(ft.wake(futexKeyOf(t.tg.mm, addr, private), int(val), val3))
	case futexRequeue, futexCmpRequeue:
		if cmd == futexCmpRequeue {
			var b [4]byte
			if t.tg.mm.ReadAt(b[:], addr) != nil {
				return errRet(EFAULT)
			}
			if binary.LittleEndian.Uint32(b[:]) != val3 {
				return errRet(EAGAIN)
			}
		}
		return uint64(ft.requeue(futexKeyOf(t.tg.mm, addr, private), futexKeyOf(t.tg.mm, addr2, private), int(val), int(uint32(timeout))))
	case futexWakeOp:
		return t.futexWakeOp(addr, private, val, uint32(timeout), addr2, val3)
	}
	name := "futex op " + itoa(cmd)
	if t.tg.k.noteUnimplemented(name) {
		t.tg.k.logf("unimplemented %s at pc 0x%x", name, t.cpu.PC())
	}
	return errRet(ENOSYS)
}

// futexWakeOp implements FUTEX_WAKE_OP: atomically apply op to *addr2,
// wake val waiters on addr, and val2 on addr2 if the old value passes the
// comparison.
func (t *Task) futexWakeOp(addr uint64, private bool, val, val2 uint32, addr2 uint64, enc uint32) uint64 {
	opType := (enc >> 28) & 7
	shiftArg := enc&(8<<28) != 0
	cmp := (enc >> 24) & 15
	oparg := (enc >> 12) & 0xfff
	cmparg := enc & 0xfff
	if shiftArg {
		oparg = 1 << (oparg & 31)
	}
	ft := &t.tg.k.futexes
	ft.mu.Lock()
	var b [4]byte
	if t.tg.mm.ReadAt(b[:], addr2) != nil {
		ft.mu.Unlock()
		return errRet(EFAULT)
	}
	old := binary.LittleEndian.Uint32(b[:])
	nv := old
	switch opType {
	case 0:
		nv = oparg
	case 1:
		nv = old + oparg
	case 2:
		nv = old | oparg
	case 3:
		nv = old &^ oparg
	case 4:
		nv = old ^ oparg
	default:
		ft.mu.Unlock()
		return errRet(ENOSYS)
	}
	binary.LittleEndian.PutUint32(b[:], nv)
	if t.tg.mm.WriteAt(b[:], addr2) != nil {
		ft.mu.Unlock()
		return errRet(EFAULT)
	}
	n := ft.wakeLocked(futexKeyOf(t.tg.mm, addr, private), int(val), ^uint32(0))
	o, c := int32(old), int32(cmparg)
	var pass bool
	switch cmp {
	case 0:
		pass = o == c
	case 1:
		pass = o != c
	case 2:
		pass = o < c
	case 3:
		pass = o <= c
	case 4:
		pass = o > c
	case 5:
		pass = o >= c
	}
	if pass {
		n += ft.wakeLocked(futexKeyOf(t.tg.mm, addr2, private), int(val2), ^uint32(0))
	}
	ft.mu.Unlock()
	return uint64(n)
}

// tgPrctl is a process's prctl state and its reaped children's resource
// usage (ThreadGroup.pr, protected by ThreadGroup.mu).
type tgPrctl struct {
	// pdeathSig is PR_SET_PDEATHSIG's signal, sent when the parent exits.
	pdeathSig int
	// subreaper is PR_SET_CHILD_SUBREAPER: orphaned descendants are
	// reparented here rather than to the first process.
	subreaper   bool
	undumpable  bool
	noNewPrivs  bool
	keepCaps    bool
	thpDisable  bool
	timerSlack  uint64
	maxRSSPages int64
	// children is what the reaped children (and, through them, their
	// reaped descendants) used: RUSAGE_CHILDREN.
	children rusage
}

// rusage is the part of struct rusage uvm counts.
type rusage struct {
	utimeNs int64
	maxRSS  int64 // pages
	minflt  int64
}

// prctl options (include/uapi/linux/prctl.h).
const (
	prSetPdeathsig            = 1
	prGetPdeathsig            = 2
	prGetDumpable             = 3
	prSetDumpable             = 4
	prGetKeepcaps             = 7
	prSetKeepcaps             = 8
	prSetName                 = 15
	prGetName                 = 16
	prGetSeccomp              = 21
	prCapbsetRead             = 23
	prSetTimerslack           = 29
	prGetTimerslack           = 30
	prSetChildSubreaper       = 36
	prGetChildSubreaper       = 37
	prSetNoNewPrivs           = 38
	prGetNoNewPrivs           = 39
	prGetTIDAddress           = 40
	prSetTHPDisable           = 41
	prGetTHPDisable           = 42
	prSetPtracer              = 0x59616d61
	prCapLastCap              = 40
	defaultTimerSlackNs       = 50000
	rusageSelf                = 0
	rusageThread              = 1
	rusageChildren      int64 = -1
)

func (t *Task) sysPrctl(op, arg uint64) uint64 {
	tg := t.tg
	switch op {
	case prSetName:
		b := make([]byte, 16)
		n := 0
		for ; n < 15; n++ {
			if tg.mm.ReadAt(b[n:n+1], arg+uint64(n)) != nil {
				return errRet(EFAULT)
			}
			if b[n] == 0 {
				break
			}
		}
		tg.mu.Lock()
		t.comm = string(b[:n])
		tg.mu.Unlock()
		return 0
	case prGetName:
		b := make([]byte, 16)
		copy(b[:15], t.commName())
		return errOr0(t.writeBytes(arg, b))
	case prSetPdeathsig:
		if arg > nSig {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		tg.pr.pdeathSig = int(arg)
		tg.mu.Unlock()
		return 0
	case prGetPdeathsig:
		tg.mu.Lock()
		v := tg.pr.pdeathSig
		tg.mu.Unlock()
		return errOr0(t.putU32(arg, uint32(v)))
	case prGetDumpable:
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if tg.pr.undumpable {
			return 0
		}
		return 1
	case prSetDumpable:
		if arg > 1 {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		tg.pr.undumpable = arg == 0
		tg.mu.Unlock()
		return 0
	case prSetChildSubreaper:
		tg.mu.Lock()
		tg.pr.subreaper = arg != 0
		tg.mu.Unlock()
		return 0
	case prGetChildSubreaper:
		tg.mu.Lock()
		v := tg.pr.subreaper
		tg.mu.Unlock()
		return errOr0(t.putU32(arg, b2u(v)))
	case prSetNoNewPrivs:
		if arg != 1 || t.arg(2)|t.arg(3)|t.arg(4) != 0 {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		tg.pr.noNewPrivs = true
		tg.mu.Unlock()
		return 0
	case prGetNoNewPrivs:
		if arg|t.arg(2)|t.arg(3)|t.arg(4) != 0 {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		defer tg.mu.Unlock()
		return uint64(b2u(tg.pr.noNewPrivs))
	case prGetKeepcaps:
		tg.mu.Lock()
		defer tg.mu.Unlock()
		return uint64(b2u(tg.pr.keepCaps))
	case prSetKeepcaps:
		if arg > 1 {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		tg.pr.keepCaps = arg == 1
		tg.mu.Unlock()
		return 0
	case prGetSeccomp:
		return 0
	case prSetTimerslack:
		tg.mu.Lock()
		tg.pr.timerSlack = arg
		tg.mu.Unlock()
		return 0
	case prGetTimerslack:
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if tg.pr.timerSlack == 0 {
			return defaultTimerSlackNs
		}
		return tg.pr.timerSlack
	case prGetTIDAddress:
		return errOr0(t.putU64(arg, t.clearChildTID))
	case prSetTHPDisable:
		if t.arg(2)|t.arg(3)|t.arg(4) != 0 {
			return errRet(EINVAL)
		}
		tg.mu.Lock()
		tg.pr.thpDisable = arg != 0
		tg.mu.Unlock()
		return 0
	case prGetTHPDisable:
		tg.mu.Lock()
		defer tg.mu.Unlock()
		return uint64(b2u(tg.pr.thpDisable))
	case prSetPtracer:
		return 0
	case prSetVMA:
		return t.prSetVMA(arg, t.arg(2), t.arg(3), t.arg(4))
	}
	if r, ok := t.prctlCreds(op, arg); ok {
		return r
	}
	name := fmt.Sprintf("prctl option %d", op)
	if tg.k.noteUnimplemented(name) {
		tg.k.logf("unimplemented %s", name)
	}
	return errRet(EINVAL)
}

// PR_SET_VMA (Linux 5.17): PR_SET_VMA_ANON_NAME names anonymous memory,
// shown as [anon:NAME] in /proc/PID/maps (the Go runtime names its heap
// this way).
const (
	prSetVMA         = 0x53564d41
	prSetVMAAnonName = 0
)

func (t *Task) prSetVMA(sub, addr, length, nameAddr uint64) uint64 {
	if sub != prSetVMAAnonName {
		return errRet(EINVAL)
	}
	end, ok := vm.CheckRange(addr, length)
	if !ok {
		return errRet(EINVAL)
	}
	name := ""
	if nameAddr != 0 {
		s, err := t.tg.mm.ReadString(nameAddr, 80)
		if err != nil {
			return errRet(EFAULT)
		}
		for _, c := range s {
			// anon_vma_name_valid: printable, and none of \`$[]
			if c < ' ' || c > '~' || strings.ContainsRune("\\`$[]", c) {
				return errRet(EINVAL)
			}
		}
		name = s
	}
	if err := t.tg.mm.NameAnon(addr, end, name); err != nil {
		if errors.Is(err, vm.ErrNoMem) {
			return errRet(ENOMEM)
		}
		return errRet(EBADF) // a file mapping in the range
	}
	return 0
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// commName is the thread's name: its PR_SET_NAME name, or the
// executable's base name (at most 15 bytes, as TASK_COMM_LEN).
func (t *Task) commName() string {
	t.tg.mu.Lock()
	c := t.comm
	t.tg.mu.Unlock()
	if c != "" {
		return c
	}
	name := t.tg.mm.ExePath
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// selfUsage is the process's own resource usage so far.
func (tg *ThreadGroup) selfUsage() rusage {
	ns := tg.k.opts.NsPerInsn
	if ns <= 0 {
		ns = 1
	}
	rss := tg.mm.RSS()
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.pr.maxRSSPages = max(tg.pr.maxRSSPages, rss)
	var n uint64
	for _, r := range tg.retired {
		n += r
	}
	for _, t := range tg.tasks {
		n += t.cpu.Retired()
	}
	return rusage{utimeNs: int64(n) * ns, maxRSS: tg.pr.maxRSSPages, minflt: tg.pr.maxRSSPages}
}

// totalUsage is what wait4 reports for a reaped child: its own usage and
// its reaped descendants'.
func (tg *ThreadGroup) totalUsage() rusage {
	u := tg.selfUsage()
	tg.mu.Lock()
	c := tg.pr.children
	tg.mu.Unlock()
	u.utimeNs += c.utimeNs
	u.minflt += c.minflt
	u.maxRSS = max(u.maxRSS, c.maxRSS)
	return u
}

// addChildUsage records a reaped child's usage (RUSAGE_CHILDREN).
func (tg *ThreadGroup) addChildUsage(c *ThreadGroup) {
	u := c.totalUsage()
	tg.mu.Lock()
	tg.pr.children.utimeNs += u.utimeNs
	tg.pr.children.minflt += u.minflt
	tg.pr.children.maxRSS = max(tg.pr.children.maxRSS, u.maxRSS)
	tg.mu.Unlock()
}

// encode writes a struct rusage (144 bytes on both arches).
func (u rusage) encode() []byte {
	b := make([]byte, 144)
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(u.utimeNs/1e9))
	le.PutUint64(b[8:], uint64(u.utimeNs%1e9/1e3))
	le.PutUint64(b[32:], uint64(u.maxRSS*vm.PageSize/1024))
	le.PutUint64(b[64:], uint64(u.minflt))
	return b
}

func (t *Task) sysGetrusage(who int64, buf uint64) uint64 {
	var u rusage
	switch who {
	case rusageSelf:
		u = t.tg.selfUsage()
	case rusageThread:
		ns := t.tg.k.opts.NsPerInsn
		if ns <= 0 {
			ns = 1
		}
		u = t.tg.selfUsage()
		u.utimeNs = int64(t.cpu.Retired()) * ns
	case rusageChildren:
		t.tg.mu.Lock()
		u = t.tg.pr.children
		t.tg.mu.Unlock()
	default:
		return errRet(EINVAL)
	}
	return errOr0(t.writeBytes(buf, u.encode()))
}

// exitIPC runs as the process's last thread exits, before its address
// space is released: SEM_UNDO adjustments are applied (the address
// space going away detaches its shared memory segments by itself), and
// the peak resident set is recorded for the parent's getrusage.
func (tg *ThreadGroup) exitIPC() {
	tg.selfUsage()
	tg.k.exitSem(tg)
}
