package vm

import (
	"errors"
	"sync/atomic"
)

// Hardware watchpoints (a debugger's Z2/Z3/Z4, gdb's watch/rwatch/awatch)
// on the TLB's slow path.
//
// A TLB with a live WatchSet never caches a translation of a page that a
// watchpoint touches, so every access to such a page misses the inline
// fast path and reaches fill, which compares the access's byte range with
// the watchpoints. A TLB without one pays nothing on hits and one nil
// check per miss. Only guest accesses (between Enter and Leave) are
// checked: like Linux's ptrace watchpoints (perf events with
// exclude_kernel), the kernel's own copies to and from user memory do not
// trigger them.
//
// What a hit does depends on the architecture being modelled:
//   - x86-64 (WatchSet.Before false): the debug exception is a trap after
//     the instruction; the access completes and the hit is recorded in
//     TLB.WatchHit for the caller to report once the instruction retired.
//   - arm64 (Before true): the watchpoint exception is taken before the
//     access, which does not happen: the access fails like a fault with
//     Fault.Watch set, so the instruction has no effect and the pc stays
//     on it (gdb's aarch64 "non-steppable watchpoints": it removes the
//     watchpoint, steps the instruction and inserts it again).

// WatchKind says which accesses a watchpoint catches (bits: write, read).
type WatchKind uint8

const (
	WatchWrite  WatchKind = 1                      // gdb's watch (Z2)
	WatchRead   WatchKind = 2                      // rwatch (Z3)
	WatchAccess           = WatchWrite | WatchRead // awatch (Z4)
)

// Watchpoint is one watched byte range.
type Watchpoint struct {
	Addr, Len uint64
	Kind      WatchKind
}

// Limits on a WatchSet (what a debugger client asks for is untrusted).
const (
	MaxWatchpoints = 64
	MaxWatchLen    = 1 << 20
)

// WatchHit is one access that hit a watchpoint.
type WatchHit struct {
	// Kind is the hit watchpoint's kind (0: no hit).
	Kind WatchKind
	// Addr is the first watched byte the access touched.
	Addr uint64
	// Point is the index of the watchpoint in the set.
	Point int
}

// WatchSet is an immutable set of watchpoints shared by the TLBs of the
// threads being debugged. Replacing it means building a new one and
// calling Disable on the old.
type WatchSet struct {
	points []Watchpoint
	// Before: a hit fails the access (arm64); else it completes and is
	// recorded (x86-64).
	Before bool
	// off is set by Disable: the set no longer catches anything (TLBs
	// still holding it behave as without one).
	off atomic.Bool
}

// NewWatchSet checks the watchpoints and returns their set.
func NewWatchSet(points []Watchpoint, before bool) (*WatchSet, error) {
	if len(points) > MaxWatchpoints {
		return nil, errors.New("too many watchpoints")
	}
	for _, p := range points {
		if p.Len == 0 || p.Len > MaxWatchLen || p.Addr+p.Len < p.Addr || p.Kind == 0 || p.Kind > WatchAccess {
			return nil, errors.New("bad watchpoint")
		}
	}
	return &WatchSet{points: append([]Watchpoint(nil), points...), Before: before}, nil
}

// Disable makes the set inert (the debugger replaced or dropped it).
func (s *WatchSet) Disable() { s.off.Store(true) }

// Points returns the watchpoints.
func (s *WatchSet) Points() []Watchpoint { return s.points }

func (s *WatchSet) live() bool { return s != nil && !s.off.Load() }

// onPage reports whether a watchpoint touches the page vpn.
func (s *WatchSet) onPage(vpn uint64) bool {
	for _, p := range s.points {
		if p.Addr>>PageShift <= vpn && vpn <= (p.Addr+p.Len-1)>>PageShift {
			return true
		}
	}
	return false
}

// match returns the first watchpoint of a kind in k that overlaps
// [addr, addr+n).
func (s *WatchSet) match(addr uint64, n int, k WatchKind) (WatchHit, bool) {
	end := addr + uint64(n)
	for i, p := range s.points {
		if p.Kind&k != 0 && addr < p.Addr+p.Len && p.Addr < end {
			return WatchHit{Kind: p.Kind, Addr: max(addr, p.Addr), Point: i}, true
		}
	}
	return WatchHit{}, false
}

// SetWatch gives the TLB's owner a watchpoint set (nil: none) and drops
// every cached translation, so that watched pages are translated on each
// access from now on. Owner-only, outside Run/Step.
func (t *TLB) SetWatch(s *WatchSet) {
	if t.watch == s {
		return
	}
	t.watch = s
	t.flush(t.mm.gen.Load())
}

// Watch returns the TLB's watchpoint set (nil: none).
func (t *TLB) Watch() *WatchSet { return t.watch }

// watchFill is fill's check of an access of n bytes at addr (on one
// page) of the kinds in k, on a page a live set watches. It reports
// false when the access must fail (a hit with Before: t.Fault is set).
func (t *TLB) watchFill(s *WatchSet, addr uint64, n int, acc Access, k WatchKind) bool {
	if !t.inRun {
		return true
	}
	h, ok := s.match(addr, n, k)
	if !ok {
		return true
	}
	if s.Before {
		t.Fault = Fault{Addr: h.Addr, Access: acc, Mapped: true, Watch: h.Kind}
		return false
	}
	if t.WatchHit.Kind == 0 || (h.Kind&WatchWrite != 0 && k == WatchWrite) {
		t.WatchHit = h
	}
	return true
}
