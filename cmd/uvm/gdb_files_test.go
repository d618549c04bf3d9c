package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestGDBSharedLibraries: gdb on a dynamic program finds its libraries
// through the stub (qXfer:libraries-svr4 for the list, the vFile host
// I/O packets for the files, read as the guest sees them: on arm64 from
// the -L sysroot, with no `set sysroot` in gdb), sets a breakpoint in
// libc and reads /proc/PID/maps from uvm's /proc.
func TestGDBSharedLibraries(t *testing.T) {
	for _, arch := range guestArches {
		t.Run(arch, func(t *testing.T) {
			flags := dynamicSetup(t, arch)
			r := runUnderGDB(t, arch, flags, "dynhello", nil,
				"break main", "continue", "info sharedlibrary", "break write", "continue", "bt 1",
				"info proc mappings", "kill")
			mustContain(t, r, "Breakpoint 1, ", "Shared Object Library", "[stack]", "[vdso]")
			for _, lib := range []string{"libc.so.6", "ld-linux-"} {
				if !regexp.MustCompile(`0x[0-9a-f]+ +0x[0-9a-f]+ +Yes.* target:\S*` + regexp.QuoteMeta(lib)).MatchString(r.gdb) {
					t.Errorf("info sharedlibrary lacks %s read from the target:\n%s", lib, r.gdb)
				}
			}
			if !regexp.MustCompile(`Breakpoint 2, .*write`).MatchString(r.gdb) {
				t.Errorf("the breakpoint in libc's write was not hit:\n%s", r.gdb)
			}
			if !regexp.MustCompile(`r-xp +\S*libc\.so\.6`).MatchString(r.gdb) {
				t.Errorf("info proc mappings lacks libc's text:\n%s", r.gdb)
			}
			for _, bad := range []string{"unable to open /proc file", "does not support file transfer"} {
				if strings.Contains(r.gdb, bad) {
					t.Errorf("gdb: %q:\n%s", bad, r.gdb)
				}
			}
		})
	}
}
