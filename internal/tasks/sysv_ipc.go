package tasks

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/vm"
)

// System V IPC (ipc/shm.c, ipc/sem.c, ipc/msg.c): shared memory segments,
// semaphore sets and message queues in one IPC namespace per Kernel.
//
// Ids are Linux's shape, seq*32768 + index, with the lowest free index
// and a per-kind sequence number, so a run's ids are deterministic.
//
// A segment's memory is a vm.SharedObject mapped MAP_SHARED by every
// attach (shmat), so fork children share it and /proc/self/maps shows it
// as Linux does ("/SYSV<key> (deleted)", device 00:01, inode = shmid).
// The attach count is not bookkept on the side: it is the number of
// mappings of the object in live address spaces, counted when asked, so
// munmap, exit and exec detach with no hook. A segment removed with
// IPC_RMID lives on (key IPC_PRIVATE, SHM_DEST) until the last detach.
//
// Blocking semop/msgsnd/msgrcv wait through Task.wait on an object's
// generation counter (atomic, so the deterministic scheduler can poll it)
// and its wake channel (closed and replaced on every change).
//
// Lock order: ipcNamespace.mu → Kernel.procMu → ThreadGroup.mu → MM.mu.
// Nothing takes ipcNamespace.mu while holding procMu.

// IPC flags and commands (include/uapi/linux/ipc.h, shm.h, sem.h, msg.h).
const (
	ipcPrivate = 0
	ipcCreat   = 0o1000
	ipcExcl    = 0o2000
	ipcNowait  = 0o4000
	ipcRmid    = 0
	ipcSet     = 1
	ipcStat    = 2
	ipcInfo    = 3
	ipc64      = 0x100

	shmRdonly = 0o10000
	shmRnd    = 0o20000
	shmRemap  = 0o40000
	shmExec   = 0o100000
	shmLock   = 11
	shmUnlock = 12
	shmDest   = 0o1000
	shmLocked = 0o2000
	shmLBA    = vm.PageSize

	semUndo   = 0x1000
	semGetpid = 11
	semGetval = 12
	semGetall = 13
	semGetnc  = 14
	semGetzc  = 15
	semSetval = 16
	semSetall = 17
	semVMX    = 32767
	semMSL    = 32000
	semOPM    = 500

	msgNoerror = 0o10000
	msgExcept  = 0o20000
	msgCopy    = 0o40000
	msgMax     = 8192
	msgMNB     = 16384

	ipcMNI = 32768

	ENOMSG Errno = 42
	EIDRM  Errno = 43
)

// ipcPerm is struct kern_ipc_perm.
type ipcPerm struct {
	id                   int32
	key                  int32
	uid, gid, cuid, cgid uint32
	mode                 uint32
	seq                  uint16
	ctime                int64
}

// ipcObj is what the three kinds share: their permissions and their
// change notification.
type ipcObj struct {
	perm    ipcPerm
	removed atomic.Bool
	gen     atomic.Uint64
	ch      chan struct{} // protected by ipcNamespace.mu
}

// changedLocked records a change and wakes the waiters (ns.mu held).
func (o *ipcObj) changedLocked() {
	o.gen.Add(1)
	if o.ch != nil {
		close(o.ch)
	}
	o.ch = make(chan struct{})
}

type shmSeg struct {
	ipcObj
	size         uint64
	obj          *vm.SharedObject
	atime, dtime int64
	cpid, lpid   int32
	name         string
}

type semVal struct {
	val int32
	pid int32
}

type semSet struct {
	ipcObj
	sems        []semVal
	ncnt, zcnt  []int
	otime       int64
	undoHolders map[*ThreadGroup]bool
}

type ipcMsg struct {
	typ  int64
	data []byte
}

type msgQueue struct {
	ipcObj
	msgs           []ipcMsg
	cbytes, qbytes uint64
	stime, rtime   int64
	lspid, lrpid   int32
}

// ipcNamespace is one kernel's System V IPC objects.
type ipcNamespace struct {
	mu   sync.Mutex
	shm  map[int32]*shmSeg
	sem  map[int32]*semSet
	msg  map[int32]*msgQueue
	seqs [3]uint16
	// undo is each process's semaphore adjustments (SEM_UNDO): set id →
	// per-semaphore adjustment, applied when the process exits.
	undo map[*ThreadGroup]map[int32][]int32
}

// ipcNS returns the kernel's IPC namespace, initialised on first use.
func (k *Kernel) ipcNS() *ipcNamespace {
	ns := &k.ipc
	ns.mu.Lock()
	if ns.shm == nil {
		ns.shm, ns.sem, ns.msg = map[int32]*shmSeg{}, map[int32]*semSet{}, map[int32]*msgQueue{}
		ns.undo = map[*ThreadGroup]map[int32][]int32{}
	}
	ns.mu.Unlock()
	return ns
}

const (
	kindShm = iota
	kindSem
	kindMsg
)

