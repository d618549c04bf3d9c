//go:build !linux

package tasks

import "os"

// hostFIFO: host FIFOs are plain host files outside Linux.
type hostFIFO struct{ *hostFile }

func newHostFIFO(*os.File) *hostFIFO { return nil }

func (h *hostFIFO) count(tab *fifoTable, writing, det bool) {}
