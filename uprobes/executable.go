package uprobes

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
)

// Executable is an ELF file that probes attach to, shaped like
// cilium/ebpf's link.Executable. Symbols are read lazily, on first use.
type Executable struct {
	sys  *System
	path string

	once    sync.Once
	loadErr error
	ref     *fileRef
	loads   []elf.ProgHeader // PT_LOAD segments
	syms    map[string]elf.Symbol
	byAddr  []elf.Symbol // functions sorted by address
	loaded  atomic.Bool
}

// SymbolOffset is a symbol and an offset into it (reverse lookup).
type SymbolOffset struct {
	Symbol string
	Offset uint64
}

// UprobeOptions are the optional parameters of a probe; nil means all
// defaults (cilium/ebpf's link.UprobeOptions).
type UprobeOptions struct {
	// Address is the probe's file offset (the kernel keys uprobes by
	// file offset). When set it bypasses the symbol lookup; Offset is
	// added to it.
	Address uint64
	// Offset is added to the symbol's (or Address's) file offset, to
	// probe an instruction inside a function. It must be less than the
	// symbol's size.
	Offset uint64
	// PID limits the probe to the process with this thread-group id
	// (0: every process that maps the file). Implemented as a consumer
	// filter, so the breakpoint is installed in that process only.
	PID int32
	// Cookie is handed to the handlers (Ctx.Cookie), like a BPF cookie.
	Cookie uint64
	// RefCtrOffset is the file offset of an SDT semaphore (a 16-bit
	// counter in a writable mapping of the same file) incremented while
	// the probe is installed in a process (USDT is-enabled probes).
	RefCtrOffset uint64
}

func (o *UprobeOptions) get() UprobeOptions {
	if o == nil {
		return UprobeOptions{}
	}
	return *o
}

// Consumer is a probe user (struct uprobe_consumer). A consumer with both
// Handler and RetHandler is a session consumer: Ctx.Session carries a
// cookie from its entry handler to its return handler.
type Consumer struct {
	// Handler runs at the probed instruction, before it executes, with
	// the thread stopped. It returns 0, HandlerRemove or HandlerIgnore.
	Handler func(ctx *Ctx) int
	// RetHandler runs when the probed function returns (uretprobe).
	RetHandler func(ctx *Ctx)
	// Filter decides whether the breakpoint is installed in an address
	// space (nil: every one). Consulted at registration, at mmap, and
	// for HandlerRemove.
	Filter func(mm *MM) bool
	// Name labels the consumer in Ctx.Name and messages (default: the
	// symbol, with "+off" when an offset is given).
	Name string
}

// Probe is an attached uprobe or uretprobe. It stays attached until
// Close; losing the reference does not detach it.
type Probe interface {
	// Close unregisters the consumer (uprobe_unregister_nosync), removing
	// the breakpoint from every process when it was the last, and waits
	// until none of its handlers can run any more
	// (uprobe_unregister_sync; up to RITimerPeriod when return instances
	// are pending).
	Close() error
	// Apply re-runs the installation (add) or removal (!add) for this
	// consumer in every process that maps the file (uprobe_apply), after
	// its Filter's answers changed.
	Apply(add bool) error
	// Info describes the probe.
	Info() ProbeInfo
	isProbe()
}

// ProbeInfo describes an attached probe.
type ProbeInfo struct {
	Path   string
	Name   string
	Offset uint64 // file offset
	// Symbol is the function the probe is in and the offset into it
	// ("malloc+0x0"), from .symtab or .dynsym; "" when no symbol covers
	// the address.
	Symbol     string
	Return     bool // attached with Uretprobe
	ConsumerID uint64
	// Hits counts breakpoint hits of the uprobe (all of its consumers).
	Hits uint64
}

type probe struct {
	sys    *System
	u      *uprobe
	c      *consumer
	ret    bool
	sym    string // ProbeInfo.Symbol
	closed atomic.Bool
}

func (p *probe) isProbe() {}

func (p *probe) Close() error {
	if p.closed.Swap(true) {
		return ErrClosed
	}
	p.sys.unregisterNosync(p.u, p.c)
	p.sys.UnregisterSync()
	return nil
}

