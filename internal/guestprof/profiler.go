package guestprof

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/uvm-emu/uvm/internal/vm"
)

// DefaultPeriod is the default number of retired guest instructions
// between two samples of a thread (a prime, so that the sample points do
// not fall into step with a loop).
const DefaultPeriod = 100003

// Options configure a Profiler.
type Options struct {
	// Period is the number of retired instructions per sample; 0 means
	// DefaultPeriod.
	Period uint64
	// Extra names additional sample values, unit "count", that the caller
	// passes to SampleValues in this order: "icache-misses" and
	// "dcache-misses" when a cache model is on, then "cycles" (virtual
	// cycles since the thread's previous sample) with a timing model.
	Extra []string
	// TimeNanos and DurationNanos go into the profile header (leave them
	// zero in deterministic mode: the bytes must not depend on the host).
	TimeNanos, DurationNanos int64
	// Comments are added to the profile.
	Comments []string
	// Cycles makes the sampling clock a timing model's virtual cycles
	// (CycleClock): Period is in cycles, the first sample value and the
	// period type are "cycles", and Extra usually begins with
	// "instructions".
	Cycles bool
}

// Profiler accumulates guest stack samples and writes them as a pprof
// profile. Its methods are safe for concurrent use; a nil *Profiler
// ignores samples and its clocks never fire.
type Profiler struct {
	opts   Options
	period uint64

	mu      sync.Mutex
	cache   *imageCache
	syms    map[*vm.MM]*Symbolizer
	nextID  uint64 // numbers the address spaces, for sample keys
	maps    []mapKey
	mapIdx  map[mapKey]int32
	samples map[string]*agg
	// frames interns the distinct stack entries; samples refer to them
	// by index.
	frames   []frameKey
	frameIdx map[frameKey]int32
	// scratch, reused by every sample
	stack []uint64
	key   []byte
	// skid sums the cycles by which cycle-clock samples came after
	// their crossing (SampleCycles).
	skid skidStats
}

// mapKey identifies a profile mapping: an executable segment of an image
// loaded with a bias.
type mapKey struct {
	img  *image
	bias uint64
	seg  int
}

// frameKey is one stack entry: the mapping index (-1: none) and the
// address (a caller's return address minus one).
type frameKey struct {
	m    int32
	addr uint64
}

type agg struct {
	tid    int
	frames []int32 // indexes into Profiler.frames, leaf first
	values []int64
}

// New returns an empty profiler.
func New(o Options) *Profiler {
	p := &Profiler{opts: o, period: o.Period, cache: newImageCache(),
		syms: map[*vm.MM]*Symbolizer{}, mapIdx: map[mapKey]int32{}, samples: map[string]*agg{}, frameIdx: map[frameKey]int32{}}
	if p.period == 0 {
		p.period = DefaultPeriod
	}
	return p
}

// Period returns the sampling period in instructions (0 for nil).
func (p *Profiler) Period() uint64 {
	if p == nil {
		return 0
	}
	return p.period
}

// Clock tracks one thread's next sample point. The zero Clock (and the
// one a nil Profiler returns) never fires.
type Clock struct {
	period, next, last uint64
}

// NewClock returns a clock for a thread whose CPU has retired retired
// instructions; its first sample is one period later.
func (p *Profiler) NewClock(retired uint64) Clock {
	if p == nil {
		return Clock{}
	}
	return Clock{period: p.period, next: retired + p.period, last: retired}
}

// Budget returns the budget to pass to CPU.Run: max, cut so that Run
// stops at the next sample point (at least 1).
func (c *Clock) Budget(retired uint64, max int64) int64 {
	if c.period == 0 || retired >= c.next {
		return max
	}
	if d := c.next - retired; d < uint64(max) {
		return int64(d)
	}
	return max
}

// Due reports whether the thread has reached its sample point and, if so,
// re-arms the clock one period after retired and returns the number of
// instructions the sample stands for (those retired since the previous
// sample: the period, plus the overrun of the block that crossed it).
func (c *Clock) Due(retired uint64) (insns uint64, ok bool) {
	if c.period == 0 || retired < c.next {
		return 0, false
	}
	insns = retired - c.last
	c.last, c.next = retired, retired+c.period
	return insns, true
}

// Sample records one stack sample of thread tid worth one period of
// instructions. pc, sp, fp and lr are the CPU's registers (fp: x29 on
// arm64, rbp on x86-64; lr: x30 on arm64, ignored on x86-64).
func (p *Profiler) Sample(tid int, arch vm.Arch, pc, sp, fp, lr uint64, mm *vm.MM) {
	p.SampleValues(tid, arch, pc, sp, fp, lr, mm, p.Period(), nil)
}

