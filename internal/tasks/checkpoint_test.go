package tasks

import (
	"bytes"
	"testing"
)

// ckptRun runs prog under --det with a trace hash (and checkpoints into
// log, or from c when not nil).
func ckptRun(t *testing.T, arch, prog string, args []string, log *CheckpointLog, c *Checkpoint) (out, hash string, st ExitStatus) {
	t.Helper()
	var o, e bytes.Buffer
	k := NewKernel(Options{Deterministic: true, TraceHash: true, Quantum: 20000, Stdout: &o, Stderr: &e, Env: []string{"A=1"}})
	if log != nil {
		k.RecordCheckpoints(log)
	}
	var tg *ThreadGroup
	var err error
	if c != nil {
		tg, err = k.StartFrom(c)
	} else {
		tg, err = k.Start("../../testdata/bin/"+arch+"/"+prog, append([]string{prog}, args...))
	}
	if err != nil {
		t.Fatal(err)
	}
	st = tg.Wait()
	return o.String(), k.TraceHash(), st
}

// TestCheckpointRestore: every checkpoint of a run, restored in a fresh
// kernel and run to the end, ends as the run did: the same trace hash
// (every syscall, thread start and exit with retired counts), exit
// status, and the output the run wrote after the checkpoint. Threads
// compute across the checkpoints and main reads a host file.
func TestCheckpointRestore(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, c := range []struct {
			prog     string
			args     []string
			threads  bool
			interval uint64
		}{
			{"fib", []string{"22"}, false, 150000},
			{"ckpt_mt", []string{"../../testdata/src/ckpt_mt.c", "200000"}, true, 1000000},
		} {
			t.Run(arch+"/"+c.prog, func(t *testing.T) {
				log := NewCheckpointLog(c.interval, 0)
				out, hash, st := ckptRun(t, arch, c.prog, c.args, log, nil)
				cps := log.Before(^uint64(0))
				if len(cps) < 3 {
					why, at := log.Skipped()
					t.Fatalf("%d checkpoints (last skipped at %d: %s)", len(cps), at, why)
				}
				multi := false
				for _, cp := range cps {
					if len(cp.ts) > 1 {
						multi = true
					}
				}
				if c.threads && !multi {
					t.Errorf("no checkpoint while threads ran")
				}
				for i, cp := range cps {
					if testing.Short() && i%4 != 0 {
						continue
					}
					o2, h2, st2 := ckptRun(t, arch, c.prog, c.args, nil, cp)
					if n := cp.k.written[0]; n > int64(len(out)) || out[n:] != o2 || h2 != hash || st2 != st {
						t.Errorf("from the checkpoint at %d (%d threads): hash %s status %v output %q;\nthe run: hash %s status %v output %q",
							cp.Pos(), len(cp.ts), h2, st2, o2, hash, st, out)
					}
				}
				n, b := log.Stats()
				t.Logf("%d checkpoints, %d bytes", n, b)
			})
		}
	}
}

// TestCheckpointBound: past the memory bound the oldest checkpoints go,
// and the start with them.
func TestCheckpointBound(t *testing.T) {
	log := NewCheckpointLog(100000, 0)
	ckptRun(t, "amd64", "fib", []string{"22"}, log, nil)
	n, all := log.Stats()
	if n < 4 || !log.StartKept() {
		t.Fatalf("unbounded: %d checkpoints, start kept %v", n, log.StartKept())
	}
	per := all / int64(n)
	bound := NewCheckpointLog(100000, 2*per+per/2)
	ckptRun(t, "amd64", "fib", []string{"22"}, bound, nil)
	m, b := bound.Stats()
	if m != 2 || b > 2*per+per/2 || bound.StartKept() {
		t.Errorf("bounded to %d bytes: %d checkpoints of %d bytes, start kept %v", 2*per+per/2, m, b, bound.StartKept())
	}
	cps := bound.Before(^uint64(0))
	last := log.Before(^uint64(0))
	if len(cps) > 0 && cps[0].Pos() != last[0].Pos() {
		t.Errorf("bounded log keeps %d, not the newest %d", cps[0].Pos(), last[0].Pos())
	}
}