// newID allocates the id of a new object of kind (ns.mu held): the
// lowest free index, with the kind's next sequence number.
func (ns *ipcNamespace) newIDLocked(kind int, used func(idx int32) bool) (int32, uint16, bool) {
	for idx := int32(0); idx < ipcMNI; idx++ {
		if !used(idx) {
			seq := ns.seqs[kind]
			ns.seqs[kind]++ // wraps after 65535 = IPCID_SEQ_MAX, as Linux's ipc_idr_alloc
			return int32(seq)*ipcMNI + idx, seq, true
		}
	}
	return 0, 0, false
}

// ipcPermitted is ipcperms: may the caller access o with the rwx bits of
// flag (root may always).
// lockQueue locks the namespace for one round of msgsnd/msgrcv: q is the
// queue found in the first round (nil before), kept across rounds so a
// queue removed and recreated under the same id is not taken for it. It
// returns with ns.mu held, or unlocked with EINVAL, EIDRM or EACCES.
func (t *Task) lockQueue(ns *ipcNamespace, id int32, q *msgQueue, perm uint32) (*msgQueue, Errno) {
	ns.mu.Lock()
	if q == nil {
		if q = ns.msg[id]; q == nil {
			ns.mu.Unlock()
			return nil, EINVAL
		}
	}
	if q.removed.Load() {
		ns.mu.Unlock()
		return nil, EIDRM
	}
	if !t.ipcPermitted(&q.perm, perm) {
		ns.mu.Unlock()
		return nil, EACCES
	}
	return q, 0
}

func (t *Task) ipcPermitted(p *ipcPerm, flag uint32) bool {
	k := t.tg.k
	uid, gid := k.uid(), k.gid()
	if uid == 0 {
		return true
	}
	req := (flag >> 6) | (flag >> 3) | flag
	granted := p.mode
	switch {
	case uid == p.uid || uid == p.cuid:
		granted >>= 6
	case gid == p.gid || gid == p.cgid:
		granted >>= 3
	}
	return req&^granted&7 == 0
}

// ipcOwner reports whether the caller may IPC_SET/IPC_RMID p.
func (t *Task) ipcOwner(p *ipcPerm) bool {
	uid := t.tg.k.uid()
	return uid == 0 || uid == p.uid || uid == p.cuid
}

func (t *Task) newPerm(key int32, flg uint64, now int64) ipcPerm {
	k := t.tg.k
	return ipcPerm{key: key, uid: k.uid(), gid: k.gid(), cuid: k.uid(), cgid: k.gid(), mode: uint32(flg) & 0o777, ctime: now}
}

// putPerm encodes struct ipc64_perm (48 bytes, the same on both arches).
func putPerm(b []byte, p *ipcPerm) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(p.key))
	le.PutUint32(b[4:], p.uid)
	le.PutUint32(b[8:], p.gid)
	le.PutUint32(b[12:], p.cuid)
	le.PutUint32(b[16:], p.cgid)
	le.PutUint32(b[20:], p.mode)
	le.PutUint16(b[24:], p.seq)
}

// setPerm applies IPC_SET's uid, gid and mode from a guest ipc64_perm.
func setPerm(p *ipcPerm, b []byte, now int64) {
	le := binary.LittleEndian
	p.uid, p.gid = le.Uint32(b[4:]), le.Uint32(b[8:])
	p.mode = p.mode&^0o777 | le.Uint32(b[20:])&0o777
	p.ctime = now
}

func (k *Kernel) nowSec() int64 { return k.realtimeNs() / 1e9 }

// ipcCmd strips IPC_64 from a ctl command (glibc passes it).
func ipcCmd(cmd uint64) int { return int(cmd &^ ipc64) }

// ipcUnsupported reports a ctl command uvm does not implement.
func (t *Task) ipcUnsupported(what string, cmd int) uint64 {
	name := fmt.Sprintf("%s cmd %d", what, cmd)
	if t.tg.k.noteUnimplemented(name) {
		t.tg.k.logf("unimplemented %s", name)
	}
	return errRet(EINVAL)
}

func init() {
	registerSyscall("shmget", func(t *Task, a [6]uint64) uint64 { return t.sysShmget(int32(a[0]), a[1], a[2]) })
	registerSyscall("shmat", func(t *Task, a [6]uint64) uint64 { return t.sysShmat(int32(a[0]), a[1], a[2]) })
	registerSyscall("shmdt", func(t *Task, a [6]uint64) uint64 { return t.sysShmdt(a[0]) })
	registerSyscall("shmctl", func(t *Task, a [6]uint64) uint64 { return t.sysShmctl(int32(a[0]), ipcCmd(a[1]), a[2]) })
	registerSyscall("semget", func(t *Task, a [6]uint64) uint64 { return t.sysSemget(int32(a[0]), int64(int32(a[1])), a[2]) })
	registerSyscall("semop", func(t *Task, a [6]uint64) uint64 { return t.sysSemtimedop(int32(a[0]), a[1], a[2], 0) })
	registerSyscall("semtimedop", func(t *Task, a [6]uint64) uint64 { return t.sysSemtimedop(int32(a[0]), a[1], a[2], a[3]) })
	registerSyscall("semctl", func(t *Task, a [6]uint64) uint64 {
		return t.sysSemctl(int32(a[0]), int64(int32(a[1])), ipcCmd(a[2]), a[3])
	})
	registerSyscall("msgget", func(t *Task, a [6]uint64) uint64 { return t.sysMsgget(int32(a[0]), a[1]) })
	registerSyscall("msgsnd", func(t *Task, a [6]uint64) uint64 { return t.sysMsgsnd(int32(a[0]), a[1], a[2], a[3]) })
	registerSyscall("msgrcv", func(t *Task, a [6]uint64) uint64 {
		return t.sysMsgrcv(int32(a[0]), a[1], a[2], int64(a[3]), a[4])
	})
	registerSyscall("msgctl", func(t *Task, a [6]uint64) uint64 { return t.sysMsgctl(int32(a[0]), ipcCmd(a[1]), a[2]) })
}

