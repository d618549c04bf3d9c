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
