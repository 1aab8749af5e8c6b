package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/tensor"
)

// ggml's own CPU matrix product, outside graphc's plans, for `graphc bench
// -ggml`: graphc's quantized products are measured against ggml_mul_mat
// on ggml's CPU backend with the weight in the device's plain buffer type
// and in each of its extra buffer types (CPU_REPACK, AMX, KLEIDIAI:
// ggml-cpu's extra_buffer_type), where ggml stores the weight in its own
// layout at ggml_backend_tensor_set and computes with the kernels of that
// layout, as llama.cpp does with the weights it loads.

// cpuAPI is the part of ggml's API only the measurement calls. It is bound
// on first use, not by Load, so that a ggml lacking one of these functions
// still runs graphc's plans. The untagged functions come from the CPU
// backend's registry (ggml_backend_reg_get_proc_address): with
// GGML_BACKEND_DL the CPU backend is a library ggml loaded itself, whose
// symbols are not the process's.
type cpuAPI struct {
	devBackendReg  func(ggmlapi.Device) uintptr                  `sym:"ggml_backend_dev_backend_reg"`
	regProcAddress func(uintptr, string) uintptr                 `sym:"ggml_backend_reg_get_proc_address"`
	buftAllocSize  func(ggmlapi.BufType, ggmlapi.Tensor) uintptr `sym:"ggml_backend_buft_get_alloc_size"`
	bufferBasePtr  func(ggmlapi.Buffer) unsafe.Pointer           `sym:"ggml_backend_buffer_get_base"`
	graphCompute   func(ggmlapi.Backend, ggmlapi.Graph) int32    `sym:"ggml_backend_graph_compute"`
	tpParamsInit   func(unsafe.Pointer, int32)                   `sym:"ggml_threadpool_params_init"`
	logSet         func(uintptr, uintptr)                        `sym:"ggml_log_set"`
	logger         uintptr                                       // a ggml_log_callback appending to logged
	setNThreads    func(ggmlapi.Backend, int32)                  // ggml_backend_set_n_threads
	extraBufts     func(ggmlapi.Device) unsafe.Pointer           // ggml_backend_dev_get_extra_bufts: a NULL-terminated array
	features       func(uintptr) unsafe.Pointer                  // ggml_backend_get_features: {name, value} pairs up to a NULL name
	tpNew          func(unsafe.Pointer) uintptr                  // ggml_threadpool_new; nil: ggml's per-graph threads
	tpFree         func(uintptr)                                 // ggml_threadpool_free
	setThreadpool  func(ggmlapi.Backend, uintptr)                // ggml_backend_cpu_set_threadpool
	dev            ggmlapi.Device                                // the CPU device
	reg            uintptr                                       // its registry
}

var (
	cpuOnce   sync.Once
	cpuLoaded *cpuAPI
	cpuErr    error

	logMu  sync.Mutex
	logged strings.Builder
)

// cpuLib loads ggml (the ggml runtime/ggml loads) and binds cpuAPI once.
func cpuLib() (*ggmlapi.API, *cpuAPI, error) {
	a, _, err := ggmlapi.Load()
	if err != nil {
		return nil, nil, err
	}
	cpuOnce.Do(func() { cpuLoaded, cpuErr = bindCPU(a) })
	return a, cpuLoaded, cpuErr
}

func bindCPU(a *ggmlapi.API) (*cpuAPI, error) {
	c := new(cpuAPI)
	if err := ggmlapi.BindFields(c, a.Sym); err != nil {
		return nil, fmt.Errorf("ggml %s lacks what the CPU measurement calls: %v", a.Version(), err)
	}
	for i := range a.DevCount() {
		if d := a.DevGet(i); a.DevType(d) == 0 { // GGML_BACKEND_DEVICE_TYPE_CPU
			c.dev = d
			break
		}
	}
	if c.dev == 0 {
		return nil, errors.New("ggml has no CPU device (no libggml-cpu*.so beside its libraries, or none this CPU can run)")
	}
	c.reg = c.devBackendReg(c.dev)
	proc := func(fp any, name string, required bool) error {
		p := c.regProcAddress(c.reg, name)
		if p == 0 {
			if required {
				return fmt.Errorf("ggml's CPU backend has no %s", name)
			}
			return nil
		}
		ggmlapi.BindFunc(fp, p)
		return nil
	}
	for _, f := range []struct {
		fp       any
		name     string
		required bool
	}{
		{&c.setNThreads, "ggml_backend_set_n_threads", true},
		{&c.extraBufts, "ggml_backend_dev_get_extra_bufts", false},
		{&c.features, "ggml_backend_get_features", false},
		{&c.tpNew, "ggml_threadpool_new", false},
		{&c.tpFree, "ggml_threadpool_free", false},
		{&c.setThreadpool, "ggml_backend_cpu_set_threadpool", false},
	} {
		if err := proc(f.fp, f.name, f.required); err != nil {
			return nil, err
		}
	}
	if c.tpNew == nil || c.tpFree == nil || c.setThreadpool == nil {
		c.tpNew, c.tpFree, c.setThreadpool = nil, nil, nil
	}
	c.logger = ggmlapi.NewCallback(func(level uintptr, text *byte, _ uintptr) {
		logMu.Lock()
		logged.WriteString(cString(text))
		logMu.Unlock()
	})
	return c, nil
}

