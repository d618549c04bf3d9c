package signals

// Pending is a queue of pending signals: Linux's struct sigpending, a set
// of pending signal numbers plus the list of queued siginfos in arrival
// order. Each thread has one (task->pending) and the thread group has one
// (signal->shared_pending). Every Pending is protected by the siglock of
// the Sighand its thread group uses; the zero value is an empty queue.
//
// Standard signals (1..31) coalesce: while one is pending another of the
// same number is dropped. Real-time signals queue every instance with its
// siginfo and are dequeued in order.
type Pending struct {
	set   SigSet    // pending signals (sigpending.signal)
	queue []SigInfo // queued siginfos in arrival order (sigpending.list)

	// Limit, when > 0, is the most siginfos the queue holds (Linux counts
	// RLIMIT_SIGPENDING per user; uvm approximates it per queue). Only
	// siginfos with si_code < 0 (sigqueue, tgkill, timers) count against
	// it, as Linux's override_rlimit lets si_code >= 0 through. Beyond it
	// a real-time signal fails with EAGAIN and a standard one is still
	// marked pending but loses its siginfo (Linux's "silent loss of
	// information").
	Limit int
}

// AddResult says what Add did.
type AddResult int

// Add results.
const (
	Queued    AddResult = iota // now pending (with its siginfo when there was room)
	Coalesced                  // a standard signal already pending: dropped (legacy_queue)
	QueueFull                  // real-time user signal over Limit: not queued (EAGAIN)
)

func (r AddResult) String() string {
	switch r {
	case Queued:
		return "queued"
	case Coalesced:
		return "coalesced"
	case QueueFull:
		return "queue full"
	}
	return "?"
}

// Add makes info.Signo pending, as Linux's __send_signal_locked does after
// prepare_signal decided the signal is not ignored: standard signals that
// are already pending coalesce; SIGKILL is only marked (Linux never queues
// its siginfo); everything else queues its siginfo.
func (p *Pending) Add(info SigInfo) AddResult {
	sig := Signal(info.Signo)
	if !sig.Valid() {
		return Coalesced
	}
	if sig < SIGRTMIN && p.set.Has(sig) {
		return Coalesced
	}
	if sig != SIGKILL {
		// override_rlimit: kernel-made and kill()-style siginfos
		// (si_code >= 0) are queued regardless of the limit.
		if p.Limit <= 0 || len(p.queue) < p.Limit || info.Code >= 0 {
			p.queue = append(p.queue, info)
		} else if sig.IsRealtime() {
			return QueueFull
		}
	}
	p.set = p.set.Add(sig)
	return Queued
}

// Set returns the pending signals.
func (p *Pending) Set() SigSet { return p.set }

// Has reports whether sig is pending.
func (p *Pending) Has(sig Signal) bool { return p.set.Has(sig) }

// Len returns the number of queued siginfos.
func (p *Pending) Len() int { return len(p.queue) }

// Queued returns a copy of the queued siginfos in arrival order (for
// /proc-style reporting and tests).
func (p *Pending) Queued() []SigInfo { return append([]SigInfo(nil), p.queue...) }

// Remove discards every pending instance of the signals in mask (Linux's
// flush_sigqueue_mask) and reports whether any was pending.
func (p *Pending) Remove(mask SigSet) bool {
	if p.set&mask == 0 {
		return false
	}
	p.set &^= mask
	q := p.queue[:0]
	for _, si := range p.queue {
		if !mask.Has(Signal(si.Signo)) {
			q = append(q, si)
		}
	}
	clear(p.queue[len(q):])
	p.queue = q
	return true
}

// Flush discards everything (flush_sigqueue).
func (p *Pending) Flush() {
	p.set = 0
	clear(p.queue)
	p.queue = p.queue[:0]
}

// next returns the signal Linux's next_signal picks among the pending
// signals not in blocked: a synchronous signal (SIGSEGV, SIGBUS, SIGILL,
// SIGTRAP, SIGFPE, SIGSYS) first, lowest number first; then the lowest
// number. 0 when none.
func (p *Pending) next(blocked SigSet) Signal {
	x := p.set &^ blocked
	if x == 0 {
		return 0
	}
	if x&SynchronousMask != 0 {
		x &= SynchronousMask
	}
	return x.Lowest()
}

