// Command uvm runs arm64 and x86-64 Linux programs on any host.
//
//	uvm run [flags] PROG [ARGS...]
//	uvm version
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/uvm-emu/uvm/internal/guestprof"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/tasks"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/uprobes"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: uvm <command> [arguments]

commands:
  run [flags] PROG [ARGS...]   run a static arm64 or x86-64 Linux program
  replay DIR [run flags]       re-run a recording of uvm run --det --record DIR
  bench [flags] BENCH...       the kernel's trig-* uprobe benchmarks inside uvm
  version                      print uvm's version
  help                         print this help

Run 'uvm run -h' for the run flags.
`

// version is uvm's release version.
const version = "0.1.0-dev"

// run is main without the process exit, for tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdin, stdout, stderr)
	case "replay":
		return cmdReplay(args[1:], stdout, stderr) // record.go
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "uvm %s\n", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "uvm: unknown command %q\n%s", args[0], usage)
	return 2
}

// listFlag collects repeated string flags.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCommand(args, stdin, stdout, stderr, nil)
}

// runCommand is uvm run, or with rp a replay of a recording (record.go).
func runCommand(args []string, stdin io.Reader, stdout, stderr io.Writer, rp *replaySpec) int {
	fl := flag.NewFlagSet("uvm run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		root      = fl.String("L", "", "directory prefix for absolute guest paths (like qemu-user -L; unconfined: other paths reach the host)")
		chroot    = fl.String("root", "", "confine the guest: its / is DIR (DIR:ro for a read-only root); PROG and the working directory are then paths inside it")
		setEnv    listFlag
		unsetEnv  listFlag
		cleanEnv  = fl.Bool("clean-env", false, "start the guest with an empty environment (then add -E)")
		traceOut  = fl.String("trace", "", "write one line per event (syscalls with arguments and results, thread start/exit, signals, exit) to FILE ('-' for stderr)")
		straceOut = fl.String("strace", "", "same as --trace")
		traceHash = fl.Bool("trace-hash", false, "print a SHA-256 over the event stream and the final state at exit (stderr)")
		slowTraps = fl.Bool("slow-traps", false, "leave the CPU loop at every syscall and breakpoint (no kernel fast path; the same run, slower: for comparisons)")
		cpuModel  = fl.String("cpu", "", "CPU model (default: x86-64-v3 for x86-64 guests, max for arm64): x86-64: x86-64-v3 (AVX, AVX2, FMA, F16C, XSAVE) or x86-64-v2 (SSE4.2); arm64: max (everything uvm implements), armv8.0, armv8.1, armv8.2 (8.1 + FP16) or neoverse-n1; CPUID or HWCAP/ID registers, /proc/cpuinfo, glibc's ifunc choice and the signal frame follow it, and instructions outside the model raise SIGILL")
		det       = fl.Bool("det", false, "deterministic mode: one runnable thread at a time, fixed quanta, virtual time, seeded randomness")
		model     = fl.String("model", "", "with --det: run every thread on a virtual CPU of this machine (kunpeng916, xeon-80, kvm-32, laptop-8 or a file); --stats prints cycles, IPC and the modelled lock table")
		seed      = fl.Uint64("seed", 0, "seed for randomness (and chaos quanta) in deterministic mode")
		chaos     = fl.Bool("det-chaos", false, "deterministic mode with seeded random quanta (implies --det)")
		quantum   = fl.Int64("quantum", tasks.DefaultQuantum, "deterministic scheduler time slice, in instructions")
		nsPerInsn = fl.Int64("ns-per-insn", 1, "virtual clock rate in deterministic mode: nanoseconds per retired instruction")
		traceInsn = fl.String("trace-insn", "", "write the registers before every instruction to FILE, in shared/tools/qemu-trace format")
		stats     = fl.Bool("stats", false, "print retired instructions, syscalls and unimplemented items at exit (stderr)")
		argv0     = fl.String("0", "", "argv[0] for the guest (default: PROG)")
		pprofOut  = fl.String("pprof", "", "write a pprof profile of the guest (sampled every --pprof-period retired instructions) to FILE")
		pprofPer  = fl.Uint64("pprof-period", guestprof.DefaultPeriod, "guest profile sampling period, in retired instructions (cycles with --pprof-clock=cycles)")
		pprofClk  = fl.String("pprof-clock", "insns", "guest profile sampling clock: insns (retired instructions) or cycles (with --model: each thread's virtual on-CPU cycles)")
		pprofCont = fl.String("pprof-contention", "", "with --model: write a contention profile of the modelled kernel locks (pprof contentions/delay, virtual ns) to FILE")
		cpuprof   = fl.String("cpuprofile", "", "write a CPU profile of uvm itself (runtime/pprof) to FILE")
		memprof   = fl.String("memprofile", "", "write a heap profile of uvm itself to FILE at exit")
		gdbAddr   = fl.String("g", "", "serve the gdb remote protocol on PORT (localhost), HOST:PORT or unix:PATH (gdb.go)")
		gdbWait   = fl.Bool("gdb-wait", false, "with -g: stop before the first instruction until gdb connects and continues")
		ckptEvery = fl.Uint64("checkpoint-interval", tasks.DefaultCheckpointInterval, "with --det -g: checkpoint the emulated system every N instructions, where reverse execution re-executes from (0: none, from the program's start)")
		ckptMem   = fl.String("checkpoint-mem", "1G", "with --checkpoint-interval: bound on the checkpoints' memory (SIZE with K, M, G suffixes); past it the oldest are dropped and history starts later")
	)
	// Cache model flags (issue 6; package icache).
	var (
		cacheModel = fl.Bool("cache-model", false, "model each CPU's L1 I and D caches; arm64 gets a non-coherent I-side (see --icache); --stats prints the counters")
		cacheCfg   = fl.String("cache-config", "", "cache model configuration, e.g. 'l1i=32k,64,4 l1d=32k,64,8' (also l2= llc= outer levels, repl=, seed=, icache=, dc= ic= bcast= isb= zva= costs); implies --cache-model")
		icacheMode = fl.String("icache", "", "arm64 I-side with the cache model: strict (default: code needs DC CVAU, IC IVAU and ISB) or coherent; implies --cache-model")
		redecode   = fl.Bool("redecode", false, "decode every instruction afresh before executing it (slow; differential test of the predecoded-instruction cache)")
	)
	netMode := fl.String("net", tasks.NetLoopback, "network: loopback (in the emulated kernel) or host (AF_INET/AF_INET6 sockets are host sockets; not with --det)")
	vdsoMode := fl.String("vdso", "on", "on: map a vDSO (time without syscalls, AT_SYSINFO_EHDR); off: none, as Linux's vdso=0")
	limitFl := addLimitFlags(fl)
	recFl := addRecordFlags(fl)
	var uprobeSpecs, uretprobeSpecs, uprobeOpts, bindSpecs listFlag
	fl.Var(&bindSpecs, "bind", "show host path HOST at guest path GUEST (HOST:GUEST, HOST:GUEST:ro read-only; repeatable, in order; GUEST must exist); confined like --root: .. and symlinks stay in the guest's tree")
	probeLog := fl.String("probe-log", "", "write one line per probe hit (tid, probe, pc, first six argument registers / return value) to FILE ('-' for stderr)")
	fl.Var(&uprobeSpecs, "uprobe", "attach a uprobe: sym, sym+off, 0xADDR, PATH:sym or PATH:0xOFF (repeatable)")
	fl.Var(&uretprobeSpecs, "uretprobe", "attach a uretprobe (same SPEC grammar; repeatable)")
	fl.Var(&uprobeOpts, "uprobe-opt", "set a uprobes switch NAME=VALUE (kernel=6.10…6.18 sets the version-dependent ones, default 6.18; treelock, siglock, flush-elision, arm64-sim-nop, ri-pool, x86-uretprobe-syscall, x86-nop-forms, xol-mremap-denied; repeatable, in order)")
	fl.Var(&setEnv, "E", "set guest environment variable VAR=VALUE (repeatable)")
	fl.Var(&unsetEnv, "U", "remove guest environment variable VAR (repeatable)")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: uvm run [flags] PROG [ARGS...]\n\nflags:\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintf(stderr, "uvm run: missing program\n")
		fl.Usage()
		return 2
	}
	prog := fl.Arg(0)
	prefix, code := ldPrefix(*root, rp != nil, stderr) // ldprefix.go
	if code != 0 {
		return code
	}
	*root = prefix
	env := []string{}
	if !*cleanEnv {
		env = os.Environ()
		if *det || *chaos {
			env = editEnv(env, nil, hostTuningEnv)
		}
	}
	env = editEnv(env, setEnv, unsetEnv)

	if *quantum <= 0 || *nsPerInsn <= 0 {
		fmt.Fprintf(stderr, "uvm run: --quantum and --ns-per-insn must be positive\n")
		return 2
	}
	opts := tasks.Options{Root: *root, Chroot: *chroot, Env: env, Stdin: stdin, Stdout: stdout, Stderr: stderr, Log: stderr,
		Deterministic: *det || *chaos, Chaos: *chaos, Seed: *seed, Quantum: *quantum, NsPerInsn: *nsPerInsn,
		TraceHash: *traceHash, CPUModel: *cpuModel, SlowTraps: *slowTraps}
	lim, lerr := limitFl.limits()
	if lerr != nil {
		fmt.Fprintf(stderr, "uvm run: %v\n", lerr)
		return 2
	}
	opts.Limits = lim
	if opts.Deterministic && strings.HasSuffix(*limitFl.mem, "%") {
		// A share of the host's memory is the host's: /proc/meminfo
		// and sysinfo show the fixed DetMemTotal instead.
		opts.Limits.MemTotal = tasks.DetMemTotal
	}
	if *cacheModel || *cacheCfg != "" || *icacheMode != "" {
		cfg, err := icache.ParseModelConfig(*cacheCfg)
		if err == nil && *icacheMode != "" {
			cfg.ICache, err = icache.ParseICacheMode(*icacheMode)
		}
		if err != nil {
			fmt.Fprintf(stderr, "uvm run: %v\n", err)
			return 2
		}
		opts.CacheModel = icache.NewModels(cfg)
	}
	opts.Redecode = *redecode
	opts.Net = *netMode
	if len(bindSpecs) > 0 && *root != "" {
		fmt.Fprintf(stderr, "uvm run: --bind cannot be combined with -L\n")
		return 2
	}
	for _, spec := range bindSpecs {
		b, err := tasks.ParseBind(spec)
		if err != nil {
			fmt.Fprintf(stderr, "uvm run: %v\n", err)
			return 2
		}
		opts.Binds = append(opts.Binds, b)
	}
	switch *vdsoMode {
	case "on", "1":
	case "off", "0":
		opts.NoVDSO = true
	default:
		fmt.Fprintf(stderr, "uvm run: --vdso=%s: want on or off\n", *vdsoMode)
		return 2
	}
	closeAll := []io.Closer{}
	defer func() {
		for _, c := range closeAll {
			c.Close()
		}
	}()
	open := func(name string) (io.Writer, error) {
		if name == "-" {
			return stderr, nil
		}
		f, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		closeAll = append(closeAll, f)
		return f, nil
	}
	var err error
	if *traceOut == "" {
		*traceOut = *straceOut
	}
	if *traceOut != "" {
		if opts.Trace, err = open(*traceOut); err != nil {
			fmt.Fprintf(stderr, "uvm: %v\n", err)
			return 2
		}
	}
	if *traceInsn != "" {
		w, err := open(*traceInsn)
		if err != nil {
			fmt.Fprintf(stderr, "uvm: %v\n", err)
			return 2
		}
		bw := newBufWriter(w)
		defer bw.Flush()
		opts.TraceInsn = bw
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintf(stderr, "uvm: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "uvm: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	if *memprof != "" {
		defer func() {
			f, err := os.Create(*memprof)
			if err != nil {
				fmt.Fprintf(stderr, "uvm: %v\n", err)
				return
			}
			defer f.Close()
			runtime.GC()
			pprof.WriteHeapProfile(f)
		}()
	}
	var pf *os.File
	switch {
	case *pprofClk != "insns" && *pprofClk != "cycles":
		fmt.Fprintf(stderr, "uvm run: --pprof-clock wants insns or cycles, got %q\n", *pprofClk)
		return 2
	case *pprofClk == "cycles" && (*model == "" || *pprofOut == ""):
		fmt.Fprintf(stderr, "uvm run: --pprof-clock=cycles needs --pprof and --det --model (the virtual cycle clock)\n")
		return 2
	}
	if *pprofOut != "" {
		if *pprofPer == 0 {
			fmt.Fprintf(stderr, "uvm run: --pprof-period must be positive\n")
			return 2
		}
		if pf, err = os.Create(*pprofOut); err != nil {
			fmt.Fprintf(stderr, "uvm: %v\n", err)
			return 2
		}
		defer pf.Close()
		po := guestprof.Options{Period: *pprofPer}
		if opts.CacheModel != nil {
			po.Extra = []string{"icache-misses", "dcache-misses"}
		}
		switch {
		case *pprofClk == "cycles": // sampled on the cycle clock, then instructions and misses since the previous sample
			po.Cycles = true
			po.Extra = append([]string{"instructions"}, po.Extra...)
		case *model != "":
			po.Extra = append(po.Extra, "cycles") // virtual cycles since the thread's previous sample
		}
		if !opts.Deterministic {
			po.TimeNanos = time.Now().UnixNano()
		}
		opts.Profiler = guestprof.New(po)
	}
	var rec *uprobes.Recorder
	var probes []uprobes.Probe
	var uprobeOptions *uprobes.Options
	if len(uprobeSpecs)+len(uretprobeSpecs) > 0 || len(uprobeOpts) > 0 {
		uo := uprobes.DefaultOptions()
		for _, kv := range uprobeOpts {
			name, val, ok := strings.Cut(kv, "=")
			if !ok {
				fmt.Fprintf(stderr, "uvm run: --uprobe-opt wants NAME=VALUE, got %q\n", kv)
				return 2
			}
			if err := setUprobeOption(&uo, name, val); err != nil {
				fmt.Fprintf(stderr, "uvm run: --uprobe-opt %s: %v\n", kv, err)
				return 2
			}
		}
		uo.Warnf = func(format string, args ...any) { fmt.Fprintf(stderr, "uvm: uprobes: "+format+"\n", args...) }
		uprobeOptions = &uo
		var logw io.Writer
		if *probeLog != "" {
			w, err := open(*probeLog)
			if err != nil {
				fmt.Fprintf(stderr, "uvm: %v\n", err)
				return 2
			}
			logw = w
		}
		rec = uprobes.NewRecorder(logw)
	}
	name := prog
	if *argv0 != "" {
		name = *argv0
	}
	if *pprofCont != "" && *model == "" {
		fmt.Fprintf(stderr, "uvm run: --pprof-contention needs --model\n")
		return 2
	}
	if *model != "" {
		if !opts.Deterministic {
			fmt.Fprintf(stderr, "uvm run: --model needs --det\n")
			return 2
		}
		m, err := loadMachine(*model)
		if err != nil {
			fmt.Fprintf(stderr, "uvm run: --model: %v\n", err)
			return 2
		}
		opts.Machine = m
		if opts.CacheModel != nil { // the machine's L2 and LLC under the L1s
			cfg, err := tasks.MachineCacheConfig(opts.CacheModel.Config(), m)
			if err != nil {
				fmt.Fprintf(stderr, "uvm run: --model: %v\n", err)
				return 2
			}
			opts.CacheModel = icache.NewModels(cfg)
		}
	}
	recs, code := setupRecord(recFl, rp, fl, &opts, prog, stderr) // record.go
	if code != 0 {
		return code
	}
	var rev *reverseRun
	if *gdbAddr != "" {
		mem, err := parseMemLimit(*ckptMem, 0)
		if err != nil || mem <= 0 {
			fmt.Fprintf(stderr, "uvm run: --checkpoint-mem %s: want a positive size\n", *ckptMem)
			return 2
		}
		rev = newReverseRun(&opts, prog, append([]string{name}, fl.Args()[1:]...), *ckptEvery, mem) // gdb_reverse.go
	}
	k := tasks.NewKernel(opts)
	rev.attach(k)
	recs.attach(k, rev)
	if uprobeOptions != nil {
		// The uprobe system uses the kernel's clock (virtual in --det).
		uprobeOptions.Clock = k.UprobeClock()
		uprobeOptions.Contention = k.UprobeContention()
		sys := uprobes.New(*uprobeOptions)
		k.SetUprobes(sys)
		opts.Uprobes = sys
		exe, _ := filepath.Abs(prog)
		rootDir := strings.TrimSuffix(*chroot, ":ro")
		if *chroot != "" {
			exe = filepath.Join(rootDir, filepath.Clean("/"+prog))
		}
		for i, spec := range append(append([]string{}, uprobeSpecs...), uretprobeSpecs...) {
			ret := i >= len(uprobeSpecs)
			sp, err := uprobes.ParseSpec(spec)
			if err != nil {
				fmt.Fprintf(stderr, "uvm: probe %s: %v\n", spec, err)
				return 2
			}
			if sp.Path != "" && !strings.Contains(sp.Path, "/") {
				// A short name (libc.so.6): the library the dynamic
				// loader would find in the guest's standard directories.
				lib, err := findLibrary(sp.Path, *root, rootDir, exe)
				if err != nil {
					fmt.Fprintf(stderr, "uvm: probe %s: %v\n", spec, err)
					return 2
				}
				sp.Path = lib
			} else if sp.Path != "" && *root != "" && filepath.IsAbs(sp.Path) {
				if _, err := os.Stat(filepath.Join(*root, sp.Path)); err == nil {
					sp.Path = filepath.Join(*root, sp.Path)
				}
			}
			if sp.Path != "" && *chroot != "" {
				sp.Path = filepath.Join(rootDir, filepath.Clean("/"+sp.Path))
			}
			p, err := sys.AttachSpec(sp, exe, ret, rec.Consumer(spec, ret), nil)
			if err != nil {
				fmt.Fprintf(stderr, "uvm: probe %s: %v\n", spec, err)
				return 2
			}
			rec.Locate(spec, ret, p.Info())
			probes = append(probes, p)
		}
	}
	var gs *gdbServer
	if *gdbAddr != "" {
		if gs, err = startGDB(k, *gdbAddr, *gdbWait, stderr); err != nil {
			fmt.Fprintf(stderr, "uvm: -g %s: %v\n", *gdbAddr, err)
			return 2
		}
		gs.rev = rev
		if rev != nil && opts.Uprobes != nil {
			rev.off = errors.New("reverse execution is not available with uprobes")
		}
	}
	tg, err := k.Start(prog, append([]string{name}, fl.Args()[1:]...))
	if err != nil {
		if gs != nil {
			gs.finish()
		}
		return startError(stderr, prog, err)
	}
	if gs != nil {
		gs.serve(k, tg)
	}
	var st tasks.ExitStatus
	if gs != nil {
		k, tg, st = gs.final() // the last re-execution, after reverse execution (gdb_reverse.go)
		gs.finish()
	} else {
		st = tg.Wait()
	}
	if pf != nil {
		if err := opts.Profiler.Write(pf); err != nil {
			fmt.Fprintf(stderr, "uvm: writing the guest profile: %v\n", err)
		}
	}
	if rec != nil {
		rec.WriteSummary(stderr)
		for _, p := range probes {
			p.Close()
		}
	}
	if *pprofCont != "" {
		if err := writeContentionProfile(*pprofCont, k); err != nil {
			fmt.Fprintf(stderr, "uvm: --pprof-contention: %v\n", err)
		}
	}
	if *stats {
		k.WriteStats(stderr, tg)
		if opts.Uprobes != nil {
			opts.Uprobes.Stats().WriteTo(stderr)
		}
		k.WriteTimingStats(stderr)
	}
	if *traceHash {
		fmt.Fprintf(stderr, "uvm: trace-hash %s\n", k.TraceHash())
	}
	if recs != nil {
		return recs.finish(k, st, stderr)
	}
	return st.ShellCode()
}

// startError reports a program that could not be started, with the exit
// status a shell uses: 127 when it does not exist, 126 when it cannot be
// executed.
func startError(stderr io.Writer, prog string, err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), "program interpreter"):
		fmt.Fprintf(stderr, "uvm: %s: %v\n", prog, err)
		return 127
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "uvm: %s: no such file or directory\n", prog)
		return 127
	case errors.Is(err, vm.ErrNotELF), errors.Is(err, vm.ErrBadELF), errors.Is(err, vm.ErrUnsupported):
		fmt.Fprintf(stderr, "uvm: %v\n", err)
		return 126
	case errors.Is(err, fs.ErrPermission):
		fmt.Fprintf(stderr, "uvm: %s: permission denied\n", prog)
		return 126
	}
	fmt.Fprintf(stderr, "uvm: %s: %v\n", prog, err)
	return 126
}

// hostTuningEnv are the Go runtime settings that size and pace uvm
// itself. In deterministic mode the guest does not inherit them from the
// host environment: running uvm at GOMAXPROCS=1 or 8 must not hand a Go
// guest a different GOMAXPROCS (and so a different run). -E passes one
// to the guest explicitly.
var hostTuningEnv = []string{"GOMAXPROCS", "GOGC", "GOMEMLIMIT"}

// editEnv applies -U removals and -E settings.
func editEnv(env []string, set, unset []string) []string {
	drop := map[string]bool{}
	for _, u := range unset {
		drop[u] = true
	}
	for _, s := range set {
		if k, _, ok := strings.Cut(s, "="); ok {
			drop[k] = true
		}
	}
	out := env[:0:0]
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if !drop[k] {
			out = append(out, e)
		}
	}
	return append(out, set...)
}
