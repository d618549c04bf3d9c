//go:build !race

package arm64

const raceEnabled = false
