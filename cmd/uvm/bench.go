package main

import (
	"bytes"
	"debug/elf"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"github.com/uvm-emu/uvm/internal/tasks"
	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

// uvm bench: the kernel's trig-* uprobe trigger benchmarks
// (tools/testing/selftests/bpf/benchs/bench_trigger.c) run inside uvm. The
// producers are the embedded guest benchguest/trigger.c; the probes'
// consumer counts hits in per-CPU counters as the BPF program does.

//go:embed benchguest/trigger-amd64
var triggerAMD64 []byte

//go:embed benchguest/trigger-arm64
var triggerARM64 []byte

// benchDef is one trig-* benchmark.
type benchDef struct {
	name   string
	mode   string // the guest's MODE argument
	probe  string // "", "uprobe" or "uretprobe"
	target string // probed symbol
}

var benchDefs = []benchDef{
	{"trig-usermode-count", "usermode", "", ""},
	{"trig-syscall-count", "syscall", "", ""},
	{"trig-uprobe-nop", "nop", "uprobe", "uprobe_target_nop"},
	{"trig-uprobe-push", "push", "uprobe", "uprobe_target_push"},
	{"trig-uprobe-ret", "ret", "uprobe", "uprobe_target_ret"},
	{"trig-uretprobe-nop", "nop", "uretprobe", "uprobe_target_nop"},
	{"trig-uretprobe-push", "push", "uretprobe", "uprobe_target_push"},
	{"trig-uretprobe-ret", "ret", "uretprobe", "uprobe_target_ret"},
}

// perCPUHits are the consumer's counters: 256 slots, one 128-byte line
// each, indexed by the hitting thread (the BPF program's hits[cpu & 255]).
type perCPUHits [256]struct {
	v atomic.Uint64
	_ [120]byte
}

func (h *perCPUHits) add(tid int) { h[tid&255].v.Add(1) }

func (h *perCPUHits) sum() uint64 {
	var n uint64
	for i := range h {
		n += h[i].v.Load()
	}
	return n
}

// benchConfig is what one run needs.
type benchConfig struct {
	arch            string
	producers       int
	warmup, seconds int
	pin             bool
	det             bool
	iters           uint64 // > 0: exact-count run of iters calls per producer
	switches        map[string]string
	quiet           bool
	machine         *timing.Machine     // --model: virtual-time run (benchmodel.go)
	timingStats     io.Writer           // --model --stats: the model's tables
	contention      *[]*profile.Profile // --pprof-contention: each run's profile is added
}

// benchResult is one run's outcome.
type benchResult struct {
	Bench     string            `json:"bench"`
	Arch      string            `json:"arch"`
	Producers int               `json:"producers"`
	Switches  map[string]string `json:"switches,omitempty"`
	Samples   []float64         `json:"samples_mps"` // hits per second per post-warm-up second, millions
	Mean      float64           `json:"mean_mps"`
	Stddev    float64           `json:"stddev_mps"`
	PerProd   float64           `json:"per_producer_mps"`
	Hits      uint64            `json:"hits,omitempty"` // exact-count runs
}

// attachProbe attaches the bench's probe to the guest executable with a
// consumer that counts hits per CPU, as the BPF program does, and returns
// a detach function.
func attachProbe(k *tasks.Kernel, exe string, def benchDef, hits *perCPUHits, switches map[string]string) (detach func(), err error) {
	o := uprobes.DefaultOptions()
	for name, v := range switches {
		if err := setUprobeOption(&o, name, v); err != nil {
			return nil, fmt.Errorf("switch %s=%s: %w", name, v, err)
		}
	}
	o.Clock = k.UprobeClock()
	sys := uprobes.New(o)
	k.SetUprobes(sys)
	ex, err := sys.OpenExecutable(exe)
	if err != nil {
		return nil, err
	}
	var p uprobes.Probe
	if def.probe == "uretprobe" {
		p, err = ex.Uretprobe(def.target, uprobes.Consumer{Name: def.name, RetHandler: func(c *uprobes.Ctx) { hits.add(int(c.Task.TID())) }}, nil)
	} else {
		p, err = ex.Uprobe(def.target, uprobes.Consumer{Name: def.name, Handler: func(c *uprobes.Ctx) int { hits.add(int(c.Task.TID())); return 0 }}, nil)
	}
	if err != nil {
		return nil, err
	}
	return func() { p.Close() }, nil
}

func guestCounters(exe []byte) (uint64, error) {
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return 0, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return 0, err
	}
	for _, s := range syms {
		if s.Name == "counters" {
			return s.Value, nil
		}
	}
	return 0, errors.New("bench guest has no counters symbol")
}

