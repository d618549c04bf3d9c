package tasks

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/uvm-emu/uvm/internal/vm"
)

// loadInterp loads the program interpreter a dynamically linked image
// names (PT_INTERP), as binfmt_elf does: from the guest's file system (so
// -L and --root apply; look, when set, finds the file system and name
// for it, else k.fs takes the name as written), at a free base found
// top-down. It returns where
// the thread starts (the interpreter's entry, or the program's for a
// static one) and AT_BASE.
func (k *Kernel) loadInterp(mm *vm.MM, img *vm.Image, look func(string) (vfs, string)) (entry, base uint64, err error) {
	if img.Interp == "" {
		return img.Entry, 0, nil
	}
	fsys, name := k.fs, img.Interp
	if look != nil {
		fsys, name = look(img.Interp)
	}
	data, err := readFileVFS(fsys, name, maxExecutable)
	if err != nil {
		return 0, 0, fmt.Errorf("program interpreter %s: %w", img.Interp, err)
	}
	ii, err := vm.LoadInterp(mm, img.Interp, data)
	if err != nil {
		return 0, 0, fmt.Errorf("program interpreter %s: %w", img.Interp, err)
	}
	if ii.Arch != img.Arch {
		return 0, 0, fmt.Errorf("program interpreter %s is for %s, the program for %s: %w", img.Interp, ii.Arch, img.Arch, vm.ErrUnsupported)
	}
	if fi, err := fsys.stat(name); err == nil {
		st := statFromInfo(fi)
		mm.SetFileIdentity(img.Interp, st.dev, st.ino)
	}
	return ii.Entry, ii.Base, nil
}

// elibbad is Linux's ELIBBAD: a corrupt or unusable program interpreter.
const elibbad Errno = 80

// execErrno is execve's errno for an interpreter that could not be loaded.
func execErrno(err error) Errno {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ENOENT
	case errors.Is(err, vm.ErrNotELF), errors.Is(err, vm.ErrBadELF), errors.Is(err, vm.ErrUnsupported), errors.Is(err, ErrExec):
		return elibbad
	}
	return errnoOf(err)
}