// captureLog runs f with ggml's log going to the returned text instead of
// stderr: what an extra buffer type says while storing a weight names the
// layout and kernels it chose ("repack gtensor with q4_0_8x8"). Only f's
// own thread should log meanwhile, so f must not compute graphs (a
// callback on one of ggml's threads is one Go did not start).
func (c *cpuAPI) captureLog(f func()) string {
	logMu.Lock()
	logged.Reset()
	logMu.Unlock()
	c.logSet(c.logger, 0)
	f()
	c.logSet(0, 0) // ggml's default: stderr
	logMu.Lock()
	defer logMu.Unlock()
	return logged.String()
}

// cString reads a NUL-terminated C string ggml owns.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// ggmlCPUInfo describes ggml's CPU backend as loaded.
type ggmlCPUInfo struct {
	Version, Commit string
	// Library is the CPU backend's library ggml chose for this CPU
	// (libggml-cpu-<variant>.so), where the system says (Linux); "" else.
	Library string
	// Features are the loaded backend's ggml_backend_get_features:
	// "AVX512=1", "AMX_INT8=1", "REPACK=1"…
	Features []string
	// BufferType is the device's own buffer type ("CPU"); ExtraBufferTypes
	// its extra ones in ggml's order, the order llama.cpp tries them in
	// for a weight ("AMX", "CPU_REPACK").
	BufferType       string
	ExtraBufferTypes []string
}

// ggmlCPU loads ggml and describes its CPU backend.
func ggmlCPU() (ggmlCPUInfo, error) {
	a, c, err := cpuLib()
	if err != nil {
		return ggmlCPUInfo{}, err
	}
	info := ggmlCPUInfo{Version: a.Version(), Commit: a.Commit(), Library: loadedCPULibrary(), BufferType: a.BuftName(a.DevBufferType(c.dev))}
	for _, b := range c.extra() {
		info.ExtraBufferTypes = append(info.ExtraBufferTypes, a.BuftName(b))
	}
	if c.features != nil {
		type feature struct{ name, value *byte }
		for p := c.features(c.reg); p != nil; p = unsafe.Add(p, unsafe.Sizeof(feature{})) {
			f := (*feature)(p)
			if f.name == nil {
				break
			}
			info.Features = append(info.Features, cString(f.name)+"="+cString(f.value))
		}
	}
	return info, nil
}

// extra lists the CPU device's extra buffer types.
func (c *cpuAPI) extra() []ggmlapi.BufType {
	if c.extraBufts == nil {
		return nil
	}
	var out []ggmlapi.BufType
	for p := c.extraBufts(c.dev); p != nil; p = unsafe.Add(p, unsafe.Sizeof(ggmlapi.BufType(0))) {
		b := *(*ggmlapi.BufType)(p)
		if b == 0 {
			break
		}
		out = append(out, b)
	}
	return out
}

// loadedCPULibrary finds the CPU backend's library among the files mapped
// into this process: ggml loads the best of its CPU variants by score and
// does not say which.
func loadedCPULibrary() string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if i := strings.Index(line, "/"); i >= 0 && strings.Contains(line[i:], "libggml-cpu") {
			return line[i:]
		}
	}
	return ""
}

// errDeclined says an extra buffer type does not take a weight for
// ggml_mul_mat: ggml_backend_dev_supports_op is false for the product
// with the weight placed there (a type it has no kernels for on this CPU,
// or a shape they do not cover). llama.cpp keeps such a weight in the
// plain buffer type.
var errDeclined = errors.New("declined")

