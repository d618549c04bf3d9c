package gdbstub

// Reverse execution: the bs (reverse-stepi) and bc (reverse-continue)
// packets, offered as ReverseStep+ and ReverseContinue+ to a Target that
// implements Reverser. gdb builds reverse-next, reverse-step and
// reverse-finish from them and its breakpoints.

// Reverser is a Target that can execute backwards (optional).
type Reverser interface {
	// ReverseStep moves thread tid back by one instruction;
	// ReverseContinue moves the process back to the last breakpoint or
	// watchpoint hit before the current point (tid is the thread of the
	// current stop). The stop comes through the channel as for Resume;
	// one with HistoryBegin says there was no earlier point to go to (the
	// process is at the start of its history). An error (the target
	// keeps no history, say) is sent to the client as its message.
	ReverseStep(tid int) (<-chan Stop, error)
	ReverseContinue(tid int) (<-chan Stop, error)
}

// maxErrText bounds an error message sent in an E.text reply.
const maxErrText = 200

// reverse handles bs and bc.
func (s *session) reverse(p []byte) ([]byte, bool, error) {
	r, ok := s.t.(Reverser)
	if !ok || len(p) != 2 || (p[1] != 's' && p[1] != 'c') {
		return replyEmpty, false, nil
	}
	if s.exited {
		return errText("the process has exited"), false, nil
	}
	var ch <-chan Stop
	var err error
	if p[1] == 's' {
		tid := s.cThread
		if tid <= 0 {
			tid = s.curThread()
		}
		ch, err = r.ReverseStep(tid)
	} else {
		tid := s.last.Thread
		if tid <= 0 {
			tid = s.curThread()
		}
		ch, err = r.ReverseContinue(tid)
	}
	if err != nil {
		return errText(err.Error()), false, nil
	}
	return s.wait(ch)
}

// errText is an error reply with a message (E.text), printable ASCII
// only and bounded.
func errText(msg string) []byte {
	b := []byte("E.")
	for i := 0; i < len(msg) && i < maxErrText; i++ {
		c := msg[i]
		switch {
		case c < 0x20 || c >= 0x7f, c == '$', c == '#', c == '}', c == '*':
			c = '?'
		}
		b = append(b, c)
	}
	return b
}
