package passes

// PlanMemory is plan_memory's entry function, for tests that schedule a
// graph by hand.
var PlanMemory = planMemory