// ggmlMulMat is ggml_mul_mat(w, x) on ggml's CPU backend with the weight in
// a buffer of a chosen buffer type and x and the result in the device's
// plain buffer: one graph of one node, computed with
// ggml_backend_graph_compute, as llama.cpp computes a model's products.
type ggmlMulMat struct {
	a         *ggmlapi.API
	c         *cpuAPI
	be        ggmlapi.Backend
	ctx       ggmlapi.Context
	graph     ggmlapi.Graph
	wbuf, buf ggmlapi.Buffer
	dst       ggmlapi.Tensor
	threads   int
	tpParams  []byte
	// BufferType is the weight's buffer type.
	BufferType string
	// Repacked: after ggml_backend_tensor_set the weight's buffer holds
	// other bytes than the weight's, so ggml stored it in a layout of its
	// own: the check that an extra buffer type did repack.
	Repacked bool
	// Log is what ggml logged while storing the weight, spaces collapsed:
	// CPU_REPACK and AMX name the layout they chose there.
	Log string
}

// newGGMLMulMat prepares ggml_mul_mat(w, x) on `threads` threads, w (any
// ggml type, K×M, dense) in a buffer of buffer type bufferType (the
// device's own, "CPU", or one of ggmlCPUInfo.ExtraBufferTypes) and f32 x (K×N,
// dense) in the plain one. An extra buffer type that does not take w
// returns an error wrapping errDeclined.
func newGGMLMulMat(bufferType string, w, x *tensor.Tensor, threads int) (_ *ggmlMulMat, err error) {
	a, c, err := cpuLib()
	if err != nil {
		return nil, err
	}
	if w.Ne[2] != 1 || w.Ne[3] != 1 || x.Ne[2] != 1 || x.Ne[3] != 1 || !w.Contiguous() || !x.Contiguous() || x.Type != tensor.F32 || w.Ne[0] != x.Ne[0] {
		return nil, fmt.Errorf("ggml CPU mul_mat: want a dense 2-D weight and f32 x with the weight's rows, got %s%v and %s%v", w.Type, w.Ne, x.Type, x.Ne)
	}
	if threads < 1 {
		return nil, fmt.Errorf("ggml CPU mul_mat: %d threads", threads)
	}
	plain := a.DevBufferType(c.dev)
	buft := ggmlapi.BufType(0)
	var names []string
	for _, b := range append([]ggmlapi.BufType{plain}, c.extra()...) {
		names = append(names, a.BuftName(b))
		if a.BuftName(b) == bufferType {
			buft = b
		}
	}
	if buft == 0 {
		return nil, fmt.Errorf("ggml's CPU device has no buffer type %s: it has %s", bufferType, strings.Join(names, ", "))
	}
	m := &ggmlMulMat{a: a, c: c, threads: threads, BufferType: bufferType, tpParams: make([]byte, 16<<10)}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	m.ctx = a.InitContext(a.TensorOver()*4+a.GraphOver(4, false)+1024, true)
	if m.ctx == 0 {
		return nil, errors.New("ggml_init failed")
	}
	wt := a.NewTensor4d(m.ctx, int32(uint32(w.Type)), int64(w.Ne[0]), int64(w.Ne[1]), 1, 1)
	xt := a.NewTensor4d(m.ctx, int32(uint32(tensor.F32)), int64(x.Ne[0]), int64(x.Ne[1]), 1, 1)
	m.dst = a.MulMat(m.ctx, wt, xt)
	wsize := c.buftAllocSize(buft, wt)
	if m.wbuf = a.BuftAllocBuffer(buft, wsize); m.wbuf == 0 {
		return nil, fmt.Errorf("%s could not allocate %d bytes", bufferType, wsize)
	}
	// Placing the weight runs the buffer's init_tensor, which picks the
	// extra buffer type's kernels for it (or none); nothing is written yet.
	if st := a.TensorAlloc(m.wbuf, wt, a.BufferBase(m.wbuf)); st != 0 {
		return nil, fmt.Errorf("placing the weight in %s: ggml status %d", bufferType, st)
	}
	align := max(a.BuftAlignment(plain), 1)
	xsize := (a.Nbytes(xt) + align - 1) / align * align
	if m.buf = a.BuftAllocBuffer(plain, xsize+a.Nbytes(m.dst)); m.buf == 0 {
		return nil, fmt.Errorf("%s could not allocate %d bytes", a.BuftName(plain), xsize+a.Nbytes(m.dst))
	}
	base := a.BufferBase(m.buf)
	if a.TensorAlloc(m.buf, xt, base) != 0 || a.TensorAlloc(m.buf, m.dst, base+xsize) != 0 {
		return nil, errors.New("placing x and the result failed")
	}
	// As llama.cpp decides where a weight goes: the device takes the
	// product with the weight there, or the buffer type is not for it. An
	// extra buffer type's set_tensor may assume the kernels exist
	// (CPU_REPACK's repacks through them), so it is asked before.
	if !a.DevSupportsOp(c.dev, m.dst) {
		return nil, fmt.Errorf("%w: ggml_backend_dev_supports_op is false for mul_mat with a %s[%d %d] weight in %s, which llama.cpp then keeps in %s",
			errDeclined, w.Type, w.Ne[0], w.Ne[1], bufferType, a.BuftName(plain))
	}
	n := a.Nbytes(wt)
	if uintptr(len(w.Data)) < n || uintptr(len(x.Data)) < a.Nbytes(xt) {
		return nil, fmt.Errorf("ggml CPU mul_mat: the tensors' data is shorter than their shapes")
	}
	log := c.captureLog(func() { a.TensorSet(wt, unsafe.Pointer(unsafe.SliceData(w.Data)), 0, n) })
	m.Log = strings.Join(strings.Fields(log), " ")
	a.TensorSet(xt, unsafe.Pointer(unsafe.SliceData(x.Data)), 0, a.Nbytes(xt))
	// Every CPU buffer type, extra ones included, is host memory: its
	// bytes are read where ggml_backend_tensor_get may not be (CPU_REPACK
	// has no get_tensor).
	stored := unsafe.Slice((*byte)(c.bufferBasePtr(m.wbuf)), min(n, wsize))
	m.Repacked = !bytes.Equal(stored, w.Data[:len(stored)])
	if m.be = a.DevInit(c.dev, 0); m.be == 0 {
		return nil, errors.New("ggml could not initialize its CPU backend")
	}
	c.setNThreads(m.be, int32(threads))
	m.graph = a.NewGraphCustom(m.ctx, 4, false)
	a.BuildForwardExpand(m.graph, m.dst)
	return m, nil
}

