package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The real kernel as the uprobes oracle (issue 17). TestUprobeOracle
// probes the first instruction of every case of oracleTable in the
// committed testdata/uprobe-oracle/oracle program under uvm and compares
// the fate of the probe (accepted, or rejected with the kernel's errno),
// the hit count and the state the probed function leaves (registers,
// flags, stack, memory, or the signal it took) with the kernel's answers
// in golden.txt.gz, and, where perf uprobes are available (root on x86-64
// Linux), with the live kernel's. -update (with perf uprobes) regenerates
// cases.S, rebuilds the program and rewrites golden.txt.gz.

var oracleUpdate = flag.Bool("update", false, "regenerate the uprobe oracle's program and golden file from the live kernel")

const oracleDir = "../../testdata/uprobe-oracle"

// oracleResult is one case's answer.
type oracleResult struct {
	Bytes string // the first instruction, hex
	Fate  string // "accepted" or "rejected"
	Errno int    // rejected: the errno
	Hits  uint64
	Out   string // accepted: the probed program's normalised output
	Plain string // the unprobed output, where it differs from Out
}

// oracleLive is set on hosts with perf uprobes: it asks the live kernel.
var oracleLive func(t *testing.T, bin string, c *oracleCase) (oracleResult, bool)

// oracleLiveVersion is the live kernel's release (uname -r).
var oracleLiveVersion func() string

// normOracleOut drops the XOL line and writes values that fall in the XOL
// area as xol+OFF (its address is the kernel's choice), and stars the
// case's host-dependent lines.
func normOracleOut(out string, c *oracleCase) string {
	var lo, hi uint64
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "xol "); ok {
			a, b, _ := strings.Cut(strings.Fields(rest)[0], "-")
			lo, _ = strconv.ParseUint(a, 16, 64)
			hi, _ = strconv.ParseUint(b, 16, 64)
		}
	}
	hexv := regexp.MustCompile(`0x[0-9a-f]{16}`)
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "xol ") || l == "" {
			continue
		}
		f := strings.Fields(l)
		vol := false
		for _, v := range c.vol {
			if len(f) > 0 && f[0] == v {
				vol = true
			}
		}
		if vol {
			l = f[0] + " *"
		} else if hi != 0 {
			l = hexv.ReplaceAllStringFunc(l, func(s string) string {
				v, _ := strconv.ParseUint(s[2:], 16, 64)
				if v >= lo && v < hi {
					return fmt.Sprintf("xol+%#x", v-lo)
				}
				return s
			})
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

func oracleBin(t *testing.T) string {
	bin, err := filepath.Abs(filepath.Join(oracleDir, "oracle"))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// oracleCaseBytes reads c_NAME's first instruction from the program.
func oracleCaseBytes(bin, name string) string {
	start, _ := elfSymbolValue(bin, "c_"+name)
	end, _ := elfSymbolValue(bin, "c_"+name+"_e")
	f, err := os.ReadFile(bin)
	if err != nil || start == 0 || end <= start {
		return "?"
	}
	off := start - 0x400000 // the text segment is mapped from file offset 0
	if end-start > 16 || end-0x400000 > uint64(len(f)) {
		return "?"
	}
	return fmt.Sprintf("% x", f[off:end-0x400000])
}

var errnoByName = map[string]int{"ENOTSUPP": 524, "ENOEXEC": 8, "EINVAL": 22, "EOPNOTSUPP": 95, "EFAULT": 14, "ENOMEM": 12}

// uvmOracle runs the case under uvm with a uprobe on its function.
func uvmOracle(t *testing.T, bin string, c *oracleCase, probe bool, extra ...string) oracleResult {
	args := []string{"run", "--clean-env"}
	args = append(args, extra...)
	spec := "c_" + c.name
	if probe {
		args = append(args, "--uprobe", spec)
	}
	args = append(args, bin, c.name)
	var o, e bytes.Buffer
	code := run(args, strings.NewReader(""), &o, &e)
	r := oracleResult{Fate: "accepted"}
	if probe && code == 2 && strings.Contains(e.String(), "uvm: probe "+spec+":") {
		r.Fate = "rejected"
		m := regexp.MustCompile(`\((E[A-Z]+|errno (\d+))\)\s*$`).FindStringSubmatch(strings.TrimSpace(e.String()))
		if m != nil {
			if m[2] != "" {
				r.Errno, _ = strconv.Atoi(m[2])
			} else {
				r.Errno = errnoByName[m[1]]
			}
		}
		return r
	}
	for _, l := range strings.Split(e.String(), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == spec && f[1] == "uprobe" {
			r.Hits, _ = strconv.ParseUint(f[2], 10, 64)
		}
	}
	r.Out = normOracleOut(o.String(), c)
	if code != 0 {
		r.Out += fmt.Sprintf("status %d\n", code)
	}
	return r
}

func readOracleGolden(t *testing.T) (string, map[string]oracleResult) {
	gz, err := os.Open(filepath.Join(oracleDir, "golden.txt.gz"))
	if err != nil {
		t.Fatalf("%v (regenerate with go test -run Oracle -update where perf uprobes exist)", err)
	}
	defer gz.Close()
	f, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]oracleResult{}
	version := ""
	var name string
	var r oracleResult
	var dst *string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# kernel "):
			version = strings.Fields(l)[2]
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "case "):
			name, r, dst = strings.TrimPrefix(l, "case "), oracleResult{}, nil
		case strings.HasPrefix(l, "bytes "):
			r.Bytes = strings.TrimPrefix(l, "bytes ")
		case strings.HasPrefix(l, "fate "):
			f := strings.Fields(l)
			r.Fate = f[1]
			for i := 2; i+1 < len(f); i += 2 {
				v, _ := strconv.ParseUint(f[i+1], 10, 64)
				switch f[i] {
				case "errno":
					r.Errno = int(v)
				case "hits":
					r.Hits = v
				}
			}
		case l == "out":
			dst = &r.Out
		case l == "plain":
			dst = &r.Plain
		case l == "end":
			m[name] = r
		case dst != nil:
			*dst += strings.TrimPrefix(l, "  ") + "\n"
		}
	}
	return version, m
}

