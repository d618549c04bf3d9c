package tasks

// sendfileSrcErr is Linux's answer for a sendfile(2) input that cannot
// be its source, 0 for one that can. do_sendfile asks for a positional
// read first (ESPIPE when an offset is given for a descriptor without
// one), then do_splice_read for the file's splice_read: regular files
// and devices have it; pipes, FIFOs, sockets and the anonymous inodes
// (eventfd, timerfd, signalfd, epoll) do not, and the call fails with
// EINVAL before anything is read. Go's os.File.WriteTo and
// net.TCPConn.ReadFrom try sendfile first and copy by read/write after
// EINVAL; a pipe source that answered EAGAIN instead left the copy
// waiting for the socket to become writable, which it already was
// (net's TestCopyPipeIntoTCP hung).
func (t *Task) sendfileSrcErr(in *openFile, withOffset bool) Errno {
	st, e := in.ops.stat(t, in)
	if e != 0 {
		return e
	}
	switch st.mode & sIFMT {
	case sIFREG, sIFCHR, sIFBLK:
		return 0
	}
	if withOffset {
		return ESPIPE
	}
	return EINVAL
}
