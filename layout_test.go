// Package uvm_test holds repository-wide checks: the package import
// direction of ARCHITECTURE.md and file-naming rules.
package uvm_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowed lists, for each uvm package, the uvm packages it may import
// (ARCHITECTURE.md, "Packages and their direction"). Test files may also
// import the packages they test.
var allowed = map[string][]string{
	"cmd/uvm":                            {"internal/tasks", "internal/vm", "uprobes", "internal/signals", "internal/icache", "internal/decode", "internal/vm/arm64", "internal/vm/amd64", "internal/guestprof", "internal/gdbstub", "internal/timing"},
	"internal/tasks":                     {"uprobes", "internal/signals", "internal/vm", "internal/vm/arm64", "internal/vm/amd64", "internal/icache", "internal/decode", "internal/guestprof", "internal/timing", "internal/vdso"},
	"internal/tasks/internal/sysgen":     {},
	"uprobes":                            {"internal/decode", "internal/hostfence"},
	"internal/guestprof":                 {"internal/vm"},
	"internal/signals":                   {},
	"internal/vm/arm64":                  {"internal/vm", "internal/icache", "internal/decode", "internal/vm/arm64/internal/hookgen"},
	"internal/vm/arm64/internal/hookgen": {},
	"internal/vm/amd64":                  {"internal/vm", "internal/icache", "internal/decode"},
	"internal/vm":                        {"internal/hostfence"},
	"internal/hostfence":                 {},
	"internal/icache":                    {"internal/vm", "internal/decode"},
	"internal/decode":                    {},
	"internal/gdbstub":                   {},
	".":                                  {"internal/tasks", "internal/vm", "uprobes", "internal/signals", "internal/icache", "internal/decode", "internal/vm/arm64", "internal/vm/amd64", "internal/guestprof"},
	"uvmtest":                            {}, // imports only the root package uvm
	"internal/timing":                    {},
	"internal/vdso":                      {},
}

func TestImportDirection(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		base := strings.TrimSuffix(d.Name(), ".go")
		base = strings.TrimSuffix(base, "_test")
		if strings.HasSuffix(base, "_arm64") || strings.HasSuffix(base, "_amd64") {
			t.Errorf("%s: guest-arch files must not end in _arm64.go/_amd64.go (host build constraint)", path)
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("%s: package %s is not in the import-direction table (add it to layout_test.go and ARCHITECTURE.md)", path, pkg)
			return nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "golang.org/x/arch") && pkg != "internal/decode" {
				t.Errorf("%s imports %s: only internal/decode/ may import golang.org/x/arch", path, p)
			}
			if !strings.HasPrefix(p, "github.com/uvm-emu/uvm/") {
				continue
			}
			dep := strings.TrimPrefix(p, "github.com/uvm-emu/uvm/")
			isTest := strings.HasSuffix(path, "_test.go")
			if dep == pkg || (isTest && allowedTestDep(pkg, dep)) {
				continue
			}
			found := false
			for _, a := range ok {
				if a == dep {
					found = true
				}
			}
			if !found {
				t.Errorf("%s imports uvm/%s: not allowed by ARCHITECTURE.md", path, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// allowedTestDep lets tests reach one level further down (a vm test may
// use an interpreter to run code, for example) but never upward.
func allowedTestDep(pkg, dep string) bool {
	order := map[string]int{"decode": 0, "gdbstub": 0, "timing": 0, "vm": 1, "vdso": 1, "icache": 2, "vm/arm64": 3, "vm/amd64": 3, "signals": 3, "uprobes": 3, "guestprof": 3, "tasks": 4, "cmd/uvm": 5, ".": 6}
	return order[dep] <= order[pkg]+1
}