// ---- shared memory ----

// shmNattch counts the attaches of s: its mappings in live address
// spaces (each run of contiguous areas of the object counts once).
func (k *Kernel) shmNattch(obj *vm.SharedObject) int {
	k.procMu.Lock()
	tgs := make([]*ThreadGroup, 0, len(k.procs))
	for _, tg := range k.procs {
		if !tg.proc.zombie {
			tgs = append(tgs, tg)
		}
	}
	k.procMu.Unlock()
	seen := map[*vm.MM]bool{}
	n := 0
	for _, tg := range tgs {
		tg.mu.Lock()
		mm := tg.mm
		tg.mu.Unlock()
		if seen[mm] {
			continue
		}
		seen[mm] = true
		var prev vm.VMA
		for _, v := range mm.VMAs() {
			// A split attach (mprotect of part of it) is still one.
			cont := prev.Obj == obj && prev.End == v.Start && prev.Offset+(prev.End-prev.Start) == v.Offset
			if v.Obj == obj && !cont {
				n++
			}
			prev = v
		}
	}
	return n
}

// shmLookupLocked finds segment id, destroying it first when it was
// removed and nobody has it attached any more.
func (t *Task) shmLookupLocked(ns *ipcNamespace, id int32) (*shmSeg, Errno) {
	s := ns.shm[id]
	if s == nil {
		return nil, EINVAL
	}
	if s.perm.mode&shmDest != 0 && t.tg.k.shmNattch(s.obj) == 0 {
		delete(ns.shm, id)
		return nil, EINVAL
	}
	return s, 0
}

// shmReapLocked destroys every removed segment without attaches.
func (t *Task) shmReapLocked(ns *ipcNamespace) {
	for id, s := range ns.shm {
		if s.perm.mode&shmDest != 0 && t.tg.k.shmNattch(s.obj) == 0 {
			delete(ns.shm, id)
		}
	}
}

// shmByObjLocked finds the segment whose memory is obj.
func (ns *ipcNamespace) shmByObjLocked(obj *vm.SharedObject) *shmSeg {
	if obj == nil {
		return nil
	}
	for _, s := range ns.shm {
		if s.obj == obj {
			return s
		}
	}
	return nil
}

func (t *Task) sysShmget(key int32, size, flg uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	t.shmReapLocked(ns)
	if key != ipcPrivate {
		for id, s := range ns.shm {
			if s.perm.key != key || s.perm.mode&shmDest != 0 {
				continue
			}
			if flg&(ipcCreat|ipcExcl) == ipcCreat|ipcExcl {
				return errRet(EEXIST)
			}
			if !t.ipcPermitted(&s.perm, uint32(flg)&0o777) {
				return errRet(EACCES)
			}
			if size > s.size {
				return errRet(EINVAL)
			}
			return uint64(id)
		}
		if flg&ipcCreat == 0 {
			return errRet(ENOENT)
		}
	}
	if size < 1 || size > vm.TaskSize {
		return errRet(EINVAL)
	}
	if len(ns.shm) >= 4096 {
		return errRet(ENOSPC)
	}
	id, seq, ok := ns.newIDLocked(kindShm, func(idx int32) bool {
		for id := range ns.shm {
			if id%ipcMNI == idx {
				return true
			}
		}
		return false
	})
	if !ok {
		return errRet(ENOSPC)
	}
	s := &shmSeg{size: size, obj: vm.NewSharedObject(nil), cpid: t.tg.pid,
		name: fmt.Sprintf("/SYSV%08x (deleted)", uint32(key))}
	s.perm = t.newPerm(key, flg, now)
	s.perm.id, s.perm.seq = id, seq
	ns.shm[id] = s
	return uint64(id)
}

