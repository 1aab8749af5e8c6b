package backend

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

const module = "github.com/graphc/graphc"

// TestParse: every row's names parse to that row, anything else gets the
// one error listing the known kinds.
func TestParse(t *testing.T) {
	type want struct {
		kind *Kind
		n    int
	}
	good := map[string]want{}
	for _, k := range Kinds {
		if k.Indexed {
			for _, n := range []int{0, 1, 12} {
				good[fmt.Sprintf("%s%d", k.Name, n)] = want{k, n}
			}
		} else {
			good[k.Name] = want{k, 0}
		}
	}
	for name, w := range good {
		k, n, err := Parse(name)
		if err != nil || k != w.kind || n != w.n {
			t.Errorf("Parse(%q) = %v, %d, %v; want %s, %d", name, k, n, err, w.kind.Name, w.n)
		}
	}

	bad := []string{"", "tpu0", "CPU", " cpu", "cpu ", "cpu0", "metal1", "blas0"}
	for _, k := range Kinds {
		if k.Indexed {
			// One device, one name: no missing, signed, padded or
			// spaced numbers.
			bad = append(bad, k.Name, k.Name+"00", k.Name+"01", k.Name+"-1", k.Name+"+1", k.Name+" 0", k.Name+"0x1", k.Name+"1a")
		} else {
			bad = append(bad, k.Name+"0", strings.ToUpper(k.Name))
		}
	}
	for _, name := range bad {
		k, _, err := Parse(name)
		want := fmt.Sprintf("unknown backend %q (known: %s)", name, Known())
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, %v; want error %q", name, k, err, want)
		}
		if _, err := Describe(name); err == nil || err.Error() != want {
			t.Errorf("Describe(%q): %v; want error %q", name, err, want)
		}
	}
	for _, k := range Kinds {
		if !strings.Contains(Known(), k.Pattern()) {
			t.Errorf("Known() = %q, missing %s", Known(), k.Pattern())
		}
	}
}

// TestKindsComplete checks each row against itself and against the runtime
// package it names, so that adding a kind is one package plus one row that
// this test vouches for.
func TestKindsComplete(t *testing.T) {
	seen := map[string]bool{}
	cpuMemory := Kinds[0].Describe(0).BufferType
	if Kinds[0].Name != "cpu" {
		t.Fatalf("the first kind is %s, want cpu: messages list the kinds in order", Kinds[0].Name)
	}
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			// Letters only, so that Parse can tell the device number from
			// the name and no name is another's prefix plus digits.
			if k.Name == "" || strings.IndexFunc(k.Name, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
				t.Errorf("name %q: want lower-case letters", k.Name)
			}
			if seen[k.Name] {
				t.Errorf("name %q in two rows", k.Name)
			}
			seen[k.Name] = true

			for _, n := range []int{0, 3} {
				if n > 0 && !k.Indexed {
					break
				}
				d := k.Describe(n)
				want := k.Name
				if k.Indexed {
					want = fmt.Sprintf("%s%d", k.Name, n)
				}
				if d == nil || d.Name != want || d.SupportsOp == nil || d.SupportsBufferType == nil {
					t.Fatalf("Describe(%d) = %+v, want a description named %s with SupportsOp and SupportsBufferType", n, d, want)
				}
			}
			d := k.Describe(0)
			// The scheduler drives a Host kind synchronously in host memory
			// and every other kind through events.
			if k.Host && (!d.BufferType.Host || d.Async) {
				t.Errorf("Host, but its description has host memory %v, async %v", d.BufferType.Host, d.Async)
			}
			if !k.Host && !d.Async {
				t.Errorf("not Host, but its description is synchronous")
			}
			if k.Fallback != "" && (k.Available == nil || !k.Host || d.BufferType != cpuMemory) {
				t.Errorf("Fallback %q: the planner may only drop a kind that can be missing and computes in the CPU's memory", k.Fallback)
			}
			if k.Available != nil {
				if ok, why := k.Available(); !ok && why == "" {
					t.Errorf("Available() = false without saying why")
				}
			}
			checkPackage(t, k)
		})
	}
}

