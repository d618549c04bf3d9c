package uvm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uvm-emu/uvm"
)

// Cancelling the context kills the guest (SIGKILL) and Run reports it.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := uvm.Run(ctx, uvm.Config{Program: "testdata/bin/arm64/fib", Args: []string{"45"}})
	if !errors.Is(err, context.DeadlineExceeded) || res.Signal != 9 {
		t.Fatalf("got %+v, %v; want SIGKILL and DeadlineExceeded", res, err)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := uvm.Run(context.Background(), uvm.Config{Program: "go.mod"}); !errors.Is(err, uvm.ErrNotELF) {
		t.Errorf("a text file: %v", err)
	}
	if _, err := uvm.Run(context.Background(), uvm.Config{Program: "testdata/bin/amd64/hello",
		Probes: []uvm.Probe{uvm.Uprobe("no_such_symbol", func(*uvm.Hit) uvm.Action { return uvm.Continue })}}); err == nil {
		t.Errorf("a probe on a missing symbol must fail")
	}
}