func (t *Task) sysShmat(id int32, addr, flg uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	s, e := t.shmLookupLocked(ns, id)
	if e != 0 {
		return errRet(e)
	}
	prot := vm.ProtRead
	acc := uint32(0o4)
	if flg&shmRdonly == 0 {
		prot |= vm.ProtWrite
		acc |= 0o2
	}
	if flg&shmExec != 0 {
		prot |= vm.ProtExec
		acc |= 0o1
	}
	if !t.ipcPermitted(&s.perm, acc<<6|acc<<3|acc) {
		return errRet(EACCES)
	}
	if addr&(shmLBA-1) != 0 {
		if flg&shmRnd == 0 {
			return errRet(EINVAL)
		}
		addr &^= shmLBA - 1
		if addr == 0 && flg&shmRemap != 0 {
			return errRet(EINVAL)
		}
	}
	length := vm.PageAlign(s.size)
	if !t.checkAS(length) {
		return errRet(ENOMEM)
	}
	v := vm.VMA{Prot: prot, Shared: true, Obj: s.obj, Name: s.name, Dev: 1, Inode: uint64(id)}
	mm := t.tg.mm
	switch {
	case addr == 0:
		v.End = length
		a, err := mm.MapAnywhere(0, v)
		if err != nil {
			return errRet(ENOMEM)
		}
		addr = a
	default:
		end, ok := vm.CheckRange(addr, length)
		if !ok {
			return errRet(EINVAL)
		}
		v.Start, v.End = addr, end
		if flg&shmRemap != 0 {
			t.tg.uprobeMunmap(addr, end)
			if mm.Map(v) != nil {
				return errRet(ENOMEM)
			}
		} else if mm.MapNoReplace(v) != nil {
			return errRet(EINVAL)
		}
	}
	s.atime, s.lpid = now, t.tg.pid
	return addr
}

func (t *Task) sysShmdt(addr uint64) uint64 {
	if addr&vm.PageMask != 0 {
		return errRet(EINVAL)
	}
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	mm := t.tg.mm
	vmas := mm.VMAs()
	var s *shmSeg
	for _, v := range vmas {
		if v.Start < addr || v.Start-addr != v.Offset {
			continue
		}
		if s = ns.shmByObjLocked(v.Obj); s != nil {
			break
		}
	}
	if s == nil {
		return errRet(EINVAL)
	}
	end := addr + vm.PageAlign(s.size)
	for _, v := range vmas {
		if v.Obj == s.obj && v.Start < end && v.End > addr {
			lo, hi := max(v.Start, addr), min(v.End, end)
			t.tg.uprobeMunmap(lo, hi)
			mm.Unmap(lo, hi)
		}
	}
	s.dtime, s.lpid = now, t.tg.pid
	t.shmReapLocked(ns)
	return 0
}

func (t *Task) sysShmctl(id int32, cmd int, buf uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	switch cmd {
	case ipcInfo:
		// struct shminfo64: shmmax, shmmin, shmmni, shmseg, shmall.
		b := make([]byte, 72)
		le := binary.LittleEndian
		le.PutUint64(b[0:], vm.TaskSize)
		le.PutUint64(b[8:], 1)
		le.PutUint64(b[16:], 4096)
		le.PutUint64(b[24:], 4096)
		le.PutUint64(b[32:], vm.TaskSize/vm.PageSize)
		if e := t.writeBytes(buf, b); e != 0 {
			return errRet(e)
		}
		ns.mu.Lock()
		defer ns.mu.Unlock()
		hi := int32(0)
		for id := range ns.shm {
			hi = max(hi, id%ipcMNI)
		}
		return uint64(hi)
	case ipcStat, ipcSet, ipcRmid, shmLock, shmUnlock:
	default:
		return t.ipcUnsupported("shmctl", cmd)
	}
	var in []byte
	if cmd == ipcSet {
		var e Errno
		if in, e = t.readBuf(buf, 48); e != 0 {
			return errRet(e)
		}
	}
	ns.mu.Lock()
	s, e := t.shmLookupLocked(ns, id)
	if e != 0 {
		ns.mu.Unlock()
		return errRet(e)
	}
	switch cmd {
	case ipcStat:
		if !t.ipcPermitted(&s.perm, 0o444) {
			ns.mu.Unlock()
			return errRet(EACCES)
		}
		b := make([]byte, 112)
		le := binary.LittleEndian
		putPerm(b, &s.perm)
		le.PutUint64(b[48:], s.size)
		le.PutUint64(b[56:], uint64(s.atime))
		le.PutUint64(b[64:], uint64(s.dtime))
		le.PutUint64(b[72:], uint64(s.perm.ctime))
		le.PutUint32(b[80:], uint32(s.cpid))
		le.PutUint32(b[84:], uint32(s.lpid))
		obj := s.obj
		ns.mu.Unlock()
		le.PutUint64(b[88:], uint64(t.tg.k.shmNattch(obj)))
		return errOr0(t.writeBytes(buf, b))
	case ipcSet:
		if !t.ipcOwner(&s.perm) {
			ns.mu.Unlock()
			return errRet(EPERM)
		}
		setPerm(&s.perm, in, now)
	case ipcRmid:
		if !t.ipcOwner(&s.perm) {
			ns.mu.Unlock()
			return errRet(EPERM)
		}
		s.perm.mode |= shmDest
		s.perm.key = ipcPrivate
		t.shmReapLocked(ns)
	case shmLock:
		s.perm.mode |= shmLocked
	case shmUnlock:
		s.perm.mode &^= shmLocked
	}
	ns.mu.Unlock()
	return 0
}

