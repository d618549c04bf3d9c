package uprobes

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TreeLock selects how the global uprobes tree is protected (spec §1.2).
type TreeLock uint8

const (
	// TreeLockRCU is v6.12+: lookups walk the tree without a lock and
	// retry a miss while a writer's seqcount shows a concurrent change;
	// writers take the rwlock and bump the seqcount. The default.
	TreeLockRCU TreeLock = iota
	// TreeLockSpinlock is the original design (2012 → v6.9): every lookup
	// and every change takes one spinlock.
	TreeLockSpinlock
	// TreeLockRWLock is v6.10: a spinning reader-writer lock with writer
	// preference (Linux's qrwlock).
	TreeLockRWLock
	// TreeLockPercpuRWSem is the per-CPU rw semaphore measured in the v6.10
	// review (seed 003): readers bump a counter of their own shard unless
	// a writer is active; a writer announces itself and waits until every
	// shard's readers have drained.
	TreeLockPercpuRWSem
)

var treeLockNames = [...]string{"rcu", "spinlock", "rwlock", "percpu-rwsem"}

func (l TreeLock) String() string {
	if int(l) < len(treeLockNames) {
		return treeLockNames[l]
	}
	return "treelock(" + strconv.Itoa(int(l)) + ")"
}

// ParseTreeLock parses a TreeLock name as printed by String.
func ParseTreeLock(s string) (TreeLock, error) {
	for i, n := range treeLockNames {
		if strings.EqualFold(s, n) {
			return TreeLock(i), nil
		}
	}
	return 0, fmt.Errorf("tree lock %q (want spinlock, rwlock, percpu-rwsem or rcu): %w", s, ErrInvalid)
}

// Options holds every behaviour switch of the model. The zero value is
// NOT the default: use DefaultOptions, which is the newest kernel
// behaviour (spec §0's version map), and change fields from there.
type Options struct {
	// TreeLock protects the global tree (spec §1.2). Default TreeLockRCU.
	TreeLock TreeLock

	// SingleStepSiglock: true is the behaviour before seed 000 (v6.15):
	// uprobe_deny_signal clears TIF_SIGPENDING under siglock and
	// handle_singlestep takes siglock and calls recalc_sigpending. false
	// (default) is the signal_denied flag: TIF_SIGPENDING is cleared and
	// set back without siglock (spec §5.4).
	SingleStepSiglock bool

	// XOLFlushElision (arm64, seed 002, ~v6.13): skip copying the
	// instruction into the XOL slot and the D/I-cache maintenance when
	// the slot already holds the same bytes. Default true.
	XOLFlushElision bool

	// ARM64SimulateNOP (v6.13, ac4ad5c09b34): simulate NOP in the
	// breakpoint handler instead of stepping it out of line. Default true.
	ARM64SimulateNOP bool

	// ReturnInstancePool (seed 004, ~v6.14): keep freed return instances
	// in a per-task pool, reused when the ri_timer seqcount shows the
	// timer is not walking the list. false allocates and frees one
	// instance per uretprobe hit. Default true.
	ReturnInstancePool bool

	// X86UretprobeSyscall (v6.11): the x86-64 trampoline in XOL slot 0 is
	// the uretprobe syscall stub (spec §6.6). false puts a single INT3
	// there (the compat-task trampoline). Default true.
	X86UretprobeSyscall bool

	// X86NopForms (v6.18, the nop5 optimisation series): the kernel's
	// recommended NOPs of every length (x86_nops[len]: 66 90, 0F 1F 00,
	// 0F 1F 44 00 00, 66 0F 1F 44 00 00 …) are emulated as NOPs, before
	// the 66-prefix rule of branches. false is the older rule: only
	// OPCODE1 0x90 is a NOP (66 90 is refused with ENOTSUPP like any
	// 66-prefixed branch; NOPL is single-stepped). Default true.
	X86NopForms bool

	// XOLMremapDenied (v6.13, Oleg Nesterov's XOL cleanups): mremap
	// moving the "[uprobes]" area fails with EPERM (xol_mremap). false:
	// the move succeeds and the area's address goes stale, as before.
	// Growing it fails with EFAULT either way (VM_DONTEXPAND). Default
	// true.
	XOLMremapDenied bool

	// Kernel is the release the version-dependent switches were last set
	// for by SetKernel (DefaultKernel in DefaultOptions); informational.
	Kernel string

	// Test-only, known-wrong variants. Each reproduces a design the
	// kernel review rejected, so that tests can prove they catch it.

	// WrongSignalDeniedV1 is Liao Chang's v1 (Aug 2024, spec §5.4): a
	// fifth state UTASK_SSTEP_DENY_SIGNAL that the single-step notifier
	// overwrites with SSTEP_ACK, so TIF_SIGPENDING is never set back and
	// the denied signal is lost. Overrides SingleStepSiglock.
	WrongSignalDeniedV1 bool
	// WrongFlushElisionNoCompare skips the cache maintenance of a slot
	// that has been written before without comparing its bytes: the
	// instruction is copied but the I-side keeps executing the stale one
	// under a non-coherent I-cache model.
	WrongFlushElisionNoCompare bool
	// WrongReuseBeforeUnlink frees (and, with the pool, reuses) a return
	// instance in cleanup_return_instances before unlinking it from the
	// task's list — the order patch 3/4 of seed 004 fixes — so a
	// concurrent ri_timer walk follows the pool's links.
	WrongReuseBeforeUnlink bool

	// Environment (not behaviour switches).

	// Clock drives ri_timer. nil uses host time; deterministic runs pass
	// the virtual clock.
	Clock Clock
	// Warnf receives the kernel's uprobe_warn/WARN messages (nil: they
	// are only counted in Stats.Warnings).
	Warnf func(format string, args ...any)
	// FailAlloc, when set, is asked before every allocation the kernel
	// may fail (GFP_KERNEL sites); returning true makes that allocation
	// fail. Test hook for the error paths (dup_utask, return instances,
	// the XOL area).
	FailAlloc func(site AllocSite) bool
	// Contention, when set, is the timing model of a --model run: the
	// kernel path charges its steps and models its shared objects
	// through it (contention.go). nil: nothing is charged.
	Contention Contention
}

