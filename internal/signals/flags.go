package signals

import "sync/atomic"

// Thread-flag bits (masks, Linux's _TIF_*). Other packages may define more
// bits of type uint32 above the ones named here (bits 0..7 are reserved to
// this package).
const (
	TIF_SIGPENDING    uint32 = 1 << 0 // a signal may be deliverable: run the signal path
	TIF_NOTIFY_RESUME uint32 = 1 << 1 // work to do before returning to the guest
	TIF_UPROBE        uint32 = 1 << 2 // a uprobe breakpoint/single-step needs handling
	TIF_NEED_RESCHED  uint32 = 1 << 3 // yield the CPU (scheduler)
)

// ThreadFlags is a thread's flag word (thread_info.flags): set from any
// goroutine, tested by the thread's run loop once per exit from the
// interpreter. The zero value has no flags set.
type ThreadFlags struct {
	v atomic.Uint32
}

// Set sets the bits of mask.
func (f *ThreadFlags) Set(mask uint32) { f.v.Or(mask) }

// Clear clears the bits of mask.
func (f *ThreadFlags) Clear(mask uint32) { f.v.And(^mask) }

// Load returns the whole word.
func (f *ThreadFlags) Load() uint32 { return f.v.Load() }

// Test reports whether any bit of mask is set.
func (f *ThreadFlags) Test(mask uint32) bool { return f.v.Load()&mask != 0 }

// TestAndClear clears the bits of mask and reports whether any was set.
func (f *ThreadFlags) TestAndClear(mask uint32) bool { return f.v.And(^mask)&mask != 0 }