// ---- semaphores ----

func (t *Task) sysSemget(key int32, nsems int64, flg uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if nsems < 0 || nsems > semMSL {
		return errRet(EINVAL)
	}
	if key != ipcPrivate {
		for id, s := range ns.sem {
			if s.perm.key != key {
				continue
			}
			if flg&(ipcCreat|ipcExcl) == ipcCreat|ipcExcl {
				return errRet(EEXIST)
			}
			if !t.ipcPermitted(&s.perm, uint32(flg)&0o777) {
				return errRet(EACCES)
			}
			if nsems > int64(len(s.sems)) {
				return errRet(EINVAL)
			}
			return uint64(id)
		}
		if flg&ipcCreat == 0 {
			return errRet(ENOENT)
		}
	}
	if nsems == 0 {
		return errRet(EINVAL)
	}
	if len(ns.sem) >= 32000 {
		return errRet(ENOSPC)
	}
	id, seq, ok := ns.newIDLocked(kindSem, func(idx int32) bool {
		for id := range ns.sem {
			if id%ipcMNI == idx {
				return true
			}
		}
		return false
	})
	if !ok {
		return errRet(ENOSPC)
	}
	s := &semSet{sems: make([]semVal, nsems), ncnt: make([]int, nsems), zcnt: make([]int, nsems), undoHolders: map[*ThreadGroup]bool{}}
	s.perm = t.newPerm(key, flg, now)
	s.perm.id, s.perm.seq = id, seq
	s.ch = make(chan struct{})
	ns.sem[id] = s
	return uint64(id)
}

type sembuf struct {
	num uint16
	op  int16
	flg int16
}

func (t *Task) sysSemtimedop(id int32, sopsAddr, nsops, tsAddr uint64) uint64 {
	if nsops == 0 {
		return errRet(EINVAL)
	}
	if nsops > semOPM {
		return errRet(E2BIG)
	}
	raw, e := t.readBuf(sopsAddr, nsops*6)
	if e != 0 {
		return errRet(e)
	}
	sops := make([]sembuf, nsops)
	alter := false
	for i := range sops {
		b := raw[i*6:]
		sops[i] = sembuf{binary.LittleEndian.Uint16(b), int16(binary.LittleEndian.Uint16(b[2:])), int16(binary.LittleEndian.Uint16(b[4:]))}
		alter = alter || sops[i].op != 0
	}
	k := t.tg.k
	deadline := int64(-1)
	if tsAddr != 0 {
		ns, e := t.readTimespec(tsAddr)
		if e != 0 {
			return errRet(e)
		}
		deadline = k.uptimeNs() + ns
	}
	ipc := k.ipcNS()
	var set *semSet
	for {
		now := k.nowSec()
		ipc.mu.Lock()
		if set == nil {
			set = ipc.sem[id]
			if set == nil {
				ipc.mu.Unlock()
				return errRet(EINVAL)
			}
		} else if set.removed.Load() {
			ipc.mu.Unlock()
			return errRet(EIDRM)
		}
		acc := uint32(0o444)
		if alter {
			acc = 0o666
		}
		if !t.ipcPermitted(&set.perm, acc) {
			ipc.mu.Unlock()
			return errRet(EACCES)
		}
		for _, op := range sops {
			if int(op.num) >= len(set.sems) {
				ipc.mu.Unlock()
				return errRet(EFBIG)
			}
		}
		blockOn, e := t.semTryLocked(ipc, set, sops, now)
		if e != 0 || blockOn == nil {
			ipc.mu.Unlock()
			return errOr0(e)
		}
		if blockOn.flg&ipcNowait != 0 {
			ipc.mu.Unlock()
			return errRet(EAGAIN)
		}
		// Sleep until the set changes.
		if blockOn.op == 0 {
			set.zcnt[blockOn.num]++
		} else {
			set.ncnt[blockOn.num]++
		}
		gen, ch := set.gen.Load(), set.ch
		ipc.mu.Unlock()
		timeout := int64(-1)
		if deadline >= 0 {
			if timeout = deadline - k.uptimeNs(); timeout <= 0 {
				timeout = 0
			}
		}
		timedOut := false
		if timeout != 0 {
			timedOut = t.wait(func() bool { return set.gen.Load() != gen || set.removed.Load() },
				func() <-chan struct{} { return ch }, timeout)
		} else {
			timedOut = true
		}
		ipc.mu.Lock()
		if blockOn.op == 0 {
			set.zcnt[blockOn.num]--
		} else {
			set.ncnt[blockOn.num]--
		}
		changed := set.gen.Load() != gen || set.removed.Load()
		ipc.mu.Unlock()
		switch {
		case t.killed.Load():
			return errRet(EINTR)
		case changed:
			continue
		case t.sigPending():
			return errRet(EINTR)
		case timedOut || deadline >= 0 && k.uptimeNs() >= deadline:
			return errRet(EAGAIN)
		}
	}
}

