package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// arm64Sysroot is where Debian's cross toolchain (libc6-arm64-cross) puts
// the arm64 loader and libraries; .ci/run installs it when it can.
const arm64Sysroot = "/usr/aarch64-linux-gnu"

// dynamicSetup returns the uvm flags that give arch's dynamic programs
// their libraries, or skips.
func dynamicSetup(t *testing.T, arch string) []string {
	switch arch {
	case "amd64":
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			t.Skip("amd64 dynamic guests use the host's libraries: needs an x86-64 Linux host")
		}
		if _, err := os.Stat("/lib64/ld-linux-x86-64.so.2"); err != nil {
			t.Skip("no /lib64/ld-linux-x86-64.so.2")
		}
		return nil
	default:
		if _, err := os.Stat(filepath.Join(arm64Sysroot, "lib/ld-linux-aarch64.so.1")); err != nil {
			t.Skip("no arm64 sysroot at " + arm64Sysroot + " (apt-get install libc6-arm64-cross)")
		}
		return []string{"-L", arm64Sysroot}
	}
}

// TestDynamic runs a dynamically linked C program on both arches: the
// kernel loads its interpreter (PT_INTERP), which maps libc.so.6 from the
// sysroot and relocates; output and status must equal the native run's.
func TestDynamic(t *testing.T) {
	want, err := os.ReadFile("../../testdata/expected/dynhello.out")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			flags := dynamicSetup(t, arch)
			for _, mode := range [][]string{{"--det"}, {}} {
				args := append(append(append([]string{"run", "--clean-env", "-E", "DYNHELLO=yes"}, mode...), flags...),
					"../../testdata/bin/"+arch+"/dynhello", "a", "b")
				var o, e bytes.Buffer
				code := run(args, nil, &o, &e)
				if code != 3 || o.String() != string(want) {
					t.Errorf("%v: status %d\n%s--- want\n%s--- stderr\n%s", mode, code, o.String(), want, e.String())
				}
			}
		})
	}
}

// TestDynamicBadInterpreter: a missing interpreter, one that is not ELF,
// and one for the other arch each give one clear line and a shell's
// status, never a panic.
func TestDynamicBadInterpreter(t *testing.T) {
	bin, err := os.ReadFile("../../testdata/bin/amd64/dynhello")
	if err != nil {
		t.Fatal(err)
	}
	const interp = "/lib64/ld-linux-x86-64.so.2"
	i := bytes.Index(bin, []byte(interp))
	if i < 0 {
		t.Fatal("dynhello names no x86-64 interpreter")
	}
	dir := t.TempDir()
	missing := append([]byte(nil), bin...)
	copy(missing[i:], "/lib64/ld-linux-x86-64.so.X")
	mp := filepath.Join(dir, "missing")
	if err := os.WriteFile(mp, missing, 0o755); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", mp}, nil, &o, &e); code != 127 || !strings.Contains(e.String(), "program interpreter /lib64/ld-linux-x86-64.so.X") {
		t.Errorf("missing interpreter: status %d, %q", code, e.String())
	}
	// A prefix (-L) whose interpreter is a text file, then an arm64 one.
	pre := filepath.Join(dir, "sysroot")
	if err := os.MkdirAll(filepath.Join(pre, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pre, interp), []byte("not an ELF\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "prog"), bin, 0o755)
	o.Reset()
	e.Reset()
	if code := run([]string{"run", "-L", pre, filepath.Join(dir, "prog")}, nil, &o, &e); code != 126 || !strings.Contains(e.String(), "not an ELF") {
		t.Errorf("text interpreter: status %d, %q", code, e.String())
	}
	if arm, err := os.ReadFile(filepath.Join(arm64Sysroot, "lib/ld-linux-aarch64.so.1")); err == nil {
		os.WriteFile(filepath.Join(pre, interp), arm, 0o755)
		o.Reset()
		e.Reset()
		if code := run([]string{"run", "-L", pre, filepath.Join(dir, "prog")}, nil, &o, &e); code != 126 || !strings.Contains(e.String(), "is for arm64") {
			t.Errorf("arm64 interpreter for an amd64 program: status %d, %q", code, e.String())
		}
	}
}

// TestHostPrograms runs other people's programs: this x86-64 Linux host's
// own dynamically linked tools, under uvm with the host's libraries, and
// compares their output and status with the native run's. Each one skips
// when the host lacks it.
func TestHostPrograms(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs an x86-64 Linux host")
	}
	dir := t.TempDir()
	compareWithHost(t, hostCases(dir), func(prog string) ([]string, bool) { return []string{prog}, true })
}