func (p *probe) Apply(add bool) error {
	if p.closed.Load() {
		return ErrClosed
	}
	return p.sys.apply(p.u, p.c, add)
}

func (p *probe) Info() ProbeInfo {
	return ProbeInfo{Path: p.u.file.path, Name: p.c.name, Offset: p.u.offset, Symbol: p.sym, Return: p.ret,
		ConsumerID: p.c.id, Hits: p.u.hits.Load()}
}

// OpenExecutable opens an ELF file whose probes register with s.
func (s *System) OpenExecutable(path string) (*Executable, error) {
	if path == "" {
		return nil, fmt.Errorf("path cannot be empty: %w", ErrInvalid)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open executable: %w", err)
	}
	return &Executable{sys: s, path: path}, nil
}

// Path returns the file's path.
func (ex *Executable) Path() string { return ex.path }

func (ex *Executable) load() error {
	ex.once.Do(func() {
		ex.loadErr = ex.doLoad()
		ex.loaded.Store(true)
	})
	return ex.loadErr
}

func (ex *Executable) doLoad() error {
	id, err := FileIdentity(ex.path)
	if err != nil {
		return fmt.Errorf("lazy load symbols: %w", err)
	}
	fi, err := os.Stat(ex.path)
	if err != nil {
		return fmt.Errorf("lazy load symbols: %w", err)
	}
	f, err := elf.Open(ex.path)
	if err != nil {
		return fmt.Errorf("lazy load symbols: %w", err)
	}
	defer f.Close()
	var arch Arch
	switch {
	case f.Class != elf.ELFCLASS64:
		return fmt.Errorf("%s: %s: %w", ex.path, f.Class, ErrNotSupported)
	case f.Machine == elf.EM_AARCH64:
		arch = ArchARM64
	case f.Machine == elf.EM_X86_64:
		arch = ArchAMD64
	default:
		return fmt.Errorf("%s: machine %s: %w", ex.path, f.Machine, ErrNotSupported)
	}
	ex.ref = &fileRef{path: ex.path, id: id, size: fi.Size(), arch: arch}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			ex.loads = append(ex.loads, p.ProgHeader)
		}
	}
	ex.syms = map[string]elf.Symbol{}
	var all []elf.Symbol
	if s, err := f.Symbols(); err == nil {
		all = append(all, s...)
	} else if !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("lazy load symbols: %w", err)
	}
	if s, err := f.DynamicSymbols(); err == nil {
		all = append(all, s...)
	}
	for _, s := range all {
		t := elf.ST_TYPE(s.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Name == "" {
			continue
		}
		if _, dup := ex.syms[s.Name]; !dup {
			ex.syms[s.Name] = s
		}
		if s.Value != 0 && s.Section != elf.SHN_UNDEF {
			ex.byAddr = append(ex.byAddr, s)
		}
	}
	sort.SliceStable(ex.byAddr, func(i, j int) bool { return ex.byAddr[i].Value < ex.byAddr[j].Value })
	return nil
}

// Arch returns the executable's architecture.
func (ex *Executable) Arch() (Arch, error) {
	if err := ex.load(); err != nil {
		return 0, err
	}
	return ex.ref.arch, nil
}

// ID returns the file's identity.
func (ex *Executable) ID() (FileID, error) {
	if err := ex.load(); err != nil {
		return FileID{}, err
	}
	return ex.ref.id, nil
}

// Address returns a function symbol's virtual address (as linked) and
// size.
func (ex *Executable) Address(symbol string) (vaddr, size uint64, err error) {
	if err := ex.load(); err != nil {
		return 0, 0, err
	}
	s, ok := ex.syms[symbol]
	if !ok {
		return 0, 0, fmt.Errorf("symbol %s: %w", symbol, ErrNoSymbol)
	}
	if s.Value == 0 || s.Section == elf.SHN_UNDEF {
		return 0, 0, fmt.Errorf("symbol %s is an undefined (shared library) symbol: %w", symbol, ErrNotSupported)
	}
	return s.Value, s.Size, nil
}