// semTryLocked applies sops atomically if none would block; it returns
// the operation that blocks, or the error (ERANGE).
func (t *Task) semTryLocked(ipc *ipcNamespace, set *semSet, sops []sembuf, now int64) (*sembuf, Errno) {
	vals := make([]int32, len(set.sems))
	for i, s := range set.sems {
		vals[i] = s.val
	}
	for i := range sops {
		op := &sops[i]
		v := vals[op.num]
		switch {
		case op.op > 0:
			if v+int32(op.op) > semVMX {
				return nil, ERANGE
			}
		case op.op == 0:
			if v != 0 {
				return op, 0
			}
		case v+int32(op.op) < 0:
			return op, 0
		}
		vals[op.num] = v + int32(op.op)
	}
	// Adjustments for SEM_UNDO, checked before anything changes.
	var adj []int32
	for _, op := range sops {
		if op.flg&semUndo != 0 && op.op != 0 {
			if adj == nil {
				m := ipc.undo[t.tg]
				if m == nil {
					m = map[int32][]int32{}
					ipc.undo[t.tg] = m
				}
				if m[set.perm.id] == nil {
					m[set.perm.id] = make([]int32, len(set.sems))
				}
				adj = append([]int32(nil), m[set.perm.id]...)
			}
			adj[op.num] -= int32(op.op)
			if adj[op.num] < -semVMX-1 || adj[op.num] > semVMX {
				return nil, ERANGE
			}
		}
	}
	if adj != nil {
		ipc.undo[t.tg][set.perm.id] = adj
		set.undoHolders[t.tg] = true
	}
	for i := range sops {
		set.sems[sops[i].num].pid = t.tg.pid
	}
	for i, v := range vals {
		set.sems[i].val = v
	}
	set.otime = now
	set.changedLocked()
	return nil, 0
}

// clearSemUndoLocked drops every process's adjustment for semaphore num
// of set (all of them when num < 0): SETVAL/SETALL.
func (ipc *ipcNamespace) clearSemUndoLocked(set *semSet, num int) {
	for tg := range set.undoHolders {
		a := ipc.undo[tg][set.perm.id]
		for i := range a {
			if num < 0 || i == num {
				a[i] = 0
			}
		}
	}
}

// exitSem applies tg's SEM_UNDO adjustments (exit_sem), clamping each
// value to [0, SEMVMX] as Linux does.
func (k *Kernel) exitSem(tg *ThreadGroup) {
	ipc := &k.ipc
	ipc.mu.Lock()
	defer ipc.mu.Unlock()
	m := ipc.undo[tg]
	if m == nil {
		return
	}
	delete(ipc.undo, tg)
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		set := ipc.sem[id]
		if set == nil {
			continue
		}
		delete(set.undoHolders, tg)
		changed := false
		for i, a := range m[id] {
			if a == 0 {
				continue
			}
			v := min(max(set.sems[i].val+a, 0), semVMX)
			set.sems[i] = semVal{val: v, pid: tg.pid}
			changed = true
		}
		if changed {
			set.changedLocked()
		}
	}
}