func writeOracleGolden(t *testing.T, version string, cases []*oracleCase, res map[string]oracleResult) {
	var b strings.Builder
	fmt.Fprintf(&b, "# kernel %s (uname -r): the uprobe oracle's answers, one block per case of\n", version)
	b.WriteString("# cmd/uvm/uprobeoracle_cases_test.go. Regenerate: go test -run Oracle -update ./cmd/uvm\n")
	b.WriteString("# (root, perf uprobes). fate: the perf uprobe was accepted (hits: its count) or\n")
	b.WriteString("# rejected (errno from perf_event_open). out: what the probed program printed;\n")
	b.WriteString("# plain: the unprobed program's output where it differs (a kernel quirk).\n")
	for _, c := range cases {
		r := res[c.name]
		fmt.Fprintf(&b, "case %s\nbytes %s\n", c.name, r.Bytes)
		if r.Fate == "rejected" {
			fmt.Fprintf(&b, "fate rejected errno %d\n", r.Errno)
		} else {
			fmt.Fprintf(&b, "fate accepted hits %d\nout\n", r.Hits)
			for _, l := range strings.SplitAfter(r.Out, "\n") {
				if l != "" {
					b.WriteString("  " + l)
				}
			}
			if r.Plain != "" && r.Plain != r.Out {
				b.WriteString("plain\n")
				for _, l := range strings.SplitAfter(r.Plain, "\n") {
					if l != "" {
						b.WriteString("  " + l)
					}
				}
			}
		}
		b.WriteString("end\n")
	}
	// Stored compressed (about 9 KB instead of 490 KB of text).
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(b.String()))
	zw.Close()
	if err := os.WriteFile(filepath.Join(oracleDir, "golden.txt.gz"), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compareOracle reports how got (uvm) differs from want (the kernel).
func compareOracle(c *oracleCase, got, want oracleResult) string {
	if got.Fate != want.Fate || got.Errno != want.Errno {
		return fmt.Sprintf("fate: uvm %s (errno %d), kernel %s (errno %d)", got.Fate, got.Errno, want.Fate, want.Errno)
	}
	if got.Fate == "rejected" {
		return ""
	}
	if got.Hits != want.Hits {
		return fmt.Sprintf("hits: uvm %d, kernel %d", got.Hits, want.Hits)
	}
	if c.cpu == "" && got.Out != want.Out {
		return "output differs:\n" + lineDiff(got.Out, want.Out)
	}
	return ""
}

func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, k string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			k = w[i]
		}
		if a != k {
			fmt.Fprintf(&b, "  uvm    %s\n  kernel %s\n", a, k)
		}
	}
	return b.String()
}

