package gdbstub

import (
	"strings"
	"testing"
)

// followTarget is an eventTarget that can follow its fork child.
type followTarget struct {
	*eventTarget
	pid      int
	followed []int
	released []int
}

func (t *followTarget) Pid() int              { return t.pid }
func (t *followTarget) DetachProcess(pid int) { t.released = append(t.released, pid) }
func (t *followTarget) FollowFork(pid int) error {
	t.followed = append(t.followed, pid)
	t.pid = pid
	return nil
}

// TestSessionFollowFork: D;PID of the debugged process at its fork event
// follows the child (the session goes on, ids name the child); afterwards
// it detaches.
func TestSessionFollowFork(t *testing.T) {
	tg := &followTarget{eventTarget: &eventTarget{memTarget: newMemTarget(AMD64)}, pid: 1001}
	c, done := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+;fork-events+"))))
	c.reply(true)
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	for _, q := range []struct{ cmd, want string }{
		{"vCont;c", "T05fork:p3eb.3eb;thread:p3e9.3e9;"},
		{"D;3e9", "OK"}, // the parent: gdb follows the child
		{"?", "T05thread:p3eb.3eb;"},
		{"D;3e9", "OK"}, // no longer the target's: nothing happens
	} {
		if got := c.cmd(q.cmd); got != q.want {
			t.Errorf("%s: %q, want %q", q.cmd, got, q.want)
		}
	}
	if len(tg.followed) != 1 || tg.followed[0] != 0x3eb || tg.detached {
		t.Fatalf("followed %v, detached %v", tg.followed, tg.detached)
	}
	// Past the fork event, D;PID of the (new) target detaches it.
	if got := c.cmd("D;3eb"); got != "OK" || !tg.detached {
		t.Errorf("D;PID after the follow: %q detached=%v", got, tg.detached)
	}
	<-done
}

// scriptTarget is a followTarget whose resumes report the scripted stops
// in turn (then an exit).
type scriptTarget struct {
	*followTarget
	stops []Stop
}

func (t *scriptTarget) Threads() []Thread {
	if len(t.followed) > 0 {
		return []Thread{{ID: t.pid}}
	}
	return t.followTarget.Threads()
}

func (t *scriptTarget) Resume(acts []ResumeAction) <-chan Stop {
	ch := make(chan Stop, 1)
	st := Stop{Kind: StopExited, Break: -1}
	if len(t.stops) > 0 {
		st, t.stops = t.stops[0], t.stops[1:]
	}
	ch <- st
	return ch
}

func newScriptTarget(stops ...Stop) *scriptTarget {
	return &scriptTarget{followTarget: &followTarget{eventTarget: &eventTarget{memTarget: newMemTarget(AMD64)}, pid: 1001}, stops: stops}
}

// TestSessionFollowVfork: at a vfork event, the client naming the child
// (gdb's follow-fork-mode child: Hg, then vCont of the child alone)
// follows it without detaching the parent, which gdb detaches (D;PID)
// once the child exited; following the parent, D;CHILD leaves the target
// as it is and vforkdone is reported.
func TestSessionFollowVfork(t *testing.T) {
	vfork := Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1, Event: EventVfork, ChildPid: 1003, ChildTid: 1003}
	start := func(tg *scriptTarget) (*client, chan error) {
		c, done := startSession(t, tg, Options{})
		c.send(string(encodePacket(nil, []byte("qSupported:multiprocess+;vfork-events+"))))
		if r := c.reply(true); !strings.Contains(r, ";vfork-events+") || !tg.ev.Vfork {
			t.Fatalf("qSupported: %q, events %+v", r, tg.ev)
		}
		c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
		c.reply(true)
		return c, done
	}
	run := func(c *client, steps []struct{ cmd, want string }) {
		t.Helper()
		for _, q := range steps {
			if got := c.cmd(q.cmd); got != q.want {
				t.Errorf("%s: %q, want %q", q.cmd, got, q.want)
			}
		}
	}

	tg := newScriptTarget(vfork, Stop{Kind: StopExited, Code: 7, Break: -1})
	c, done := start(tg)
	run(c, []struct{ cmd, want string }{
		{"vCont;c", "T05vfork:p3eb.3eb;thread:p3e9.3e9;"},
		{"Hgp3e8.3e8", "E01"}, // another process: no follow
		{"Hgp3eb.zz", "E01"},  // malformed: no follow
		{"vCont;c:p3eb.-1;x", "E01"},
		{"?", "T05vfork:p3eb.3eb;thread:p3e9.3e9;"},
		{"Hgp3eb.3eb", "OK"}, // the child: gdb follows it
		{"?", "T05thread:p3eb.3eb;"},
		{"qfThreadInfo", "mp3eb.3eb"},
		{"vCont;c:p3eb.-1", "W07;process:3eb"}, // no "not debugged" O packet first
		{"D;3e9", "OK"},                        // the held parent goes on
	})
	if len(tg.followed) != 1 || tg.followed[0] != 0x3eb || len(tg.released) != 1 || tg.released[0] != 0x3e9 || tg.detached {
		t.Errorf("followed %v, released %v, detached %v", tg.followed, tg.released, tg.detached)
	}
	c.c.Close()
	<-done

	// Following the parent.
	tg = newScriptTarget(vfork, Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1, Event: EventVforkDone})
	c, done = start(tg)
	run(c, []struct{ cmd, want string }{
		{"vCont;c", "T05vfork:p3eb.3eb;thread:p3e9.3e9;"},
		{"D;3eb", "OK"},
		{"Hgp3eb.3eb", "E01"}, // detached: no longer followed
		{"vCont;c:p3e9.3e9", "T05vforkdone:;thread:p3e9.3e9;"},
		{"vCont;c", "W00;process:3e9"},
	})
	if len(tg.followed) != 0 || tg.detached {
		t.Errorf("followed %v, detached %v", tg.followed, tg.detached)
	}
	c.c.Close()
	<-done

	// A fork event's child is followed by D;PID of the parent only.
	tg = newScriptTarget(Stop{Kind: StopSignal, Signal: 5, Thread: 1001, Break: -1, Event: EventFork, ChildPid: 1003, ChildTid: 1003})
	c, done = start(tg)
	run(c, []struct{ cmd, want string }{
		{"vCont;c", "T05fork:p3eb.3eb;thread:p3e9.3e9;"},
		{"Hgp3eb.3eb", "E01"},
	})
	if len(tg.followed) != 0 {
		t.Errorf("Hg of a fork child followed it: %v", tg.followed)
	}
	c.c.Close()
	<-done
}