func (t *Task) sysSemctl(id int32, num int64, cmd int, arg uint64) uint64 {
	now := t.tg.k.nowSec()
	ipc := t.tg.k.ipcNS()
	lay := t.tg.arch.semid64
	switch cmd {
	case ipcStat, ipcSet, ipcRmid, semGetpid, semGetval, semGetall, semGetnc, semGetzc, semSetval, semSetall:
	default:
		return t.ipcUnsupported("semctl", cmd)
	}
	var in []byte
	switch cmd {
	case ipcSet:
		var e Errno
		if in, e = t.readBuf(arg, 48); e != 0 {
			return errRet(e)
		}
	case semSetall:
		ipc.mu.Lock()
		set := ipc.sem[id]
		n := 0
		if set != nil {
			n = len(set.sems)
		}
		ipc.mu.Unlock()
		var e Errno
		if in, e = t.readBuf(arg, uint64(n)*2); e != 0 {
			return errRet(e)
		}
	}
	ipc.mu.Lock()
	set := ipc.sem[id]
	if set == nil {
		ipc.mu.Unlock()
		return errRet(EINVAL)
	}
	validNum := num >= 0 && num < int64(len(set.sems))
	var out []byte
	var ret uint64
	e := Errno(0)
	switch cmd {
	case ipcStat:
		if !t.ipcPermitted(&set.perm, 0o444) {
			e = EACCES
			break
		}
		le := binary.LittleEndian
		out = make([]byte, lay.size)
		le.PutUint64(out[lay.otime:], uint64(set.otime))
		le.PutUint64(out[lay.ctime:], uint64(set.perm.ctime))
		le.PutUint64(out[lay.nsems:], uint64(len(set.sems)))
		putPerm(out, &set.perm)
	case ipcSet:
		if !t.ipcOwner(&set.perm) {
			e = EPERM
			break
		}
		setPerm(&set.perm, in, now)
	case ipcRmid:
		if !t.ipcOwner(&set.perm) {
			e = EPERM
			break
		}
		delete(ipc.sem, id)
		for tg := range set.undoHolders {
			delete(ipc.undo[tg], id)
		}
		set.removed.Store(true)
		set.changedLocked()
	case semGetval, semGetpid, semGetnc, semGetzc:
		if !t.ipcPermitted(&set.perm, 0o444) {
			e = EACCES
			break
		}
		if !validNum {
			e = EINVAL
			break
		}
		switch cmd {
		case semGetval:
			ret = uint64(set.sems[num].val)
		case semGetpid:
			ret = uint64(set.sems[num].pid)
		case semGetnc:
			ret = uint64(set.ncnt[num])
		case semGetzc:
			ret = uint64(set.zcnt[num])
		}
	case semGetall:
		if !t.ipcPermitted(&set.perm, 0o444) {
			e = EACCES
			break
		}
		out = make([]byte, 2*len(set.sems))
		for i, s := range set.sems {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(s.val))
		}
	case semSetval:
		val := int32(arg)
		switch {
		case !t.ipcPermitted(&set.perm, 0o222):
			e = EACCES
		case !validNum:
			e = EINVAL
		case val < 0 || val > semVMX:
			e = ERANGE
		default:
			set.sems[num] = semVal{val: val, pid: t.tg.pid}
			ipc.clearSemUndoLocked(set, int(num))
			set.perm.ctime = now
			set.changedLocked()
		}
	case semSetall:
		if !t.ipcPermitted(&set.perm, 0o222) {
			e = EACCES
			break
		}
		if len(in) != 2*len(set.sems) {
			e = EINVAL // the set changed under us
			break
		}
		for i := range set.sems {
			if binary.LittleEndian.Uint16(in[2*i:]) > semVMX {
				e = ERANGE
			}
		}
		if e != 0 {
			break
		}
		for i := range set.sems {
			set.sems[i] = semVal{val: int32(binary.LittleEndian.Uint16(in[2*i:])), pid: t.tg.pid}
		}
		ipc.clearSemUndoLocked(set, -1)
		set.perm.ctime = now
		set.changedLocked()
	}
	ipc.mu.Unlock()
	if e != 0 {
		return errRet(e)
	}
	if out != nil {
		if e := t.writeBytes(arg, out); e != 0 {
			return errRet(e)
		}
	}
	return ret
}

// ---- message queues ----

func (t *Task) sysMsgget(key int32, flg uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if key != ipcPrivate {
		for id, q := range ns.msg {
			if q.perm.key != key {
				continue
			}
			if flg&(ipcCreat|ipcExcl) == ipcCreat|ipcExcl {
				return errRet(EEXIST)
			}
			if !t.ipcPermitted(&q.perm, uint32(flg)&0o777) {
				return errRet(EACCES)
			}
			return uint64(id)
		}
		if flg&ipcCreat == 0 {
			return errRet(ENOENT)
		}
	}
	if len(ns.msg) >= 32000 {
		return errRet(ENOSPC)
	}
	id, seq, ok := ns.newIDLocked(kindMsg, func(idx int32) bool {
		for id := range ns.msg {
			if id%ipcMNI == idx {
				return true
			}
		}
		return false
	})
	if !ok {
		return errRet(ENOSPC)
	}
	q := &msgQueue{qbytes: msgMNB}
	q.perm = t.newPerm(key, flg, now)
	q.perm.id, q.perm.seq = id, seq
	q.ch = make(chan struct{})
	ns.msg[id] = q
	return uint64(id)
}

// msgWait sleeps until q changes; it returns the errno that ends the
// call, or 0 to try again.
func (t *Task) msgWait(ns *ipcNamespace, q *msgQueue, gen uint64, ch chan struct{}, restart Errno) Errno {
	t.wait(func() bool { return q.gen.Load() != gen || q.removed.Load() }, func() <-chan struct{} { return ch }, -1)
	switch {
	case q.removed.Load():
		return EIDRM
	case t.killed.Load():
		return EINTR
	case q.gen.Load() != gen:
		return 0
	case t.sigPending():
		return restart
	}
	return 0
}

func (t *Task) sysMsgsnd(id int32, msgp, size, flg uint64) uint64 {
	if int64(size) < 0 || size > msgMax {
		return errRet(EINVAL)
	}
	b, e := t.readBuf(msgp, 8+size)
	if e != 0 {
		return errRet(e)
	}
	typ := int64(binary.LittleEndian.Uint64(b))
	if typ <= 0 {
		return errRet(EINVAL)
	}
	data := b[8:]
	k := t.tg.k
	ns := k.ipcNS()
	var q *msgQueue
	for {
		now := k.nowSec()
		var e Errno
		if q, e = t.lockQueue(ns, id, q, 0o222); e != 0 {
			return errRet(e)
		}
		if q.cbytes+size <= q.qbytes && uint64(len(q.msgs))+1 <= q.qbytes {
			q.msgs = append(q.msgs, ipcMsg{typ: typ, data: data})
			q.cbytes += size
			q.stime, q.lspid = now, t.tg.pid
			q.changedLocked()
			ns.mu.Unlock()
			return 0
		}
		if flg&ipcNowait != 0 {
			ns.mu.Unlock()
			return errRet(EAGAIN)
		}
		gen, ch := q.gen.Load(), q.ch
		ns.mu.Unlock()
		if e := t.msgWait(ns, q, gen, ch, Errno(erestartnohand)); e != 0 {
			return errRet(e)
		}
	}
}

