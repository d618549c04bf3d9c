package tasks

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Unit tests of the kernel side on the fake CPU (fakecpu_test.go): futex,
// the deterministic scheduler, signal queueing and dequeue order, wait4
// and descriptor tables, on both arches' syscall numbers, with no guest
// binary. Expected values are Linux's (kernel/futex, kernel/signal.c,
// kernel/exit.c, fs/file.c).

// Offsets into the fake guests' data area.
const (
	fkWord    = fakeData + 0x0   // a futex word
	fkCount   = fakeData + 0x40  // a counter word
	fkTS      = fakeData + 0x100 // a struct timespec
	fkNow     = fakeData + 0x140 // clock_gettime's result
	fkSet     = fakeData + 0x200 // a sigset_t
	fkInfo    = fakeData + 0x300 // a siginfo_t (128 bytes)
	fkStatus  = fakeData + 0x400 // wait4's status
	fkPipe    = fakeData + 0x500 // pipe2's two descriptors
	fkRlimit  = fakeData + 0x600 // a struct rlimit
	fkThreads = cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread | cloneSysvsem
)

const (
	sigCHLDNo   = 17
	fDUPFDCloex = 1030
	rlimNofile  = 7
)

func (g *fakeGuest) monotonic() int64 {
	g.sys("clock_gettime", 1, fkNow)
	return int64(g.load64(fkNow))*1e9 + int64(g.load64(fkNow+8))
}

// waitCount yields until the counter word reaches n.
func (g *fakeGuest) waitCount(n uint32) {
	for g.load32(fkCount) < n {
		g.sys("sched_yield")
	}
}

func (g *fakeGuest) bump() { g.store32(fkCount, g.load32(fkCount)+1) }

func TestFakeFutex(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		log := &fakeLog{}
		st := runFake(t, a, Options{Deterministic: true}, func(g *fakeGuest) {
			wait := uint64(futexWait | futexPrivateFlag)
			wake := uint64(futexWake | futexPrivateFlag)
			// The value check happens under the bucket lock: a word that
			// is not the expected value is EAGAIN, no sleep.
			log.add("mismatch %d", g.sys("futex", fkWord, wait, 5, 0))
			log.add("no waiters %d", g.sys("futex", fkWord, wake, 1))
			// A relative timeout in virtual time.
			g.store64(fkTS, 0)
			g.store64(fkTS+8, 1_000_000)
			t0 := g.monotonic()
			log.add("timeout %d", g.sys("futex", fkWord, wait, 0, fkTS))
			log.add("slept>=1ms %v", g.monotonic()-t0 >= 1_000_000)
			// Three waiters queued in order are woken one at a time in
			// that order (same priority: FIFO on the hash bucket).
			for i := 1; i <= 3; i++ {
				g.clone(fkThreads, func(g *fakeGuest) {
					g.bump()
					r := g.sys("futex", fkWord, wait, 0, 0)
					log.add("t%d woke %d", i, r)
					g.bump()
				})
			}
			g.waitCount(3)
			for i := 1; i <= 3; i++ {
				log.add("wake %d", g.sys("futex", fkWord, wake, 1))
				g.waitCount(uint32(3 + i))
			}
			g.sys("exit_group", 0)
		})
		require.Equal(t, ExitStatus{}, st)
		require.Equal(t, []string{
			"mismatch " + fmt.Sprint(-int64(EAGAIN)),
			"no waiters 0",
			"timeout " + fmt.Sprint(-int64(ETIMEDOUT)),
			"slept>=1ms true",
			"wake 1", "t1 woke 0",
			"wake 1", "t2 woke 0",
			"wake 1", "t3 woke 0",
		}, log.get())
	})
}

// detRun runs three threads of chunked work and returns the order in
// which the chunks ran.
func detRun(t *testing.T, a *arch, opts Options) []string {
	log := &fakeLog{}
	opts.Deterministic = true
	runFake(t, a, opts, func(g *fakeGuest) {
		chunks := func(name string, g *fakeGuest) {
			for i := 0; i < 12; i++ {
				g.work(1000)
				log.add("%s%d", name, i)
			}
		}
		for _, name := range []string{"A", "B"} {
			g.clone(fkThreads, func(g *fakeGuest) {
				chunks(name, g)
				g.bump()
			})
		}
		t0 := g.monotonic()
		chunks("M", g)
		g.waitCount(2)
		log.add("elapsed %d", g.monotonic()-t0)
		g.sys("exit_group", 0)
	})
	return log.get()
}

