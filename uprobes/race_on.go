//go:build race

package uprobes

// raceEnabled reports a -race build (relaxedAdd).
const raceEnabled = true
