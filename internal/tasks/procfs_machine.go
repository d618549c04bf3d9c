package tasks

import (
	"fmt"
	"io"
	"strings"

	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/amd64"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// The machine half of uvm's /proc: cpuinfo, meminfo, stat, uptime,
// loadavg, version and /proc/sys/kernel describe the machine the guest
// is given — its architecture's CPU model, the CPUs it sees, the memory
// limit and uvm's accounting, the kernel's clock (virtual in --det) —
// never the host's. The rest of /proc is the processes' (procfs_pid.go);
// other names under /proc do not exist.

// Identity of the emulated kernel (uname and /proc/sys/kernel agree).
const (
	unameSysname  = "Linux"
	unameNodename = "uvm"
	unameRelease  = "6.8.0-uvm"
	unameVersion  = "#1 SMP PREEMPT uvm"
	// procPidMax is /proc/sys/kernel/pid_max: PID_MAX_LIMIT, as pids are
	// never reused.
	procPidMax = 4194304
)

// DetMemTotal is the memory /proc/meminfo and sysinfo report without a
// cap, and in --det when the cap is a share of the host's memory.
const DetMemTotal = 8 << 30

// memTotalBytes is the memory the guest's machine has: Limits.MemTotal,
// else the memory limit, else DetMemTotal.
func (k *Kernel) memTotalBytes() int64 {
	if m := k.opts.Limits.MemTotal; m > 0 {
		return m
	}
	if m := k.opts.Limits.MemBytes; m > 0 {
		return m
	}
	return DetMemTotal
}

// memFreeBytes is what of memTotalBytes the guest's resident pages leave.
func (k *Kernel) memFreeBytes() int64 {
	return max(k.memTotalBytes()-k.acct.Used()*vm.PageSize, 0)
}

// procMachineFiles are the regular files at the top of /proc.
var procMachineFiles = map[string]func(t *Task) []byte{
	"cpuinfo": (*Task).procCPUInfo,
	"meminfo": (*Task).procMeminfo,
	"stat":    (*Task).procKernelStat,
	"uptime":  (*Task).procUptime,
	"loadavg": (*Task).procLoadavg,
	"version": func(*Task) []byte {
		return []byte("Linux version " + unameRelease + " (uvm@uvm) (uvm) " + unameVersion + "\n")
	},
	"filesystems": func(*Task) []byte { return []byte(procFilesystems) },
}

// procFilesystems is /proc/filesystems: the kernel's own in-memory file
// systems (the ones uvm models: proc, the synthetic /dev, pipes, sockets,
// anonymous inodes) and the disk file systems a guest's host-backed files
// commonly live on, fixed so that --det output does not depend on the
// host. Programs read it to probe for a file system type (libselinux for
// selinuxfs, which is absent here as on a kernel without SELinux).
const procFilesystems = "nodev\tsysfs\nnodev\ttmpfs\nnodev\tbdev\nnodev\tproc\nnodev\tcgroup2\n" +
	"nodev\tdevtmpfs\nnodev\tsockfs\nnodev\tpipefs\nnodev\tanon_inodefs\nnodev\tramfs\n" +
	"nodev\tdevpts\n\text4\n\txfs\n\tbtrfs\n\tvfat\nnodev\toverlay\n"

// procSysKernel are the files of /proc/sys/kernel.
var procSysKernel = map[string]func(t *Task) []byte{
	"hostname":    func(*Task) []byte { return []byte(unameNodename + "\n") },
	"ostype":      func(*Task) []byte { return []byte(unameSysname + "\n") },
	"osrelease":   func(*Task) []byte { return []byte(unameRelease + "\n") },
	"version":     func(*Task) []byte { return []byte(unameVersion + "\n") },
	"pid_max":     func(*Task) []byte { return []byte(itoa(procPidMax) + "\n") },
	"ngroups_max": func(*Task) []byte { return []byte(itoa(ngroupsMax) + "\n") },
}

// procSysRandom are the files of /proc/sys/kernel/random: uuid is a new
// random UUID at every open (from the kernel's generator, seeded in
// --det), boot_id the first one drawn.
var procSysRandom = map[string]func(t *Task) []byte{
	"uuid":    func(t *Task) []byte { return []byte(t.tg.k.randomUUID() + "\n") },
	"boot_id": func(t *Task) []byte { return []byte(t.tg.k.bootID() + "\n") },
}

// randomUUID draws a version-4 UUID from the kernel's generator.
func (k *Kernel) randomUUID() string {
	var b [16]byte
	if _, err := io.ReadFull(k.opts.Random, b[:]); err != nil {
		return "00000000-0000-4000-8000-000000000000"
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// bootID is /proc/sys/kernel/random/boot_id: drawn once, at first read.
func (k *Kernel) bootID() string {
	k.procfsOnce.Do(func() { k.procfsBootID = k.randomUUID() })
	return k.procfsBootID
}

// procMachineLookup resolves the non-process paths under /proc.
func (t *Task) procMachineLookup(g string, c []string) (procEntry, bool, Errno) {
	file := func(gen func(*Task) []byte) procEntry {
		return procEntry{path: g, mode: sIFREG | 0o444, contents: func() ([]byte, Errno) { return gen(t), 0 }}
	}
	dir := func(names []string, typ uint8) procEntry {
		return procEntry{path: g, mode: sIFDIR | 0o555, dirents: func() []dirent {
			out := make([]dirent, 0, len(names))
			for _, n := range names {
				out = append(out, dirent{n, pathInode(g + "/" + n), typ})
			}
			return out
		}}
	}
	if c[0] == "mounts" && len(c) == 1 {
		// The link to self/mounts (as Linux's), followed by open and stat.
		e := procEntry{path: g, mode: sIFLNK | 0o777, target: func() (string, Errno) { return "self/mounts", 0 }}
		e.follow = func() (*openFile, Errno) {
			data := []byte(formatMounts(t.tg.k.guestMounts()))
			ent := procEntry{path: "/proc/" + itoa(int(t.tg.pid)) + "/mounts", mode: sIFREG | 0o444}
			return &openFile{ops: &procDataFile{memFile: memFile{data: data}, ent: ent}, path: ent.path}, 0
		}
		return e, true, 0
	}
	if c[0] == "mounts" {
		return procEntry{}, true, ENOTDIR
	}
	if c[0] == "net" {
		if t.tg.k.hostNet() {
			return procEntry{}, false, 0 // the link to self/net: the host's
		}
		// The link to self/net; a path through it was rewritten by
		// procCanonStep.
		return procEntry{path: g, mode: sIFLNK | 0o777, target: func() (string, Errno) { return "self/net", 0 }}, true, 0
	}
	switch len(c) {
	case 1:
		if gen, ok := procMachineFiles[c[0]]; ok {
			return file(gen), true, 0
		}
		if c[0] == "sys" {
			return dir([]string{"kernel"}, dtDir), true, 0
		}
	case 2:
		if c[0] == "sys" && c[1] == "kernel" {
			e := dir(append(sortedKeys(procSysKernel), "random"), dtReg)
			list := e.dirents
			e.dirents = func() []dirent {
				out := list()
				for i := range out {
					if out[i].name == "random" {
						out[i].typ = dtDir
					}
				}
				return out
			}
			return e, true, 0
		}
	case 3:
		if c[0] == "sys" && c[1] == "kernel" {
			if gen, ok := procSysKernel[c[2]]; ok {
				return file(gen), true, 0
			}
			if c[2] == "random" {
				return dir(sortedKeys(procSysRandom), dtReg), true, 0
			}
		}
	case 4:
		if c[0] == "sys" && c[1] == "kernel" && c[2] == "random" {
			if gen, ok := procSysRandom[c[3]]; ok {
				return file(gen), true, 0
			}
		}
	}
	return procEntry{}, true, ENOENT
}

// procMachineDirents lists the fixed entries of /proc.
func (t *Task) procMachineDirents() []dirent {
	var out []dirent
	names := append(sortedKeys(procMachineFiles), "mounts", "net", "self", "sys", "thread-self")
	for _, n := range sortedStrings(names) {
		typ := uint8(dtReg)
		switch n {
		case "mounts", "net", "self", "thread-self":
			typ = dtLnk
		case "sys":
			typ = dtDir
		}
		out = append(out, dirent{n, pathInode("/proc/" + n), typ})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sortedStrings(out)
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// arm64HWCapNames are the cpuinfo Features names of AT_HWCAP bits 0…31
// and AT_HWCAP2 bits 0…8 (arch/arm64/kernel/cpuinfo.c hwcap_str).
var arm64HWCapNames = [...]string{
	"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp", "asimdhp",
	"cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512",
	"sve", "asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca", "pacg",
}

var arm64HWCap2Names = [...]string{"dcpodp", "sve2", "sveaes", "svepmull", "svebitperm", "svesha3", "svesm4", "flagm2", "frint"}

// x86FlagNames are the cpuinfo flags of the CPUID words Linux shows
// (arch/x86/include/asm/cpufeatures.h), by word and bit; "" is a bit
// Linux does not show.
var x86FlagNames = []struct {
	leaf, sub uint32
	reg       int // 0 EAX … 3 EDX
	names     [32]string
}{
	{1, 0, 3, [32]string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep", "mtrr",
		"pge", "mca", "cmov", "pat", "pse36", "pn", "clflush", "", "dts", "acpi", "mmx", "fxsr", "sse", "sse2",
		"ss", "ht", "tm", "ia64", "pbe"}},
	{0x80000001, 0, 3, [32]string{11: "syscall", 19: "mp", 20: "nx", 22: "mmxext", 25: "fxsr_opt",
		26: "pdpe1gb", 27: "rdtscp", 29: "lm", 30: "3dnowext", 31: "3dnow"}},
	{1, 0, 2, [32]string{"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est", "tm2",
		"ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm", "", "pcid", "dca", "sse4_1", "sse4_2", "x2apic",
		"movbe", "popcnt", "tsc_deadline_timer", "aes", "xsave", "", "avx", "f16c", "rdrand", "hypervisor"}},
	{0x80000001, 0, 2, [32]string{"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm", "sse4a",
		"misalignsse", "3dnowprefetch", "osvw", "ibs", "xop", "skinit", "wdt", "", "lwp", "fma4", "tce", "",
		"nodeid_msr", "", "tbm", "topoext", "perfctr_core", "perfctr_nb", "", "bpext", "ptsc", "perfctr_llc",
		"mwaitx"}},
	{7, 0, 1, [32]string{"fsgsbase", "tsc_adjust", "sgx", "bmi1", "hle", "avx2", "", "smep", "bmi2", "erms",
		"invpcid", "rtm", "cqm", "", "mpx", "rdt_a", "avx512f", "avx512dq", "rdseed", "adx", "smap",
		"avx512ifma", "clflushopt", "clwb", "intel_pt", "avx512cd", "sha_ni", "avx512bw", "avx512vl"}},
	{7, 0, 2, [32]string{1: "avx512vbmi", 2: "umip", 3: "pku", 4: "ospke", 5: "waitpkg", 6: "avx512_vbmi2",
		8: "gfni", 9: "vaes", 10: "vpclmulqdq", 11: "avx512_vnni", 12: "avx512_bitalg", 13: "tme",
		14: "avx512_vpopcntdq", 16: "la57", 22: "rdpid", 25: "cldemote", 27: "movdiri", 28: "movdir64b"}},
}

// x86Flags is the cpuinfo flags line of CPU c's model.
func x86Flags(c *amd64.CPU) string {
	var out []string
	for _, w := range x86FlagNames {
		a, b, cc, d := c.CPUID(w.leaf, w.sub)
		v := [4]uint32{a, b, cc, d}[w.reg]
		for bit := range 32 {
			if v&(1<<bit) != 0 && w.names[bit] != "" {
				out = append(out, w.names[bit])
			}
		}
	}
	return strings.Join(out, " ")
}

// procCPUInfo is /proc/cpuinfo for the guest's architecture: one stanza
// per CPU the guest sees.
func (t *Task) procCPUInfo() []byte {
	var b strings.Builder
	t.tg.arch.cpuinfo(t, t.tg.k.guestCPUs(), &b)
	return []byte(b.String())
}

func init() {
	// Set here, not in the arch tables' declarations (an initialization
	// cycle: the formatters read the tables).
	arm64ABI.cpuinfo, amd64ABI.cpuinfo = cpuinfoARM64, cpuinfoX86
}

// cpuinfoARM64 writes arm64's cpuinfo stanzas: Features from the CPU
// model's HWCAPs, the CPU lines from its MIDR_EL1.
func cpuinfoARM64(t *Task, n int, b *strings.Builder) {
	c, ok := t.cpu.(*arm64.CPU)
	if !ok {
		return
	}
	m := c.CPUModel()
	var feat []string
	for i, name := range arm64HWCapNames {
		if m.HWCAP&(1<<i) != 0 {
			feat = append(feat, name)
		}
	}
	for i, name := range arm64HWCap2Names {
		if m.HWCAP2&(1<<i) != 0 {
			feat = append(feat, name)
		}
	}
	for i := range n {
		fmt.Fprintf(b, "processor\t: %d\nBogoMIPS\t: 2000.00\nFeatures\t: %s\nCPU implementer\t: 0x%02x\n"+
			"CPU architecture: 8\nCPU variant\t: 0x%x\nCPU part\t: 0x%03x\nCPU revision\t: %d\n\n",
			i, strings.Join(feat, " "), m.MIDR>>24&0xff, m.MIDR>>20&0xf, m.MIDR>>4&0xfff, m.MIDR&0xf)
	}
}

// cpuinfoX86 writes x86-64's cpuinfo stanzas from the CPU model's CPUID.
func cpuinfoX86(t *Task, n int, b *strings.Builder) {
	c, ok := t.cpu.(*amd64.CPU)
	if !ok {
		return
	}
	sig, _, _, _ := c.CPUID(1, 0)
	maxLeaf, _, _, _ := c.CPUID(0, 0)
	var brand []byte
	for l := uint32(0x80000002); l <= 0x80000004; l++ {
		a, bb, cc, d := c.CPUID(l, 0)
		for _, r := range []uint32{a, bb, cc, d} {
			brand = append(brand, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
	}
	name := strings.TrimRight(string(brand), "\x00")
	l3a, l3b, l3c, _ := c.CPUID(4, 3)
	cacheKB := uint32(0)
	if l3a&0x1f != 0 {
		cacheKB = (l3b>>22 + 1) * (l3b>>12&0x3ff + 1) * (l3b&0xfff + 1) * (l3c + 1) >> 10
	}
	_, ebx1, _, _ := c.CPUID(1, 0)
	addr, _, _, _ := c.CPUID(0x80000008, 0)
	flags := x86Flags(c)
	for i := range n {
		fmt.Fprintf(b, "processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: %d\nmodel\t\t: %d\n"+
			"model name\t: %s\nstepping\t: %d\ncpu MHz\t\t: 1000.000\ncache size\t: %d KB\nphysical id\t: 0\n"+
			"siblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\napicid\t\t: %d\ninitial apicid\t: %d\nfpu\t\t: yes\n"+
			"fpu_exception\t: yes\ncpuid level\t: %d\nwp\t\t: yes\nflags\t\t: %s\nbugs\t\t:\nbogomips\t: 2000.00\n"+
			"clflush size\t: %d\ncache_alignment\t: 64\naddress sizes\t: %d bits physical, %d bits virtual\n"+
			"power management:\n\n",
			i, sig>>8&0xf, sig>>4&0xf, name, sig&0xf, cacheKB, n, i, n, i, i, maxLeaf, flags,
			(ebx1>>8&0xff)*8, addr&0xff, addr>>8&0xff)
	}
}

// procMeminfo is /proc/meminfo: the machine's memory is the memory limit
// (memTotalBytes), what is used the pages uvm's accounting charges.
func (t *Task) procMeminfo() []byte {
	k := t.tg.k
	total, free := k.memTotalBytes()>>10, k.memFreeBytes()>>10
	used := total - free
	var b strings.Builder
	line := func(name string, kb int64) { fmt.Fprintf(&b, "%-16s%8d kB\n", name+":", kb) }
	line("MemTotal", total)
	line("MemFree", free)
	line("MemAvailable", free)
	for _, n := range []string{"Buffers", "Cached", "SwapCached"} {
		line(n, 0)
	}
	line("Active", used)
	line("Inactive", 0)
	line("Active(anon)", used)
	for _, n := range []string{"Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable", "Mlocked",
		"SwapTotal", "SwapFree", "Dirty", "Writeback"} {
		line(n, 0)
	}
	line("AnonPages", used)
	for _, n := range []string{"Mapped", "Shmem"} {
		line(n, 0)
	}
	line("CommitLimit", total)
	line("Committed_AS", used)
	line("VmallocTotal", 34359738367)
	fmt.Fprintf(&b, "HugePages_Total:       0\nHugePages_Free:        0\nHugePages_Rsvd:        0\nHugePages_Surp:        0\n")
	line("Hugepagesize", 2048)
	return []byte(b.String())
}

// procCPUTimes is the machine's CPU time in clock ticks: per CPU the
// guest sees, user time of the threads on it (their retired
// instructions; a thread stays on CPU tid mod n) and the rest of the
// uptime idle.
func (t *Task) procCPUTimes() (user, idle []uint64) {
	k := t.tg.k
	n := k.guestCPUs()
	user, idle = make([]uint64, n), make([]uint64, n)
	ns := uint64(max(k.opts.NsPerInsn, 1))
	k.procMu.Lock()
	tgs := make([]*ThreadGroup, 0, len(k.procs))
	for _, tg := range k.procs {
		tgs = append(tgs, tg)
	}
	k.procMu.Unlock()
	for _, tg := range tgs {
		tg.mu.Lock()
		for tid, r := range tg.retired {
			user[uint32(tid)%uint32(n)] += r * ns / 1e7
		}
		for tid, o := range tg.tasks {
			user[uint32(tid)%uint32(n)] += o.cpu.Retired() * ns / 1e7
		}
		tg.mu.Unlock()
	}
	up := uint64(k.uptimeNs() / 1e7)
	for i := range idle {
		if up > user[i] {
			idle[i] = up - user[i]
		}
	}
	return user, idle
}

// procKernelStat is /proc/stat.
func (t *Task) procKernelStat() []byte {
	k := t.tg.k
	user, idle := t.procCPUTimes()
	var su, si uint64
	for i := range user {
		su += user[i]
		si += idle[i]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", su, si)
	for i := range user {
		fmt.Fprintf(&b, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, user[i], idle[i])
	}
	var ctxt uint64
	btime := k.start.Unix()
	if k.det != nil {
		k.det.mu.Lock()
		ctxt = k.det.switches
		k.det.mu.Unlock()
		btime = DetEpoch.Unix()
	}
	k.mu.Lock()
	forks := k.nextPID - firstPID + 1
	k.mu.Unlock()
	fmt.Fprintf(&b, "intr 0\nctxt %d\nbtime %d\nprocesses %d\nprocs_running %d\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		ctxt, btime, forks, 1)
	return []byte(b.String())
}

// firstPID is the first guest process's pid.
const firstPID = 1001

// procUptime is /proc/uptime: seconds since boot and the CPUs' idle
// seconds summed.
func (t *Task) procUptime() []byte {
	up := t.tg.k.uptimeNs() / 1e7
	_, idle := t.procCPUTimes()
	var si uint64
	for _, v := range idle {
		si += v
	}
	return fmt.Appendf(nil, "%d.%02d %d.%02d\n", up/100, up%100, si/100, si%100)
}

// procLoadavg is /proc/loadavg: the 1, 5 and 15 minute load averages
// (loadavg.go), the active and total threads, and the last pid.
func (t *Task) procLoadavg() []byte {
	k := t.tg.k
	k.mu.Lock()
	last := k.nextPID
	k.mu.Unlock()
	avg, active := k.loadSnapshot()
	return fmt.Appendf(nil, "%s %s %s %d/%d %d\n", loadFmt(avg[0]), loadFmt(avg[1]), loadFmt(avg[2]),
		max(active, 1), k.threads.Load(), last)
}
