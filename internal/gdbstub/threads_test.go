package gdbstub

import (
	"strings"
	"testing"
)

// threadTarget is a scriptTarget that reports thread events (a thread
// whose exit it reported is no longer listed).
type threadTarget struct {
	*scriptTarget
	threadEvents []bool
	gone         map[int]bool
}

func (t *threadTarget) Resume(acts []ResumeAction) <-chan Stop {
	ch := make(chan Stop, 1)
	st := <-t.scriptTarget.Resume(acts)
	if st.Kind == StopThreadExited {
		t.gone[st.Thread] = true
	}
	ch <- st
	return ch
}

func (t *threadTarget) Threads() []Thread {
	var out []Thread
	for _, th := range t.scriptTarget.Threads() {
		if !t.gone[th.ID] {
			out = append(out, th)
		}
	}
	return out
}

func (t *threadTarget) SetThreadEvents(on bool) { t.threadEvents = append(t.threadEvents, on) }

func newThreadTarget(stops ...Stop) *threadTarget {
	return &threadTarget{scriptTarget: newScriptTarget(stops...), gone: map[int]bool{}}
}

// TestSessionThreadEvents: QThreadEvents is offered to a
// ThreadEventReporter only; a creation stops with T05create: and the new
// thread, an exit with w (exit status, thread id) and leaves the process
// stopped, not exited.
func TestSessionThreadEvents(t *testing.T) {
	tg := newThreadTarget(
		Stop{Kind: StopSignal, Signal: 5, Thread: 1002, Break: -1, Event: EventThreadCreated},
		Stop{Kind: StopThreadExited, Thread: 1002, Code: 3, Break: -1},
		Stop{Kind: StopExited, Code: 0, Break: -1})
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+;QThreadEvents+"))))
	if r := c.reply(true); !strings.Contains(r, ";QThreadEvents+") {
		t.Fatalf("qSupported: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	for _, q := range []struct{ cmd, want string }{
		{"QThreadEvents:2", "E01"},
		{"QThreadEvents:", "E01"},
		{"QThreadEvents:1", "OK"},
		{"vCont;c", "T05create:;thread:p3e9.3ea;"},
		{"?", "T05create:;thread:p3e9.3ea;"},
		{"vCont;c", "w3;p3e9.3ea"},
		{"?", "T05thread:p3e9.3e9;"}, // the process is stopped, not gone
		{"qfThreadInfo", "mp3e9.3e9"},
		{"Hgp3e9.3ea", "E01"},
		{"QThreadEvents:0", "OK"},
		{"vCont;c", "W00;process:3e9"},
	} {
		if got := c.cmd(q.cmd); got != q.want {
			t.Errorf("%s: %q, want %q", q.cmd, got, q.want)
		}
	}
	if len(tg.threadEvents) != 2 || !tg.threadEvents[0] || tg.threadEvents[1] {
		t.Errorf("SetThreadEvents calls %v, want [true false]", tg.threadEvents)
	}
	c.c.Close()
	<-done

	// Without multiprocess the exit names the thread alone.
	tg = newThreadTarget(Stop{Kind: StopThreadExited, Thread: 1002, Code: 0, Break: -1})
	c, done = startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("vCont;c"))))
	if r := c.reply(true); r != "w0;3ea" {
		t.Errorf("thread exit without multiprocess: %q", r)
	}
	c.c.Close()
	<-done

	// A Target without thread events: not offered, not supported.
	c, done = startSession(t, newMemTarget(AMD64), Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:QThreadEvents+"))))
	if r := c.reply(true); strings.Contains(r, "QThreadEvents") {
		t.Errorf("qSupported offers QThreadEvents: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QThreadEvents:1"))))
	if r := c.reply(true); r != "" {
		t.Errorf("QThreadEvents:1 without support: %q", r)
	}
	c.c.Close()
	<-done
}
