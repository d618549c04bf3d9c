package gdbstub

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// revTarget is a memTarget that executes backwards over a recorded
// history of pcs (one per step) in its register file: ReverseStep moves
// one entry back, ReverseContinue to the last breakpoint before the
// current entry or to the first entry (HistoryBegin).
type revTarget struct {
	*memTarget
	hist []uint64 // pcs, oldest first
	at   int      // the current entry
	// off, when set, is the error of every reverse request.
	off error
	// calls records the requests (s:TID or c:TID).
	calls []string
}

func (t *revTarget) setPC() {
	off := t.arch.Offset(t.arch.PC)
	for i := 0; i < 8; i++ {
		t.regs[1001][off+i] = byte(t.hist[t.at] >> (8 * i))
	}
}

func (t *revTarget) ReverseStep(tid int) (<-chan Stop, error) {
	t.calls = append(t.calls, fmt.Sprintf("s:%d", tid))
	if t.off != nil {
		return nil, t.off
	}
	st := Stop{Kind: StopSignal, Signal: 5, Thread: tid, Break: -1}
	if t.at == 0 {
		st.HistoryBegin = true
	} else {
		t.at--
	}
	t.setPC()
	ch := make(chan Stop, 1)
	ch <- st
	return ch, nil
}

func (t *revTarget) ReverseContinue(tid int) (<-chan Stop, error) {
	t.calls = append(t.calls, fmt.Sprintf("c:%d", tid))
	if t.off != nil {
		return nil, t.off
	}
	st := Stop{Kind: StopSignal, Signal: 5, Thread: tid, Break: -1, HistoryBegin: true}
	for i := t.at - 1; i >= 0; i-- {
		if t.breaks[t.hist[i]] {
			st.Break, st.HistoryBegin, t.at = int(BreakSoftware), false, i
			break
		}
	}
	if st.HistoryBegin {
		t.at = 0
	}
	t.setPC()
	ch := make(chan Stop, 1)
	ch <- st
	return ch, nil
}

func newRevTarget() *revTarget {
	t := &revTarget{memTarget: newMemTarget(AArch64), hist: []uint64{0x1000, 0x1004, 0x1008, 0x100c, 0x1010}}
	t.at = len(t.hist) - 1
	t.setPC()
	return t
}

func TestReversePackets(t *testing.T) {
	tg := newRevTarget()
	c, _ := startSession(t, tg, Options{})
	c.send(string(encodePacket(nil, []byte("qSupported:swbreak+"))))
	if r := c.reply(true); !strings.Contains(r, ";ReverseStep+;ReverseContinue+") {
		t.Fatalf("qSupported: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	pc := func() string { return c.cmd("p20") } // aarch64: regnum 32 is pc
	if r := c.cmd("bs"); r != "T05thread:3e9;" || pc() != "0c10000000000000" {
		t.Errorf("bs: %q, pc %s", r, pc())
	}
	if r := c.cmd("Z0,1004,4"); r != "OK" {
		t.Fatalf("Z0: %q", r)
	}
	if r := c.cmd("bc"); r != "T05swbreak:;thread:3e9;" || pc() != "0410000000000000" {
		t.Errorf("bc to the breakpoint: %q, pc %s", r, pc())
	}
	if r := c.cmd("bc"); r != "T05replaylog:begin;thread:3e9;" || pc() != "0010000000000000" {
		t.Errorf("bc past the first breakpoint: %q, pc %s", r, pc())
	}
	if r := c.cmd("bs"); r != "T05replaylog:begin;thread:3e9;" {
		t.Errorf("bs at the start: %q", r)
	}
	if r := c.cmd("?"); r != "T05replaylog:begin;thread:3e9;" {
		t.Errorf("? after bs: %q", r)
	}
	// Malformed: b alone (the old baud-rate packet), trailing bytes.
	for _, p := range []string{"b", "bsx", "bc;1", "bS", "b\x00"} {
		if r := c.cmd(p); r != "" {
			t.Errorf("%q: %q, want an empty reply", p, r)
		}
	}
	tg.off = errors.New("no history: $#*}\n" + strings.Repeat("x", 300))
	r := c.cmd("bs")
	if !strings.HasPrefix(r, "E.no history: ????") || len(r) != 2+maxErrText || strings.ContainsAny(r, "$#*}\n") {
		t.Errorf("bs refused: %q", r)
	}
	if r := c.cmd("bc"); !strings.HasPrefix(r, "E.no history") {
		t.Errorf("bc refused: %q", r)
	}
	if got := strings.Join(tg.calls, " "); got != "s:1001 c:1001 c:1001 s:1001 s:1001 c:1001" {
		t.Errorf("calls: %s", got)
	}
}

func TestReverseNotOffered(t *testing.T) {
	c, _ := startSession(t, newMemTarget(AMD64), Options{})
	c.send(string(encodePacket(nil, []byte("qSupported"))))
	if r := c.reply(true); strings.Contains(r, "Reverse") {
		t.Errorf("qSupported offers reverse execution without a Reverser: %q", r)
	}
	c.send(string(encodePacket(nil, []byte("QStartNoAckMode"))))
	c.reply(true)
	for _, p := range []string{"bs", "bc"} {
		if r := c.cmd(p); r != "" {
			t.Errorf("%s without a Reverser: %q", p, r)
		}
	}
}
