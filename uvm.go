// Package uvm runs arm64 and x86-64 Linux programs inside a Go process,
// with the Linux kernel played by uvm: the embedding API of the uvm
// emulator (the CLI, cmd/uvm, is one user of it).
//
// A run is deterministic when Config.Det is set: the same program, input
// and seed give the same bytes, the same trace hash and the same number of
// instructions on any host, which makes a guest a regression test:
//
//	res, err := uvm.Run(ctx, uvm.Config{
//		Program: "testdata/bin/arm64/fib", Args: []string{"10"},
//		Stdout:  &out, Det: &uvm.Det{Seed: 1},
//		Probes:  []uvm.Probe{uvm.Uprobe("fib", func(h *uvm.Hit) uvm.Action { n++; return uvm.Continue })},
//	})
//
// Package uvm/uprobes is the model of the kernel's uprobes that probes
// attach through; everything else is internal to the emulator.
package uvm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/uvm-emu/uvm/internal/tasks"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

// Config describes one run.
type Config struct {
	// Program is the host path of the program (or, with Root, its path
	// inside the root). Args are its arguments after argv[0]; Argv0
	// overrides argv[0] (default: Program).
	Program string
	Args    []string
	Argv0   string
	// Env is the guest's whole environment (KEY=VALUE); nil is empty.
	Env []string
	// Dir is the initial working directory (default: the host's, or /
	// with Root).
	Dir string
	// Stdin, Stdout and Stderr back descriptors 0, 1 and 2 (nil: empty
	// input, discarded output). Log gets uvm's own messages (default
	// Stderr).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            io.Writer
	// Det makes the run deterministic (nil: parallel threads on host
	// time).
	Det *Det
	// Root confines the guest to a host directory ("DIR" or "DIR:ro");
	// Prefix is qemu-user's -L (unconfined). See ARCHITECTURE.md.
	Root, Prefix string
	// Limits caps what the guest may take (zero fields: no cap).
	Limits Limits
	// Probes are attached before the program starts.
	Probes []Probe
	// Trace receives one line per kernel event (syscalls, signals,
	// process events); Result.TraceHash is its SHA-256 either way.
	Trace io.Writer
}

// Det configures deterministic mode.
type Det struct {
	// Seed seeds the guest's randomness (AT_RANDOM, getrandom) and,
	// with Chaos, the schedule.
	Seed uint64
	// Quantum is the time slice in retired instructions (0: default).
	Quantum int64
	// NsPerInsn is the virtual clock rate (0: 1 ns per instruction).
	NsPerInsn int64
	// Chaos draws each quantum from the seeded generator.
	Chaos bool
}

// Limits are the caps of a run (see tasks.Limits).
type Limits = tasks.Limits

// Result is how a run ended.
type Result struct {
	// ExitCode is the exit status (when Signal is 0); Signal the
	// terminating signal number.
	ExitCode, Signal int
	// TraceHash is the SHA-256 of the event stream (hex).
	TraceHash string
	// Instructions is the number of guest instructions the first process
	// retired (all of its threads).
	Instructions uint64
	// Syscalls counts calls by name, across all processes.
	Syscalls map[string]uint64
	// Unimplemented lists the syscalls and instructions the guest used
	// that uvm does not implement, with counts.
	Unimplemented map[string]int
}

// ShellCode is the status a shell would report (128+signal for a death by
// signal).
func (r Result) ShellCode() int {
	if r.Signal != 0 {
		return 128 + r.Signal
	}
	return r.ExitCode
}

// Action is what a probe handler asks for.
type Action int

const (
	// Continue leaves the probe in place.
	Continue Action = iota
	// Remove takes this probe out of the process that hit it (the
	// kernel's UPROBE_HANDLER_REMOVE).
	Remove
)

// Hit is one probe hit: the thread's registers and memory at the probed
// instruction (uprobe) or at the return (uretprobe: PC is the return
// address, the return value in Reg(0) on both arches).
type Hit struct {
	// Probe is the probe's spec; TID the thread that hit it.
	Probe string
	TID   int32
	// Addr is the probed address (entry) or the function's (return).
	Addr uint64
	ctx  *uprobes.Ctx
}

// PC, SP and Reg read the thread's registers (Reg: x0..x30 on arm64;
// rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15 on x86-64).
func (h *Hit) PC() uint64             { return h.ctx.Regs.PC() }
func (h *Hit) SP() uint64             { return h.ctx.Regs.SP() }
func (h *Hit) Reg(i int) uint64       { return h.ctx.Regs.Reg(i) }
func (h *Hit) Return() bool           { return h.ctx.RetAddr != 0 }
func (h *Hit) RetAddr() uint64        { return h.ctx.RetAddr }
func (h *Hit) SetReg(i int, v uint64) { h.ctx.Regs.SetReg(i, v) }

