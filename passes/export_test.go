package passes

// The passes' entry functions, for tests that run one pass on a graph
// prepared by hand.
var (
	AssignBackends  = assignBackends
	ExpandBackends  = expandBackends
	UpgradeBackends = upgradeBackends
	AssignSrcs      = assignSrcs
	SplitGraph      = splitGraph
)

// CutSplits is the property tests' hand-made split_graph (memory_prop_test.go).
var CutSplits = cutSplits

// MaxSplitInputs is GGML_SCHED_MAX_SPLIT_INPUTS.
const MaxSplitInputs = maxSplitInputs

// EstimateAssignment is place_by_cost's estimate of the plan split_graph
// would make.
var EstimateAssignment = estimateAssignment
