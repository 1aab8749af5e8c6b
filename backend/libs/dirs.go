package libs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Dirs collects directories in order, without duplicates or empty ones.
type Dirs []string

// Add appends the directories not already listed.
func (d *Dirs) Add(dirs ...string) {
	for _, dir := range dirs {
		if dir != "" && !d.has(dir) {
			*d = append(*d, dir)
		}
	}
}

func (d Dirs) has(dir string) bool {
	for _, x := range d {
		if x == dir {
			return true
		}
	}
	return false
}

// String lists the directories for an error message: the first six, then
// how many more.
func (d Dirs) String() string {
	switch {
	case len(d) == 0:
		return "no directory"
	case len(d) > 6:
		return strings.Join(d[:6], ", ") + fmt.Sprintf(" and %d more directories", len(d)-6)
	}
	return strings.Join(d, ", ")
}

// SystemDirs are the directories the system's dynamic loader searches, in
// its order: $LD_LIBRARY_PATH, the directories /etc/ld.so.conf lists, the
// multiarch and standard directories on Linux; $DYLD_LIBRARY_PATH and the
// usual prefixes on macOS; $PATH on Windows.
func SystemDirs() Dirs {
	var d Dirs
	switch runtime.GOOS {
	case "darwin":
		d.Add(filepath.SplitList(os.Getenv("DYLD_LIBRARY_PATH"))...)
		d.Add("/opt/homebrew/lib", "/usr/local/lib", "/opt/local/lib")
	case "windows":
		d.Add(filepath.SplitList(os.Getenv("PATH"))...)
	default:
		d.Add(filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
		d.Add(ldSoConf("/etc/ld.so.conf", 0)...)
		triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "386": "i386-linux-gnu",
			"arm": "arm-linux-gnueabihf", "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu", "riscv64": "riscv64-linux-gnu"}[runtime.GOARCH]
		if triplet != "" {
			d.Add("/lib/"+triplet, "/usr/lib/"+triplet)
		}
		d.Add("/usr/local/lib", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
	}
	return d
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
