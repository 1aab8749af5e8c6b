package blas

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
)

// LibraryEnv names the environment variable that overrides the library
// search with a path.
const LibraryEnv = "GRAPHC_LIBOPENBLAS"

// Library returns the path of the BLAS shared library the backend loads:
// $GRAPHC_LIBOPENBLAS if set, else the first OpenBLAS library
// (libopenblas.so.0, libopenblas.so) found, in the dynamic loader's order,
// in $LD_LIBRARY_PATH, the directories /etc/ld.so.conf lists and the
// system library directories; on macOS Accelerate when no OpenBLAS is
// found. The error says what was searched and how to install it.
func Library() (string, error) {
	if p := os.Getenv(LibraryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %v", LibraryEnv, err)
		}
		return p, nil
	}
	names, dirs := candidates()
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	if goruntime.GOOS == "darwin" {
		// Accelerate lives in the dyld shared cache, not on disk.
		return "/System/Library/Frameworks/Accelerate.framework/Accelerate", nil
	}
	return "", fmt.Errorf("OpenBLAS not found: no %s in %s; install it (Debian/Ubuntu: apt-get install libopenblas0) or set $%s to the library",
		strings.Join(names, " or "), summarize(dirs), LibraryEnv)
}

func summarize(dirs []string) string {
	if len(dirs) > 4 {
		return strings.Join(dirs[:4], ", ") + fmt.Sprintf(" and %d more directories", len(dirs)-4)
	}
	return strings.Join(dirs, ", ")
}

// candidates lists the library names and the directories to search, in
// order, without duplicates.
func candidates() (names, dirs []string) {
	names = []string{"libopenblas.so.0", "libopenblas.so"}
	if goruntime.GOOS == "darwin" {
		names = []string{"libopenblas.0.dylib", "libopenblas.dylib"}
	}
	seen := map[string]bool{}
	add := func(ds ...string) {
		for _, d := range ds {
			if d != "" && !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	env := "LD_LIBRARY_PATH"
	if goruntime.GOOS == "darwin" {
		env = "DYLD_LIBRARY_PATH"
	}
	add(filepath.SplitList(os.Getenv(env))...)
	if goruntime.GOOS == "darwin" {
		add("/opt/homebrew/opt/openblas/lib", "/usr/local/opt/openblas/lib", "/opt/local/lib", "/usr/local/lib")
		return names, dirs
	}
	add(ldSoConf("/etc/ld.so.conf", 0)...)
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "386": "i386-linux-gnu",
		"arm": "arm-linux-gnueabihf", "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu", "riscv64": "riscv64-linux-gnu"}[goruntime.GOARCH]
	if triplet != "" {
		add("/lib/"+triplet, "/usr/lib/"+triplet)
	}
	add("/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib")
	return names, dirs
}

// ldSoConf returns the directories an ld.so.conf lists, following its
// include lines.
func ldSoConf(path string, depth int) []string {
	f, err := os.Open(path)
	if err != nil || depth > 8 {
		return nil
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "include"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			pattern := strings.TrimSpace(rest)
			if !filepath.IsAbs(pattern) {
				pattern = filepath.Join(filepath.Dir(path), pattern)
			}
			matches, _ := filepath.Glob(pattern)
			for _, m := range matches {
				dirs = append(dirs, ldSoConf(m, depth+1)...)
			}
			continue
		}
		dirs = append(dirs, line)
	}
	return dirs
}
