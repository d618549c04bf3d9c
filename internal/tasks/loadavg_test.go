package tasks

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func loadStrings(la *loadAvg) string {
	var s []string
	for _, v := range la.avenrun {
		s = append(s, loadFmt(v+fixed1/200))
	}
	return strings.Join(s, " ")
}

// TestLoadAverage: Linux's fixed-point averages. One busy thread for one
// sample gives Linux's familiar 0.08 (calc_load(0, EXP_1, FIXED_1) =
// 164); a minute of it 1-e^-1, 1-e^-1/5, 1-e^-1/15 to Linux's rounding;
// a minute's samples folded at once (a tickless idle stretch) land within
// a hundredth of folding them one by one; a long idle decays to 0.00
// without a loop per missed sample.
func TestLoadAverage(t *testing.T) {
	la := &loadAvg{active: 1}
	la.foldLocked(loadFreq)
	require.Equal(t, uint64(164), la.avenrun[0])
	require.Equal(t, "0.08 0.02 0.01", loadStrings(la)) // calc_load rounds up while rising
	for i := 2; i <= 12; i++ {
		la.foldLocked(int64(i) * loadFreq)
	}
	require.Equal(t, "0.63 0.18 0.06", loadStrings(la))

	once := &loadAvg{active: 1}
	once.foldLocked(12 * loadFreq)
	for i := range once.avenrun {
		d := int64(once.avenrun[i]) - int64(la.avenrun[i])
		require.LessOrEqual(t, max(d, -d), int64(fixed1/100), "average %d: folded at once %d, one by one %d", i, once.avenrun[i], la.avenrun[i])
	}

	la.active = 0
	la.foldLocked(1 << 62) // ~146 years of samples at once
	require.Equal(t, "0.00 0.00 0.00", loadStrings(la))
	require.Greater(t, la.next, int64(1<<62))

	busy := &loadAvg{active: 3}
	for i := 1; i <= 12*15; i++ {
		busy.foldLocked(int64(i) * loadFreq)
	}
	require.Equal(t, "3.00 2.87 1.89", loadStrings(busy)) // 3(1-e^-3), 3(1-e^-1) and the round-up
}
