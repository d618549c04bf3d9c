package tasks

import "sync"

// The load average, as Linux's calc_global_load keeps it: every
// loadFreq of the kernel's clock (the virtual clock in --det, so the
// figures are part of the deterministic run) the number of active
// threads is folded into three exponentially decayed averages (1, 5 and
// 15 minutes) in 11-bit fixed point, with Linux's constants and rounding.
// A thread is active unless it is blocked in a wait (uvm has no
// uninterruptible disk sleep to count). The count only changes when a
// thread starts, exits, blocks or wakes, and every change first folds in
// the samples due since the previous one, so the count each sample sees
// is the one that held at its instant; samples missed in a long idle
// stretch are folded at once, as calc_load_n does for a tickless kernel.

const (
	fshift   = 11
	fixed1   = 1 << fshift
	loadFreq = 5*1e9 + 1e7 // LOAD_FREQ: 5 s and one tick (HZ=100)
)

// loadExp are EXP_1, EXP_5, EXP_15.
var loadExp = [3]uint64{1884, 2014, 2037}

type loadAvg struct {
	mu      sync.Mutex
	active  int64 // threads not blocked
	next    int64 // uptimeNs of the next sample; 0 until the first change
	avenrun [3]uint64
}

// calcLoad is Linux's calc_load.
func calcLoad(load, exp, active uint64) uint64 {
	n := load*exp + active*(fixed1-exp)
	if active >= load {
		n += fixed1 - 1
	}
	return n / fixed1
}

// fixedPowerInt is Linux's fixed_power_int (x^n in fixed point).
func fixedPowerInt(x uint64, frac uint, n uint64) uint64 {
	r := uint64(1) << frac
	for n != 0 {
		if n&1 != 0 {
			r = (r*x + 1<<(frac-1)) >> frac
		}
		n >>= 1
		if n == 0 {
			break
		}
		x = (x*x + 1<<(frac-1)) >> frac
	}
	return r
}

// foldLocked folds in the samples due at or before now (la.mu held).
func (la *loadAvg) foldLocked(now int64) {
	if la.next == 0 {
		la.next = loadFreq
	}
	if now < la.next {
		return
	}
	n := uint64((now-la.next)/loadFreq) + 1
	la.next += int64(n) * loadFreq
	active := uint64(max(la.active, 0)) * fixed1
	for i, e := range loadExp {
		la.avenrun[i] = calcLoad(la.avenrun[i], fixedPowerInt(e, fshift, n), active)
	}
}

// loadChange adds d to the active thread count.
func (k *Kernel) loadChange(d int64) {
	la := &k.loadavg
	la.mu.Lock()
	la.foldLocked(k.uptimeNs())
	la.active += d
	la.mu.Unlock()
}

// loadSnapshot is /proc/loadavg's averages (Linux's get_avenrun with
// FIXED_1/200 added, for rounding to hundredths) and the active count.
func (k *Kernel) loadSnapshot() (avg [3]uint64, active int64) {
	la := &k.loadavg
	la.mu.Lock()
	defer la.mu.Unlock()
	la.foldLocked(k.uptimeNs())
	for i, v := range la.avenrun {
		avg[i] = v + fixed1/200
	}
	return avg, la.active
}

// loadFmt prints one average as Linux's LOAD_INT.LOAD_FRAC.
func loadFmt(x uint64) string {
	frac := (x & (fixed1 - 1)) * 100 >> fshift
	s := itoa(int(x >> fshift))
	if frac < 10 {
		return s + ".0" + itoa(int(frac))
	}
	return s + "." + itoa(int(frac))
}
