package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A guest that touches memory forever under --mem-limit dies by the OOM
// killer's SIGKILL (status 137) instead of taking the host down, in both
// schedulers and on both arches.
func TestMemLimitOOMKill(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, det := range []bool{true, false} {
			args := []string{"run", "--mem-limit", "32M"}
			if det {
				args = append(args, "--det")
			}
			args = append(args, "../../testdata/bin/"+arch+"/hostile", "--memhog")
			var o, e bytes.Buffer
			code := run(args, nil, &o, &e)
			if code != 137 || !strings.Contains(e.String(), "out of memory (limit 32 MiB): killed process") {
				t.Errorf("%s det=%v: status %d, stderr %q, stdout %q", arch, det, code, e.String(), o.String())
			}
		}
	}
}

// An exec of something that is not a regular file (an endless device) is
// refused before anything is read.
func TestRunDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "/dev/zero"}, nil, &o, &e); code != 126 || !strings.Contains(e.String(), "not a regular file") {
		t.Fatalf("status %d, stderr %q", code, e.String())
	}
}

func TestLimitFlags(t *testing.T) {
	for _, c := range []struct {
		val  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"256M", 256 << 20, true}, {"2g", 2 << 30, true}, {"50%", 500, true},
		{"101%", 0, false}, {"-1", 0, false}, {"12Q", 0, false}, {"99999999999T", 0, false},
	} {
		got, err := parseMemLimit(c.val, 1000)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %d, %v", c.val, got, err)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"run", "--mem-limit", "lots", "../../testdata/bin/amd64/hello"}, nil, &o, &e); code != 2 || !strings.Contains(e.String(), "--mem-limit") {
		t.Errorf("bad --mem-limit: status %d, %q", code, e.String())
	}
	if code := run([]string{"run", "--max-procs", "-3", "../../testdata/bin/amd64/hello"}, nil, &o, &e); code != 2 {
		t.Errorf("negative --max-procs: status %d", code)
	}
}
