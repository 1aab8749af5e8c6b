
// Appended to a local copy of ggml's src/ggml-backend.cpp by
// scripts/record-traces.sh (never committed there): read-only accessors to
// the scheduler's decisions, which ggml keeps private. GET_CAUSE is ggml's
// own debug block, switched on by the same script.

extern "C" {

GGML_API const char * tracerec_cause(ggml_backend_sched_t sched, struct ggml_tensor * t);
GGML_API int tracerec_n_splits(ggml_backend_sched_t sched);
GGML_API void tracerec_split(ggml_backend_sched_t sched, int k, int * backend_id, int * i_start, int * i_end, int * n_inputs);
GGML_API struct ggml_tensor * tracerec_split_input(ggml_backend_sched_t sched, int k, int j);
GGML_API struct ggml_tensor * tracerec_tensor_copy(ggml_backend_sched_t sched, struct ggml_tensor * t, int backend_id, int c);
GGML_API int tracerec_n_copies(ggml_backend_sched_t sched);
GGML_API int tracerec_cur_copy(ggml_backend_sched_t sched);
GGML_API int tracerec_n_graph_inputs(ggml_backend_sched_t sched);
GGML_API struct ggml_tensor * tracerec_graph_input(ggml_backend_sched_t sched, int i);
GGML_API struct ggml_cgraph * tracerec_sched_graph(ggml_backend_sched_t sched);
GGML_API int tracerec_sched_graph_n_leafs(ggml_backend_sched_t sched);
GGML_API struct ggml_tensor * tracerec_sched_graph_leaf(ggml_backend_sched_t sched, int i);
GGML_API int tracerec_sched_node_backend_id(ggml_backend_sched_t sched, int i);
GGML_API int tracerec_sched_leaf_backend_id(ggml_backend_sched_t sched, int i);
GGML_API int tracerec_max_copies(void);

GGML_API const char * tracerec_cause(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    (void) sched;
    return GET_CAUSE(t);
}

GGML_API int tracerec_n_splits(ggml_backend_sched_t sched) { return sched->n_splits; }

GGML_API void tracerec_split(ggml_backend_sched_t sched, int k, int * backend_id, int * i_start, int * i_end, int * n_inputs) {
    const struct ggml_backend_sched_split * s = &sched->splits[k];
    *backend_id = s->backend_id;
    *i_start = s->i_start;
    *i_end = s->i_end;
    *n_inputs = s->n_inputs;
}

GGML_API struct ggml_tensor * tracerec_split_input(ggml_backend_sched_t sched, int k, int j) {
    return sched->splits[k].inputs[j];
}

GGML_API struct ggml_tensor * tracerec_tensor_copy(ggml_backend_sched_t sched, struct ggml_tensor * t, int backend_id, int c) {
    return tensor_copy(t, backend_id, c);
}

GGML_API int tracerec_n_copies(ggml_backend_sched_t sched) { return sched->n_copies; }
GGML_API int tracerec_cur_copy(ggml_backend_sched_t sched) { return sched->cur_copy; }
GGML_API int tracerec_n_graph_inputs(ggml_backend_sched_t sched) { return sched->n_graph_inputs; }
GGML_API struct ggml_tensor * tracerec_graph_input(ggml_backend_sched_t sched, int i) { return sched->graph_inputs[i]; }
GGML_API struct ggml_cgraph * tracerec_sched_graph(ggml_backend_sched_t sched) { return &sched->graph; }

// The graph copy's leaves, and the backend of each of its nodes and leaves.
GGML_API int tracerec_sched_graph_n_leafs(ggml_backend_sched_t sched) { return sched->graph.n_leafs; }
GGML_API struct ggml_tensor * tracerec_sched_graph_leaf(ggml_backend_sched_t sched, int i) { return sched->graph.leafs[i]; }
GGML_API int tracerec_sched_node_backend_id(ggml_backend_sched_t sched, int i) { return sched->node_backend_ids[i]; }
GGML_API int tracerec_sched_leaf_backend_id(ggml_backend_sched_t sched, int i) { return sched->leaf_backend_ids[i]; }

// The build's GGML_SCHED_MAX_COPIES, the n_copies of a parallel scheduler.
GGML_API int tracerec_max_copies(void) { return GGML_SCHED_MAX_COPIES; }

}