// FileOffset converts a virtual address of the image (as linked) into
// the file offset the kernel keys probes by, through the PT_LOAD segment
// that holds it.
func (ex *Executable) FileOffset(vaddr uint64) (uint64, error) {
	if err := ex.load(); err != nil {
		return 0, err
	}
	for _, p := range ex.loads {
		if p.Vaddr <= vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address %#x is not in a loaded segment of %s: %w", vaddr, ex.path, ErrInvalid)
}

// VAddr converts a file offset back into a virtual address of the image.
func (ex *Executable) VAddr(off uint64) (uint64, error) {
	if err := ex.load(); err != nil {
		return 0, err
	}
	for _, p := range ex.loads {
		if p.Off <= off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, nil
		}
	}
	return 0, fmt.Errorf("file offset %#x is not in a loaded segment of %s: %w", off, ex.path, ErrInvalid)
}

// Symbol returns the function containing vaddr (an address of the image
// as linked; subtract the load bias of a PIE first) and the offset into
// it.
func (ex *Executable) Symbol(vaddr uint64) (SymbolOffset, error) {
	if err := ex.load(); err != nil {
		return SymbolOffset{}, err
	}
	s, ok := ex.symbolAt(vaddr)
	if !ok {
		return SymbolOffset{}, fmt.Errorf("address %#x: %w", vaddr, ErrNoSymbol)
	}
	return SymbolOffset{Symbol: s.Name, Offset: vaddr - s.Value}, nil
}

func (ex *Executable) symbolAt(vaddr uint64) (elf.Symbol, bool) {
	i := sort.Search(len(ex.byAddr), func(i int) bool { return ex.byAddr[i].Value > vaddr }) - 1
	for ; i >= 0; i-- {
		s := ex.byAddr[i]
		if s.Value == vaddr || (s.Size > 0 && vaddr < s.Value+s.Size) {
			return s, true
		}
		if s.Size > 0 {
			return elf.Symbol{}, false
		}
	}
	return elf.Symbol{}, false
}

// Uprobe attaches c's Handler (and, for a session consumer, RetHandler)
// at symbol (or at opts.Address). The probe is validated before anything
// is registered: the address must be an instruction boundary and the
// kernel must accept the instruction (ErrRejected with its reason).
func (ex *Executable) Uprobe(symbol string, c Consumer, opts *UprobeOptions) (Probe, error) {
	if c.Handler == nil {
		return nil, fmt.Errorf("uprobe %s: Consumer.Handler is nil: %w", symbol, ErrInvalid)
	}
	return ex.attach(symbol, c, opts, false)
}

// Uretprobe attaches c's RetHandler to the returns of symbol's function
// (the probe is at the function's entry). A Handler makes it a session
// consumer.
func (ex *Executable) Uretprobe(symbol string, c Consumer, opts *UprobeOptions) (Probe, error) {
	if c.RetHandler == nil {
		return nil, fmt.Errorf("uretprobe %s: Consumer.RetHandler is nil: %w", symbol, ErrInvalid)
	}
	return ex.attach(symbol, c, opts, true)
}

// probeTarget resolves a symbol/options pair to a file offset and, when
// known, the virtual address and the function containing it.
func (ex *Executable) probeTarget(symbol string, o UprobeOptions) (off, vaddr uint64, fn elf.Symbol, haveFn bool, err error) {
	if o.Address != 0 {
		off = o.Address + o.Offset
		if v, e := ex.VAddr(off); e == nil {
			vaddr = v
			fn, haveFn = ex.symbolAt(v)
		}
		return off, vaddr, fn, haveFn, nil
	}
	sv, size, err := ex.Address(symbol)
	if err != nil {
		return 0, 0, fn, false, err
	}
	if size > 0 && o.Offset >= size {
		return 0, 0, fn, false, fmt.Errorf("offset %#x is past the end of %s (size %#x): %w", o.Offset, symbol, size, ErrInvalid)
	}
	vaddr = sv + o.Offset
	off, err = ex.FileOffset(vaddr)
	if err != nil {
		return 0, 0, fn, false, err
	}
	return off, vaddr, ex.syms[symbol], true, nil
}

