package vm

// Kernel-side access to an anonymous SharedObject's bytes: what read(2),
// write(2) and ftruncate(2) of a memfd do to the pages its mappings share
// (Linux's shmem read_iter/write_iter/setattr), so file I/O and every
// mapping of the object see the same bytes.

// ReadAt copies the object's bytes at off into p. Pages never touched
// read as zeroes (and are not created).
func (o *SharedObject) ReadAt(p []byte, off uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(p) > 0 {
		pgoff, in := off>>PageShift, off&PageMask
		n := min(uint64(len(p)), PageSize-in)
		if pg := o.pages[pgoff]; pg != nil {
			copy(p[:n], pg.Data[in:])
		} else {
			clear(p[:n])
		}
		p, off = p[n:], off+n
	}
}

// WriteAt copies p into the object at off, creating pages as needed
// (each mapping that faults one in applies its own permission). A page
// that holds predecoded code gets a new CodeVersion.
func (o *SharedObject) WriteAt(p []byte, off uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(p) > 0 {
		pgoff, in := off>>PageShift, off&PageMask
		n := min(uint64(len(p)), PageSize-in)
		pg := o.pages[pgoff]
		if pg == nil {
			pg = new(Page)
			o.pages[pgoff] = pg
		}
		copy(pg.Data[in:in+n], p[:n])
		if pg.hasCode.Load() {
			pg.CodeVersion.Add(1)
		}
		p, off = p[n:], off+n
	}
}

// Truncate zeroes the object's bytes from size on (the tail of the page
// holding size and every later page), as shrinking a shmem file does;
// pages wholly past size stay allocated only while a mapping holds them.
func (o *SharedObject) Truncate(size uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, pg := range o.pages {
		start := i << PageShift
		switch {
		case start >= size:
			pg.Data = [PageSize]byte{}
			pg.CodeVersion.Add(1)
		case start+PageSize > size:
			clear(pg.Data[size-start:])
			pg.CodeVersion.Add(1)
		}
	}
}

// Punch zeroes [off, off+n) (fallocate's FALLOC_FL_PUNCH_HOLE).
func (o *SharedObject) Punch(off, n uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	end := off + n
	for i, pg := range o.pages {
		start := i << PageShift
		if start >= end || start+PageSize <= off {
			continue
		}
		lo, hi := max(off, start)-start, min(end, start+PageSize)-start
		clear(pg.Data[lo:hi])
		pg.CodeVersion.Add(1)
	}
}
