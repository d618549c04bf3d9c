package tasks

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvm-emu/uvm/internal/signals"
	"github.com/uvm-emu/uvm/internal/vm"
	"github.com/uvm-emu/uvm/internal/vm/arm64"
)

// testTaskArch is testTask for either guest arch, with one read-write
// page mapped at scratch for syscall buffers.
func testTaskArch(t *testing.T, a *arch) *Task {
	task := testTask(t)
	if a == &arm64ABI {
		mm := vm.NewMM() // an address space's icache belongs to one arch
		task.tg.arch, task.tg.mm = a, mm
		task.cpu = arm64.NewCPU(mm)
	}
	require.NoError(t, task.tg.mm.Map(vm.VMA{Start: scratch, End: scratch + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite}))
	task.tid, task.tg.pid = 7, 5
	return task
}

const scratch = 0x10000

// callSyscall issues one syscall the way the run loop does at a syscall
// exit: the number and arguments in the arch's registers, then
// Task.syscall; it returns the result register.
func callSyscall(t *testing.T, task *Task, name string, args ...uint64) uint64 {
	a := task.tg.arch
	nr, ok := uint64(0), false
	for n, s := range a.names {
		if s == name {
			nr, ok = n, true
		}
	}
	require.True(t, ok, "%s has no syscall %s", a.name, name)
	task.cpu.SetReg(a.nr, nr)
	for i, v := range args {
		task.cpu.SetReg(a.args[i], v)
	}
	stop, _, _ := task.syscall()
	require.False(t, stop)
	return task.cpu.Reg(a.ret)
}

// TestSyscallThroughTable runs syscalls by each arch's own numbers
// through the generated names, the sysno enum and sysCallTable, with no
// guest program: identity, a pipe round trip, dup's rules and the loud
// ENOSYS of an unimplemented syscall.
func TestSyscallThroughTable(t *testing.T) {
	for _, a := range []*arch{&amd64ABI, &arm64ABI} {
		t.Run(a.name, func(t *testing.T) {
			task := testTaskArch(t, a)
			require.Equal(t, uint64(5), callSyscall(t, task, "getpid"))
			require.Equal(t, uint64(7), callSyscall(t, task, "gettid"))

			require.Zero(t, callSyscall(t, task, "pipe2", scratch, 0))
			fds, e := task.getU64(scratch)
			require.Zero(t, e)
			r, w := fds&0xffffffff, fds>>32
			require.Equal(t, []uint64{3, 4}, []uint64{r, w}, "lowest free descriptors above stdin, stdout, stderr")
			require.NoError(t, task.tg.mm.WriteAt([]byte("ping"), scratch+64))
			require.Equal(t, uint64(4), callSyscall(t, task, "write", w, scratch+64, 4))
			require.Equal(t, uint64(4), callSyscall(t, task, "read", r, scratch+128, 16))
			got := make([]byte, 4)
			require.NoError(t, task.tg.mm.ReadAt(got, scratch+128))
			require.Equal(t, "ping", string(got))

			require.Equal(t, uint64(5), callSyscall(t, task, "dup", w))
			require.Equal(t, errRet(EINVAL), callSyscall(t, task, "dup3", w, w, 0), "dup3 to itself")
			require.Equal(t, uint64(9), callSyscall(t, task, "dup3", r, 9, oCLOEXEC))
			require.True(t, task.tg.fds.cloexec(9))
			require.Zero(t, callSyscall(t, task, "close", 9))
			require.Equal(t, errRet(EBADF), callSyscall(t, task, "close", 9))
			require.Equal(t, errRet(EBADF), callSyscall(t, task, "read", 9, scratch, 1))

			// An unimplemented syscall: ENOSYS, named in --stats.
			require.Equal(t, errRet(ENOSYS), callSyscall(t, task, "kexec_file_load"))
			_, unimpl := task.tg.k.Stats()
			require.Contains(t, unimpl, fmt.Sprintf("syscall kexec_file_load (%d)", a.entryNr("kexec_file_load")))
			task.cpu.SetReg(a.nr, 100000) // beyond every table
			task.syscall()
			require.Equal(t, errRet(ENOSYS), task.cpu.Reg(a.ret))
		})
	}
}

