package engine

import (
	"bufio"
	"math"
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	meminfo := "MemFree:         1000 kB\nMemTotal:       24683656 kB\nMemAvailable:   23997704 kB\n"
	got, ok := parseMemTotal(bufio.NewScanner(strings.NewReader(meminfo)))
	if !ok || got != 24683656<<10 {
		t.Errorf("got %d, %v; want %d", got, ok, int64(24683656)<<10)
	}
	for _, bad := range []string{"", "MemTotal: 12 MB\n", "MemTotal: -5 kB\n", "MemTotal: 99999999999999999999 kB\n"} {
		if v, ok := parseMemTotal(bufio.NewScanner(strings.NewReader(bad))); ok {
			t.Errorf("%q: got %d, want no total", bad, v)
		}
	}
}

// TestCheckMemory: a total that fits passes, one that does not names what
// needs it, and sums that overflow int64 are over, never wrapped under.
func TestCheckMemory(t *testing.T) {
	const total = 1 << 30
	if err := checkMemory("x", total, []int64{1 << 29, 1 << 29}); err != nil {
		t.Errorf("exactly the total: %v", err)
	}
	err := checkMemory("the filled weights", total, []int64{1 << 29, 1<<29 + 1})
	want := "the filled weights need 1073741825 bytes (1.0 GiB) of host memory; this machine has 1073741824 (1.0 GiB, MemTotal in /proc/meminfo): " +
		"compile the model for this machine with smaller bounds on its dims, fewer pipeline copies, or layers on other devices (graphc plan -fit -mem cpu=1GiB,… chooses them)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err := checkMemory("x", total, []int64{math.MaxInt64, 2}); err == nil {
		t.Error("an int64 overflow passed")
	}
}
