package uprobes

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// ArgRegs returns the registers of the first six integer arguments of the
// architecture's calling convention (arm64 x0..x5; x86-64 rdi, rsi, rdx,
// rcx, r8, r9), in Regs numbering.
func ArgRegs(a Arch) [6]int {
	if a == ArchAMD64 {
		return [6]int{7, 6, 2, 1, 8, 9}
	}
	return [6]int{0, 1, 2, 3, 4, 5}
}

// RetReg returns the register holding an integer return value (x0, rax).
func RetReg(a Arch) int { return 0 }

// Recorder is the consumer behind the command line's --uprobe/--uretprobe
// and --probe-log: it counts hits per probe and, with a writer, logs one
// line per hit:
//
//	uprobe tid=TID probe=SPEC [file=NAME off=0xOFF sym=FUNC+0xN] pc=0x… args=0x…,0x…,0x…,0x…,0x…,0x…
//	uretprobe tid=TID probe=SPEC [file=NAME off=0xOFF sym=FUNC+0xN] func=0x… ret=0x… retaddr=0x…
//
// file= and off= (the file's base name and the probe's file offset, the kernel's
// inode:offset key) and sym= appear once Locate has been told where the
// probe is.
type Recorder struct {
	mu     sync.Mutex
	w      io.Writer
	probes []*recProbe
}

type recProbe struct {
	name  string
	ret   bool
	where atomic.Pointer[string] // " file=… off=… sym=…" once located (Locate)
	hits  atomic.Uint64
}

// Locate records where the probe called name (entries or returns) is:
// the file, the file offset and the symbol (ProbeInfo), for the log lines.
func (rec *Recorder) Locate(name string, ret bool, info ProbeInfo) {
	w := fmt.Sprintf(" file=%s off=%#x", filepath.Base(info.Path), info.Offset)
	if info.Symbol != "" {
		w += " sym=" + info.Symbol
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.probes {
		if p.name == name && p.ret == ret {
			p.where.Store(&w)
		}
	}
}

func (p *recProbe) location() string {
	if w := p.where.Load(); w != nil {
		return *w
	}
	return ""
}

// NewRecorder returns a recorder logging to w (nil: count only).
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Consumer returns a consumer that records hits of the probe called
// name: entries (ret false) or returns (ret true).
func (rec *Recorder) Consumer(name string, ret bool) Consumer {
	p := &recProbe{name: name, ret: ret}
	rec.mu.Lock()
	rec.probes = append(rec.probes, p)
	rec.mu.Unlock()
	if ret {
		return Consumer{Name: name, RetHandler: func(c *Ctx) {
			p.hits.Add(1)
			if rec.w != nil {
				rec.logf("uretprobe tid=%d probe=%s%s func=%#x ret=%#x retaddr=%#x\n",
					c.Task.TID(), name, p.location(), c.Addr, c.Regs.Reg(RetReg(c.Arch())), c.RetAddr)
			}
		}}
	}
	return Consumer{Name: name, Handler: func(c *Ctx) int {
		p.hits.Add(1)
		if rec.w != nil {
			a := ArgRegs(c.Arch())
			r := c.Regs
			rec.logf("uprobe tid=%d probe=%s%s pc=%#x args=%#x,%#x,%#x,%#x,%#x,%#x\n", c.Task.TID(), name, p.location(), r.PC(),
				r.Reg(a[0]), r.Reg(a[1]), r.Reg(a[2]), r.Reg(a[3]), r.Reg(a[4]), r.Reg(a[5]))
		}
		return 0
	}}
}

func (rec *Recorder) logf(format string, args ...any) {
	rec.mu.Lock()
	fmt.Fprintf(rec.w, format, args...)
	rec.mu.Unlock()
}

// Hits returns the hit count of the probe called name (entries and
// returns summed when both exist).
func (rec *Recorder) Hits(name string) uint64 {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var n uint64
	for _, p := range rec.probes {
		if p.name == name {
			n += p.hits.Load()
		}
	}
	return n
}

// WriteSummary prints the table of hits per probe, in attach order.
func (rec *Recorder) WriteSummary(w io.Writer) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	width := len("probe")
	for _, p := range rec.probes {
		width = max(width, len(p.name))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-*s  %-9s  %12s\n", width, "probe", "kind", "hits")
	for _, p := range rec.probes {
		kind := "uprobe"
		if p.ret {
			kind = "uretprobe"
		}
		fmt.Fprintf(&sb, "%-*s  %-9s  %12d\n", width, p.name, kind, p.hits.Load())
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