// Run computes the product n times and returns the time they took. Like
// llama-bench, the computations share one ggml thread pool, whose threads
// poll for work between graphs; it is made before the clock starts and
// freed after it stops, so that its polling threads do not outlive the
// batch and take the cores from whatever is measured next.
func (m *ggmlMulMat) Run(n int) (time.Duration, error) {
	return m.c.computeN(m.be, m.graph, m.threads, m.tpParams, n)
}

// computeN computes graph on be n times with threads threads, in one
// thread pool made for them (see ggmlMulMat.Run), and returns their time.
// tpParams is room for ggml's struct ggml_threadpool_params.
func (c *cpuAPI) computeN(be ggmlapi.Backend, graph ggmlapi.Graph, threads int, tpParams []byte, n int) (time.Duration, error) {
	var tp uintptr
	if c.tpNew != nil {
		c.tpParamsInit(unsafe.Pointer(unsafe.SliceData(tpParams)), int32(threads))
		if tp = c.tpNew(unsafe.Pointer(unsafe.SliceData(tpParams))); tp != 0 {
			c.setThreadpool(be, tp)
			defer func() {
				c.setThreadpool(be, 0)
				c.tpFree(tp)
			}()
		}
	}
	start := time.Now()
	for range n {
		if st := c.graphCompute(be, graph); st != 0 {
			return 0, fmt.Errorf("ggml_backend_graph_compute: status %d", st)
		}
	}
	return time.Since(start), nil
}

// Result copies the product (M×N f32) into dst.
func (m *ggmlMulMat) Result(dst []float32) {
	n := m.a.Nbytes(m.dst)
	if uintptr(len(dst))*4 < n {
		panic("BUG: ggmlMulMat.Result: dst too short")
	}
	m.a.TensorGet(m.dst, unsafe.Pointer(unsafe.SliceData(dst)), 0, n)
}

// Close frees the backend, buffers and graph.
func (m *ggmlMulMat) Close() {
	a := m.a
	if m.be != 0 {
		a.BackendFree(m.be)
		m.be = 0
	}
	if m.wbuf != 0 {
		a.BufferFree(m.wbuf)
		m.wbuf = 0
	}
	if m.buf != 0 {
		a.BufferFree(m.buf)
		m.buf = 0
	}
	if m.ctx != 0 {
		a.Free(m.ctx)
		m.ctx = 0
	}
}
