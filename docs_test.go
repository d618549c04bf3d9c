package uvm_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// walkGoFiles parses every Go file of the module (not testdata, not
// dot-directories) with mode and calls fn on it.
func walkGoFiles(mode parser.Mode, fn func(path string, f *ast.File, fset *token.FileSet) error) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		return fn(path, f, fset)
	})
}

// declared is every name the module declares, for the doc checks: package
// names (the directory's last element), top-level identifiers, methods and
// struct fields as "Type.Name", and package-qualified "pkg.Name".
type declared map[string]bool

func moduleDecls(t *testing.T) declared {
	t.Helper()
	d := declared{}
	err := walkGoFiles(parser.SkipObjectResolution, func(path string, f *ast.File, _ *token.FileSet) error {
		pkg := filepath.Base(filepath.Dir(path))
		if filepath.Dir(path) == "." {
			pkg = "uvm"
		}
		d[pkg] = true
		add := func(name string) {
			d[name] = true
			d[pkg+"."+name] = true
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil || len(decl.Recv.List) == 0 {
					add(decl.Name.Name)
					continue
				}
				recv := decl.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if ix, ok := recv.(*ast.IndexExpr); ok {
					recv = ix.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					add(id.Name + "." + decl.Name.Name)
					d[decl.Name.Name] = true
					d["."+decl.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(spec.Name.Name)
						fieldsOf(spec, add, d)
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func fieldsOf(spec *ast.TypeSpec, add func(string), d declared) {
	var list *ast.FieldList
	switch ty := spec.Type.(type) {
	case *ast.StructType:
		list = ty.Fields
	case *ast.InterfaceType:
		list = ty.Methods
	default:
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			add(spec.Name.Name + "." + n.Name)
			d["."+n.Name] = true // a member of some type, for field chains
		}
		if len(f.Names) == 0 { // embedded
			if id, ok := f.Type.(*ast.Ident); ok {
				add(spec.Name.Name + "." + id.Name)
			}
			if st, ok := f.Type.(*ast.StarExpr); ok {
				if id, ok := st.X.(*ast.Ident); ok {
					add(spec.Name.Name + "." + id.Name)
				}
			}
		}
	}
}

// codeRef matches a code span that names Go code: a call, pkg.Name,
// Type.Method, (*Type).Method, pkg.Type.Method, optionally with "()".
var codeRef = regexp.MustCompile(`^\(?\*?([A-Za-z_]\w*)\)?((?:\.[A-Za-z_]\w*)*)(\(\))?$`)

// foreign are the non-uvm packages whose names the docs use.
var foreign = map[string]bool{
	"sync": true, "atomic": true, "os": true, "math": true, "runtime": true, "testing": true,
	"context": true, "io": true, "time": true, "bits": true, "elf": true, "unix": true,
	"pprof": true, "x86asm": true, "arm64asm": true, "errors": true, "binary": true,
	"debug": true, "exec": true, "fmt": true, "strings": true, "bytes": true, "syscall": true,
}

// resolves reports whether a code reference names something the module
// declares. Single words are only checked when written as calls ("f()"):
// plain words in code spans are often C, shell or kernel names.
func (d declared) resolves(ref string) bool {
	m := codeRef.FindStringSubmatch(ref)
	if m == nil {
		return true // not a Go reference
	}
	parts := append([]string{m[1]}, strings.Split(strings.TrimPrefix(m[2], "."), ".")...)
	if m[2] == "" {
		parts = parts[:1]
		if m[3] == "" {
			return true
		}
	}
	if foreign[parts[0]] {
		return true
	}
	if len(parts) == 1 {
		return d[parts[0]]
	}
	if !d[parts[0]] && !d["."+parts[0]] {
		return true // not rooted in a Go name (a config key such as cost.slab_list)
	}
	// pkg.Name or Type.Member are declared together; a chain through
	// fields (Type.field.Member, field.Member) needs its first link and a
	// member of that name.
	n := len(parts)
	if n == 2 && d[parts[0]+"."+parts[1]] {
		return true
	}
	first := d[parts[0]+"."+parts[1]] || (n == 2 && d["."+parts[0]])
	return first && d["."+parts[n-1]] || n > 2 && d[parts[0]+"."+parts[1]] && d[parts[n-2]+"."+parts[n-1]]
}

var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// fileName matches code spans that are file names, not Go names.
var fileName = regexp.MustCompile(`\.(go|md|sh|txt|S|c|h|xml|out|pgo|gz|json|svg|prof|so|test)$`)

// TestDocsNameRealCode: every Go name the design documents write in a code
// span (ARCHITECTURE.md, README.md, BENCHMARKS.md) exists in the module, so
// the documents cannot silently keep naming functions that were renamed or
// removed.
func TestDocsNameRealCode(t *testing.T) {
	d := moduleDecls(t)
	// The keys of the machine descriptions (internal/timing/machines/*.txt) are
	// names the documents may use too.
	machines, _ := filepath.Glob("internal/timing/machines/*.txt")
	for _, m := range machines {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				d[f[0]] = true
			}
		}
	}
	for _, doc := range []string{"ARCHITECTURE.md", "README.md", "BENCHMARKS.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				ref := m[1]
				if strings.ContainsAny(ref, " /=-") || fileName.MatchString(ref) {
					continue
				}
				if !d[ref] && !d.resolves(ref) {
					t.Errorf("%s:%d: `%s` names no declaration in the module", doc, i+1, ref)
				}
			}
		}
	}
}

// goCall matches a Go-style name written as a call in a comment ("f()",
// "T.M()", "pkg.F()"); names with underscores are kernel or C landmarks.
var goCall = regexp.MustCompile(`(?:^|[\s(\x60])((?:\(\*)?[A-Za-z][A-Za-z0-9]*\)?(?:\.[A-Za-z][A-Za-z0-9]*)*)\(\)`)

// TestCommentsNameRealCode: a comment that names a Go function as a call
// (as in "see moduleDecls()") names one that exists. A call on a variable
// ("t.cpu.PC()") needs a method of that name; a single name may also be a
// parameter or local of the file; all-capitals names are C macros.
func TestCommentsNameRealCode(t *testing.T) {
	d := moduleDecls(t)
	err := walkGoFiles(parser.ParseComments|parser.SkipObjectResolution, func(path string, f *ast.File, fset *token.FileSet) error {
		local := map[string]bool{"func": true}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				local[id.Name] = true
			}
			return true
		})
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range goCall.FindAllStringSubmatch(c.Text, -1) {
					ref := m[1]
					if local[ref] || strings.ToUpper(ref) == ref {
						continue
					}
					parts := strings.Split(strings.Trim(ref, "(*)"), ".")
					if len(parts) > 1 && !d[parts[0]] && !d[parts[0]+"."+parts[1]] && strings.ToLower(parts[0][:1]) == parts[0][:1] {
						// a variable: its last link must be a method or field
						if !d["."+parts[len(parts)-1]] {
							t.Errorf("%s: comment calls %s(), and no type has a method %s", fset.Position(c.Pos()), ref, parts[len(parts)-1])
						}
						continue
					}
					if !d.resolves(ref + "()") {
						t.Errorf("%s: comment names %s(), which is not declared in the module", fset.Position(c.Pos()), ref)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