// SampleValues records one stack sample standing for insns instructions
// (as returned by Clock.Due) and, in Options.Extra order, the extra
// values (e.g. cache misses since the previous sample of this thread).
func (p *Profiler) SampleValues(tid int, arch vm.Arch, pc, sp, fp, lr uint64, mm *vm.MM, insns uint64, extra []int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.symbolizerLocked(mm)
	s.mu.Lock()
	p.stack = s.unwindLocked(arch, pc, sp, fp, lr, p.stack[:0])
	for i := range p.stack {
		if i > 0 {
			p.stack[i]-- // inside the call instruction, as pprof expects
		}
	}
	key := binary.AppendUvarint(p.key[:0], uint64(tid))
	key = binary.AppendUvarint(key, s.id)
	for _, a := range p.stack {
		key = binary.AppendUvarint(key, a)
	}
	p.key = key
	ag := p.samples[string(key)]
	if ag == nil {
		// A new stack in this address space: resolve its mappings.
		ag = &agg{tid: tid, frames: make([]int32, len(p.stack)), values: make([]int64, 1+len(p.opts.Extra))}
		for i, a := range p.stack {
			f := frameKey{p.mappingLocked(s, a), a}
			idx, ok := p.frameIdx[f]
			if !ok {
				idx = int32(len(p.frames))
				p.frames = append(p.frames, f)
				p.frameIdx[f] = idx
			}
			ag.frames[i] = idx
		}
		p.samples[string(key)] = ag
	}
	s.mu.Unlock()
	ag.values[0] += int64(insns)
	for i := range min(len(extra), len(p.opts.Extra)) {
		ag.values[1+i] += extra[i]
	}
}

// Symbolizer returns the symbolizer the profiler uses for mm (sharing its
// parsed ELF files), for crash reports and probe lines.
func (p *Profiler) Symbolizer(mm *vm.MM) *Symbolizer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.symbolizerLocked(mm)
}

// Forget drops the profiler's symbolizer for mm (call it when an address
// space goes away: exit, exec) so that its memory can be freed. Samples
// already taken are kept.
func (p *Profiler) Forget(mm *vm.MM) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.syms, mm)
	p.mu.Unlock()
}

func (p *Profiler) symbolizerLocked(mm *vm.MM) *Symbolizer {
	s := p.syms[mm]
	if s == nil {
		p.nextID++
		s = &Symbolizer{mm: mm, cache: p.cache, id: p.nextID}
		p.syms[mm] = s
	}
	return s
}

// mappingLocked returns the index of the mapping holding addr, or -1.
func (p *Profiler) mappingLocked(s *Symbolizer, addr uint64) int32 {
	r, ok := s.regionLocked(addr)
	if !ok || r.img == nil {
		return -1
	}
	seg, ok := r.img.segmentForAddr(addr - r.bias)
	if !ok {
		return -1
	}
	k := mapKey{r.img, r.bias, seg}
	if i, ok := p.mapIdx[k]; ok {
		return i
	}
	i := int32(len(p.maps))
	p.maps = append(p.maps, k)
	p.mapIdx[k] = i
	return i
}