// hostCases are the other people's programs both tests run, on files in dir.
func hostCases(dir string) [][]string {
	for name, body := range map[string]string{"b.txt": "pear\napple\nfig\n", "a.txt": "one two three\nfour\n", "j.json": `{"z": [1, 2.5, "s"], "a": {"k": null}}`,
		"s.py": hostCasePy, "s.sh": hostCaseSh} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		// ls -l shows the times: fixed, so no minute turns between runs.
		os.Chtimes(p, time.Unix(1e9, 0), time.Unix(1e9, 0))
	}
	return [][]string{
		{"/bin/ls", "-l", dir},
		{"/bin/cat", filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")},
		{"/usr/bin/gawk", "{ n += NF; w[NR] = $1 } END { printf \"%d fields, first %s, last %s, %s %d\\n\", n, w[1], w[NR], toupper(\"x\"), 2 ** 10 }", filepath.Join(dir, "a.txt")},
		{"/usr/bin/python3", "-c", "s = 0\nfor i in range(20000):\n    s += i * i\nprint(s, [x % 7 for x in range(10)])"},
		{"/usr/bin/python3", filepath.Join(dir, "s.py")},
		{"/bin/bash", filepath.Join(dir, "s.sh")},
		{"/bin/bash", "-c", "cd " + dir + " && tar -cJf - a.txt b.txt | xz -dc | tar -tf - && tar -cJf - a.txt | tar -xJOf -"},
		{"/bin/echo", "hello", "world"},
		{"/usr/bin/sort", filepath.Join(dir, "b.txt")},
		{"/usr/bin/sha256sum", filepath.Join(dir, "a.txt")},
		{"/usr/bin/wc", filepath.Join(dir, "a.txt")},
		{"/usr/bin/head", "-n1", filepath.Join(dir, "b.txt")},
		{"/usr/bin/tr", "a-z", "A-Z"},
		{"/bin/ls", dir},
		{"/bin/grep", "-n", "o", filepath.Join(dir, "a.txt")},
		{"/bin/sed", "s/p/P/g", filepath.Join(dir, "b.txt")},
		// (uvm lists directories in name order, the host in on-disk
		// order: the pipeline sorts.)
		{"/bin/bash", "-c", "find " + dir + " -name '*.txt' | sort | xargs cat | wc -l"},
		{"/bin/date", "-u", "-d", "@86400"},
		{"/bin/bash", "-c", "for i in 1 2 3; do echo $i; done | tr 123 xyz; x=$(echo sub); echo $x; (exit 4); echo $?"},
		{"/usr/bin/perl", "-e", "print join(',', map { $_ * 2 } 1..5), \"\\n\""},
		{"/usr/bin/python3", "-c", "import json, hashlib, re; print(json.dumps({'k': [1, 2]}), hashlib.sha256(b'x').hexdigest()[:12], re.sub('a', 'b', 'banana'))"},
		{"/usr/bin/sqlite3", ":memory:", "create table t(x); insert into t values (1),(2),(40); select sum(x), count(*) from t;"},
		{"/usr/bin/xz", "--version"},
		{"/bin/bash", "-c", "echo compress me | xz -c | xz -dc"},
		{"/usr/bin/python3", "-m", "json.tool", "--sort-keys", filepath.Join(dir, "j.json")},
		{"/usr/bin/python3", "-c", "import subprocess, sys; r = subprocess.run(['/bin/echo', 'from', 'child'], capture_output=True, text=True); print(r.returncode, r.stdout.strip()); sys.exit(3)"},
		{"/bin/bash", "-c", "d=$(mktemp -d) && sqlite3 $d/f.db 'create table t(a, b); insert into t values (1, \"x\"), (2, \"y\");' && sqlite3 $d/f.db 'select b, a * 10 from t order by a desc;'"},
		{"/usr/bin/diff", "-u", "--label", "a", "--label", "b", filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")},
		{"/bin/bash", "-c", "cd " + dir + " && tar -cf - a.txt b.txt | gzip -c | gzip -dc | tar -tvf - --numeric-owner | awk '{print $1, $3, $6}'"},
		{"/usr/bin/awk", "-F", " ", "{ n += NF; w[NR] = $1 } END { printf \"%d fields, first %s, last %s\\n\", n, w[1], w[NR] }", filepath.Join(dir, "a.txt")},
		{"/usr/bin/git", "--version"},
		{"/bin/bash", "-c", "d=$(mktemp -d) && cd $d && git init -q r && cd r && echo hi > f && git add f && git -c user.name=u -c user.email=u@x commit -qm first && git log --format=%s && git cat-file -p HEAD:f"},
	}
}

// hostCasePy imports hashlib, re, json and subprocess and runs children:
// python3 found on PATH and /bin/sh.
const hostCasePy = `import hashlib, re, json, subprocess, sys
h = hashlib.sha256(b"abc").hexdigest()
m = re.findall(r"\d+", "a1b22c333")
r = subprocess.run(["python3", "-c", "import sys; print('child', sys.argv[1:]); sys.exit(5)", "x", "y"], capture_output=True, text=True)
print(json.dumps({"h": h[:16], "m": m, "rc": r.returncode, "out": r.stdout.strip()}, sort_keys=True))
p = subprocess.Popen(["/bin/sh", "-c", "echo via sh; exit 2"], stdout=subprocess.PIPE)
print(p.communicate()[0].decode().strip(), p.returncode)
sys.exit(r.returncode + p.returncode)
`

// hostCaseSh is a bash script with pipes, subshells, a here string and
// arithmetic.
const hostCaseSh = `set -e
f() { echo "f:$1"; }
for i in 3 1 2; do f $i; done | sort -r | tr f F
x=$(echo sub | (read y; echo "[$y]"))
echo "$x"
( cd /; pwd; exit 3 ) || echo "subshell status $?"
echo a b c | while read p q r; do echo "$r$q$p"; done
wc -c <<< "here string"
echo $(( 6 * 7 )) $(echo nested $(echo deeper))
`

// compareWithHost runs each case natively and under uvm (guest gives the
// uvm arguments that run the case's program, ok=false: skip it) and
// compares stdout and status.
func compareWithHost(t *testing.T, cases [][]string, guest func(prog string) ([]string, bool)) {
	for _, c := range cases {
		t.Run(filepath.Base(c[0]), func(t *testing.T) {
			if _, err := os.Stat(c[0]); err != nil {
				t.Skip(c[0] + " not installed")
			}
			stdin := "lower case input\n"
			cmd := exec.Command(c[0], c[1:]...)
			cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
			cmd.Stdin = strings.NewReader(stdin)
			var no bytes.Buffer
			cmd.Stdout = &no
			nerr := cmd.Run()
			ncode := 0
			if ee, ok := nerr.(*exec.ExitError); ok {
				ncode = ee.ExitCode()
			} else if nerr != nil {
				t.Skipf("native run failed: %v", nerr)
			}
			g, ok := guest(c[0])
			if !ok {
				t.Skip(c[0] + " not in the guest's file system")
			}
			var o, e bytes.Buffer
			args := append(append([]string{"run", "--clean-env", "-E", "LC_ALL=C", "-E", "PATH=/usr/bin:/bin"}, g...), c[1:]...)
			code := run(args, strings.NewReader(stdin), &o, &e)
			if code != ncode || o.String() != no.String() {
				t.Errorf("status %d (native %d)\n--- uvm\n%s--- native\n%s--- stderr\n%s", code, ncode, o.String(), no.String(), e.String())
			}
		})
	}
}
