package libs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// OpenBLASEnv names the environment variable that overrides the BLAS
// library search with a path.
const OpenBLASEnv = "GRAPHC_LIBOPENBLAS"

// FindOpenBLAS returns the path of the BLAS shared library the blas
// backend loads:
// $GRAPHC_LIBOPENBLAS if set, else the first OpenBLAS library
// (libopenblas.so.0, libopenblas.so) found, in the dynamic loader's order,
// in $LD_LIBRARY_PATH, the directories /etc/ld.so.conf lists and the
// system library directories; on macOS Accelerate when no OpenBLAS is
// found. The error says what was searched and how to install it.
func FindOpenBLAS() (string, error) {
	if p := os.Getenv(OpenBLASEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %v", OpenBLASEnv, err)
		}
		return p, nil
	}
	names, dirs := openBLASCandidates()
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	if runtime.GOOS == "darwin" {
		// Accelerate lives in the dyld shared cache, not on disk.
		return "/System/Library/Frameworks/Accelerate.framework/Accelerate", nil
	}
	return "", fmt.Errorf("OpenBLAS not found: no %s in %s; install it (Debian/Ubuntu: apt-get install libopenblas0) or set $%s to the library",
		strings.Join(names, " or "), dirs, OpenBLASEnv)
}

// openBLASCandidates lists the library names and the directories to
// search, in the dynamic loader's order, without duplicates.
func openBLASCandidates() (names []string, dirs Dirs) {
	names = []string{"libopenblas.so.0", "libopenblas.so"}
	if runtime.GOOS == "darwin" {
		names = []string{"libopenblas.0.dylib", "libopenblas.dylib"}
		dirs.Add("/opt/homebrew/opt/openblas/lib", "/usr/local/opt/openblas/lib")
	}
	dirs.Add(SystemDirs()...)
	return names, dirs
}
