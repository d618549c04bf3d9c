package gdbstub

import "testing"

// followTarget is an eventTarget that can follow its fork child.
type followTarget struct {
	*eventTarget
	pid      int
	followed []int
}

func (t *followTarget) Pid() int { return t.pid }
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