// collect removes one instance of sig (Linux's collect_signal): the first
// queued siginfo for it; the signal stays pending while another instance
// is queued. A pending signal without a queued siginfo (SIGKILL, or one
// queued over Limit) yields SI_USER with zero sender, as Linux does.
func (p *Pending) collect(sig Signal) SigInfo {
	first := -1
	again := false
	for i := range p.queue {
		if Signal(p.queue[i].Signo) == sig {
			if first < 0 {
				first = i
			} else {
				again = true
				break
			}
		}
	}
	if !again {
		p.set = p.set.Del(sig)
	}
	if first < 0 {
		return SigInfo{Signo: int32(sig), Code: SI_USER}
	}
	info := p.queue[first]
	copy(p.queue[first:], p.queue[first+1:])
	p.queue[len(p.queue)-1] = SigInfo{}
	p.queue = p.queue[:len(p.queue)-1]
	return info
}

// Dequeue removes and returns the next deliverable signal of this queue
// alone, in next_signal order (see Pending.next). ok is false when every
// pending signal is blocked.
func (p *Pending) Dequeue(blocked SigSet) (info SigInfo, ok bool) {
	sig := p.next(blocked)
	if sig == 0 {
		return info, false
	}
	return p.collect(sig), true
}

// dequeueSynchronous is Linux's dequeue_synchronous_signal: if an unblocked
// synchronous signal is pending, return the first queued siginfo (in
// arrival order) of a synchronous signal with si_code > SI_USER, i.e. one
// the kernel generated for a faulting instruction, so that the frame's pc
// is that instruction's. Like Linux, the list walk itself does not look at
// blocked.
func (p *Pending) dequeueSynchronous(blocked SigSet) (info SigInfo, ok bool) {
	if p.set&^blocked&SynchronousMask == 0 {
		return info, false
	}
	idx := -1
	for i := range p.queue {
		if p.queue[i].Code > SI_USER && Signal(p.queue[i].Signo).Mask()&SynchronousMask != 0 {
			idx = i
			break
		}
	}
	if idx < 0 {
		return info, false
	}
	info = p.queue[idx]
	sig := Signal(info.Signo)
	again := false
	for _, si := range p.queue[idx+1:] {
		if Signal(si.Signo) == sig {
			again = true
			break
		}
	}
	if !again {
		p.set = p.set.Del(sig)
	}
	copy(p.queue[idx:], p.queue[idx+1:])
	p.queue[len(p.queue)-1] = SigInfo{}
	p.queue = p.queue[:len(p.queue)-1]
	return info, true
}

// Dequeue picks the next signal for a thread as Linux's get_signal does:
// first a kernel-generated synchronous signal from the thread's own queue
// (dequeue_synchronous_signal), then dequeue_signal: the thread's queue,
// then the thread group's shared queue, each in next_signal order. shared
// may be nil. The caller holds the siglock.
func Dequeue(own, shared *Pending, blocked SigSet) (info SigInfo, ok bool) {
	if info, ok = own.dequeueSynchronous(blocked); ok {
		return info, true
	}
	if info, ok = own.Dequeue(blocked); ok {
		return info, true
	}
	if shared != nil {
		return shared.Dequeue(blocked)
	}
	return info, false
}

// Deliverable reports whether a thread with the given blocked mask has a
// signal to take: Linux's recalc_sigpending_tsk test (the thread's or the
// group's pending set minus blocked is not empty). shared may be nil.
func Deliverable(own, shared *Pending, blocked SigSet) bool {
	set := own.set
	if shared != nil {
		set |= shared.set
	}
	return set&^blocked != 0
}

// RecalcSigpending sets or clears TIF_SIGPENDING in flags according to
// Deliverable and returns the result (Linux's recalc_sigpending). The
// caller holds the siglock.
func RecalcSigpending(flags *ThreadFlags, own, shared *Pending, blocked SigSet) bool {
	if Deliverable(own, shared, blocked) {
		flags.Set(TIF_SIGPENDING)
		return true
	}
	flags.Clear(TIF_SIGPENDING)
	return false
}
