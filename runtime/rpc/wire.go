package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Protocol facts of ggml's src/ggml-rpc/ggml-rpc.cpp and include/ggml-rpc.h
// at commit d99724f2b141fed9e1a9f402213506c081433465.
const (
	ProtoMajor = 5
	ProtoMinor = 1
	ProtoPatch = 0
)

// command is enum rpc_cmd: the request's first byte.
type command uint8

const (
	cmdAllocBuffer command = iota
	cmdGetAlignment
	cmdGetMaxSize
	cmdBufferGetBase
	cmdFreeBuffer
	cmdBufferClear
	cmdSetTensor
	cmdSetTensorHash
	cmdGetTensor
	cmdCopyTensor
	cmdGraphCompute
	cmdGetDeviceMemory
	cmdInitTensor
	cmdGetAllocSize
	cmdHello
	cmdDeviceCount
	cmdGraphRecompute
	cmdMemsetTensor
	numCommands
)

var commandNames = [numCommands]string{
	"ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER",
	"BUFFER_CLEAR", "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR",
	"GRAPH_COMPUTE", "GET_DEVICE_MEMORY", "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO",
	"DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
}

func (c command) String() string {
	if c < numCommands {
		return commandNames[c]
	}
	return fmt.Sprintf("command %d", uint8(c))
}

// Sizes of ggml's packed structs. ggml.h: GGML_MAX_DIMS 4, GGML_MAX_SRC 10,
// GGML_MAX_OP_PARAMS 64 bytes, GGML_MAX_NAME 64; transport.h:
// RPC_CONN_CAPS_SIZE 24.
const (
	maxDims      = 4
	maxSrc       = 10
	maxOpParams  = 16 // int32s
	maxName      = 64
	connCapsSize = 24
	// tensorSize is sizeof(rpc_tensor): id, type, buffer, ne[4] and nb[4]
	// as uint32, op, op_params, flags, src[10], view_src, view_offs,
	// data, name, use_count.
	tensorSize     = 8 + 4 + 8 + 4*maxDims + 4*maxDims + 4 + 4*maxOpParams + 4 + 8*maxSrc + 8 + 8 + 8 + maxName + 4
	helloReplySize = 4 + connCapsSize
	// hashThreshold is ggml's HASH_THRESHOLD: data larger than this is
	// first offered by its FNV-1a hash (SET_TENSOR_HASH), which a server
	// started with a cache directory may already hold.
	hashThreshold = 10 << 20
)

// wireTensor is rpc_tensor: a ggml tensor as the server rebuilds it. Ids
// are the client's own names for tensors within one request; Buffer and
// Data are the server's addresses.
type wireTensor struct {
	ID       uint64
	Type     uint32 // enum ggml_type
	Buffer   uint64
	Ne, Nb   [maxDims]uint32
	Op       uint32 // enum ggml_op
	OpParams [maxOpParams]int32
	Flags    int32
	Src      [maxSrc]uint64
	ViewSrc  uint64
	ViewOffs uint64
	Data     uint64
	Name     [maxName]byte
	// UseCount is left 0: ggml-cpu fuses a node into its consumer only
	// when the count says it has exactly one, and a graphc split's node
	// may be read by later splits the count cannot see.
	UseCount int32
}

func (t *wireTensor) append(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, t.ID)
	b = le.AppendUint32(b, t.Type)
	b = le.AppendUint64(b, t.Buffer)
	for _, v := range t.Ne {
		b = le.AppendUint32(b, v)
	}
	for _, v := range t.Nb {
		b = le.AppendUint32(b, v)
	}
	b = le.AppendUint32(b, t.Op)
	for _, v := range t.OpParams {
		b = le.AppendUint32(b, uint32(v))
	}
	b = le.AppendUint32(b, uint32(t.Flags))
	for _, v := range t.Src {
		b = le.AppendUint64(b, v)
	}
	b = le.AppendUint64(b, t.ViewSrc)
	b = le.AppendUint64(b, t.ViewOffs)
	b = le.AppendUint64(b, t.Data)
	b = append(b, t.Name[:]...)
	return le.AppendUint32(b, uint32(t.UseCount))
}

// flagCompute is GGML_TENSOR_FLAG_COMPUTE: the node must be computed.
const flagCompute = 16

// errMalformed is wrapped by every error about a reply that does not have
// the protocol's shape.
var errMalformed = errors.New("malformed reply")

// readReply reads one reply, | size (8 bytes) | payload |, whose payload
// must be exactly want bytes (ggml's recv_msg with a fixed-size struct).
// A size that differs is rejected before any payload is read, so that a
// corrupt size cannot make the client allocate or wait for gigabytes.
func readReply(r io.Reader, want int) ([]byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("reading the reply's size: %w", err)
	}
	size := binary.LittleEndian.Uint64(hdr[:])
	if size != uint64(want) {
		return nil, fmt.Errorf("%w: %d bytes, want %d", errMalformed, size, want)
	}
	p := make([]byte, want)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, fmt.Errorf("reading a %d-byte reply: %w", want, err)
	}
	return p, nil
}

// helloReply is rpc_msg_hello_rsp.
type helloReply struct {
	Major, Minor, Patch uint8
}

// decodeHello checks the server's protocol version the way ggml's client
// does: the same major version, a minor version no newer than ours.
func decodeHello(p []byte) (helloReply, error) {
	if len(p) != helloReplySize {
		return helloReply{}, fmt.Errorf("%w: HELLO of %d bytes, want %d", errMalformed, len(p), helloReplySize)
	}
	h := helloReply{p[0], p[1], p[2]}
	if h.Major != ProtoMajor || h.Minor > ProtoMinor {
		return h, fmt.Errorf("the server speaks RPC protocol %d.%d.%d, this client %d.%d.%d (a server of major version %d, minor version at most %d is needed: run the rpc-server of ggml commit d99724f2 or a compatible one)",
			h.Major, h.Minor, h.Patch, ProtoMajor, ProtoMinor, ProtoPatch, ProtoMajor, ProtoMinor)
	}
	return h, nil
}

// u64s decodes a reply of n little-endian uint64s.
func u64s(p []byte, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	return out
}

// fnvHash is ggml's fnv_hash, FNV-1a over 64 bits: SET_TENSOR_HASH names
// data by it.
func fnvHash(data []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range data {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}
