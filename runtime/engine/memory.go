package engine

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// CheckHostMemory fails, naming what, when the byte counts in sizes add
// up to more than the machine's memory. Allocating them anyway ends in
// Go's "fatal error: out of memory" (or the kernel's OOM killer) halfway
// through filling them, which no caller can recover from. It checks only
// where the total is cheap to know, /proc/meminfo's MemTotal on Linux,
// and passes elsewhere.
func CheckHostMemory(what string, sizes ...int64) error {
	total, ok := hostMemTotal()
	if !ok {
		return nil
	}
	return checkMemory(what, total, sizes)
}

func checkMemory(what string, total int64, sizes []int64) error {
	var need int64
	for _, n := range sizes {
		if n < 0 || need > math.MaxInt64-n {
			need = math.MaxInt64
			break
		}
		need += n
	}
	if need <= total {
		return nil
	}
	return fmt.Errorf("%s need %d bytes (%.1f GiB) of host memory; this machine has %d (%.1f GiB, MemTotal in /proc/meminfo): "+
		"compile the model for this machine with smaller bounds on its dims, fewer pipeline copies, or layers on other devices "+
		"(graphc plan -fit -mem cpu=%dGiB,… chooses them)",
		what, need, float64(need)/(1<<30), total, float64(total)/(1<<30), max(total>>30, 1))
}

var hostMemTotal = sync.OnceValues(func() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseMemTotal(bufio.NewScanner(f))
})

// parseMemTotal reads the "MemTotal:  24683656 kB" line of /proc/meminfo.
func parseMemTotal(s *bufio.Scanner) (int64, bool) {
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) != 3 || f[0] != "MemTotal:" || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64>>10 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
