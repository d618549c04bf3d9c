package timing

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"
)

// The contention profile: every contended acquisition of a modelled lock
// (a spinlock waiter, an rwlock or percpu-rwsem reader or writer that
// had to wait) is recorded by object, kind, thread and the guest address
// its CPU was at (CPU.Site), and written as a pprof profile with Go's
// mutex-profile sample types, "contentions" (count) and "delay"
// (nanoseconds of the machine's clock: virtual time). Each sample's
// stack is, leaf first, the object's name, its kind and the guest
// address; labels give the thread (tid) and its hardware thread (cpu).

type contKey struct {
	name, kind string
	tid        int32
	cpu        int
	site       uint64
}

type contVal struct{ n, cycles int64 }

// SetProfileWindow makes the contention profile record only waits that
// began in [from, to) cycles (a benchmark's measured window: what runs
// after it depends on when the host stops the run).
func (md *Model) SetProfileWindow(from, to int64) { md.profFrom, md.profTo = from, to }

// contended records that c, which arrived at arrive, waited until its
// clock for st's object.
func (md *Model) contended(st *lockStats, c *CPU, arrive int64) {
	cycles := c.Clock - arrive
	st.Waited += cycles
	if arrive < md.profFrom || md.profTo > 0 && arrive >= md.profTo {
		return
	}
	if md.cont == nil {
		md.cont = map[contKey]*contVal{}
	}
	k := contKey{st.Name, st.Kind, c.TID, c.ID, c.Site}
	v := md.cont[k]
	if v == nil {
		v = &contVal{}
		md.cont[k] = v
	}
	v.n++
	v.cycles += cycles
}

// ContentionProfile returns the contention profile of the run so far.
// Its bytes depend only on the run (samples, locations and functions
// in a fixed order; no timestamps).
func (md *Model) ContentionProfile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "contentions", Unit: "count"},
		Period:     1,
		Comments:   []string{fmt.Sprintf("uvm timing model %s: %d CPUs at %d MHz, virtual time", md.M.Name, md.M.NumCPU(), md.M.FreqMHz)},
	}
	keys := make([]contKey, 0, len(md.cont))
	for k := range md.cont {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b contKey) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind), cmp.Compare(a.tid, b.tid),
			cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.site, b.site))
	})
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		f := funcs[name]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
			funcs[name] = f
			p.Function = append(p.Function, f)
		}
		return f
	}
	type locKey struct {
		name string
		addr uint64
	}
	locs := map[locKey]*profile.Location{}
	loc := func(name string, addr uint64) *profile.Location {
		k := locKey{name, addr}
		l := locs[k]
		if l == nil {
			l = &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr}
			if name != "" {
				l.Line = []profile.Line{{Function: fn(name)}}
			}
			locs[k] = l
			p.Location = append(p.Location, l)
		}
		return l
	}
	freq := md.M.FreqMHz
	for _, k := range keys {
		v := md.cont[k]
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc(k.name, 0), loc(k.kind, 0), loc("", k.site)},
			Value:    []int64{v.n, v.cycles * 1000 / freq},
			// cpu is a string label: pprof drops numeric labels of value 0.
			Label:    map[string][]string{"cpu": {strconv.Itoa(k.cpu)}},
			NumLabel: map[string][]int64{"tid": {int64(k.tid)}},
		})
	}
	return p
}

// WriteContentionProfile writes the contention profile (gzipped pprof).
func (md *Model) WriteContentionProfile(w io.Writer) error {
	return md.ContentionProfile().Write(w)
}
