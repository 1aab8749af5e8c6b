//go:build darwin || freebsd || linux || netbsd || windows

package ggmlapi

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ebitengine/purego"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/runtime/native"
)

var (
	loadOnce sync.Once
	loaded   *API
	loadedAt *libs.GGML
	loadErr  error
)

// Load finds ggml's libraries (libs.FindGGML), loads them and the backends
// beside them (ggml_backend_load_all_from_path) once per process, binds
// the API and checks the version. Later calls return the first call's
// result, so that runtime/ggml and the CPU measurement share one ggml.
func Load() (*API, *libs.GGML, error) {
	loadOnce.Do(func() { loaded, loadedAt, loadErr = load() })
	return loaded, loadedAt, loadErr
}

func load() (*API, *libs.GGML, error) {
	where, err := libs.FindGGML()
	if err != nil {
		return nil, nil, err
	}
	base, err := native.Open(where.Base, true)
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %v", where.Base, err)
	}
	reg, err := native.Open(where.Registry, true)
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %v", where.Registry, err)
	}
	sym := func(name string) uintptr {
		if p := reg(name); p != 0 {
			return p
		}
		return base(name)
	}
	a := &API{Sym: sym}
	if err := a.bind(sym); err != nil {
		// A ggml too old or too new lacks symbols; its version, when it
		// has one, says why better than the missing name.
		found := "of unknown version (no ggml_version: older than " + minVersion + ")"
		if p := base("ggml_version"); p != 0 {
			var version func() string
			purego.RegisterFunc(&version, p)
			found = version()
		}
		return nil, nil, fmt.Errorf("ggml %s at %s: %v; graphc supports ggml %s", found, where.Dir, err, supportedVersions)
	}
	v := a.Version()
	if !supported(v) {
		return nil, nil, fmt.Errorf("ggml %s (commit %s) at %s is not a version graphc supports: %s", v, a.Commit(), where.Dir, supportedVersions)
	}
	a.LoadAllFrom(where.Dir)
	return a, where, nil
}

// The ggml versions graphc supports. The oldest is the first with
// ggml_version and the IGPU device type; the newest is the newest whose
// headers were read against the bindings (0.25.1, commit 0ad4a86, the one
// the tests ran against). ggml_init's struct, the op constructors and the
// backend API graphc binds did not change signature in between.
const (
	minVersion = "0.9.0"
	maxMinor   = 25
)

// supportedVersions names the ggml versions graphc supports.
var supportedVersions = fmt.Sprintf("%s to 0.%d.x", minVersion, maxMinor)

// supported reports whether ggml version v ("0.25.1") is one graphc
// supports.
func supported(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && major == 0 && minor >= 9 && minor <= maxMinor
}
