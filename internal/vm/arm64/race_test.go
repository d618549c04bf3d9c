//go:build race

package arm64

// raceEnabled: guest memory is accessed with plain loads and stores by
// design (see vm.TLB), so tests that run guest threads in parallel on
// shared memory are skipped under the race detector.
const raceEnabled = true