// checkBoundary decodes fn from its start and fails when vaddr falls
// inside an instruction.
func (ex *Executable) checkBoundary(vaddr uint64, fn elf.Symbol) error {
	if ex.ref.arch == ArchARM64 {
		if vaddr%4 != 0 || (vaddr-fn.Value)%4 != 0 {
			return fmt.Errorf("%#x in %s: arm64 instructions are 4-byte aligned: %w", vaddr, fn.Name, ErrNotInstructionBoundary)
		}
		return nil
	}
	start, err := ex.FileOffset(fn.Value)
	if err != nil {
		return nil
	}
	n := vaddr - fn.Value + 16
	buf := make([]byte, n)
	got, _ := ex.ref.readAt(buf, int64(start))
	buf = buf[:got]
	pc := fn.Value
	for pc < vaddr {
		i := pc - fn.Value
		if i >= uint64(len(buf)) {
			return nil
		}
		x, ok := decodeX86(buf[i:])
		if !ok {
			return nil // cannot tell: leave it to the kernel's analysis
		}
		if pc+uint64(x.length) > vaddr {
			return fmt.Errorf("%#x (%s+%#x) is inside the instruction at %#x (%s): %w", vaddr, fn.Name, vaddr-fn.Value,
				pc, x86Disasm(buf[i:i+uint64(x.length)], pc), ErrNotInstructionBoundary)
		}
		pc += uint64(x.length)
	}
	return nil
}

// Analyze returns how the kernel would treat a probe at the file offset
// (spec §3): nil when it can be probed, a *RejectError (wrapping
// ErrRejected and the errno) otherwise.
func (ex *Executable) Analyze(off uint64) error {
	if err := ex.load(); err != nil {
		return err
	}
	var au archUprobe
	n, err := copyInsn(ex.ref, off, au.insn[:insnSize(ex.ref.arch)])
	if err != nil {
		return err
	}
	if isTrapInsn(ex.ref.arch, au.insn[:n]) {
		return ex.sys.reject(ex.ref.arch, off, au.insn[:n], ENOTSUPP, "the instruction already is a breakpoint")
	}
	if e, why := analyzeInsn(ex.ref.arch, &au, off, n, &ex.sys.opts); e != 0 {
		return ex.sys.reject(ex.ref.arch, off, au.insn[:n], e, why)
	}
	return nil
}

func (ex *Executable) attach(symbol string, c Consumer, opts *UprobeOptions, ret bool) (Probe, error) {
	if err := ex.load(); err != nil {
		return nil, err
	}
	o := opts.get()
	off, vaddr, fn, haveFn, err := ex.probeTarget(symbol, o)
	if err != nil {
		return nil, err
	}
	if haveFn {
		if err := ex.checkBoundary(vaddr, fn); err != nil {
			return nil, err
		}
	}
	if err := ex.Analyze(off); err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		switch {
		case symbol != "" && o.Address == 0 && o.Offset != 0:
			name = fmt.Sprintf("%s+%#x", symbol, o.Offset)
		case symbol != "" && o.Address == 0:
			name = symbol
		default:
			name = fmt.Sprintf("%s:%#x", ex.path, off)
		}
	}
	cons := &consumer{Consumer: c, cookie: o.Cookie, name: name}
	if o.PID != 0 {
		pid, user := o.PID, c.Filter
		cons.Filter = func(m *MM) bool { return m.pid == pid && (user == nil || user(m)) }
	}
	u, err := ex.sys.register(ex.ref, off, o.RefCtrOffset, cons)
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", name, err)
	}
	var sym string
	if haveFn && vaddr >= fn.Value {
		sym = fmt.Sprintf("%s+%#x", fn.Name, vaddr-fn.Value)
	}
	return &probe{sys: ex.sys, u: u, c: cons, ret: ret, sym: sym}, nil
}

// openReader is a fileRef over in-memory contents (tests, synthetic
// files).
func newFileRef(path string, id FileID, arch Arch, data []byte) *fileRef {
	return &fileRef{path: path, id: id, size: int64(len(data)), arch: arch, data: readerAt(data)}
}

type readerAt []byte

func (r readerAt) ReadAt(b []byte, off int64) (int, error) {
	if off >= int64(len(r)) {
		return 0, io.EOF
	}
	n := copy(b, r[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}