// TestFakeDetScheduler: the deterministic scheduler passes the baton
// round-robin after each quantum, time is the machine-wide retired count
// (NsPerInsn per instruction), and the order is the same at every host
// GOMAXPROCS; with Chaos the seed picks the quanta.
func TestFakeDetScheduler(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		prev := runtime.GOMAXPROCS(0)
		defer runtime.GOMAXPROCS(prev)
		var want []string
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			got := detRun(t, a, Options{Quantum: 3000})
			if want == nil {
				want = got
				continue
			}
			require.Equal(t, want, got, "GOMAXPROCS %d", procs)
		}
		runtime.GOMAXPROCS(prev)

		// Round-robin in quanta of 3000 instructions = 3 chunks of 1000:
		// main's first slice also paid for its two clone syscalls and
		// the clock read, so it ends after two chunks; a thread that
		// finishes hands the baton on.
		require.Equal(t, strings.Fields("M0 M1 A0 A1 A2 B0 B1 B2 M2 M3 M4 A3 A4 A5 B3 B4 B5 "+
			"M5 M6 M7 A6 A7 A8 B6 B7 B8 M8 M9 M10 A9 A10 A11 B9 B10 B11 M11"), want[:len(want)-1])
		var elapsed int64
		fmt.Sscanf(want[len(want)-1], "elapsed %d", &elapsed)
		// 36 chunks of 1000 instructions and three syscall instructions
		// (the threads' last yields and main's clock read) ran between
		// main's two clock reads: virtual time is machine-wide.
		require.Equal(t, int64(36003), elapsed)
		doubled := detRun(t, a, Options{Quantum: 3000, NsPerInsn: 2})
		fmt.Sscanf(doubled[len(doubled)-1], "elapsed %d", &elapsed)
		require.GreaterOrEqual(t, elapsed, int64(72000), "NsPerInsn scales virtual time")

		// Chaos: the same seed gives the same order, another seed
		// another one.
		c1 := detRun(t, a, Options{Quantum: 3000, Chaos: true, Seed: 1})
		require.Equal(t, c1, detRun(t, a, Options{Quantum: 3000, Chaos: true, Seed: 1}))
		require.NotEqual(t, c1, detRun(t, a, Options{Quantum: 3000, Chaos: true, Seed: 2}))
	})
}