// checkPackage reads k.Package's source for what generated code calls:
// the package name it imports it under, Type and New([n,] threads), and
// for a kind whose description packs weights Type's Pack(*tensor.Tensor)
// error.
func checkPackage(t *testing.T, k *Kind) {
	t.Helper()
	rel, ok := strings.CutPrefix(k.Package, module+"/")
	if !ok {
		t.Fatalf("package %s is not in module %s", k.Package, module)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(rel), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("package %s: no Go files (%v)", k.Package, err)
	}
	var typ *ast.TypeSpec
	var ctor, flagSet, pack, mulMats *ast.FuncDecl
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != k.PackageName() {
			t.Fatalf("%s: package %s; generated code imports it as %s", file, f.Name.Name, k.PackageName())
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil && decl.Name.Name == k.New {
					ctor = decl
				}
				if decl.Recv == nil && k.FlagSet != "" && decl.Name.Name == k.FlagSet {
					flagSet = decl
				}
				if decl.Recv != nil && decl.Name.Name == "Pack" && fields(decl.Recv) == "*"+k.Type {
					pack = decl
				}
				if decl.Recv != nil && decl.Name.Name == "MulMats" && fields(decl.Recv) == "*"+k.Type {
					mulMats = decl
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if s, ok := spec.(*ast.TypeSpec); ok && s.Name.Name == k.Type {
						typ = s
					}
				}
			}
		}
	}
	if typ == nil || !ast.IsExported(k.Type) {
		t.Errorf("package %s has no exported type %q", k.PackageName(), k.Type)
	}
	if ctor == nil || !ast.IsExported(k.New) {
		t.Fatalf("package %s has no exported func %q", k.PackageName(), k.New)
	}
	wantParams, wantResults := "int", "*"+k.Type // threads
	if k.Indexed {
		wantParams = "int, int" // n, threads
	}
	if k.Fallible {
		wantResults += ", error"
	}
	if got := fields(ctor.Type.Params); got != wantParams {
		t.Errorf("%s.%s(%s), want (%s)", k.PackageName(), k.New, got, wantParams)
	}
	if got := fields(ctor.Type.Results); got != wantResults {
		t.Errorf("%s.%s returns (%s), want (%s)", k.PackageName(), k.New, got, wantResults)
	}
	if k.Describe(0).PackWeight != nil {
		// Generated New calls it on every weight the plan packs.
		if pack == nil {
			t.Errorf("%s's description packs weights, but %s has no method Pack", k.Name, k.Type)
		} else if p, r := fields(pack.Type.Params), fields(pack.Type.Results); p != "*tensor.Tensor, bool" || r != "error" {
			t.Errorf("(*%s).Pack(%s) (%s), want (*tensor.Tensor, bool) error", k.Type, p, r)
		}
	}
	if d := k.Describe(0); d.GroupProducts > 0 {
		// Generated code calls it for every group of products the plan makes.
		if d.PackWeight == nil {
			t.Errorf("%s's description groups products of packed weights, but packs none", k.Name)
		}
		if mulMats == nil {
			t.Errorf("%s's description groups products, but %s has no method MulMats", k.Name, k.Type)
		} else if p, r := fields(mulMats.Type.Params), fields(mulMats.Type.Results); p != "*tensor.Tensor, ...engine.Product" || r != "" {
			t.Errorf("(*%s).MulMats(%s) (%s), want (*tensor.Tensor, ...engine.Product)", k.Type, p, r)
		}
	}
	if (k.Flag == "") != (k.FlagSet == "") || (k.Flag == "") != (k.FlagUsage == "") {
		t.Errorf("kind %s: Flag %q, FlagSet %q, FlagUsage %q: all or none", k.Name, k.Flag, k.FlagSet, k.FlagUsage)
	}
	if k.FlagSet != "" {
		if flagSet == nil || !ast.IsExported(k.FlagSet) {
			t.Errorf("package %s has no exported func %q (FlagSet)", k.PackageName(), k.FlagSet)
		} else if p, r := fields(flagSet.Type.Params), fields(flagSet.Type.Results); p != "string" || r != "error" {
			t.Errorf("%s.%s(%s) (%s), want (string) error", k.PackageName(), k.FlagSet, p, r)
		}
	}
}

// fields lists the types of a parameter list, one per name: "int, int".
func fields(l *ast.FieldList) string {
	if l == nil {
		return ""
	}
	var s []string
	for _, f := range l.List {
		for range max(1, len(f.Names)) {
			s = append(s, types(f.Type))
		}
	}
	return strings.Join(s, ", ")
}

func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + types(e.X)
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	case *ast.Ellipsis:
		return "..." + types(e.Elt)
	}
	return fmt.Sprintf("%T", e)
}

// TestOffloadRules: ggml's devices want an op on host weights by its batch
// (ggml-cuda's and ggml-vulkan's get_op_batch_size: a mul_mat_id's is its
// ne[2], the tokens); Metal only products.
func TestOffloadRules(t *testing.T) {
	moe := &OpQuery{Op: ops.MulMatID, Type: tensor.F32, Ne: [4]int64{64, 2, 32, 1}}
	few := &OpQuery{Op: ops.MulMatID, Type: tensor.F32, Ne: [4]int64{64, 32, 31, 1}}
	add := &OpQuery{Op: ops.Add, Type: tensor.F32, Ne: [4]int64{64, 32, 1, 1}}
	for _, c := range []struct {
		d    *Description
		q    *OpQuery
		want bool
	}{
		{CUDA(0), moe, true}, {CUDA(0), few, false}, {CUDA(0), add, true},
		{Vulkan(0), moe, true}, {Vulkan(0), few, false},
		{Sim(0), moe, true}, {Sim(0), few, false},
		{&Metal, moe, true}, {&Metal, few, false}, {&Metal, add, false},
	} {
		if got := c.d.OffloadOp(c.q, c.d.OffloadMinBatch); got != c.want {
			t.Errorf("%s offloads %s%v: %v, want %v", c.d.Name, c.q.Op, c.q.Ne, got, c.want)
		}
	}
	if RPC(0).OffloadOp != nil {
		t.Errorf("rpc0 offloads: ggml's RPC device has no offload_op")
	}
}
