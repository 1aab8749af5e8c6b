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

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"blk.0.attn_q.weight": "Blk0AttnQWeight", "n_kv": "NKV", "cpu": "CPU", "cuda0": "CUDA0",
		"KQ_mask": "KQMask", "kq_soft_max-0": "KQSoftMax0", "kqv_merged": "KQVMerged", "0x": "X0x", "vulkan0": "Vulkan0",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	n := newNamer()
	if got := n.local("", "kq_soft_max-0"); got != "kqSoftMax0" {
		t.Errorf("local(kq_soft_max-0) = %q", got)
	}
	if got := n.local("backend", "cpu"); got != "backendCPU" {
		t.Errorf("local(backend, cpu) = %q", got)
	}
}
