package tasks

import (
	"testing"
	"time"
)

// TestLazyTimer: the callback runs once, never before the latest
// deadline Reset set; Reset and Stop report a pending timer as
// time.Timer's do; a stopped timer does not run, and Reset re-arms it.
func TestLazyTimer(t *testing.T) {
	start := time.Now()
	ran := make(chan time.Duration, 4)
	l := newLazyTimer(start, 5*time.Millisecond, func() { ran <- time.Since(start) })
	reset := time.Since(start)
	if !l.Reset(40 * time.Millisecond) {
		t.Fatal("Reset of a pending timer reported it not pending")
	}
	if at := <-ran; at < reset+40*time.Millisecond {
		t.Fatalf("ran at %v, before the deadline %v", at, reset+40*time.Millisecond)
	}
	if l.Reset(5 * time.Millisecond) {
		t.Fatal("Reset of a fired timer reported it pending")
	}
	<-ran // re-armed after firing
	l.Reset(5 * time.Millisecond)
	if !l.Stop() {
		t.Fatal("Stop of a pending timer reported it not pending")
	}
	if l.Stop() {
		t.Fatal("second Stop reported a pending timer")
	}
	select {
	case at := <-ran:
		t.Fatalf("a stopped timer ran (at %v)", at)
	case <-time.After(30 * time.Millisecond):
	}
	l.Reset(time.Millisecond)
	<-ran // a stopped timer runs again after Reset
}

// TestLazyTimerKeptAlive: Resets of a pending timer (the fast path, a
// mark only) keep postponing the callback; it runs once, a period or
// later (at most a period and the slack) after the last Reset.
func TestLazyTimerKeptAlive(t *testing.T) {
	start := time.Now()
	ran := make(chan time.Duration, 4)
	const d = 20 * time.Millisecond
	l := newLazyTimer(start, d, func() { ran <- time.Since(start) })
	var last time.Duration
	for end := time.Now().Add(5 * d); time.Now().Before(end); time.Sleep(d / 10) {
		select {
		case at := <-ran:
			t.Fatalf("ran at %v while being reset (last Reset at %v)", at, last)
		default:
		}
		last = time.Since(start)
		if !l.Reset(d) {
			t.Fatal("Reset of a pending timer reported it not pending")
		}
	}
	at := <-ran
	if at < last+d {
		t.Fatalf("ran at %v, before the last Reset's deadline %v", at, last+d)
	}
	select {
	case at := <-ran:
		t.Fatalf("ran twice (again at %v)", at)
	case <-time.After(3 * d):
	}
}