// msgMatch is the index of the message msgrcv takes, or -1.
func msgMatch(msgs []ipcMsg, typ int64, except bool) int {
	switch {
	case typ == 0:
		if len(msgs) > 0 {
			return 0
		}
	case typ > 0:
		for i, m := range msgs {
			if (m.typ == typ) != except {
				return i
			}
		}
	default:
		best := -1
		for i, m := range msgs {
			if m.typ <= -typ && (best < 0 || m.typ < msgs[best].typ) {
				best = i
			}
		}
		return best
	}
	return -1
}

func (t *Task) sysMsgrcv(id int32, msgp, size uint64, typ int64, flg uint64) uint64 {
	if int64(size) < 0 {
		return errRet(EINVAL)
	}
	if flg&msgCopy != 0 {
		if t.tg.k.noteUnimplemented("msgrcv MSG_COPY") {
			t.tg.k.logf("unimplemented msgrcv MSG_COPY (checkpoint/restore)")
		}
		return errRet(ENOSYS)
	}
	k := t.tg.k
	ns := k.ipcNS()
	var q *msgQueue
	for {
		now := k.nowSec()
		var e Errno
		if q, e = t.lockQueue(ns, id, q, 0o444); e != 0 {
			return errRet(e)
		}
		if i := msgMatch(q.msgs, typ, flg&msgExcept != 0); i >= 0 {
			m := q.msgs[i]
			if uint64(len(m.data)) > size && flg&msgNoerror == 0 {
				ns.mu.Unlock()
				return errRet(E2BIG)
			}
			n := min(uint64(len(m.data)), size)
			out := make([]byte, 8+n)
			binary.LittleEndian.PutUint64(out, uint64(m.typ))
			copy(out[8:], m.data[:n])
			if e := t.writeBytes(msgp, out); e != 0 {
				ns.mu.Unlock()
				return errRet(e)
			}
			q.msgs = append(q.msgs[:i:i], q.msgs[i+1:]...)
			q.cbytes -= uint64(len(m.data))
			q.rtime, q.lrpid = now, t.tg.pid
			q.changedLocked()
			ns.mu.Unlock()
			return n
		}
		if flg&ipcNowait != 0 {
			ns.mu.Unlock()
			return errRet(ENOMSG)
		}
		gen, ch := q.gen.Load(), q.ch
		ns.mu.Unlock()
		if e := t.msgWait(ns, q, gen, ch, Errno(erestartnohand)); e != 0 {
			return errRet(e)
		}
	}
}

func (t *Task) sysMsgctl(id int32, cmd int, buf uint64) uint64 {
	now := t.tg.k.nowSec()
	ns := t.tg.k.ipcNS()
	switch cmd {
	case ipcStat, ipcSet, ipcRmid:
	default:
		return t.ipcUnsupported("msgctl", cmd)
	}
	var in []byte
	if cmd == ipcSet {
		var e Errno
		if in, e = t.readBuf(buf, 120); e != 0 {
			return errRet(e)
		}
	}
	ns.mu.Lock()
	q := ns.msg[id]
	if q == nil {
		ns.mu.Unlock()
		return errRet(EINVAL)
	}
	le := binary.LittleEndian
	var out []byte
	e := Errno(0)
	switch cmd {
	case ipcStat:
		if !t.ipcPermitted(&q.perm, 0o444) {
			e = EACCES
			break
		}
		out = make([]byte, 120)
		putPerm(out, &q.perm)
		le.PutUint64(out[48:], uint64(q.stime))
		le.PutUint64(out[56:], uint64(q.rtime))
		le.PutUint64(out[64:], uint64(q.perm.ctime))
		le.PutUint64(out[72:], q.cbytes)
		le.PutUint64(out[80:], uint64(len(q.msgs)))
		le.PutUint64(out[88:], q.qbytes)
		le.PutUint32(out[96:], uint32(q.lspid))
		le.PutUint32(out[100:], uint32(q.lrpid))
	case ipcSet:
		qb := le.Uint64(in[88:])
		switch {
		case !t.ipcOwner(&q.perm):
			e = EPERM
		case qb > msgMNB && t.tg.k.uid() != 0:
			e = EPERM
		default:
			setPerm(&q.perm, in, now)
			q.qbytes = qb
			q.changedLocked()
		}
	case ipcRmid:
		if !t.ipcOwner(&q.perm) {
			e = EPERM
			break
		}
		delete(ns.msg, id)
		q.removed.Store(true)
		q.changedLocked()
	}
	ns.mu.Unlock()
	if e != 0 {
		return errRet(e)
	}
	if out != nil {
		return errOr0(t.writeBytes(buf, out))
	}
	return 0
}
