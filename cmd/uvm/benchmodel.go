package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/uvm-emu/uvm/internal/tasks"
	"github.com/uvm-emu/uvm/internal/timing"
	"github.com/uvm-emu/uvm/uprobes"
)

// uvm bench --model MACHINE: the bench under the deterministic scheduler
// with the timing model (package timing). Each producer runs on its own
// virtual CPU; a hit counts when the hitting CPU's virtual clock is in
// the measured window; rates are hits per virtual second. -w and -d are
// virtual milliseconds: the first w are warm-up, then d samples of one
// millisecond each. The run stops once every producer's clock has passed
// the window, so the result does not depend on the host.

// modelQuantum is the instruction slice of a model run: short enough
// that threads running guest code without kernel entries stay close in
// virtual time.
const modelQuantum = 10000

func runModelBench(def benchDef, cfg benchConfig) (benchResult, error) {
	res := benchResult{Bench: def.name, Arch: cfg.arch, Producers: cfg.producers, Switches: cfg.switches}
	if def.probe == "" {
		return res, fmt.Errorf("--model needs a probe bench (uprobe-*, uretprobe-*): %s counts in user space", def.name)
	}
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
	// The guest sees the trigger as /trigger-ARCH in a root of its own:
	// its path is on the guest's stack (AT_EXECFN), and a host path's
	// length (the temporary directory's random name, TMPDIR) would move
	// the stack and so the modelled cache lines, the cycles and the
	// printed rates.
	k := tasks.NewKernel(tasks.Options{Stdout: io.Discard, Stderr: os.Stderr, Deterministic: true,
		Quantum: modelQuantum, Machine: cfg.machine, Chroot: dir})
	md := k.Timing()
	sample := md.Cycles(1e-3)
	w0 := int64(cfg.warmup) * sample
	w1 := w0 + int64(cfg.seconds)*sample
	md.SetProfileWindow(w0, w1)
	counts := make([]uint64, cfg.seconds)
	past := map[int32]bool{}
	stop := make(chan struct{})
	// The model's tables (--stats) and contention profile are taken at
	// the instant the last producer passes the window, by the hitting
	// thread: the guest goes on running until the host goroutine below
	// wakes up and kills it, so anything read after tg.Wait (clocks,
	// acquisitions, cycles waited) would depend on host scheduling.
	var stats bytes.Buffer
	var cp *profile.Profile
	// hit runs on the hitting guest thread, one at a time (the
	// deterministic scheduler's baton orders them).
	hit := func(tid int32) {
		now, ok := k.ThreadCycles(tid)
		if !ok {
			return
		}
		if now >= w0 && now < w1 {
			counts[(now-w0)/sample]++
		}
		if now >= w1 && !past[tid] {
			past[tid] = true
			if len(past) == cfg.producers {
				if cfg.timingStats != nil {
					k.WriteTimingStats(&stats)
				}
				if cfg.contention != nil {
					cp = md.ContentionProfile()
				}
				close(stop)
			}
		}
	}
	o := uprobes.DefaultOptions()
	// In name order: a switch that sets several options (kernel=) must
	// not depend on map iteration order.
	names := make([]string, 0, len(cfg.switches))
	for name := range cfg.switches {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := cfg.switches[name]
		if err := setUprobeOption(&o, name, v); err != nil {
			return res, fmt.Errorf("switch %s=%s: %w", name, v, err)
		}
	}
	o.Clock = k.UprobeClock()
	o.Contention = k.UprobeContention()
	sys := uprobes.New(o)
	k.SetUprobes(sys)
	ex, err := sys.OpenExecutable(path)
	if err != nil {
		return res, err
	}
	var p uprobes.Probe
	if def.probe == "uretprobe" {
		p, err = ex.Uretprobe(def.target, uprobes.Consumer{Name: def.name, RetHandler: func(c *uprobes.Ctx) { hit(c.Task.TID()) }}, nil)
	} else {
		p, err = ex.Uprobe(def.target, uprobes.Consumer{Name: def.name, Handler: func(c *uprobes.Ctx) int { hit(c.Task.TID()); return 0 }}, nil)
	}
	if err != nil {
		return res, err
	}
	defer p.Close()
	tg, err := k.Start("/"+filepath.Base(path), []string{"trigger", def.mode, strconv.Itoa(cfg.producers)})
	if err != nil {
		return res, err
	}
	select {
	case <-stop:
	case <-tg.Done():
		return res, errors.New("bench guest exited early")
	}
	tg.Kill()
	tg.Wait()
	for _, n := range counts {
		res.Samples = append(res.Samples, float64(n)/md.Seconds(sample)/1e6)
	}
	res.Mean, res.Stddev = meanStddev(res.Samples)
	res.PerProd = res.Mean / float64(cfg.producers)
	if cfg.timingStats != nil {
		cfg.timingStats.Write(stats.Bytes())
	}
	if cfg.contention != nil {
		sw := make([]string, 0, len(cfg.switches))
		for n, v := range cfg.switches {
			sw = append(sw, n+"="+v)
		}
		slices.Sort(sw)
		for _, s := range cp.Sample {
			s.Label["bench"] = []string{def.name}
			s.Label["switches"] = []string{strings.Join(sw, ",")}
			s.NumLabel["producers"] = []int64{int64(cfg.producers)}
		}
		*cfg.contention = append(*cfg.contention, cp)
	}
	return res, nil
}

// loadMachine resolves --model: a built-in machine or a file.
func loadMachine(name string) (*timing.Machine, error) {
	m, err := timing.Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := tasks.CheckMachine(m); err != nil {
		return nil, err
	}
	return m, nil
}

// writeContentionProfile writes the timing model's contention profile of
// k's run to path (--pprof-contention).
func writeContentionProfile(path string, k *tasks.Kernel) error {
	md := k.Timing()
	if md == nil {
		return fmt.Errorf("no timing model")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := md.WriteContentionProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeProfiles merges profiles and writes them to path.
func writeProfiles(path string, ps []*profile.Profile) error {
	if len(ps) == 0 {
		return errors.New("no model runs")
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