// Profile builds the profile. Every table is sorted before IDs are
// assigned (mappings by address, functions by name, locations by mapping
// and address, samples by thread and stack), so the same samples give the
// same profile whatever order they arrived in.
func (p *Profiler) Profile() (*profile.Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	unit := "instructions"
	if p.opts.Cycles {
		unit = "cycles"
	}
	prof := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: unit, Unit: "count"}},
		DefaultSampleType: unit,
		PeriodType:        &profile.ValueType{Type: unit, Unit: "count"},
		Period:            int64(p.period),
		TimeNanos:         p.opts.TimeNanos,
		DurationNanos:     p.opts.DurationNanos,
		Comments:          slices.Clone(p.opts.Comments),
	}
	if p.opts.Cycles {
		prof.Comments = append(prof.Comments, p.skid.comment())
	}
	for _, e := range p.opts.Extra {
		prof.SampleType = append(prof.SampleType, &profile.ValueType{Type: e, Unit: "count"})
	}

	// Mappings.
	mappings := make([]*profile.Mapping, len(p.maps))
	for i, k := range p.maps {
		seg := k.img.loads[k.seg]
		mappings[i] = &profile.Mapping{
			Start:           (k.bias + seg.vaddr) &^ vm.PageMask,
			Limit:           vm.PageAlign(k.bias + seg.vaddr + seg.memsz),
			Offset:          seg.off &^ vm.PageMask,
			File:            k.img.path,
			BuildID:         k.img.buildID,
			HasFunctions:    len(k.img.syms) > 0,
			HasFilenames:    k.img.hasDWARF(),
			HasLineNumbers:  k.img.hasDWARF(),
			HasInlineFrames: k.img.hasDWARF(),
		}
	}
	prof.Mapping = slices.Clone(mappings)
	slices.SortStableFunc(prof.Mapping, func(a, b *profile.Mapping) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.File, b.File), cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Limit, b.Limit))
	})
	for i, m := range prof.Mapping {
		m.ID = uint64(i + 1)
	}

	// Locations (one per distinct stack entry) and functions.
	locs := make([]*profile.Location, len(p.frames))
	for i, f := range p.frames {
		locs[i] = &profile.Location{Address: f.addr}
	}
	type funcKey struct {
		name, sys, file string
		start           int64
	}
	funcs := map[funcKey]*profile.Function{}
	function := func(sys string, pos srcPos) *profile.Function {
		k := funcKey{displayName(sys), sys, pos.file, int64(pos.line)}
		fn := funcs[k]
		if fn == nil {
			fn = &profile.Function{Name: k.name, SystemName: sys, Filename: pos.file, StartLine: k.start}
			funcs[k] = fn
		}
		return fn
	}
	for fi, loc := range locs {
		f := p.frames[fi]
		if f.m < 0 {
			continue
		}
		k := p.maps[f.m]
		loc.Mapping = mappings[f.m]
		v := f.addr - k.bias
		i, ok := k.img.lookup(v)
		if !ok {
			continue
		}
		sym := k.img.syms[i]
		_, line, inl := k.img.source(v)
		for _, c := range inl {
			pos := srcPos{file: c.file, line: c.declLine}
			loc.Line = append(loc.Line, profile.Line{Function: function(c.fn, pos), Line: int64(c.line)})
		}
		loc.Line = append(loc.Line, profile.Line{Function: function(sym.name, k.img.declared(sym.name, sym.addr)), Line: int64(line)})
	}
	for _, fn := range funcs {
		prof.Function = append(prof.Function, fn)
	}
	sort.Slice(prof.Function, func(i, j int) bool {
		a, b := prof.Function[i], prof.Function[j]
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.SystemName, b.SystemName),
			cmp.Compare(a.Filename, b.Filename), cmp.Compare(a.StartLine, b.StartLine)) < 0
	})
	for i, fn := range prof.Function {
		fn.ID = uint64(i + 1)
	}
	prof.Location = slices.Clone(locs)
	slices.SortFunc(prof.Location, func(a, b *profile.Location) int { // unmapped last
		ra, rb := uint64(len(mappings)+1), uint64(len(mappings)+1)
		if a.Mapping != nil {
			ra = a.Mapping.ID
		}
		if b.Mapping != nil {
			rb = b.Mapping.ID
		}
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.Address, b.Address))
	})
	for i, loc := range prof.Location {
		loc.ID = uint64(i + 1)
	}

	// Samples.
	type sample struct {
		ag  *agg
		ids []uint64
	}
	samples := make([]sample, 0, len(p.samples))
	for _, ag := range p.samples {
		ids := make([]uint64, len(ag.frames))
		for i, f := range ag.frames {
			ids[i] = locs[f].ID
		}
		samples = append(samples, sample{ag, ids})
	}
	slices.SortFunc(samples, func(a, b sample) int {
		return cmp.Or(cmp.Compare(a.ag.tid, b.ag.tid), slices.Compare(a.ids, b.ids))
	})
	for _, smp := range samples {
		if n := len(prof.Sample); n > 0 {
			// The same thread and stack in another address space (after
			// exec of the same file): one sample.
			last := prof.Sample[n-1]
			if last.NumLabel["tid"][0] == int64(smp.ag.tid) && slices.EqualFunc(last.Location, smp.ids, func(l *profile.Location, id uint64) bool { return l.ID == id }) {
				for i, v := range smp.ag.values {
					last.Value[i] += v
				}
				continue
			}
		}
		s := &profile.Sample{Value: slices.Clone(smp.ag.values), NumLabel: map[string][]int64{"tid": {int64(smp.ag.tid)}},
			Location: make([]*profile.Location, len(smp.ids))}
		for j, id := range smp.ids {
			s.Location[j] = prof.Location[id-1]
		}
		prof.Sample = append(prof.Sample, s)
	}
	if err := prof.CheckValid(); err != nil {
		return nil, fmt.Errorf("guestprof: invalid profile: %w", err)
	}
	return prof, nil
}

// Write writes the profile (gzip-compressed protocol buffer, as `go tool
// pprof` reads it). The same samples give the same bytes.
func (p *Profiler) Write(w io.Writer) error {
	prof, err := p.Profile()
	if err != nil {
		return err
	}
	return prof.Write(w)
}