// TestFakeSignalOrder: blocked signals queue as Linux queues them
// (standard signals coalesce per queue, real-time ones queue each
// instance with its value) and sigtimedwait dequeues as dequeue_signal
// does: the thread's private queue first, lowest number first, then the
// process-wide queue.
func TestFakeSignalOrder(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		log := &fakeLog{}
		runFake(t, a, Options{Deterministic: true}, func(g *fakeGuest) {
			pid, tid := uint64(g.sys("getpid")), uint64(g.sys("gettid"))
			g.store64(fkSet, ^uint64(0))
			g.sys("rt_sigprocmask", 0, fkSet, 0, 8) // SIG_BLOCK everything
			queue := func(sig, val uint64) {
				for i := uint64(0); i < 16; i++ {
					g.store64(fkInfo+8*i, 0)
				}
				g.store32(fkInfo, uint32(sig))
				g.store32(fkInfo+8, uint32(0xffffffff)) // SI_QUEUE
				g.store32(fkInfo+16, uint32(pid))
				g.store64(fkInfo+24, val)
				log.add("queue %d = %d", sig, g.sys("rt_tgsigqueueinfo", pid, tid, sig, fkInfo))
			}
			g.sys("tgkill", pid, tid, 12) // SIGUSR2, private
			g.sys("kill", pid, 10)        // SIGUSR1, process-wide
			g.sys("tgkill", pid, tid, 10) // SIGUSR1, private
			g.sys("tgkill", pid, tid, 10) // coalesces with the one above
			queue(35, 1)
			queue(35, 2)
			g.sys("tgkill", pid, tid, 34)
			g.sys("kill", pid, 15) // SIGTERM, process-wide
			g.sys("rt_sigpending", fkSet, 8)
			log.add("pending %#x", g.load64(fkSet))
			g.store64(fkSet, ^uint64(0))
			g.store64(fkTS, 0)
			g.store64(fkTS+8, 0)
			for {
				r := g.sys("rt_sigtimedwait", fkSet, fkInfo, fkTS, 8)
				if r < 0 {
					log.add("then %d", r)
					break
				}
				log.add("sig %d code %d value %d", r, int32(g.load32(fkInfo+8)), g.load64(fkInfo+24))
			}
			g.sys("exit_group", 0)
		})
		bit := func(s ...int) string {
			var m uint64
			for _, n := range s {
				m |= 1 << (n - 1)
			}
			return fmt.Sprintf("%#x", m)
		}
		require.Equal(t, []string{
			"queue 35 = 0", "queue 35 = 0",
			"pending " + bit(10, 12, 15, 34, 35),
			"sig 10 code -6 value 0", // SI_TKILL: the private one first
			"sig 12 code -6 value 0",
			"sig 34 code -6 value 0",
			"sig 35 code -1 value 1",
			"sig 35 code -1 value 2",
			"sig 10 code 0 value 0", // SI_USER: then the shared queue
			"sig 15 code 0 value 0",
			"then " + fmt.Sprint(-int64(EAGAIN)),
		}, log.get())
	})
}

// TestFakeWait4: a child's exit status and death by signal reach wait4
// in Linux's encoding; WNOHANG does not wait; no children is ECHILD.
func TestFakeWait4(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		log := &fakeLog{}
		runFake(t, a, Options{Deterministic: true}, func(g *fakeGuest) {
			c1 := g.clone(sigCHLDNo, func(g *fakeGuest) {
				g.work(20000)
				g.sys("exit_group", 7)
			})
			log.add("nohang %d", g.sys("wait4", ^uint64(0), fkStatus, wNOHANG, 0))
			r := g.sys("wait4", ^uint64(0), fkStatus, 0, 0)
			log.add("child1 %v status %#x", r == c1, g.load32(fkStatus))
			c2 := g.clone(sigCHLDNo, func(g *fakeGuest) {
				g.sys("kill", uint64(g.sys("getpid")), 9)
				g.work(1 << 30) // never reached
			})
			r = g.sys("wait4", uint64(c2), fkStatus, 0, 0)
			log.add("child2 %v status %#x", r == c2, g.load32(fkStatus))
			log.add("none %d", g.sys("wait4", ^uint64(0), fkStatus, 0, 0))
			g.sys("exit_group", 3)
		})
		require.Equal(t, []string{
			"nohang 0",
			"child1 true status 0x700",
			"child2 true status 0x9",
			"none " + fmt.Sprint(-int64(ECHILD)),
		}, log.get())
	})
}

