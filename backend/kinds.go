package backend

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/graphc/graphc/backend/libs"
)

// Kind is one kind of backend.
type Kind struct {
	// Name is how targets name the kind; an Indexed kind has one backend
	// per device, named Name<N> ("cuda0", "sim1").
	Name    string
	Indexed bool

	// Describe returns what the compiler plans against for device n (0
	// for a kind that is not Indexed). The kind's runtime package uses
	// the same description, so that the runtime and the compiler agree
	// on it.
	Describe func(n int) *Description
	// Available reports whether this machine can run the kind, and why
	// not. It only looks for what the backend needs, loading nothing, so
	// that compiling for a missing device stays cheap. Nil: always.
	Available func() (bool, string)
	// Fallback, when set, lets the planner drop the kind from a target
	// this machine cannot run, and says who does its work instead for the
	// warning. Only a kind whose memory is the CPU's and whose ops are a
	// subset of the CPU's qualifies: without it nothing else in the plan
	// changes. A missing GPU stays, as weights and state are placed in its
	// memory; the generated program reports it unavailable when it starts.
	Fallback string

	// Package is the import path of the runtime package generated code
	// calls; Type is the type whose kernel methods it calls and New its
	// constructor, New([n,] threads) *Type, or (*Type, error) when
	// Fallible (the device or its library may be missing).
	Package  string
	Type     string
	New      string
	Fallible bool
	// Host: synchronous and computing in host memory; the scheduler drives
	// it through engine.NewHostBackend. Otherwise Type itself is a
	// engine.Backend, asynchronous, with memory of its own.
	Host bool
	// CheckOps: a ggml device, whose Description answers SupportsOp
	// without asking the device. Generated New passes Type's method
	// Check(ops []OpQuery) error the plan's ops on it, so that an
	// op the real device refuses stops the program when it starts.
	CheckOps bool

	// Flag, when set, is a command-line flag generated programs whose
	// target has the kind accept, for what only the run can say (rpc:
	// where the servers are): before the model is made, a non-empty value
	// is passed to Package's function FlagSet, func(string) error.
	Flag, FlagUsage, FlagSet string
}

const runtimePackage = "github.com/graphc/graphc/runtime"

// Kinds are the backend kinds, in the order error messages list them.
var Kinds = []*Kind{
	{
		Name: "cpu", Describe: one(&CPU),
		Package: runtimePackage + "/cpu", Type: "Backend", New: "New", Host: true,
	},
	{
		Name: "blas", Describe: one(&BLAS), Available: blasAvailable,
		Fallback: "the cpu computes its matrix products",
		Package:  runtimePackage + "/blas/openblas", Type: "Backend", New: "New", Fallible: true, Host: true,
	},
	{
		Name: "sim", Indexed: true, Describe: Sim,
		Package: runtimePackage + "/sim", Type: "Backend", New: "New",
	},
	{
		Name: "cuda", Indexed: true, Describe: CUDA, Available: ggmlAvailable("cuda"),
		Package: runtimePackage + "/cuda", Type: "Backend", New: "New", Fallible: true, CheckOps: true,
	},
	{
		Name: "vulkan", Indexed: true, Describe: Vulkan, Available: ggmlAvailable("vulkan"),
		Package: runtimePackage + "/vulkan", Type: "Backend", New: "New", Fallible: true, CheckOps: true,
	},
	{
		Name: "metal", Describe: one(&Metal), Available: metalAvailable,
		Package: runtimePackage + "/metal", Type: "Backend", New: "New", Fallible: true, CheckOps: true,
	},
	{
		// Available is always true: the server is reached at run time,
		// at the endpoint bound then (-rpc, $GRAPHC_RPC).
		Name: "rpc", Indexed: true, Describe: RPC,
		Package: runtimePackage + "/rpc", Type: "Backend", New: "New", Fallible: true,
		Flag: "rpc", FlagSet: "UseEndpoints",
		FlagUsage: "ggml rpc-server endpoints host:port[,host:port…]: rpc<N> is the N-th (default: $" + RPCEndpointsEnv + ")",
	},
}

// one is Describe for a kind with a single device.
func one(d *Description) func(int) *Description {
	return func(int) *Description { return d }
}

// blasAvailable looks for the BLAS library without loading it.
func blasAvailable() (bool, string) {
	if _, err := libs.FindOpenBLAS(); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// PackageName is the name generated code imports Package under: the last
// element of its path, which Go convention makes the package's own name.
func (k *Kind) PackageName() string { return path.Base(k.Package) }

// Pattern is the kind's name as help and error messages show it: "cpu",
// "cuda<N>".
func (k *Kind) Pattern() string {
	if k.Indexed {
		return k.Name + "<N>"
	}
	return k.Name
}

// Known lists the kinds' name patterns: "cpu, blas, sim<N>, …".
func Known() string {
	var s []string
	for _, k := range Kinds {
		s = append(s, k.Pattern())
	}
	return strings.Join(s, ", ")
}

// Parse splits a backend name into its kind and device number. An Indexed
// kind takes a device number written as Go prints it ("cuda0", "cuda12";
// not "cuda", "cuda00" or "cuda-1"), so that one device has one name; any
// other kind takes none.
func Parse(name string) (*Kind, int, error) {
	for _, k := range Kinds {
		if !k.Indexed {
			if name == k.Name {
				return k, 0, nil
			}
			continue
		}
		digits, ok := strings.CutPrefix(name, k.Name)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(digits); err == nil && n >= 0 && strconv.Itoa(n) == digits {
			return k, n, nil
		}
	}
	return nil, 0, fmt.Errorf("unknown backend %q (known: %s)", name, Known())
}

// Describe returns the description of the backend name.
func Describe(name string) (*Description, error) {
	k, n, err := Parse(name)
	if err != nil {
		return nil, err
	}
	return k.Describe(n), nil
}
