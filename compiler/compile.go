package compiler

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

// DefaultMaxCopies is ggml's GGML_SCHED_MAX_COPIES: the most pipeline
// copies a plan may have unless Config.MaxCopies raises it.
const DefaultMaxCopies = 4

// MaxCopiesLimit bounds Config.MaxCopies: every pipeline copy is another
// set of the graph's inputs and split inputs in the compute buffers, and a
// bound of millions ran graphc out of memory instead of failing.
const MaxCopiesLimit = 64

// Config are the options of one compilation.
type Config struct {
	// Backends is the target in priority order; empty means the DSL's
	// `backends` statement, or just the cpu.
	Backends []string
	Options  passes.Options
	// OffloadMinBatch overrides the backends' op offload threshold (> 0).
	OffloadMinBatch int
	// Placement: tensor overrides and layers on the first backend.
	Placement Placement
	// WeightTypes retypes declared weights to the types of the weights
	// file the model is compiled for (see WeightTypesOf).
	WeightTypes map[string]tensor.DType
	// File is the weights file the model is compiled for: its metadata
	// gives meta(…) values, its tensor list decides `or` weights, and its
	// types are the WeightTypes when those are not set. Nil: compiled
	// without a file (meta(…) needs defaults).
	File   *WeightsFile
	Debug  int  // pass explanations (passes.Context.Debug)
	Verify bool // ir.Verify after every pass
	// MaxCopies bounds n_copies (0: DefaultMaxCopies, like ggml's
	// compile-time GGML_SCHED_MAX_COPIES).
	MaxCopies int
	// Through stops the pipeline after the named pass ("" runs it all).
	Through string
	// ThisMachine plans for the machine graphc runs on: backends it cannot
	// run and the plan can do without (blas) are dropped from the target,
	// with a warning in Result.Warnings (see DropUnavailable).
	ThisMachine bool
	// Flags are the values of the model's flag(…)s, by name (-ctx 4096:
	// "ctx" = 4096); the plan is made for them.
	// A type flag's value is its tensor.DType (-ctk q8_0: "ctk" = 8).
	Flags map[string]int64
	// FlashAttnAuto, where Flags does not set the model's flag("fa", …),
	// chooses it as llama.cpp's -fa auto: on unless a flash_attn_ext would
	// run on another backend than its K cache (see compileFlashAttnAuto).
	FlashAttnAuto bool
	// Fit, when set, chooses Placement.Layers to fit memory budgets
	// (see Fit); the choice is in Result.Fit.
	Fit *Fit
}

// Result is a compiled model: the plan and the passes' explanations.
type Result struct {
	Graph    *ir.Graph
	Diags    []passes.Diag
	Warnings []string   // for the user, e.g. a backend dropped from the target
	Fit      *FitReport // what -fit chose, when it was asked to
	// Backends is the target as the passes saw it, for estimates.
	Backends []*passes.Backend
}

// UserError is a problem in the user's model or options, already rendered
// with positions, source lines and carets.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

// InternalError is a bug in graphc: a broken invariant caught by a BUG:
// panic, with the stack where it happened.
type InternalError struct {
	Msg   string
	Stack string
}

func (e *InternalError) Error() string { return "internal error: " + e.Msg }

// catchBug turns a BUG: panic into an InternalError.
func catchBug(err *error) {
	if r := recover(); r != nil {
		*err = &InternalError{Msg: fmt.Sprint(r), Stack: string(debug.Stack())}
	}
}

// Parse parses and checks a DSL file, rendering every error at once.
func Parse(filename string, src []byte) (f *dsl.File, err error) {
	defer catchBug(&err)
	f, err = dsl.Parse(filename, src)
	if err == nil {
		err = dsl.Check(f)
	}
	if err != nil {
		return nil, &UserError{dsl.Render(err, src)}
	}
	return f, nil
}

// Compile runs the whole pipeline on one DSL file up to the plan.
func Compile(filename string, src []byte, cfg Config) (res *Result, err error) {
	if _, set := cfg.Flags[flashAttnFlag]; cfg.FlashAttnAuto && !set {
		return compileFlashAttnAuto(filename, src, cfg)
	}
	defer catchBug(&err)
	f, err := dsl.Parse(filename, src)
	if err != nil {
		return nil, &UserError{dsl.Render(err, src)}
	}
	// Lower even when the checks fail: shape and op errors come from
	// lowering, and users want every problem in one go.
	checkErr := dsl.Check(f)
	g, settings, lowerErr := Lower(f, cfg.weightTypes(), cfg.File, cfg.Flags)
	if errs := mergeErrors(checkErr, lowerErr); errs != nil {
		return nil, &UserError{dsl.Render(errs, src)}
	}
	if cfg.Fit != nil {
		return fitPlan(f, src, cfg, settings)
	}
	return plan(g, settings.merge(cfg))
}

// weightTypes are the types to compile weights as: WeightTypes, else the
// file's.
func (cfg *Config) weightTypes() map[string]tensor.DType {
	if cfg.WeightTypes == nil && cfg.File != nil {
		return cfg.File.Types
	}
	return cfg.WeightTypes
}