// TestFakeFDTable: the lowest-free rule, F_DUPFD(_CLOEXEC), close_range
// with and without CLOSE_RANGE_CLOEXEC, fork's copy of the table against
// CLONE_FILES' shared one, and RLIMIT_NOFILE.
func TestFakeFDTable(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		log := &fakeLog{}
		runFake(t, a, Options{Deterministic: true}, func(g *fakeGuest) {
			g.sys("pipe2", fkPipe, 0)
			log.add("pipe %d %d", g.load32(fkPipe), g.load32(fkPipe+4))
			log.add("dup3 %d", g.sys("dup3", 3, 10, 0))
			log.add("F_DUPFD %d", g.sys("fcntl", 3, fDUPFD, 7))
			log.add("F_DUPFD_CLOEXEC %d cloexec %d", g.sys("fcntl", 3, fDUPFDCloex, 7), g.sys("fcntl", 8, fGETFD))
			log.add("close_range cloexec %d: %d %d", g.sys("close_range", 7, 10, 4), g.sys("fcntl", 7, fGETFD), g.sys("fcntl", 10, fGETFD))
			log.add("close_range %d: %d", g.sys("close_range", 7, ^uint64(0)>>32, 0), g.sys("fcntl", 10, fGETFD))
			// A fork child closes its copy; the parent's stays open.
			g.clone(sigCHLDNo, func(g *fakeGuest) {
				log.add("child close %d", g.sys("close", 3))
				g.sys("exit_group", 0)
			})
			g.sys("wait4", ^uint64(0), 0, 0, 0)
			log.add("parent fd 3 %d", g.sys("fcntl", 3, fGETFD))
			// A CLONE_FILES thread shares the table.
			g.clone(fkThreads, func(g *fakeGuest) {
				log.add("thread close %d", g.sys("close", 4))
				g.bump()
			})
			g.waitCount(1)
			log.add("parent fd 4 %d", g.sys("fcntl", 4, fGETFD))
			g.store64(fkRlimit, 6)
			g.store64(fkRlimit+8, 6)
			log.add("prlimit %d", g.sys("prlimit64", 0, rlimNofile, fkRlimit, 0))
			log.add("dup %d %d %d", g.sys("dup", 3), g.sys("dup", 3), g.sys("dup", 3))
			g.sys("exit_group", 0)
		})
		ebadf := fmt.Sprint(-int64(EBADF))
		require.Equal(t, []string{
			"pipe 3 4",
			"dup3 10",
			"F_DUPFD 7",
			"F_DUPFD_CLOEXEC 8 cloexec 1",
			"close_range cloexec 0: 1 1",
			"close_range 0: " + ebadf,
			"child close 0",
			"parent fd 3 0",
			"thread close 0",
			"parent fd 4 " + ebadf,
			"prlimit 0",
			"dup 4 5 " + fmt.Sprint(-int64(EMFILE)),
		}, log.get())
	})
}

// TestFakeSocketEMFILE: a socket whose descriptor cannot be installed
// (RLIMIT_NOFILE) is released, as sock_alloc_file's failure path does:
// it neither stays in the stack's table of live sockets (sockstat,
// /proc/net/unix) nor holds a name.
func TestFakeSocketEMFILE(t *testing.T) {
	const (
		fkPath = fakeData + 0x700 // "/proc/net/sockstat\0"
		fkBuf  = fakeData + 0x800 // read buffer (256 bytes)
	)
	bothArches(t, func(t *testing.T, a *arch) {
		log := &fakeLog{}
		runFake(t, a, Options{Deterministic: true}, func(g *fakeGuest) {
			path := []byte("/proc/net/sockstat\x00\x00\x00\x00\x00\x00")
			for i := 0; i+8 <= len(path); i += 8 {
				g.store64(fkPath+uint64(i), binary.LittleEndian.Uint64(path[i:]))
			}
			g.store64(fkRlimit, 4)
			g.store64(fkRlimit+8, 64)
			g.sys("prlimit64", 0, rlimNofile, fkRlimit, 0)
			log.add("socket %d %d %d", g.sys("socket", afUNIX, sockSTREAM, 0),
				g.sys("socket", afUNIX, sockSTREAM, 0), g.sys("socket", afINET, sockDGRAM, 0))
			g.store64(fkRlimit, 64)
			g.sys("prlimit64", 0, rlimNofile, fkRlimit, 0)
			cwd := int64(atFDCWD)
			fd := g.sys("openat", uint64(cwd), fkPath, 0)
			n := g.sys("read", uint64(fd), fkBuf, 256)
			var b []byte
			for i := int64(0); i < n; i += 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], g.load64(fkBuf+uint64(i)))
				b = append(b, w[:]...)
			}
			first, _, _ := strings.Cut(string(b[:max(n, 0)]), "\n")
			log.add("%s", first)
			g.sys("exit_group", 0)
		})
		require.Equal(t, []string{"socket 3 " + fmt.Sprint(-int64(EMFILE)) + " " + fmt.Sprint(-int64(EMFILE)), "sockets: used 1"}, log.get())
	})
}
