package vm

import (
	"encoding/binary"
	"fmt"
)

// Auxiliary vector tags (include/uapi/linux/auxvec.h).
const (
	AT_NULL         = 0
	AT_PHDR         = 3
	AT_PHENT        = 4
	AT_PHNUM        = 5
	AT_PAGESZ       = 6
	AT_BASE         = 7
	AT_FLAGS        = 8
	AT_ENTRY        = 9
	AT_UID          = 11
	AT_EUID         = 12
	AT_GID          = 13
	AT_EGID         = 14
	AT_PLATFORM     = 15
	AT_HWCAP        = 16
	AT_CLKTCK       = 17
	AT_SECURE       = 23
	AT_RANDOM       = 25
	AT_HWCAP2       = 26
	AT_EXECFN       = 31
	AT_SYSINFO_EHDR = 33
	AT_MINSIGSTKSZ  = 51
)

// Stack layout constants. The stack top matches Linux's without ASLR on
// x86-64 (the highest page below TASK_SIZE is left unmapped).
const (
	StackTop  = 0x7ffffffff000
	StackSize = 8 << 20 // RLIMIT_STACK default
)

// StackSpec is what the initial process stack holds.
type StackSpec struct {
	Argv, Envp []string
	ExecFn     string
	Platform   string // "aarch64" or "x86_64"
	HWCap      uint64
	HWCap2     uint64
	Random     [16]byte // AT_RANDOM bytes
	UID, GID   uint64
	MinSigStk  uint64 // AT_MINSIGSTKSZ (0 = omit)
	// InterpBase is AT_BASE: where the program interpreter is loaded
	// (0 for a static program).
	InterpBase uint64
	// SysinfoEhdr is AT_SYSINFO_EHDR, the vDSO's ELF header (0 = omit:
	// no vDSO).
	SysinfoEhdr uint64
}

// SetupStack maps the stack and writes argc, argv, envp and auxv as
// Linux's create_elf_tables does. It returns the initial stack pointer
// (pointing at argc, 16-byte aligned).
func SetupStack(mm *MM, img *Image, s *StackSpec) (uint64, error) {
	if err := mm.Map(VMA{Start: StackTop - StackSize, End: StackTop, Prot: ProtRead | ProtWrite, Name: "[stack]"}); err != nil {
		return 0, err
	}
	sp := uint64(StackTop)
	push := func(b []byte) (uint64, error) {
		sp -= uint64(len(b))
		return sp, mm.WriteAt(b, sp)
	}
	pushStr := func(str string) (uint64, error) { return push(append([]byte(str), 0)) }

	// Strings at the top: execfn first (highest), then envp and argv strings.
	execfn, err := pushStr(s.ExecFn)
	if err != nil {
		return 0, err
	}
	envAddrs := make([]uint64, len(s.Envp))
	for i := len(s.Envp) - 1; i >= 0; i-- {
		if envAddrs[i], err = pushStr(s.Envp[i]); err != nil {
			return 0, err
		}
	}
	argAddrs := make([]uint64, len(s.Argv))
	for i := len(s.Argv) - 1; i >= 0; i-- {
		if argAddrs[i], err = pushStr(s.Argv[i]); err != nil {
			return 0, err
		}
	}
	plat, err := pushStr(s.Platform)
	if err != nil {
		return 0, err
	}
	sp &^= 15
	random, err := push(s.Random[:])
	if err != nil {
		return 0, err
	}
	sp &^= 15

	var auxv [][2]uint64
	if s.SysinfoEhdr != 0 {
		// ARCH_DLINFO comes first on both arches.
		auxv = append(auxv, [2]uint64{AT_SYSINFO_EHDR, s.SysinfoEhdr})
	}
	auxv = append(auxv, [][2]uint64{
		{AT_HWCAP, s.HWCap},
		{AT_PAGESZ, PageSize},
		{AT_CLKTCK, 100},
		{AT_PHDR, img.Phdr},
		{AT_PHENT, img.Phent},
		{AT_PHNUM, img.Phnum},
		{AT_BASE, s.InterpBase},
		{AT_FLAGS, 0},
		{AT_ENTRY, img.Entry},
		{AT_UID, s.UID},
		{AT_EUID, s.UID},
		{AT_GID, s.GID},
		{AT_EGID, s.GID},
		{AT_SECURE, 0},
		{AT_RANDOM, random},
		{AT_HWCAP2, s.HWCap2},
		{AT_EXECFN, execfn},
		{AT_PLATFORM, plat},
	}...)
	if s.MinSigStk != 0 {
		auxv = append(auxv, [2]uint64{AT_MINSIGSTKSZ, s.MinSigStk})
	}
	auxv = append(auxv, [2]uint64{AT_NULL, 0})

	words := 1 + len(argAddrs) + 1 + len(envAddrs) + 1 + 2*len(auxv)
	sp -= uint64(words * 8)
	sp &^= 15
	buf := make([]byte, 0, words*8)
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	put(uint64(len(argAddrs)))
	for _, a := range argAddrs {
		put(a)
	}
	put(0)
	for _, a := range envAddrs {
		put(a)
	}
	put(0)
	for _, kv := range auxv {
		put(kv[0])
		put(kv[1])
	}
	if err := mm.WriteAt(buf, sp); err != nil {
		return 0, fmt.Errorf("initial stack: %w", err)
	}
	mm.Auxv = append([]byte(nil), buf[len(buf)-16*len(auxv):]...)
	return sp, nil
}
