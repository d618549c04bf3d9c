package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/uvm-emu/uvm/internal/tasks"
)

// limitFlags are uvm run's caps on what the guest may take from the host.
type limitFlags struct {
	mem                    *string
	procs, threads, nofile *int
	cpuSeconds             *int64
}

func addLimitFlags(fl *flag.FlagSet) *limitFlags {
	return &limitFlags{
		mem:        fl.String("mem-limit", "75%", "cap on resident guest memory across the run: SIZE (K, M, G, T suffixes), N% of the host's memory, or 0 for none; past it the kernel's OOM killer SIGKILLs the largest process"),
		procs:      fl.Int("max-procs", 4096, "cap on live guest processes (RLIMIT_NPROC; fork gets EAGAIN); 0 for none"),
		threads:    fl.Int("max-threads", 16384, "cap on live guest threads (clone gets EAGAIN); 0 for none"),
		nofile:     fl.Int("max-open-files", 65536, "hard RLIMIT_NOFILE no guest can raise; 0 for uvm's maximum (2^20)"),
		cpuSeconds: fl.Int64("cpu-limit", 0, "RLIMIT_CPU in seconds of guest CPU time (retired instructions at --ns-per-insn): SIGXCPU, then SIGKILL; 0 for none"),
	}
}

// limits converts the flags.
func (l *limitFlags) limits() (tasks.Limits, error) {
	mem, err := parseMemLimit(*l.mem, hostMemory())
	if err != nil {
		return tasks.Limits{}, fmt.Errorf("--mem-limit: %v", err)
	}
	for name, v := range map[string]int{"--max-procs": *l.procs, "--max-threads": *l.threads, "--max-open-files": *l.nofile} {
		if v < 0 {
			return tasks.Limits{}, fmt.Errorf("%s: %d is negative", name, v)
		}
	}
	if *l.cpuSeconds < 0 {
		return tasks.Limits{}, fmt.Errorf("--cpu-limit: %d is negative", *l.cpuSeconds)
	}
	return tasks.Limits{MemBytes: mem, MaxProcs: *l.procs, MaxThreads: *l.threads, MaxOpenFiles: *l.nofile, CPUSeconds: *l.cpuSeconds}, nil
}

// parseMemLimit parses SIZE with an optional K/M/G/T suffix (powers of
// 1024), or N% of host (bytes; 0 when unknown, then no limit).
func parseMemLimit(s string, host int64) (int64, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil || n < 0 || n > 100 {
			return 0, fmt.Errorf("bad percentage %q", s)
		}
		return int64(float64(host) * n / 100), nil
	}
	mult := int64(1)
	if len(s) > 0 {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// hostMemory returns the host's memory in bytes (MemTotal), 0 if unknown.
func hostMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