// Read copies guest memory at addr into b (as the thread could read it).
func (h *Hit) Read(b []byte, addr uint64) error {
	return h.ctx.Task.MM().AddrSpace().ReadAt(b, addr)
}

// ReadString reads a NUL-terminated string of at most max bytes.
func (h *Hit) ReadString(addr uint64, max int) (string, error) {
	var out []byte
	var b [1]byte
	for len(out) < max {
		if err := h.Read(b[:], addr+uint64(len(out))); err != nil {
			return "", err
		}
		if b[0] == 0 {
			return string(out), nil
		}
		out = append(out, b[0])
	}
	return "", errors.New("string too long")
}

// Probe is a uprobe or uretprobe to attach (Uprobe, Uretprobe).
type Probe struct {
	spec string
	ret  bool
	fn   func(*Hit) Action
}

// Uprobe probes the instruction spec names: "sym", "sym+off", "0xADDR",
// "PATH:sym" or "PATH:0xOFF" (PATH: a file the guest maps, such as a
// shared library; default the program). fn runs at each hit, with the
// thread stopped, before the instruction.
func Uprobe(spec string, fn func(*Hit) Action) Probe { return Probe{spec: spec, fn: fn} }

// Uretprobe runs fn when the function spec names returns.
func Uretprobe(spec string, fn func(*Hit)) Probe {
	return Probe{spec: spec, ret: true, fn: func(h *Hit) Action { fn(h); return Continue }}
}

// Run runs the program to its end, or until ctx is done (then the guest is
// killed with SIGKILL and Run returns ctx's error with the result so far).
func Run(ctx context.Context, cfg Config) (Result, error) {
	opts := tasks.Options{
		Root: cfg.Prefix, Chroot: cfg.Root, Env: append([]string{}, cfg.Env...), Cwd: cfg.Dir,
		Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr, Log: cfg.Log,
		Limits: cfg.Limits, Trace: cfg.Trace, TraceHash: true,
	}
	if d := cfg.Det; d != nil {
		opts.Deterministic, opts.Seed, opts.Quantum, opts.NsPerInsn, opts.Chaos = true, d.Seed, d.Quantum, d.NsPerInsn, d.Chaos
	}
	k := tasks.NewKernel(opts)
	var probes []uprobes.Probe
	defer func() {
		for _, p := range probes {
			p.Close()
		}
	}()
	if len(cfg.Probes) > 0 {
		uo := uprobes.DefaultOptions()
		uo.Clock = k.UprobeClock()
		sys := uprobes.New(uo)
		k.SetUprobes(sys)
		exe, _ := filepath.Abs(cfg.Program)
		if cfg.Root != "" {
			exe = filepath.Join(strings.TrimSuffix(cfg.Root, ":ro"), filepath.Clean("/"+cfg.Program))
		}
		var mu sync.Mutex // handlers of one probe may run on several threads at once
		for _, pr := range cfg.Probes {
			sp, err := uprobes.ParseSpec(pr.spec)
			if err != nil {
				return Result{}, err
			}
			fn, spec := pr.fn, pr.spec
			hit := func(c *uprobes.Ctx) Action {
				mu.Lock()
				defer mu.Unlock()
				return fn(&Hit{Probe: spec, TID: c.Task.TID(), Addr: c.Addr, ctx: c})
			}
			c := uprobes.Consumer{Name: spec}
			if pr.ret {
				c.RetHandler = func(ctx *uprobes.Ctx) { hit(ctx) }
			} else {
				c.Handler = func(ctx *uprobes.Ctx) int {
					if hit(ctx) == Remove {
						return uprobes.HandlerRemove
					}
					return 0
				}
			}
			p, err := sys.AttachSpec(sp, exe, pr.ret, c, nil)
			if err != nil {
				return Result{}, fmt.Errorf("probe %s: %w", spec, err)
			}
			probes = append(probes, p)
		}
	}
	name := cfg.Program
	if cfg.Argv0 != "" {
		name = cfg.Argv0
	}
	tg, err := k.Start(cfg.Program, append([]string{name}, cfg.Args...))
	if err != nil {
		return Result{}, err
	}
	var ctxErr error
	select {
	case <-tg.Done():
	case <-ctx.Done():
		tg.Kill()
		ctxErr = ctx.Err()
	}
	st := tg.Wait()
	sc, un := k.Stats()
	return Result{ExitCode: st.Code, Signal: st.Signal, TraceHash: k.TraceHash(), Instructions: tg.Retired(),
		Syscalls: sc, Unimplemented: un}, ctxErr
}

// Errors of a program that cannot start (wrapped by Run's error).
var (
	ErrNotELF      = vm.ErrNotELF
	ErrBadELF      = vm.ErrBadELF
	ErrUnsupported = vm.ErrUnsupported
)
