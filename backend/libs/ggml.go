package libs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// GGMLPathEnv names the environment variable that lists the directories
// to look in first for ggml's libraries, separated as $PATH is.
const GGMLPathEnv = "GRAPHC_GGML_PATH"

// GGMLHowToGet says where ggml's libraries come from, for the errors and
// skips that find none.
const GGMLHowToGet = "get them from a llama.cpp release archive (github.com/ggml-org/llama.cpp/releases: the bin/ directory), " +
	"a local build of ggml or llama.cpp (-DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON), Homebrew (brew install ggml) " +
	"or an npm package of node-llama-cpp (npm pack @node-llama-cpp/linux-x64-vulkan: package/bins/*/), " +
	"then set $" + GGMLPathEnv + " to the directory or put the libraries beside the executable"

// GGML is where ggml's libraries are: the directory, its base library
// (tensors, graphs, backend API) and its registry library (device
// discovery, backend loading).
type GGML struct {
	Dir      string
	Base     string
	Registry string
}

// libName is a library's file name on this system: ggml-base →
// libggml-base.so.
func libName(stem string) string {
	switch runtime.GOOS {
	case "darwin":
		return "lib" + stem + ".dylib"
	case "windows":
		return stem + ".dll"
	}
	return "lib" + stem + ".so"
}

// FindGGML finds ggml's libraries: in the directories of $GRAPHC_GGML_PATH,
// then beside the executable, then in the system's library path. The
// registry library is libggml.so, or a renamed one beside the base library
// (node-llama-cpp ships libggml.<variant>.so). The error names every
// directory searched.
func FindGGML() (*GGML, error) {
	dirs := ggmlDirs()
	for _, d := range dirs {
		if l, ok := libsIn(d); ok {
			return l, nil
		}
	}
	return nil, fmt.Errorf("ggml's libraries not found: no %s with its registry %s in %s; %s",
		libName("ggml-base"), libName("ggml"), dirs, GGMLHowToGet)
}

// libsIn reports the libraries in directory d, if it has them.
func libsIn(d string) (*GGML, bool) {
	base := filepath.Join(d, libName("ggml-base"))
	if !isFile(base) {
		return nil, false
	}
	reg := filepath.Join(d, libName("ggml"))
	if !isFile(reg) {
		// A renamed registry: libggml.<anything>, not libggml-<backend>.
		ext := filepath.Ext(libName("ggml"))
		matches, _ := filepath.Glob(filepath.Join(d, strings.TrimSuffix(libName("ggml"), ext)+".*"+ext))
		sort.Strings(matches)
		if len(matches) == 0 {
			return nil, false
		}
		reg = matches[0]
	}
	return &GGML{Dir: d, Base: base, Registry: reg}, true
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ggmlDirs lists the directories to search, in order, without
// duplicates: $GRAPHC_GGML_PATH, beside the executable, the system's.
func ggmlDirs() Dirs {
	var dirs Dirs
	dirs.Add(filepath.SplitList(os.Getenv(GGMLPathEnv))...)
	if exe, err := os.Executable(); err == nil {
		dirs.Add(filepath.Dir(exe))
	}
	dirs.Add(SystemDirs()...)
	return dirs
}

// FindGGMLBackend finds the library of ggml's backend stem ("cuda",
// "vulkan", "metal": libggml-cuda.so) beside the libraries FindGGML finds,
// without loading either, so that a kind can say whether its device can
// exist here: ggml loads only the backends beside its libraries.
func FindGGMLBackend(stem string) (string, error) {
	l, err := FindGGML()
	if err != nil {
		return "", err
	}
	name := libName("ggml-" + stem)
	ext := filepath.Ext(name)
	// Some packages version the file: libggml-cuda.<variant>.so.
	matches, _ := filepath.Glob(filepath.Join(l.Dir, strings.TrimSuffix(name, ext)+"*"+ext))
	sort.Strings(matches)
	for _, m := range matches {
		if isFile(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("ggml's libraries in %s have no %s backend (no %s): get a build of ggml with it, e.g. the %s package", l.Dir, stem, name, npmPackageOf(stem))
}

// npmPackageOf names node-llama-cpp's package of a backend for this
// system, one source FindGGMLBackend's error suggests.
func npmPackageOf(stem string) string {
	osName := map[string]string{"darwin": "mac", "windows": "win"}[runtime.GOOS]
	if osName == "" {
		osName = runtime.GOOS
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if stem == "metal" {
		return "npm @node-llama-cpp/mac-arm64-metal@3.22.1"
	}
	return fmt.Sprintf("npm @node-llama-cpp/%s-%s-%s@3.22.1", osName, arch, stem)
}
