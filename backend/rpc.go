package backend

import "fmt"

// RPCAlignment is the alignment plans for rpc devices assume: ggml-cpu's
// buffers', which the traces' RPC devices report. A server whose device
// needs more is refused when the model starts (engine.NewSched).
const RPCAlignment = 32

// RPCEndpointsEnv names the environment variable listing the endpoints
// rpc<N> are bound to when the program is not told (-rpc):
// "host:port[,host:port…]".
const RPCEndpointsEnv = "GRAPHC_RPC"

// RPC is what the compiler plans against for rpc<n> (runtime/rpc): like
// ggml's RPC device, a GPU to the scheduler whose memory, buffer type
// "RPC<n>", is not host memory and is the only memory it reads, which
// supports every op (ggml asks the server nothing) and offloads none. ggml
// names the buffer type RPC<n>[endpoint]; the endpoint is bound at run
// time, so the plan's name leaves it out and the runtime's Describe adds
// it.
func RPC(n int) *Description {
	bt := BufferType{Name: fmt.Sprintf("RPC%d", n), Alignment: RPCAlignment}
	return &Description{
		Name:               fmt.Sprintf("rpc%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(*OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		Async:              true,
	}
}
