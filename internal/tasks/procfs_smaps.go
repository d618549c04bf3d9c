package tasks

import (
	"fmt"
	"strings"

	"github.com/uvm-emu/uvm/internal/vm"
)

// /proc/PID/smaps and smaps_rollup. One smaps entry per line of maps (the
// same header line), with the counts Linux's show_smap prints; the rollup
// is their sum, its Pss summed before the shift as Linux does. uvm's model
// of memory: every resident page is dirty and referenced (there is no
// accessed or dirty bit to read), a page is shared while fork left it
// copy-on-write in more than one address space (Pss divides it among them),
// pages of MAP_SHARED objects count as this process's own; nothing is
// swapped, locked, or in a huge page.

// smapsCount is what one mapping, or the rollup, adds up.
type smapsCount struct {
	size, rss, private int64  // bytes
	pss                uint64 // bytes << vm.PssShift
	anon, shmem, file  uint64 // pss by kind, bytes << vm.PssShift
	anonRSS            int64  // bytes
}

func (c *smapsCount) add(o smapsCount) {
	c.size += o.size
	c.rss += o.rss
	c.private += o.private
	c.pss += o.pss
	c.anon += o.anon
	c.shmem += o.shmem
	c.file += o.file
	c.anonRSS += o.anonRSS
}

// smapsOf counts v's resident pages.
func smapsOf(mm *vm.MM, v vm.VMA) smapsCount {
	present, private, pss := mm.Residency(v.Start, v.End)
	c := smapsCount{size: int64(v.End - v.Start), rss: present * vm.PageSize, private: private * vm.PageSize, pss: pss}
	switch {
	case v.Shared && v.Name != "" && v.Inode != 0:
		c.file = pss
	case v.Shared:
		c.shmem = pss
	default:
		c.anon, c.anonRSS = pss, c.rss
	}
	return c
}

// vmFlags is the VmFlags line's mnemonics for v (Linux's show_smap_vma_flags,
// for the flags uvm's mappings can have).
func vmFlags(v vm.VMA) string {
	var f []string
	if v.Prot&vm.ProtRead != 0 {
		f = append(f, "rd")
	}
	if v.Prot&vm.ProtWrite != 0 {
		f = append(f, "wr")
	}
	if v.Prot&vm.ProtExec != 0 {
		f = append(f, "ex")
	}
	if v.Shared {
		f = append(f, "sh")
	}
	switch v.Name {
	case "[vvar]":
		return strings.Join(append(f, "mr", "pf", "io", "de", "dd"), " ") + " "
	case "[vdso]":
		return strings.Join(append(f, "mr", "mw", "me", "de"), " ") + " "
	}
	f = append(f, "mr", "mw", "me")
	if v.Shared {
		f = append(f, "ms")
	}
	if v.Name == "[stack]" {
		f = append(f, "gd")
	}
	if !v.Shared && v.Prot&vm.ProtWrite != 0 {
		f = append(f, "ac")
	}
	return strings.Join(f, " ") + " "
}

// smapsBody writes the counts of an entry (rollup: the rollup's fields).
func smapsBody(b *strings.Builder, c smapsCount, rollup bool) {
	kb := func(n int64) int64 { return n >> 10 }
	pss := func(n uint64) int64 { return int64(n >> (vm.PssShift + 10)) }
	line := func(name string, v int64) { fmt.Fprintf(b, "%-16s%8d kB\n", name+":", v) }
	if !rollup {
		line("Size", kb(c.size))
		line("KernelPageSize", vm.PageSize>>10)
		line("MMUPageSize", vm.PageSize>>10)
	}
	line("Rss", kb(c.rss))
	line("Pss", pss(c.pss))
	line("Pss_Dirty", pss(c.pss))
	if rollup {
		line("Pss_Anon", pss(c.anon))
		line("Pss_File", pss(c.file))
		line("Pss_Shmem", pss(c.shmem))
	}
	line("Shared_Clean", 0)
	line("Shared_Dirty", kb(c.rss-c.private))
	line("Private_Clean", 0)
	line("Private_Dirty", kb(c.private))
	line("Referenced", kb(c.rss))
	line("Anonymous", kb(c.anonRSS))
	for _, name := range []string{"KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped",
		"Shared_Hugetlb", "Private_Hugetlb", "Swap", "SwapPss", "Locked"} {
		line(name, 0)
	}
}

// smapsVMAs is maps' list of mappings, the vsyscall page included.
func smapsVMAs(tg *ThreadGroup) []vm.VMA {
	vmas := tg.mm.VMAs()
	if exe, name := tg.mm.ExePath, tg.mm.ExeName; name != "" && name != exe {
		for i := range vmas {
			if vmas[i].Name == exe {
				vmas[i].Name = name // as procMaps names it
			}
		}
	}
	return vmas
}

// procSmaps is /proc/PID/smaps.
func procSmaps(tg *ThreadGroup) []byte {
	var b strings.Builder
	for _, v := range smapsVMAs(tg) {
		b.WriteString(formatMaps([]vm.VMA{v}))
		smapsBody(&b, smapsOf(tg.mm, v), false)
		fmt.Fprintf(&b, "THPeligible:    %8d\n", 0)
		b.WriteString("VmFlags: " + vmFlags(v) + "\n")
	}
	if tg.arch.vsyscall {
		b.WriteString(vsyscallMapsLine)
		smapsBody(&b, smapsCount{size: vm.PageSize}, false)
		fmt.Fprintf(&b, "THPeligible:    %8d\n", 0)
		b.WriteString("VmFlags: ex \n")
	}
	return []byte(b.String())
}

// procSmapsRollup is /proc/PID/smaps_rollup: the address range of all
// mappings and the sum of their smaps counts.
func procSmapsRollup(tg *ThreadGroup) []byte {
	vmas := smapsVMAs(tg)
	var lo, hi uint64
	if len(vmas) > 0 {
		lo, hi = vmas[0].Start, vmas[len(vmas)-1].End
	}
	if tg.arch.vsyscall {
		hi = vsyscallAddr + vm.PageSize
	}
	var sum smapsCount
	for _, v := range vmas {
		sum.add(smapsOf(tg.mm, v))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%08x-%08x ---p 00000000 00:00 0%s[rollup]\n", lo, hi, strings.Repeat(" ", 26))
	smapsBody(&b, sum, true)
	return []byte(b.String())
}