func TestUprobeOracle(t *testing.T) {
	cases := oracleTable()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case %s", c.name)
		}
		seen[c.name] = true
	}
	src := genOracleAsm(cases)
	asm := filepath.Join(oracleDir, "cases.S")
	// cases.S is generated (not committed); the committed oracle binary
	// was built from the source whose hash is in cases.sha256.
	sum := fmt.Sprintf("%x\n", sha256.Sum256([]byte(src)))
	sumFile := filepath.Join(oracleDir, "cases.sha256")
	bin := oracleBin(t)
	if *oracleUpdate {
		if oracleLive == nil {
			t.Skip("-update needs perf uprobes (root on x86-64 Linux)")
		}
		if err := os.WriteFile(asm, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sumFile, []byte(sum), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(filepath.Join(oracleDir, "build.sh")).CombinedOutput(); err != nil {
			t.Fatalf("build.sh: %v\n%s", err, out)
		}
		res := map[string]oracleResult{}
		for _, c := range cases {
			r, ok := oracleLive(t, bin, c)
			if !ok {
				t.Skip("no perf uprobes")
			}
			res[c.name] = r
		}
		writeOracleGolden(t, oracleLiveVersion(), cases, res)
	} else if old, err := os.ReadFile(sumFile); err != nil || string(old) != sum {
		t.Fatalf("%s does not match the case table (the table changed): run go test -run Oracle -update ./cmd/uvm where perf uprobes exist", sumFile)
	}
	version, golden := readOracleGolden(t)
	t.Logf("golden from kernel %s; %d cases", version, len(cases))
	live := oracleLive != nil && !*oracleUpdate && oracleLiveVersion != nil
	if live && oracleLiveVersion() != version {
		t.Logf("live kernel %s differs from the golden's %s", oracleLiveVersion(), version)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, ok := golden[c.name]
			if !ok {
				t.Fatalf("no golden answer for %s", c.name)
			}
			got := uvmOracle(t, bin, c, true)
			check := func(want oracleResult, against string) {
				d := compareOracle(c, got, want)
				if d == "" {
					return
				}
				if c.known != "" {
					t.Logf("known divergence (%s) against %s: %s", c.known, against, d)
					return
				}
				if strings.HasPrefix(d, "output differs") {
					// Without a probe, does uvm's CPU agree with the host's?
					plain := uvmOracle(t, bin, c, false)
					kplain := want.Plain
					if kplain == "" {
						kplain = want.Out
					}
					if plain.Out != kplain {
						// A CPU difference, not a uprobes one: the probe
						// must then change uvm's output exactly when it
						// changes the kernel's.
						if (plain.Out == got.Out) != (kplain == want.Out) {
							t.Errorf("%s (%s) against %s: the probe changes the output under one and not the other:\n%s", c.name, want.Bytes, against, d)
						} else {
							t.Logf("uvm's CPU differs from the host's on this instruction without a probe; fate and hits agree:\n%s", lineDiff(plain.Out, kplain))
						}
						return
					}
				}
				t.Errorf("%s (%s) against %s: %s", c.name, want.Bytes, against, d)
			}
			check(want, "the golden (kernel "+version+")")
			if live {
				if k, ok := oracleLive(t, bin, c); ok {
					check(k, "the live kernel")
				}
			}
		})
	}
}

func elfSymbolValue(path, sym string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == sym {
			return s.Value, nil
		}
	}
	return 0, fmt.Errorf("%s: no symbol %s", path, strings.TrimSpace(sym))
}