// AllocSite names an allocation that Options.FailAlloc can fail.
type AllocSite uint8

const (
	AllocUtask             AllocSite = iota + 1 // alloc_utask (get_utask, dup_utask)
	AllocReturnInstance                         // alloc_return_instance
	AllocExtraConsumers                         // push_consumer's krealloc of extra_consumers
	AllocDupReturnInstance                      // dup_return_instance (fork)
	AllocXOLArea                                // __create_xol_area
)

var allocSiteNames = [...]string{"", "utask", "return_instance", "extra_consumers", "dup_return_instance", "xol_area"}

func (s AllocSite) String() string {
	if int(s) < len(allocSiteNames) && s != 0 {
		return allocSiteNames[s]
	}
	return "alloc(" + strconv.Itoa(int(s)) + ")"
}

// DefaultOptions returns the newest kernel behaviour.
func DefaultOptions() Options {
	return Options{
		TreeLock:            TreeLockRCU,
		SingleStepSiglock:   false,
		XOLFlushElision:     true,
		ARM64SimulateNOP:    true,
		ReturnInstancePool:  true,
		X86UretprobeSyscall: true,
		X86NopForms:         true,
		XOLMremapDenied:     true,
		Kernel:              DefaultKernel,
	}
}

// optionFields maps the names accepted by Set to the boolean switches.
func (o *Options) boolField(name string) *bool {
	switch strings.ToLower(name) {
	case "singlestepsiglock":
		return &o.SingleStepSiglock
	case "xolflushelision":
		return &o.XOLFlushElision
	case "arm64simulatenop":
		return &o.ARM64SimulateNOP
	case "returninstancepool":
		return &o.ReturnInstancePool
	case "x86uretprobesyscall":
		return &o.X86UretprobeSyscall
	case "x86nopforms":
		return &o.X86NopForms
	case "xolmremapdenied":
		return &o.XOLMremapDenied
	case "wrongsignaldeniedv1":
		return &o.WrongSignalDeniedV1
	case "wrongflushelisionnocompare":
		return &o.WrongFlushElisionNoCompare
	case "wrongreusebeforeunlink":
		return &o.WrongReuseBeforeUnlink
	}
	return nil
}

// OptionNames lists the switch names Set accepts.
func OptionNames() []string {
	n := []string{"Kernel", "TreeLock", "SingleStepSiglock", "X86NopForms", "XOLMremapDenied", "XOLFlushElision", "ARM64SimulateNOP",
		"ReturnInstancePool", "X86UretprobeSyscall", "WrongSignalDeniedV1",
		"WrongFlushElisionNoCompare", "WrongReuseBeforeUnlink"}
	sort.Strings(n)
	return n
}

// Set sets one switch by name (case-insensitive), e.g. ("TreeLock",
// "rwlock") or ("XOLFlushElision", "false"), for command-line flags.
// ("Kernel", "6.12") sets every version-dependent switch (SetKernel).
func (o *Options) Set(name, value string) error {
	if strings.EqualFold(name, "Kernel") {
		return o.SetKernel(value)
	}
	if strings.EqualFold(name, "TreeLock") {
		l, err := ParseTreeLock(value)
		if err != nil {
			return err
		}
		o.TreeLock = l
		return nil
	}
	p := o.boolField(name)
	if p == nil {
		return fmt.Errorf("unknown uprobes option %q (have %s): %w", name, strings.Join(OptionNames(), ", "), ErrInvalid)
	}
	v, err := strconv.ParseBool(value)
	if err != nil {
		return fmt.Errorf("uprobes option %s=%q: %w", name, value, ErrInvalid)
	}
	*p = v
	return nil
}

// String lists the switches as name=value pairs.
func (o Options) String() string {
	return fmt.Sprintf("Kernel=%s TreeLock=%s SingleStepSiglock=%t XOLFlushElision=%t ARM64SimulateNOP=%t ReturnInstancePool=%t X86UretprobeSyscall=%t X86NopForms=%t XOLMremapDenied=%t",
		o.Kernel, o.TreeLock, o.SingleStepSiglock, o.XOLFlushElision, o.ARM64SimulateNOP, o.ReturnInstancePool, o.X86UretprobeSyscall, o.X86NopForms, o.XOLMremapDenied)
}

// RITimerPeriod is RI_TIMER_PERIOD (HZ/10): how long after a task's last
// uretprobe entry ri_timer converts its leased return instances into
// refcounted ones (spec §6.5).
const RITimerPeriod = 100 * time.Millisecond
