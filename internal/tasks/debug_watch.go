package tasks

import (
	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Hardware watchpoints of the debugger (gdb's watch/rwatch/awatch: Z2,
// Z3, Z4) over the TLB's watched pages (vm/watch.go). The debugger owns
// one vm.WatchSet, replaced (the old one disabled) whenever a watchpoint
// is inserted or removed; each traced thread hands the current set to
// its own TLB at its gate, so the set is only ever installed by the
// TLB's owner. While any watchpoint exists the traced threads execute
// one instruction at a time (as with breakpoints), and a hit stops the
// thread as the modelled hardware does:
//   - x86-64: after the accessing instruction retired (a debug trap);
//     the stop reports the pc of the next instruction.
//   - arm64: before the access; the instruction has no effect and the pc
//     stays on it (gdb steps it with its watchpoints removed).
//
// Like Linux's ptrace watchpoints, accesses the kernel makes for a
// syscall (read(2) into a watched buffer) do not trigger.

// watchState is the debugger's watchpoint list (protected by
// Debugger.mu) behind Debugger.watch.
type watchState struct {
	points []vm.Watchpoint // in insertion order; gdb may insert one twice
}

// SetWatchpoint inserts or removes a watchpoint of kind on [addr,
// addr+length). Called while the process is stopped.
func (d *Debugger) SetWatchpoint(kind vm.WatchKind, addr, length uint64, insert bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	pts := append([]vm.Watchpoint(nil), d.wstate.points...)
	w := vm.Watchpoint{Addr: addr, Len: length, Kind: kind}
	if insert {
		pts = append(pts, w)
	} else {
		for i, p := range pts {
			if p == w {
				pts = append(pts[:i], pts[i+1:]...)
				break
			}
		}
	}
	var set *vm.WatchSet
	if len(pts) > 0 {
		var err error
		if set, err = vm.NewWatchSet(pts, d.Arch() == vm.ArchARM64); err != nil {
			return err
		}
	}
	d.wstate.points = pts
	if old := d.watch.Swap(set); old != nil {
		old.Disable()
	}
	return nil
}

// dropWatchpointsLocked removes every watchpoint (Detach).
func (d *Debugger) dropWatchpointsLocked() {
	d.wstate.points = nil
	if old := d.watch.Swap(nil); old != nil {
		old.Disable()
	}
}

// syncWatch installs the debugger's current watchpoint set in t's TLB
// (t is traced and runs this itself, outside Run/Step).
func (d *Debugger) syncWatch(t *Task) {
	t.cpu.TLB().SetWatch(d.watch.Load())
}

// watchBreak is the DebugStop.Break of a watchpoint kind (gdb's Z type).
func watchBreak(k vm.WatchKind) int {
	switch k {
	case vm.WatchWrite:
		return 2
	case vm.WatchRead:
		return 3
	}
	return 4
}

// stepWatched executes one instruction of traced thread t and reports a
// watchpoint it hit. hit: a stop was reported (the thread has been
// resumed since); with ex a fault, the instruction did not execute.
func (t *Task) stepWatched(d *Debugger) (ex vm.Exit, hit bool) {
	tlb := t.cpu.TLB()
	if tlb.Watch() == nil {
		return t.cpu.Step(), false
	}
	tlb.WatchHit = vm.WatchHit{}
	ex = t.cpu.Step()
	var st DebugStop
	switch {
	case ex.Reason == vm.ExitFault && ex.Fault.Watch != 0: // arm64: before the access
		st = DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: watchBreak(ex.Fault.Watch), WatchAddr: ex.Fault.Addr}
	case tlb.WatchHit.Kind != 0 && ex.Reason != vm.ExitFault: // x86-64: after the instruction
		st = DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: watchBreak(tlb.WatchHit.Kind), WatchAddr: tlb.WatchHit.Addr}
		tlb.WatchHit = vm.WatchHit{}
	default:
		return ex, false
	}
	if g := d.rev.goal.Load(); g != nil {
		return t.replayWatch(d, g, ex, st), false // debug_reverse.go
	}
	d.report(t, st, true, false)
	return ex, true
}

// debugWatchFault handles a watchpoint fault outside debugStep (an
// instruction executed out of line for a uprobe): the thread stops for
// the debugger if it is traced, then the instruction is retried.
func (t *Task) debugWatchFault(ex vm.Exit) {
	d := t.tg.k.dbg
	if d == nil || !d.on.Load() || !d.traced(t) {
		t.cpu.TLB().SetWatch(nil)
		return
	}
	d.report(t, DebugStop{Tid: t.tid, Signal: int(signals.SIGTRAP), Break: watchBreak(ex.Fault.Watch), WatchAddr: ex.Fault.Addr}, false, false)
	d.syncWatch(t)
}
