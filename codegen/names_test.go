package codegen

import (
	"testing"

	"github.com/graphc/graphc/backend"
)

// TestBackendPackagesReserved: a local named like a backend's package
// would hide the package from the code after it.
func TestBackendPackagesReserved(t *testing.T) {
	for _, k := range backend.Kinds {
		if !reserved[k.PackageName()] {
			t.Errorf("%s's package name %s is not reserved", k.Name, k.PackageName())
		}
	}
}