// merge completes the command line's configuration with the model's
// settings; the command line wins where both say something.
func (s *Settings) merge(cfg Config) Config {
	if len(cfg.Backends) == 0 {
		cfg.Backends = s.Backends
	}
	cfg.Placement.Overrides = append(cfg.Placement.Overrides[:len(cfg.Placement.Overrides):len(cfg.Placement.Overrides)], s.Places...)
	if v, ok := s.Options["n_copies"]; ok && cfg.Options.NCopies == 0 {
		cfg.Options.NCopies = int(v)
	}
	if s.Options["op_offload"] != 0 {
		cfg.Options.OpOffload = true
	}
	if s.Options["parallel_regions"] != 0 {
		cfg.Options.Regions = true
	}
	if v, ok := s.Options["pack_weights"]; ok && v == 0 {
		cfg.Options.NoPack = true
	}
	if v, ok := s.Options["offload_batch"]; ok && cfg.OffloadMinBatch == 0 {
		cfg.OffloadMinBatch = int(v)
	}
	if v, ok := s.Options["gpu_layers"]; ok && cfg.Placement.GPULayers == nil {
		n := int(v)
		cfg.Placement.GPULayers = &n
	}
	return cfg
}

// mergeErrors combines the checker's and the lowering's errors, sorted by
// position; where both report at the same position, the checker's wins.
func mergeErrors(errs ...error) error {
	var all dsl.ErrorList
	seen := map[[2]int]bool{}
	for _, err := range errs {
		var list dsl.ErrorList
		switch e := err.(type) {
		case nil:
			continue
		case dsl.ErrorList:
			list = e
		case *dsl.Error:
			list = dsl.ErrorList{e}
		default:
			return err
		}
		for _, e := range list {
			k := [2]int{e.Pos.Line, e.Pos.Column}
			if !seen[k] {
				seen[k] = true
				all = append(all, e)
			}
		}
	}
	all.Sort()
	return all.Err()
}

func plan(g *ir.Graph, cfg Config) (*Result, error) {
	limit := cfg.MaxCopies
	if limit <= 0 {
		limit = DefaultMaxCopies
	}
	if limit > MaxCopiesLimit {
		return nil, &UserError{fmt.Sprintf("max copies = %d: graphc plans at most %d pipeline copies", limit, MaxCopiesLimit)}
	}
	if cfg.Options.NCopies < 0 {
		return nil, &UserError{fmt.Sprintf("n_copies = %d: want at least 1", cfg.Options.NCopies)}
	}
	if cfg.Options.NCopies > limit {
		return nil, &UserError{fmt.Sprintf("n_copies = %d: at most %d pipeline copies (GGML_SCHED_MAX_COPIES; -max-copies raises it)", cfg.Options.NCopies, limit)}
	}
	var warnings []string
	if cfg.ThisMachine {
		cfg.Backends, warnings = DropUnavailable(cfg.Backends)
	}
	backends, err := Target(cfg.Backends, cfg.OffloadMinBatch)
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	var order []string
	for _, b := range backends {
		order = append(order, b.Name)
	}
	warnings = append(warnings, cfg.Placement.apply(g, order)...)
	if err := checkPlacements(g, backends); err != nil {
		return nil, err
	}
	pc := &passes.Context{Backends: backends, Options: cfg.Options, Debug: cfg.Debug}
	if err := passes.Run(g, pc, cfg.Verify, cfg.Through); err != nil {
		return nil, &UserError{err.Error()}
	}
	if cfg.Options.Placement == passes.PlacementCost && len(g.Splits) > 0 {
		// The plan carries what it was chosen by, so that a run's
		// statistics can put the estimate beside the measurement.
		model := cfg.Options.Cost
		if model == nil {
			model = passes.DefaultCostModel()
		}
		for k, e := range model.Estimate(g, backends) {
			g.Splits[k].EstimateNs = int64(e.Total())
		}
	}
	return &Result{Graph: g, Diags: pc.Diags, Warnings: warnings, Backends: backends}, nil
}

// checkPlacements reports every `on <backend>` that names a backend outside
// the target.
func checkPlacements(g *ir.Graph, backends []*passes.Backend) error {
	var errs []string
	for _, t := range g.Tensors {
		if t.Placement == "" {
			continue
		}
		found := false
		for _, b := range backends {
			found = found || b.Name == t.Placement
		}
		if !found {
			var names []string
			for _, b := range backends {
				names = append(names, b.Name)
			}
			errs = append(errs, fmt.Sprintf("%s: %s is placed on %s, which is not in the target (%s)", t.Pos, t.Name, t.Placement, strings.Join(names, ", ")))
		}
	}
	if len(errs) > 0 {
		return &UserError{strings.Join(errs, "\n")}
	}
	return nil
}

// Generate renders a compiled model as a Go package.
func Generate(res *Result, opts codegen.Options) (src []byte, err error) {
	defer catchBug(&err)
	src, err = codegen.Generate(res.Graph, opts)
	var ue *UserError
	if err != nil && !errors.As(err, &ue) && strings.HasPrefix(err.Error(), "BUG:") {
		return nil, &InternalError{Msg: err.Error()}
	}
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	return src, nil
}
