package tasks

import "encoding/binary"

// recvmmsg's timeout, as Linux's do_recvmmsg keeps it: read (EFAULT)
// and validated (EINVAL) before the descriptor is looked up, turned into
// an end on the kernel's monotonic clock (the virtual clock in --det), and
// checked only after each datagram: a receive that blocks is not cut short
// by it. A zero timeout ends the call after the first datagram. What is
// left of it is written back when at least one datagram was received.
type mmsgTimeout struct {
	addr uint64
	end  int64 // uptimeNs; 0 for a zero timeout
	left int64
}

// readMmsgTimeout reads recvmmsg's timeout argument (nil when addr is 0).
func (t *Task) readMmsgTimeout(addr uint64) (*mmsgTimeout, Errno) {
	if addr == 0 {
		return nil, 0
	}
	b, e := t.readBuf(addr, 16)
	if e != 0 {
		return nil, e
	}
	sec := int64(binary.LittleEndian.Uint64(b[0:]))
	nsec := int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return nil, EINVAL
	}
	mt := &mmsgTimeout{addr: addr}
	if sec != 0 || nsec != 0 {
		// Clamped as Linux's timespec64_add_safe saturates (2^33 s
		// keeps the sum far from int64's end).
		mt.end = t.tg.k.uptimeNs() + min(sec, 1<<33)*1e9 + nsec
	}
	return mt, 0
}

// expired updates what is left after a datagram and says whether the
// loop ends there.
func (mt *mmsgTimeout) expired(k *Kernel) bool {
	mt.left = mt.end - k.uptimeNs()
	if mt.left < 0 {
		mt.left = 0
	}
	return mt.left == 0
}

// recvmmsg is the loop of recvmmsg over one receive per mmsghdr (the
// in-kernel or the host socket's), timeout already read.
func (t *Task) recvmmsg(vec, vlen uint64, flags int, mt *mmsgTimeout, recv1 func(mh uint64, flags int) (int, Errno)) uint64 {
	vlen = min(vlen, 1024) // UIO_MAXIOV
	var i uint64
	for ; i < vlen; i++ {
		mh := vec + i*mmsghdrSize
		n, e := recv1(mh, flags&^msgWAITFORONE)
		if e != 0 {
			if i == 0 {
				return errRet(e)
			}
			break
		}
		if e := t.putU32(mh+msghdrSize, uint32(n)); e != 0 {
			if i == 0 {
				return errRet(e)
			}
			break
		}
		if flags&msgWAITFORONE != 0 {
			flags |= msgDONTWAIT
		}
		if mt != nil && mt.expired(t.tg.k) {
			i++
			break
		}
	}
	if mt != nil && i > 0 {
		if e := t.putTimespec(mt.addr, mt.left); e != 0 {
			return errRet(e)
		}
	}
	return i
}
