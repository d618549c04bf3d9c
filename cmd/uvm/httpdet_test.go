package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHTTPDet: a Go net/http server with eight concurrent clients in one
// guest (testdata/go/httpdet) gives the same output and the same --det
// trace hash in 20 runs on each arch (the host matrix of GOMAXPROCS,
// taskset and a CPU-burning neighbour is TestDetHostIndependent's).
func TestHTTPDet(t *testing.T) {
	want, err := os.ReadFile("../../testdata/expected/go-httpdet.out")
	if err != nil {
		t.Fatal(err)
	}
	runs := 20
	if testing.Short() {
		runs = 3
	}
	hashRE := regexp.MustCompile(`trace-hash ([0-9a-f]{64})`)
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			bin := filepath.Join(goGuestDir(t, arch), "httpdet")
			var first string
			for i := range runs {
				var o, e strings.Builder
				code := run([]string{"run", "--clean-env", "--det", "--trace-hash", bin}, nil, &o, &e)
				m := hashRE.FindStringSubmatch(e.String())
				if code != 0 || o.String() != string(want) || m == nil {
					t.Fatalf("run %d: status %d\n%s--- want\n%s--- stderr\n%s", i, code, o.String(), want, e.String())
				}
				if i == 0 {
					first = m[1]
				} else if m[1] != first {
					t.Fatalf("run %d: trace hash %s, run 0 had %s", i, m[1], first)
				}
			}
		})
	}
}