// readGuestCounters sums the producers' user-space counters.
func readGuestCounters(mm *vm.MM, addr uint64, producers int) uint64 {
	buf := make([]byte, producers*128)
	if mm.Peek(buf, addr) != nil {
		return 0
	}
	var n uint64
	for i := 0; i < producers; i++ {
		n += binary.LittleEndian.Uint64(buf[i*128:])
	}
	return n
}

// runOneBench runs def with cfg and reports per-second hit rates.
func runOneBench(def benchDef, cfg benchConfig, out io.Writer) (benchResult, error) {
	res := benchResult{Bench: def.name, Arch: cfg.arch, Producers: cfg.producers, Switches: cfg.switches}
	exe := triggerAMD64
	if cfg.arch == "arm64" {
		exe = triggerARM64
	}
	dir, err := os.MkdirTemp("", "uvm-bench")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trigger-"+cfg.arch)
	if err := os.WriteFile(path, exe, 0o755); err != nil {
		return res, err
	}
	counters, err := guestCounters(exe)
	if err != nil {
		return res, err
	}
	// The exact count is read as the guest exits, before its memory goes.
	var final atomic.Uint64
	var hits perCPUHits
	count := func(mm *vm.MM) uint64 { return readGuestCounters(mm, counters, cfg.producers) }
	k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: os.Stderr, Deterministic: cfg.det, PinThreads: cfg.pin,
		ProcessExit: func(tg *tasks.ThreadGroup) { final.Store(count(tg.MM())) }})
	if def.probe != "" {
		detach, err := attachProbe(k, path, def, &hits, cfg.switches)
		if err != nil {
			return res, err
		}
		defer detach()
		count = func(*vm.MM) uint64 { return hits.sum() }
	}
	argv := []string{"trigger", def.mode, strconv.Itoa(cfg.producers)}
	if cfg.iters > 0 {
		argv = append(argv, strconv.FormatUint(cfg.iters, 10))
	}
	tg, err := k.Start(path, argv)
	if err != nil {
		return res, err
	}
	if cfg.iters > 0 {
		if st := tg.Wait(); st.ShellCode() != 0 {
			return res, fmt.Errorf("bench guest exited with status %d", st.ShellCode())
		}
		res.Hits = final.Load()
		return res, nil
	}
	defer func() {
		tg.Kill()
		tg.Wait()
	}()
	last := count(tg.MM())
	lastT := time.Now()
	next := lastT
	for iter := 0; iter < cfg.warmup+cfg.seconds; iter++ {
		next = next.Add(time.Second)
		select {
		case <-time.After(time.Until(next)):
		case <-tg.Done():
			return res, errors.New("bench guest exited early")
		}
		now := time.Now()
		c := count(tg.MM())
		delta := now.Sub(lastT)
		rate := float64(c-last) / delta.Seconds() / 1e6
		last, lastT = c, now
		if !cfg.quiet {
			fmt.Fprintf(out, "Iter %3d (%7.3fus): hits %8.3fM/s (%7.3fM/prod), drops %8.3fM/s, total operations %8.3fM/s\n",
				iter, float64(delta-time.Second)/1e3, rate, rate/float64(cfg.producers), 0.0, rate)
		}
		if iter >= cfg.warmup {
			res.Samples = append(res.Samples, rate)
		}
	}
	res.Mean, res.Stddev = meanStddev(res.Samples)
	res.PerProd = res.Mean / float64(cfg.producers)
	return res, nil
}

