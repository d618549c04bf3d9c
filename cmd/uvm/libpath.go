package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
)

// findLibrary resolves a probe's short library name (libc.so.6) to the
// host file the guest's dynamic loader would map: the first match in the
// standard library directories of the program's arch, inside the -L
// prefix (falling back to the host's own, as the loader does under -L)
// or inside the --root directory.
func findLibrary(name, prefix, rootDir, exe string) (string, error) {
	triple := "x86_64-linux-gnu"
	if f, err := elf.Open(exe); err == nil {
		if f.Machine == elf.EM_AARCH64 {
			triple = "aarch64-linux-gnu"
		}
		f.Close()
	}
	dirs := []string{"/lib/" + triple, "/usr/lib/" + triple, "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"}
	var bases []string
	switch {
	case rootDir != "":
		bases = []string{rootDir}
	case prefix != "":
		bases = []string{prefix, ""}
	default:
		bases = []string{""}
	}
	for _, b := range bases {
		for _, d := range dirs {
			p := filepath.Join(b, d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("library %s not found in the guest's library directories (%s …)", name, dirs[0])
}