// entryNr is the arch's number for a syscall name (tests only).
func (a *arch) entryNr(name string) uint64 {
	for n, s := range a.names {
		if s == name {
			return n
		}
	}
	return ^uint64(0)
}

// enter sets the registers as a syscall leaves them: pc after the
// instruction, the number and first argument where the guest put them,
// then the result over one of them.
func enter(task *Task, pc, nr, arg0 uint64, ret int64) {
	a := task.tg.arch
	task.cpu.SetPC(pc)
	task.cpu.SetReg(a.nr, nr)
	task.cpu.SetReg(a.args[0], arg0)
	task.cpu.SetReg(a.ret, uint64(ret))
}

// TestSyscallRestartRegisters: an interrupted syscall restarted without
// a handler gets back the register its return value overwrote (x86-64's
// rax = the number, arm64's x0 = the first argument) and its pc backs up
// over the syscall instruction; a restart block becomes restart_syscall.
func TestSyscallRestartRegisters(t *testing.T) {
	for _, a := range []*arch{&amd64ABI, &arm64ABI} {
		t.Run(a.name, func(t *testing.T) {
			task := testTaskArch(t, a)
			const pc, nr, arg0 = 0x401000, 35, 0x1234
			sc := syscallResult{ret: -signals.ERESTARTSYS, origArg0: arg0, nr: nr}
			enter(task, pc, nr, arg0, sc.ret)
			task.finishSyscall(&sc, false, signals.SigAction{})
			require.Equal(t, uint64(pc)-a.syscallInsnLen, task.cpu.PC())
			require.Equal(t, uint64(nr), task.cpu.Reg(a.nr))
			require.Equal(t, uint64(arg0), task.cpu.Reg(a.args[0]))

			task.restartBlock = func(*Task) uint64 { return 0 }
			sc = syscallResult{ret: -signals.ERESTART_RESTARTBLOCK, origArg0: arg0, nr: nr}
			enter(task, pc, nr, arg0, sc.ret)
			task.finishSyscall(&sc, false, signals.SigAction{})
			require.Equal(t, uint64(pc)-a.syscallInsnLen, task.cpu.PC())
			require.Equal(t, "restart_syscall", a.names[task.cpu.Reg(a.nr)])
			require.Equal(t, uint64(arg0), task.cpu.Reg(a.args[0]))

			sc = syscallResult{ret: -signals.ERESTARTSYS, origArg0: arg0, nr: nr}
			enter(task, pc, nr, arg0, sc.ret)
			task.finishSyscall(&sc, true, signals.SigAction{})
			require.Equal(t, uint64(pc), task.cpu.PC(), "a handler without SA_RESTART: EINTR")
			require.Equal(t, errRet(EINTR), task.cpu.Reg(a.ret))
		})
	}
}

// TestEpollPwaitSigmask: epoll_pwait checks its sigset size, installs
// the mask only for the wait and restores it when no signal ended it.
func TestEpollPwaitSigmask(t *testing.T) {
	for _, a := range []*arch{&amd64ABI, &arm64ABI} {
		t.Run(a.name, func(t *testing.T) {
			task := testTaskArch(t, a)
			ep := callSyscall(t, task, "epoll_create1", 0)
			require.Less(t, int64(ep), int64(4096), "epoll_create1: %d", int64(ep))
			require.Zero(t, task.putU64(scratch+256, 1<<(signals.SIGUSR1-1)))
			require.Equal(t, errRet(EINVAL), callSyscall(t, task, "epoll_pwait", ep, scratch, 4, 0, scratch+256, 4), "sigsetsize 4")
			before := task.blocked
			require.Zero(t, callSyscall(t, task, "epoll_pwait", ep, scratch, 4, 0, scratch+256, 8), "nothing ready, timeout 0")
			require.Equal(t, before, task.blocked, "the temporary mask is gone after the call")
		})
	}
}