func meanStddev(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// summaryLine is the kernel bench's final line.
func summaryLine(r benchResult) string {
	return fmt.Sprintf("Summary: hits %8.3f \u00b1 %5.3fM/s (%7.3fM/prod), drops %8.3f \u00b1 %5.3fM/s, total operations %8.3f \u00b1 %5.3fM/s",
		r.Mean, r.Stddev, r.PerProd, 0.0, 0.0, r.Mean, r.Stddev)
}

// sweepLine is the seeds' table format (Andrii's script).
func sweepLine(r benchResult) string {
	name := strings.TrimPrefix(r.Bench, "trig-")
	return fmt.Sprintf("%-15s (%2d cpus): %8.3f \u00b1 %5.3fM/s (%7.3fM/s/cpu)", name, r.Producers, r.Mean, r.Stddev, r.PerProd)
}

const benchUsage = `usage: uvm bench [flags] BENCH...

BENCH: trig-usermode-count, trig-syscall-count, trig-uprobe-{nop,push,ret},
trig-uretprobe-{nop,push,ret}, or all. The "trig-" prefix may be omitted.

flags:
`

func cmdBench(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("uvm bench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		prods   = fl.String("p", "1", "producers, or a comma-separated list for a sweep (e.g. 1,2,4,8)")
		pin     = fl.Bool("a", false, "pin each producer's host thread to its own CPU (Linux: sched_setaffinity; other OSes: no pinning)")
		warmup  = fl.Int("w", 1, "warm-up seconds")
		dur     = fl.Int("d", 5, "measured seconds")
		arch    = fl.String("arch", "amd64", "guest architecture: arm64 or amd64")
		jsonOut = fl.Bool("json", false, "print results as JSON")
		svgOut  = fl.String("svg", "", "draw M/s per producer against producer count to FILE (SVG)")
		quiet   = fl.Bool("q", false, "no per-second lines")
		det     = fl.Bool("det", false, "deterministic mode (with --iters: exact counts)")
		iters   = fl.Uint64("iters", 0, "exact-count run: each producer makes N calls, then uvm prints the hits")
		compare = fl.String("compare", "", "SWITCH=before,after: run each bench with both values and print them side by side")
		model   = fl.String("model", "", "run on a modelled machine in virtual time (kunpeng916, xeon-80, kvm-32, laptop-8 or a file): -w/-d are virtual ms, M/s per virtual second")
		mstats  = fl.Bool("stats", false, "with --model: print each run's per-CPU cycles and modelled lock table (stderr)")
		mcont   = fl.String("pprof-contention", "", "with --model: write the modelled locks' contention profile of every run (labels bench, producers, switches) to FILE")
	)
	sw := map[string]*string{}
	for _, s := range benchSwitches {
		sw[s.name] = fl.String(s.name, "", s.help)
	}
	fl.Usage = func() {
		fmt.Fprint(stderr, benchUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *arch != "arm64" && *arch != "amd64" {
		fmt.Fprintf(stderr, "uvm bench: --arch must be arm64 or amd64\n")
		return 2
	}
	if *warmup < 0 || *dur < 1 {
		fmt.Fprintf(stderr, "uvm bench: -w must be >= 0 and -d >= 1\n")
		return 2
	}
	var machine *timing.Machine
	if *model != "" {
		m, err := loadMachine(*model)
		if err != nil {
			fmt.Fprintf(stderr, "uvm bench: --model: %v\n", err)
			return 2
		}
		machine = m
	}
	if *mcont != "" && machine == nil {
		fmt.Fprintf(stderr, "uvm bench: --pprof-contention needs --model\n")
		return 2
	}
	var contention []*profile.Profile
	var producers []int
	for _, p := range strings.Split(*prods, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 256 {
			fmt.Fprintf(stderr, "uvm bench: bad producer count %q (1..256)\n", p)
			return 2
		}
		producers = append(producers, n)
	}
	var defs []benchDef
	for _, name := range fl.Args() {
		if name == "all" {
			defs = append(defs, benchDefs...)
			continue
		}
		found := false
		for _, d := range benchDefs {
			if d.name == name || d.name == "trig-"+name {
				defs, found = append(defs, d), true
			}
		}
		if !found {
			fmt.Fprintf(stderr, "uvm bench: unknown bench %q\n", name)
			return 2
		}
	}
	if len(defs) == 0 {
		fl.Usage()
		return 2
	}
	base := map[string]string{}
	for name, v := range sw {
		if *v != "" {
			base[name] = *v
		}
	}
	variants := []map[string]string{base}
	var variantNames []string
	if *compare != "" {
		name, vals, ok := strings.Cut(*compare, "=")
		before, after, ok2 := strings.Cut(vals, ",")
		if !ok || !ok2 || !knownSwitch(name) {
			fmt.Fprintf(stderr, "uvm bench: --compare wants SWITCH=before,after with a known switch\n")
			return 2
		}
		variants = nil
		for _, v := range []string{before, after} {
			m := map[string]string{}
			for k, x := range base {
				m[k] = x
			}
			m[name] = v
			variants = append(variants, m)
			variantNames = append(variantNames, name+"="+v)
		}
	}
	var all []benchResult
	sweep := len(producers) > 1 || len(variants) > 1
	for vi, v := range variants {
		if len(variantNames) > 0 && !*jsonOut {
			fmt.Fprintf(stdout, "== %s (%s)\n", map[int]string{0: "before", 1: "after"}[vi], variantNames[vi])
		}
		for _, d := range defs {
			for _, p := range producers {
				cfg := benchConfig{arch: *arch, producers: p, warmup: *warmup, seconds: *dur, pin: *pin,
					det: *det, iters: *iters, switches: v, quiet: *quiet || *jsonOut || sweep, machine: machine}
				if machine != nil && *mstats {
					cfg.timingStats = stderr
				}
				if *mcont != "" {
					cfg.contention = &contention
				}
				if !cfg.quiet {
					fmt.Fprintf(stdout, "Setting up benchmark '%s'...\nBenchmark '%s' started.\n", d.name, d.name)
				}
				var r benchResult
				var err error
				if machine != nil {
					cfg.quiet = true
					r, err = runModelBench(d, cfg)
				} else {
					r, err = runOneBench(d, cfg, stdout)
				}
				if err != nil {
					fmt.Fprintf(stderr, "uvm bench: %s: %v\n", d.name, err)
					return 1
				}
				all = append(all, r)
				switch {
				case *jsonOut:
				case *iters > 0:
					fmt.Fprintf(stdout, "%s: hits %d (%d producers × %d calls)\n", d.name, r.Hits, p, *iters)
				case sweep:
					fmt.Fprintln(stdout, sweepLine(r))
				default:
					fmt.Fprintln(stdout, summaryLine(r))
				}
			}
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(all)
	}
	if *mcont != "" {
		if err := writeProfiles(*mcont, contention); err != nil {
			fmt.Fprintf(stderr, "uvm bench: --pprof-contention: %v\n", err)
			return 1
		}
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, []byte(benchSVG(all)), 0o644); err != nil {
			fmt.Fprintf(stderr, "uvm bench: %v\n", err)
			return 1
		}
	}
	return 0
}

// benchSwitch is a uprobes option settable from the bench command line.
type benchSwitch struct{ name, help string }

var benchSwitches = []benchSwitch{
	{"treelock", "uprobe tree lock: spinlock, rwlock, percpu-rwsem or rcu"},
	{"siglock", "siglock in the single-step path: true (before seed 000) or false"},
	{"flush-elision", "skip XOL copy+flush when the slot holds the same bytes: true or false"},
	{"arm64-sim-nop", "simulate arm64 NOP instead of stepping it out of line: true or false"},
	{"ri-pool", "per-task return_instance pool: true or false"},
}

func knownSwitch(name string) bool {
	for _, s := range benchSwitches {
		if s.name == name {
			return true
		}
	}
	return false
}
