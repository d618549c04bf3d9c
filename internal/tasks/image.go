package tasks

import (
	"fmt"
	"io"

	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// loadedImage is a program made ready to run in a fresh address space:
// its ELF image, a CPU at the entry point (the interpreter's, for a
// dynamic program) with the initial stack, and the arch's ABI.
type loadedImage struct {
	img  *vm.Image
	cpu  vm.CPU
	arch *arch
	sp   uint64
}

// loadImage is the image setup Kernel.Start and execve share (Linux's
// load_elf_binary): map the ELF file (data, named abs) into mm, its
// interpreter and the vDSO, build the stack from spec (AT_RANDOM drawn
// from the kernel's source, the arch's platform and hwcaps filled in)
// and a CPU of the image's arch. On failure it returns execve's errno
// for the step that failed with the error. look finds the interpreter
// (see loadInterp).
func (k *Kernel) loadImage(mm *vm.MM, abs string, data []byte, spec *vm.StackSpec, look func(string) (vfs, string)) (loadedImage, Errno, error) {
	img, err := vm.LoadELF(mm, abs, data)
	if err != nil {
		return loadedImage{}, ENOEXEC, err
	}
	if _, err := io.ReadFull(k.opts.Random, spec.Random[:]); err != nil {
		return loadedImage{}, EIO, err
	}
	var cpu vm.CPU
	var a *arch
	switch img.Arch {
	case vm.ArchARM64:
		c := arm64.NewCPU(mm)
		if !c.SetCPUModel(k.opts.CPUModel) {
			return loadedImage{}, EINVAL, fmt.Errorf("unknown arm64 CPU model %q (one of %v)", k.opts.CPUModel, arm64.ModelNames())
		}
		cpu, a = c, &arm64ABI
		spec.HWCap, spec.HWCap2 = c.CPUModel().HWCAP, c.CPUModel().HWCAP2
		spec.MinSigStk = 5120 // arch/arm64's AT_MINSIGSTKSZ for the SVE-less signal frame
	case vm.ArchAMD64:
		c := amd64.NewCPU(mm)
		if !c.SetCPUModel(k.opts.CPUModel) {
			return loadedImage{}, EINVAL, fmt.Errorf("unknown x86-64 CPU model %q", k.opts.CPUModel)
		}
		cpu, a = c, &amd64ABI
		spec.HWCap, spec.HWCap2 = amd64.HWCAP(), amd64.HWCAP2()
	default:
		return loadedImage{}, ENOEXEC, fmt.Errorf("%s: no ABI for arch %v", abs, img.Arch)
	}
	spec.Platform = a.machine
	entry, interpBase, err := k.loadInterp(mm, img, look)
	if err != nil {
		return loadedImage{}, execErrno(err), err
	}
	spec.InterpBase = interpBase
	if spec.SysinfoEhdr, err = k.mapVDSO(mm, img.Arch); err != nil {
		return loadedImage{}, ENOMEM, err
	}
	sp, err := vm.SetupStack(mm, img, spec)
	if err != nil {
		return loadedImage{}, ENOMEM, err
	}
	cpu.SetSP(sp)
	cpu.SetPC(entry)
	k.attachCacheModel(cpu)
	return loadedImage{img: img, cpu: cpu, arch: a, sp: sp}, 0, nil
}
