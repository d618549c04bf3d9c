package icache

import (
	"unsafe"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Straight-line runs. DecodeRun decodes the instruction at pc like Decode
// and, when it is new, also the instructions that follow it in the page,
// into consecutive records of one chunk, setting each record's Run (the
// count of sequential successors that follow it in memory). The x86
// interpreter then executes a run by stepping from record to record
// (RunNext, up to RunLast) with the budget checked once per run, not
// with an index lookup, page check and budget check per instruction.
//
// Decoding ahead keeps X86Cache's self-modifying-code rule (a store to
// code is seen by instruction fetch after the next taken branch or page
// crossing, where the interpreter checks X86Page.Valid); a store that
// changes a later instruction of the straight line it is executing may
// now be seen only there, which that rule allows. It stops before an
// instruction that might run into the next page (only an instruction
// being executed marks that page as code), before bytes that do not
// decode, at an offset that already has a record, and after an
// unconditional transfer of control (after which the bytes may be data).
// A run does continue past conditional branches: the fall-through is
// executed when the branch is not taken. The records of a run belong to
// one X86Page and are valid exactly as long as it is (X86Page.Valid).

// x86RunMax bounds a run (and the records decoded ahead per miss);
// a run starts in a new chunk when fewer than x86RunMin records are
// left in the current one.
const (
	x86RunMax = 32
	x86RunMin = 8
)

// DecodeRun is Decode that also decodes the straight-line run after a
// newly decoded instruction (see above). The returned record is the one
// at pc, the first of its run.
func (p *X86Page) DecodeRun(mm *vm.MM, pc uint64) (*decode.X86, *vm.Fault, DecodeResult) {
	off := pc & vm.PageMask
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.index[off].Load(); r != nil {
		return r, nil, DecodeOK
	}
	if p.chunk != nil && x86ChunkSize-p.used < x86RunMin {
		p.used = x86ChunkSize // start a new chunk: room for a run
	}
	r, f, res := p.decodeLocked(mm, pc)
	if res != DecodeOK {
		return r, f, res
	}
	first := p.used - 1 // r is p.chunk[first]
	if !x86EndsRun(r.Op) {
		next := off + uint64(r.Len)
		for p.used < x86ChunkSize && p.used-first < x86RunMax {
			if next > vm.PageSize-15 || p.index[next].Load() != nil {
				break
			}
			var buf [15]byte
			copy(buf[:], p.page.Data[next:])
			rec := &p.chunk[p.used]
			at := pc&^uint64(vm.PageMask) | next
			if err := decode.DecodeX86Into(buf[:], at, rec); err != nil || rec.Op == decode.X86Undefined {
				*rec = decode.X86{}
				break
			}
			rec.PC = at
			p.used++
			next += uint64(rec.Len)
			if x86EndsRun(rec.Op) {
				break
			}
		}
	}
	// Set every record's Run, then publish the successors and last the
	// first record: a record never changes once its index entry is
	// stored.
	n := p.used - first
	for i := n - 1; i >= 0; i-- {
		rec := &p.chunk[first+i]
		rec.Run = uint8(n - 1 - i)
	}
	at := off + uint64(r.Len)
	for i := 1; i < n; i++ {
		rec := &p.chunk[first+i]
		p.index[at].Store(rec)
		at += uint64(rec.Len)
	}
	p.index[off].Store(r)
	return r, nil, DecodeOK
}

// x86EndsRun reports whether no instruction after op is decoded ahead:
// unconditional transfers of control, and instructions that always end
// execution at themselves.
func x86EndsRun(op decode.X86Op) bool {
	switch op {
	case decode.X86Jmp, decode.X86JmpInd, decode.X86Call, decode.X86CallInd,
		decode.X86Ret, decode.X86Iret, decode.X86Syscall, decode.X86Int3,
		decode.X86Int, decode.X86Ud, decode.X86Priv, decode.X86Undefined:
		return true
	}
	return false
}

// RunLast returns the last record of r's run when at most max (>= 1)
// instructions of it may execute. A run's records are consecutive
// elements of one chunk array (DecodeRun), so RunLast, RunNext and
// RunIndex stay inside that allocation.
func RunLast(r *decode.X86, max uint64) *decode.X86 {
	k := uint64(r.Run)
	if k >= max {
		k = max - 1
	}
	return (*decode.X86)(unsafe.Add(unsafe.Pointer(r), uintptr(k)*unsafe.Sizeof(*r)))
}

// RunNext returns the record after r in its run (r must not be the
// last: r.Run > 0).
func RunNext(r *decode.X86) *decode.X86 {
	return (*decode.X86)(unsafe.Add(unsafe.Pointer(r), unsafe.Sizeof(*r)))
}

// RunIndex returns the position of r in the run that starts at first.
// The records of a run are one DecodeRun's consecutive records, whose Run
// counts down by one from record to record, so the position is the
// difference of the two counts (no division by the record size).
func RunIndex(first, r *decode.X86) uint64 {
	return uint64(first.Run) - uint64(r.Run)
}
