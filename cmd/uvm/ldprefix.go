package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ldPrefix is the sysroot of a run: -L DIR, else $UVM_LD_PREFIX (uvm's
// QEMU_LD_PREFIX; a replay runs in its recording and takes neither from
// the environment). It must be a directory: a prefix that does not exist
// would send every path to the host without a word. The status of a bad
// one is a shell's for the execve error: 127 for ENOENT, else 126.
func ldPrefix(flagDir string, replay bool, stderr io.Writer) (string, int) {
	dir, from := flagDir, "-L "
	if dir == "" && !replay {
		dir, from = os.Getenv("UVM_LD_PREFIX"), "UVM_LD_PREFIX="
	}
	if dir == "" {
		return "", 0
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "uvm run: sysroot %s%s does not exist\n", from, dir)
		return "", 127
	case err != nil:
		fmt.Fprintf(stderr, "uvm run: sysroot %s%s: %v\n", from, dir, err)
		return "", 126
	case !fi.IsDir():
		fmt.Fprintf(stderr, "uvm run: sysroot %s%s is not a directory\n", from, dir)
		return "", 126
	}
	return dir, 0
}
