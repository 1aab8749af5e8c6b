// tracerec records ggml's own scheduling of a graph as a ggmltrace JSON
// file: it builds the graph with ggml's API the way llama.cpp builds it,
// places weights and KV caches in CPU or RPC buffers, runs
// ggml_backend_sched with the RPC device as the GPU, computes the graph
// and writes what the scheduler decided (assignments and causes, splits and
// their inputs, ggml-alloc's offsets, compute buffer sizes), the data rules
// and the output. See docs/ggml-traces.md; scripts/record-traces.sh builds
// it against a local ggml checkout with the scheduler's cause codes on.
//
//   tracerec -case NAME -rpc 127.0.0.1:PORT -o FILE.json [-commit SHA] [-t THREADS]
//   tracerec -list
//
// The causes come from ggml's SET_CAUSE debug block through the accessors
// in sched_access.cpp; the GGML_SCHED_DEBUG=2 report of the same run goes
// to FILE.sched_debug.txt and into the trace. The bytes moved to and from
// the device are counted on the wire, through a proxy to the server.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern "C" {
const char * tracerec_cause(ggml_backend_sched_t, struct ggml_tensor *);
int tracerec_n_splits(ggml_backend_sched_t);
void tracerec_split(ggml_backend_sched_t, int, int *, int *, int *, int *);
struct ggml_tensor * tracerec_split_input(ggml_backend_sched_t, int, int);
struct ggml_tensor * tracerec_tensor_copy(ggml_backend_sched_t, struct ggml_tensor *, int, int);
int tracerec_n_copies(ggml_backend_sched_t);
int tracerec_cur_copy(ggml_backend_sched_t);
int tracerec_n_graph_inputs(ggml_backend_sched_t);
struct ggml_tensor * tracerec_graph_input(ggml_backend_sched_t, int);
struct ggml_cgraph * tracerec_sched_graph(ggml_backend_sched_t);
int tracerec_sched_graph_n_leafs(ggml_backend_sched_t);
struct ggml_tensor * tracerec_sched_graph_leaf(ggml_backend_sched_t, int);
int tracerec_sched_node_backend_id(ggml_backend_sched_t, int);
int tracerec_sched_leaf_backend_id(ggml_backend_sched_t, int);
int tracerec_max_copies(void);
}

// ---------------------------------------------------------------- JSON

// A small JSON writer: values are written in place, objects and lists keep
// track of their commas.
struct JSON {
    std::string out;
    std::vector<bool> first;
    int depth() const { return (int) first.size(); }
    void indent() {
        out += '\n';
        out.append(depth(), ' ');
    }
    void sep() {
        if (!first.empty()) {
            if (!first.back()) out += ',';
            first.back() = false;
            indent();
        }
    }
    void key(const char * k) {
        sep();
        str_raw(k);
        out += ": ";
        pending = true;
    }
    bool pending = false;
    void val_prefix() {
        if (pending) {
            pending = false;
        } else {
            sep();
        }
    }
    void str_raw(const std::string & s) {
        out += '"';
        for (unsigned char c : s) {
            switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    snprintf(b, sizeof b, "\\u%04x", c);
                    out += b;
                } else {
                    out += (char) c;
                }
            }
        }
        out += '"';
    }
    void begin(char c) {
        val_prefix();
        out += c;
        first.push_back(true);
    }
    void end(char c) {
        bool empty = first.back();
        first.pop_back();
        if (!empty) indent();
        out += c;
    }
    void obj() { begin('{'); }
    void eobj() { end('}'); }
    void arr() { begin('['); }
    void earr() { end(']'); }
    void s(const std::string & v) {
        val_prefix();
        str_raw(v);
    }
    void null() {
        val_prefix();
        out += "null";
    }
    void b(bool v) {
        val_prefix();
        out += v ? "true" : "false";
    }
    void i(long long v) {
        val_prefix();
        out += std::to_string(v);
    }
    void f(double v) {
        val_prefix();
        if (!std::isfinite(v)) {
            out += "null"; // JSON has no infinities or NaNs
            return;
        }
        char buf[64];
        snprintf(buf, sizeof buf, "%.9g", v);
        out += buf;
    }
    // Flat lists on one line.
    void ints(const long long * v, int n) {
        val_prefix();
        out += '[';
        for (int k = 0; k < n; k++) {
            if (k) out += ", ";
            out += std::to_string(v[k]);
        }
        out += ']';
    }
    void ks(const char * k, const std::string & v) { key(k); s(v); }
    void ki(const char * k, long long v) { key(k); i(v); }
    void kb(const char * k, bool v) { key(k); b(v); }
    void kf(const char * k, double v) { key(k); f(v); }
};

// ---------------------------------------------------------------- wire

// The bytes ggml moves to and from the RPC device, counted on the wire: the
// RPC backend connects through this proxy, which forwards both ways and, for
// each request while counting is on, adds the data a SET_TENSOR carries and
// the size a GET_TENSOR asks for. Commands (RPC protocol of ggml's
// ggml-rpc.cpp): a command byte, a little-endian uint64 size, the payload.
enum { RPC_CMD_SET_TENSOR = 6, RPC_CMD_GET_TENSOR = 8 };

// The proxy sees requests later than the recorder sends them (SET_TENSOR
// has no reply), so what it counts is delimited in the stream itself: a
// GET_TENSOR of the marker tensor (in a buffer of its own, in no graph)
// starts and stops counting, and a GET_TENSOR of a tensor the recorder
// announced in skip (its own reads of the ids) is not counted. ggml's
// rpc_tensor starts with the tensor's address, its id.
struct Wire {
    std::atomic<bool> counting{false};
    std::atomic<long long> set_bytes{0}, get_bytes{0};
    std::atomic<long long> rpc_tensor_size{-1}; // sizeof(rpc_tensor), from the first marker read
    std::atomic<uint64_t> marker{0};
    std::atomic<uint64_t> skip{0};
    int listen_fd = -1;
    int port = 0;
};
static Wire g_wire;

static bool read_full(int fd, void * p, size_t n) {
    char * c = (char *) p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return false;
        c += r;
        n -= (size_t) r;
    }
    return true;
}

static bool write_full(int fd, const void * p, size_t n) {
    const char * c = (const char *) p;
    while (n > 0) {
        ssize_t r = write(fd, c, n);
        if (r <= 0) return false;
        c += r;
        n -= (size_t) r;
    }
    return true;
}

static void pump_requests(int from, int to) {
    std::vector<char> payload;
    for (;;) {
        unsigned char cmd;
        uint64_t size;
        if (!read_full(from, &cmd, 1) || !read_full(from, &size, 8)) break;
        payload.resize(size);
        if (size && !read_full(from, payload.data(), size)) break;
        if (cmd == RPC_CMD_GET_TENSOR && size >= 24) {
            // | rpc_tensor | offset (8) | size (8) |
            uint64_t id, want;
            memcpy(&id, payload.data(), 8);
            memcpy(&want, payload.data() + size - 8, 8);
            if (id == g_wire.marker) {
                g_wire.rpc_tensor_size = (long long) size - 16;
                g_wire.counting = !g_wire.counting;
            } else if (id == g_wire.skip) {
                g_wire.skip = 0;
            } else if (g_wire.counting) {
                g_wire.get_bytes += (long long) want;
            }
        } else if (cmd == RPC_CMD_SET_TENSOR && g_wire.counting) {
            // | rpc_tensor | offset (8) | data |
            g_wire.set_bytes += (long long) size - 8 - g_wire.rpc_tensor_size;
        }
        if (!write_full(to, &cmd, 1) || !write_full(to, &size, 8) || (size && !write_full(to, payload.data(), size))) break;
    }
    shutdown(to, SHUT_WR);
}

static void pump_bytes(int from, int to) {
    char buf[65536];
    for (;;) {
        ssize_t r = read(from, buf, sizeof buf);
        if (r <= 0 || !write_full(to, buf, (size_t) r)) break;
    }
    shutdown(to, SHUT_WR);
}

// start_proxy listens on 127.0.0.1 and, for each connection the RPC
// backend makes, connects to the server at endpoint (127.0.0.1:port) and
// pumps. Its port has as many digits as the server's, so that the backend's
// name, which holds the endpoint, can be given the server's back in the
// trace and in ggml's report without moving the report's columns.
static bool start_proxy(const std::string & endpoint) {
    const std::string host = "127.0.0.1";
    if (endpoint.rfind(host + ":", 0) != 0) return false;
    const std::string digits = endpoint.substr(host.size() + 1);
    const int port = atoi(digits.c_str());
    int lo = 1, hi = 9;
    for (size_t k = 1; k < digits.size(); k++) {
        lo *= 10;
        hi = hi * 10 + 9;
    }
    if (port < lo || port > hi || hi > 65535) hi = 65535;
    signal(SIGPIPE, SIG_IGN);
    g_wire.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    for (int p = port + 1;; p++) {
        if (p > hi) p = lo;
        if (p == port) return false;
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons((uint16_t) p);
        if (bind(g_wire.listen_fd, (sockaddr *) &a, sizeof a) == 0) {
            g_wire.port = p;
            break;
        }
    }
    if (listen(g_wire.listen_fd, 1) != 0) return false;
    // The RPC backend may connect more than once (it keeps a connection
    // only while something holds it): each gets its own pumps.
    std::thread([host, port]() {
        for (;;) {
            int c = accept(g_wire.listen_fd, nullptr, nullptr);
            if (c < 0) return;
            int sfd = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in sa = {};
            sa.sin_family = AF_INET;
            sa.sin_port = htons((uint16_t) port);
            if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1 || connect(sfd, (sockaddr *) &sa, sizeof sa) != 0) {
                close(c);
                close(sfd);
                continue;
            }
            std::thread(pump_bytes, sfd, c).detach();
            std::thread(pump_requests, c, sfd).detach();
        }
    }).detach();
    return true;
}

// ---------------------------------------------------------------- cases

struct Hparams {
    std::string kind = "llama"; // llama (dense FFN) or moe
    int n_layer = 4, n_embd = 64, n_head = 4, head_dim = 16;
    int n_tokens = 8, n_kv = 16, n_ff = 128, n_vocab = 128;
    int n_expert = 8, n_expert_used = 2, n_ff_exp = 32;
    double rms_eps = 1e-5, kq_scale = 0.25;
};

// Where a weight or KV cache lives: true for the RPC device's buffer. The
// layer is -1 for the token embedding, -2 for the output norm and matrix.
using PlaceFn = std::function<bool(const std::string & name, int layer)>;

struct Case {
    std::string name, note;
    Hparams hp;
    PlaceFn on_rpc;
    bool op_offload = false;
    // Forces MUL_MAT_ID onto the RPC backend (ggml_backend_sched_set_tensor_backend):
    // what a device whose offload_op accepts the batch would get; ggml's RPC
    // device has no offload_op.
    bool mul_mat_id_on_rpc = false;
    std::map<std::string, std::string> extra; // hparams shown in the trace
};

static bool is_exps(const std::string & n) { return n.find("_exps.") != std::string::npos; }

static std::vector<Case> cases() {
    std::vector<Case> cs;
    {
        Case c;
        c.name = "llama_partial";
        c.note = "layers 2..3 (+kv) on RPC, tok_embd/layers 0..1/output on CPU; backends [RPC, CPU]";
        c.on_rpc = [](const std::string &, int l) { return l >= 2; };
        c.extra = {{"first_rpc_layer", "2"}, {"output_on_rpc", "false"}};
        cs.push_back(c);
    }
    {
        Case c;
        c.name = "llama_full";
        c.note = "all layers (+kv) and output on RPC, token embedding on CPU; backends [RPC, CPU]";
        c.on_rpc = [](const std::string & n, int l) { return l >= 0 || n.rfind("output", 0) == 0; };
        c.extra = {{"first_rpc_layer", "0"}, {"output_on_rpc", "true"}};
        cs.push_back(c);
    }
    for (int nt : {1, 64}) {
        Hparams hp;
        hp.kind = "moe";
        hp.n_tokens = nt;
        hp.n_kv = nt < 8 ? 16 : 2 * nt;
        std::string b = std::to_string(nt);
        {
            Case c;
            c.name = "moe_gpu_b" + b;
            c.note = "MoE decoder, all layers (+kv, experts) and output on RPC, token embedding on CPU; backends [RPC, CPU]";
            c.hp = hp;
            c.op_offload = true;
            c.on_rpc = [](const std::string & n, int l) { return l >= 0 || n.rfind("output", 0) == 0; };
            c.extra = {{"experts", "\"RPC\""}};
            cs.push_back(c);
        }
        {
            Case c;
            c.name = "moe_cpu_exps_b" + b;
            c.note = "MoE decoder, expert weights (ffn_*_exps) in host memory (llama.cpp's --cpu-moe), the rest of every layer and output on RPC; backends [RPC, CPU]";
            c.hp = hp;
            c.op_offload = true;
            c.on_rpc = [](const std::string & n, int l) { return !is_exps(n) && (l >= 0 || n.rfind("output", 0) == 0); };
            c.extra = {{"experts", "\"CPU\""}};
            cs.push_back(c);
        }
        {
            Case c;
            c.name = "moe_ncpu2_b" + b;
            c.note = "MoE decoder, the experts of layers 0..1 in host memory (llama.cpp's --n-cpu-moe 2), everything else on RPC; backends [RPC, CPU]";
            c.hp = hp;
            c.op_offload = true;
            c.on_rpc = [](const std::string & n, int l) { return !(is_exps(n) && l < 2) && (l >= 0 || n.rfind("output", 0) == 0); };
            c.extra = {{"experts", "\"CPU for layers 0..1, RPC for 2..3\""}, {"n_cpu_moe", "2"}};
            cs.push_back(c);
        }
        {
            Case c;
            c.name = "moe_exps_offload_b" + b;
            c.note = "MoE decoder, expert weights in host memory, the rest on RPC, every MUL_MAT_ID forced onto RPC by the user "
                     "(standing in for a device's offload_op, which ggml's RPC device lacks): ggml copies only the experts the batch uses; backends [RPC, CPU]";
            c.hp = hp;
            c.op_offload = true;
            c.mul_mat_id_on_rpc = true;
            c.on_rpc = [](const std::string & n, int l) { return !is_exps(n) && (l >= 0 || n.rfind("output", 0) == 0); };
            c.extra = {{"experts", "\"CPU\""}, {"mul_mat_id_override", "\"RPC\""}};
            cs.push_back(c);
        }
    }
    {
        // Batch 64 over 32 experts: the used ones leave gaps, so the copy
        // of only the used experts still saves bytes at a batch a device's
        // offload_op would take.
        Case c;
        c.name = "moe_exps32_offload_b64";
        c.note = "MoE decoder with 32 experts (2 used), expert weights in host memory, the rest on RPC, every MUL_MAT_ID forced onto RPC by the user; "
                 "batch 64 uses some experts only; backends [RPC, CPU]";
        c.hp.kind = "moe";
        c.hp.n_tokens = 64;
        c.hp.n_kv = 128;
        c.hp.n_expert = 32;
        c.op_offload = true;
        c.mul_mat_id_on_rpc = true;
        c.on_rpc = [](const std::string & n, int l) { return !is_exps(n) && (l >= 0 || n.rfind("output", 0) == 0); };
        c.extra = {{"experts", "\"CPU\""}, {"mul_mat_id_override", "\"RPC\""}};
        cs.push_back(c);
    }
    return cs;
}

// ---------------------------------------------------------------- model

struct ParamInfo {
    ggml_tensor * t;
    std::string kind; // weights, kv
};

struct Model {
    ggml_context * ctx[2][2] = {}; // [on_rpc][kv]
    std::vector<ParamInfo> params;  // fill order
    std::map<std::string, ggml_tensor *> byname;
    ggml_backend_buffer_t buf[2][2] = {};
};

static ggml_tensor * new_param(Model & m, const Case & c, const std::string & name, int layer, bool kv,
                               ggml_type type, std::vector<int64_t> ne) {
    bool rpc = c.on_rpc(name, layer);
    ggml_context * ctx = m.ctx[rpc][kv];
    ggml_tensor * t = nullptr;
    switch (ne.size()) {
    case 1: t = ggml_new_tensor_1d(ctx, type, ne[0]); break;
    case 2: t = ggml_new_tensor_2d(ctx, type, ne[0], ne[1]); break;
    case 3: t = ggml_new_tensor_3d(ctx, type, ne[0], ne[1], ne[2]); break;
    }
    ggml_set_name(t, name.c_str());
    m.params.push_back({t, kv ? "kv" : "weights"});
    m.byname[name] = t;
    return t;
}

static std::string lname(int l, const char * what) { return "blk." + std::to_string(l) + "." + what + ".weight"; }

static void make_params(Model & m, const Case & c) {
    const Hparams & hp = c.hp;
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 2; k++) {
            ggml_init_params ip = {ggml_tensor_overhead() * 512, nullptr, true};
            m.ctx[r][k] = ggml_init(ip);
        }
    }
    new_param(m, c, "token_embd.weight", -1, false, GGML_TYPE_F32, {hp.n_embd, hp.n_vocab});
    for (int l = 0; l < hp.n_layer; l++) {
        new_param(m, c, lname(l, "attn_norm"), l, false, GGML_TYPE_F32, {hp.n_embd});
        for (const char * w : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            new_param(m, c, lname(l, w), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_embd});
        }
        new_param(m, c, lname(l, "ffn_norm"), l, false, GGML_TYPE_F32, {hp.n_embd});
        if (hp.kind == "moe") {
            new_param(m, c, lname(l, "ffn_gate_inp"), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_expert});
            new_param(m, c, lname(l, "ffn_gate_exps"), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_ff_exp, hp.n_expert});
            new_param(m, c, lname(l, "ffn_up_exps"), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_ff_exp, hp.n_expert});
            new_param(m, c, lname(l, "ffn_down_exps"), l, false, GGML_TYPE_F32, {hp.n_ff_exp, hp.n_embd, hp.n_expert});
        } else {
            new_param(m, c, lname(l, "ffn_gate"), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_ff});
            new_param(m, c, lname(l, "ffn_up"), l, false, GGML_TYPE_F32, {hp.n_embd, hp.n_ff});
            new_param(m, c, lname(l, "ffn_down"), l, false, GGML_TYPE_F32, {hp.n_ff, hp.n_embd});
        }
    }
    new_param(m, c, "output_norm.weight", -2, false, GGML_TYPE_F32, {hp.n_embd});
    new_param(m, c, "output.weight", -2, false, GGML_TYPE_F32, {hp.n_embd, hp.n_vocab});
    for (int l = 0; l < hp.n_layer; l++) {
        new_param(m, c, "cache_k_l" + std::to_string(l), l, true, GGML_TYPE_F16, {hp.n_embd, hp.n_kv});
        new_param(m, c, "cache_v_l" + std::to_string(l), l, true, GGML_TYPE_F16, {(int64_t) hp.n_embd * hp.n_kv});
    }
}

// ---------------------------------------------------------------- graph

static ggml_tensor * named(ggml_tensor * t, const char * base, int il) {
    if (il >= 0) {
        ggml_format_name(t, "%s-%d", base, il);
    } else {
        ggml_set_name(t, base);
    }
    return t;
}

struct Inputs {
    ggml_tensor * tokens, * pos, * mask;
};

// The tensors given to ggml_build_forward_expand, in order: the leaves'
// order is that of ggml's depth-first walk from them.
static std::vector<ggml_tensor *> g_roots;
static void expand(ggml_cgraph * gf, ggml_tensor * t) {
    g_roots.push_back(t);
    ggml_build_forward_expand(gf, t);
}

// build_graph builds the decoder as llama.cpp's llm_build_llama does
// (non-flash attention, KV cache written through views, V stored
// transposed), with build_moe_ffn's softmax-gated mixture of experts in
// place of the dense FFN for the moe kind, expanded in its order (the
// normalised weights first, then the experts' product, its views and
// their sum). Two differences from build_moe_ffn, both ops graphc lacks:
// SiLU and MUL where it fuses them (ggml_swiglu_split), and no clamp of
// the weights' sum (ggml_clamp; the sum of the top n_expert_used of
// n_expert probabilities is at least n_expert_used / n_expert anyway).
static ggml_tensor * build_graph(ggml_context * ctx, ggml_cgraph * gf, Model & m, const Hparams & hp, Inputs & in) {
    const int nt = hp.n_tokens, n_kv = hp.n_kv, kv_head = hp.n_kv - hp.n_tokens;
    auto W = [&](const std::string & n) { return m.byname.at(n); };

    in.tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, nt);
    ggml_set_name(in.tokens, "inp_tokens");
    ggml_set_input(in.tokens);
    in.pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, nt);
    ggml_set_name(in.pos, "inp_pos");
    ggml_set_input(in.pos);
    in.mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_kv, nt);
    ggml_set_name(in.mask, "KQ_mask");
    ggml_set_input(in.mask);

    ggml_tensor * inpL = named(ggml_get_rows(ctx, W("token_embd.weight"), in.tokens), "inp_embd", -1);
    for (int il = 0; il < hp.n_layer; il++) {
        auto LW = [&](const char * w) { return W(lname(il, w)); };
        ggml_tensor * ck = W("cache_k_l" + std::to_string(il));
        ggml_tensor * cv = W("cache_v_l" + std::to_string(il));

        ggml_tensor * cur = named(ggml_rms_norm(ctx, inpL, (float) hp.rms_eps), "norm", il);
        cur = named(ggml_mul(ctx, cur, LW("attn_norm")), "attn_norm", il);

        ggml_tensor * k = named(ggml_mul_mat(ctx, LW("attn_k"), cur), "Kcur", il);
        k = named(ggml_reshape_3d(ctx, k, hp.head_dim, hp.n_head, nt), "Kcur_3d", il);
        k = named(ggml_rope_ext(ctx, k, in.pos, nullptr, hp.head_dim, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), "Kcur_rope", il);
        ggml_tensor * kview = named(ggml_view_1d(ctx, ck, (int64_t) nt * hp.n_embd, ggml_row_size(ck->type, hp.n_embd) * kv_head), "k_cache_view", il);
        expand(gf, named(ggml_cpy(ctx, k, kview), "k_cache_cpy", il));

        ggml_tensor * v = named(ggml_mul_mat(ctx, LW("attn_v"), cur), "Vcur", il);
        v = named(ggml_reshape_2d(ctx, v, hp.n_embd, nt), "Vcur_2d", il);
        v = named(ggml_transpose(ctx, v), "Vcur_T", il);
        ggml_tensor * vview = named(ggml_view_2d(ctx, cv, nt, hp.n_embd, ggml_row_size(cv->type, n_kv), ggml_row_size(cv->type, kv_head)), "v_cache_view", il);
        expand(gf, named(ggml_cpy(ctx, v, vview), "v_cache_cpy", il));

        ggml_tensor * vv = named(ggml_view_3d(ctx, cv, n_kv, hp.head_dim, hp.n_head, ggml_row_size(cv->type, n_kv),
                                              ggml_row_size(cv->type, (int64_t) n_kv * hp.head_dim), 0), "v", il);
        ggml_tensor * kk = named(ggml_view_3d(ctx, ck, hp.head_dim, n_kv, hp.n_head, ggml_row_size(ck->type, hp.n_embd),
                                              ggml_row_size(ck->type, hp.head_dim), 0), "k", il);
        ggml_tensor * q = named(ggml_mul_mat(ctx, LW("attn_q"), cur), "Qcur", il);
        q = named(ggml_reshape_3d(ctx, q, hp.head_dim, hp.n_head, nt), "Qcur_3d", il);
        q = named(ggml_rope_ext(ctx, q, in.pos, nullptr, hp.head_dim, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), "Qcur_rope", il);
        q = named(ggml_permute(ctx, q, 0, 2, 1, 3), "q", il);
        ggml_tensor * kq = named(ggml_mul_mat(ctx, kk, q), "kq", il);
        kq = named(ggml_soft_max_ext(ctx, kq, in.mask, (float) hp.kq_scale, 0.0f), "kq_soft_max", il);
        ggml_tensor * kqv = named(ggml_mul_mat(ctx, vv, kq), "kqv", il);
        kqv = named(ggml_permute(ctx, kqv, 0, 2, 1, 3), "kqv_merged", il);
        kqv = named(ggml_cont_2d(ctx, kqv, hp.n_embd, nt), "kqv_merged_cont", il);
        cur = named(ggml_mul_mat(ctx, LW("attn_output"), kqv), "attn_out", il);
        ggml_tensor * ffn_inp = named(ggml_add(ctx, cur, inpL), "ffn_inp", il);

        cur = named(ggml_rms_norm(ctx, ffn_inp, (float) hp.rms_eps), "norm_ffn", il);
        cur = named(ggml_mul(ctx, cur, LW("ffn_norm")), "ffn_norm", il);
        if (hp.kind == "moe") {
            const int ne = hp.n_expert, nu = hp.n_expert_used;
            ggml_tensor * logits = named(ggml_mul_mat(ctx, LW("ffn_gate_inp"), cur), "ffn_moe_logits", il);
            ggml_tensor * probs = named(ggml_soft_max(ctx, logits), "ffn_moe_probs", il);
            // ggml_argsort_top_k: argsort descending, then a view of the first nu.
            ggml_tensor * sel = ggml_argsort_top_k(ctx, probs, nu);
            named(sel->view_src, "ffn_moe_argsort", il);
            named(sel, "ffn_moe_topk", il);
            ggml_tensor * w = named(ggml_get_rows(ctx, ggml_reshape_3d(ctx, probs, 1, ne, nt), sel), "ffn_moe_weights", il);
            w = ggml_reshape_2d(ctx, w, nu, nt);
            ggml_tensor * wsum = named(ggml_sum_rows(ctx, w), "ffn_moe_weights_sum", il);
            w = named(ggml_div(ctx, w, wsum), "ffn_moe_weights_norm", il);
            w = ggml_reshape_3d(ctx, w, 1, nu, nt);
            expand(gf, w); // early, as llama.cpp does
            ggml_tensor * x = ggml_reshape_3d(ctx, cur, hp.n_embd, 1, nt);
            ggml_tensor * up = named(ggml_mul_mat_id(ctx, LW("ffn_up_exps"), x, sel), "ffn_moe_up", il);
            ggml_tensor * gate = named(ggml_mul_mat_id(ctx, LW("ffn_gate_exps"), x, sel), "ffn_moe_gate", il);
            gate = named(ggml_silu(ctx, gate), "ffn_moe_silu", il);
            ggml_tensor * par = named(ggml_mul(ctx, gate, up), "ffn_moe_swiglu", il);
            ggml_tensor * experts = named(ggml_mul_mat_id(ctx, LW("ffn_down_exps"), par, sel), "ffn_moe_down", il);
            experts = named(ggml_mul(ctx, experts, w), "ffn_moe_weighted", il);
            expand(gf, experts);
            // The experts' views first, then their sum, each expanded in turn.
            std::vector<ggml_tensor *> ex(nu);
            for (int e = 0; e < nu; e++) {
                ex[e] = ggml_view_2d(ctx, experts, hp.n_embd, nt, experts->nb[2], e * experts->nb[1]);
                ggml_format_name(ex[e], "ffn_moe_out_e%d-%d", e, il);
                expand(gf, ex[e]);
            }
            ggml_tensor * moe_out = ex[0];
            for (int e = 1; e < nu; e++) {
                moe_out = ggml_add(ctx, moe_out, ex[e]);
                expand(gf, moe_out);
            }
            cur = named(moe_out, "ffn_moe_out", il);
        } else {
            ggml_tensor * gate = named(ggml_mul_mat(ctx, LW("ffn_gate"), cur), "ffn_gate", il);
            gate = named(ggml_silu(ctx, gate), "ffn_silu", il);
            ggml_tensor * up = named(ggml_mul_mat(ctx, LW("ffn_up"), cur), "ffn_up", il);
            ggml_tensor * par = named(ggml_mul(ctx, gate, up), "ffn_gate_par", il);
            cur = named(ggml_mul_mat(ctx, LW("ffn_down"), par), "ffn_out", il);
        }
        inpL = named(ggml_add(ctx, cur, ffn_inp), "l_out", il);
    }
    ggml_tensor * cur = named(ggml_rms_norm(ctx, inpL, (float) hp.rms_eps), "norm_out", -1);
    cur = named(ggml_mul(ctx, cur, W("output_norm.weight")), "result_norm", -1);
    cur = named(ggml_mul_mat(ctx, W("output.weight"), cur), "result_output", -1);
    ggml_set_output(cur);
    expand(gf, cur);
    return cur;
}

// ---------------------------------------------------------------- recording

static std::string g_log;
static void log_cb(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_DEBUG || level == GGML_LOG_LEVEL_CONT) {
        g_log += text;
    } else {
        fputs(text, stderr);
    }
}

// The ids each MUL_MAT_ID read, by node name, taken when it ran.
static std::map<std::string, std::vector<int32_t>> g_ids;
static std::map<std::string, std::vector<int64_t>> g_ids_shape;

static bool eval_cb(ggml_tensor * t, bool ask, void *) {
    if (t->op != GGML_OP_MUL_MAT_ID) return false;
    if (ask) return true;
    ggml_tensor * ids = t->src[2];
    std::vector<int32_t> v(ggml_nbytes(ids) / sizeof(int32_t));
    g_wire.skip = (uint64_t) (uintptr_t) ids; // the recorder's read, not ggml's
    ggml_backend_tensor_get(ids, v.data(), 0, ggml_nbytes(ids));
    g_wire.skip = 0;
    // Keep them indexed as ggml reads them: element (i0, i1) at i1*nb1 + i0*nb0.
    g_ids[t->name] = v;
    g_ids_shape[t->name] = {ids->ne[0], ids->ne[1], (int64_t) (ids->nb[0] / 4), (int64_t) (ids->nb[1] / 4)};
    return true;
}

static std::string op_name(const ggml_tensor * t) { return ggml_op_name(t->op); }

static std::vector<std::string> flag_names(const ggml_tensor * t) {
    std::vector<std::string> f;
    if (t->flags & GGML_TENSOR_FLAG_INPUT) f.push_back("input");
    if (t->flags & GGML_TENSOR_FLAG_OUTPUT) f.push_back("output");
    if (t->flags & GGML_TENSOR_FLAG_PARAM) f.push_back("param");
    if (t->flags & GGML_TENSOR_FLAG_COMPUTE) f.push_back("compute");
    return f;
}

static bool is_view_op(ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

struct Snapshot { // a tensor as it was before scheduling
    std::vector<std::string> src;
    int32_t flags;
};

int main(int argc, char ** argv) {
    std::string case_name, rpc_ep = "127.0.0.1:50052", out_path, commit = "unknown";
    int threads = 2;
    bool list = false;
    for (int k = 1; k < argc; k++) {
        std::string a = argv[k];
        auto next = [&]() -> std::string {
            if (k + 1 >= argc) {
                fprintf(stderr, "tracerec: %s needs a value\n", a.c_str());
                exit(2);
            }
            return argv[++k];
        };
        if (a == "-case") case_name = next();
        else if (a == "-rpc") rpc_ep = next();
        else if (a == "-o") out_path = next();
        else if (a == "-commit") commit = next();
        else if (a == "-t") threads = atoi(next().c_str());
        else if (a == "-list") list = true;
        else {
            fprintf(stderr, "usage: tracerec -case NAME -rpc HOST:PORT -o FILE.json [-commit SHA] [-t THREADS] | -list\n");
            return 2;
        }
    }
    std::vector<Case> all = cases();
    if (list) {
        for (auto & c : all) printf("%s\n", c.name.c_str());
        return 0;
    }
    const Case * cp = nullptr;
    for (auto & c : all) {
        if (c.name == case_name) cp = &c;
    }
    if (!cp || out_path.empty()) {
        fprintf(stderr, "tracerec: unknown case %s or no -o (cases: -list)\n", case_name.c_str());
        return 2;
    }
    const Case & c = *cp;
    const Hparams & hp = c.hp;

    setenv("GGML_SCHED_DEBUG", "2", 1);
    ggml_log_set(log_cb, nullptr);

    // The RPC backend reaches the server through the byte-counting proxy;
    // its name (RPC0[endpoint]) is the server's, the one the trace records.
    if (!start_proxy(rpc_ep)) {
        fprintf(stderr, "tracerec: bad endpoint %s\n", rpc_ep.c_str());
        return 1;
    }
    ggml_backend_t rpc = ggml_backend_rpc_init(("127.0.0.1:" + std::to_string(g_wire.port)).c_str(), 0);
    if (!rpc) {
        fprintf(stderr, "tracerec: no RPC server at %s\n", rpc_ep.c_str());
        return 1;
    }
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, threads);
    ggml_backend_t backends[2] = {rpc, cpu};
    const char * kinds[2] = {"RPC", "CPU"};

    // Weights and KV caches, allocated per buffer type and filled.
    Model m;
    make_params(m, c);
    ggml_backend_buffer_type_t bufts[2] = {ggml_backend_get_default_buffer_type(cpu), ggml_backend_get_default_buffer_type(rpc)};
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 2; k++) {
            if (!ggml_get_first_tensor(m.ctx[r][k])) continue;
            m.buf[r][k] = ggml_backend_alloc_ctx_tensors_from_buft(m.ctx[r][k], bufts[r]);
            ggml_backend_buffer_set_usage(m.buf[r][k], k ? GGML_BACKEND_BUFFER_USAGE_ANY : GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        }
    }
    for (size_t k = 0; k < m.params.size(); k++) {
        ggml_tensor * t = m.params[k].t;
        int64_t n = ggml_nelements(t);
        std::vector<float> f(n);
        for (int64_t i = 0; i < n; i++) f[i] = (float) (sin(i * 0.01 + (double) k) * 0.1);
        if (t->type == GGML_TYPE_F16) {
            std::vector<ggml_fp16_t> h(n);
            ggml_fp32_to_fp16_row(f.data(), h.data(), n);
            ggml_backend_tensor_set(t, h.data(), 0, ggml_nbytes(t));
        } else {
            ggml_backend_tensor_set(t, f.data(), 0, ggml_nbytes(t));
        }
    }

    // The graph.
    const int graph_size = 2048;
    ggml_init_params gp = {ggml_tensor_overhead() * graph_size + ggml_graph_overhead_custom(graph_size, false), nullptr, true};
    ggml_context * gctx = ggml_init(gp);
    ggml_cgraph * gf = ggml_new_graph_custom(gctx, graph_size, false);
    Inputs in;
    ggml_tensor * out = build_graph(gctx, gf, m, hp, in);

    const int n_nodes = ggml_graph_n_nodes(gf);
    std::vector<ggml_tensor *> nodes(n_nodes), leafs;
    for (int i = 0; i < n_nodes; i++) nodes[i] = ggml_graph_node(gf, i);
    // Leaves: ggml's API gives no access to them by index; they are the
    // sources that are not nodes, in the order of the depth-first walk
    // (sources left to right) ggml_build_forward_expand made from each root.
    {
        std::set<ggml_tensor *> isnode(nodes.begin(), nodes.end()), seen;
        std::function<void(ggml_tensor *)> visit = [&](ggml_tensor * t) {
            if (seen.count(t)) return;
            seen.insert(t);
            for (int j = 0; j < GGML_MAX_SRC; j++) {
                if (t->src[j]) visit(t->src[j]);
            }
            if (!isnode.count(t)) leafs.push_back(t);
        };
        for (auto * t : g_roots) visit(t);
    }

    // What every backend answers for every node, and the graph before
    // scheduling (ggml replaces sources by their copies in place).
    std::map<ggml_tensor *, Snapshot> before;
    std::map<ggml_tensor *, std::vector<bool>> supports, offload;
    for (auto * t : nodes) {
        for (int b = 0; b < 2; b++) {
            supports[t].push_back(ggml_backend_supports_op(backends[b], t));
            offload[t].push_back(ggml_backend_offload_op(backends[b], t));
        }
    }
    for (auto * t : leafs) before[t] = {{}, t->flags};
    for (auto * t : nodes) {
        Snapshot s;
        for (int j = 0; j < GGML_MAX_SRC; j++) s.src.push_back(t->src[j] ? t->src[j]->name : "");
        s.flags = t->flags;
        before[t] = s;
    }

    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, nullptr, 2, graph_size, false, c.op_offload);
    std::set<ggml_tensor *> overridden;
    if (c.mul_mat_id_on_rpc) {
        for (auto * t : nodes) {
            if (t->op == GGML_OP_MUL_MAT_ID) {
                ggml_backend_sched_set_tensor_backend(sched, t, rpc);
                overridden.insert(t);
            }
        }
    }
    if (!ggml_backend_sched_alloc_graph(sched, gf)) {
        fprintf(stderr, "tracerec: ggml_backend_sched_alloc_graph failed\n");
        return 1;
    }
    std::string sched_log = g_log;

    // Inputs.
    const int kv_head = hp.n_kv - hp.n_tokens;
    {
        std::vector<int32_t> tok(hp.n_tokens), pos(hp.n_tokens);
        for (int t = 0; t < hp.n_tokens; t++) {
            tok[t] = (t * 7 + 3) % hp.n_vocab;
            pos[t] = kv_head + t;
        }
        ggml_backend_tensor_set(in.tokens, tok.data(), 0, ggml_nbytes(in.tokens));
        ggml_backend_tensor_set(in.pos, pos.data(), 0, ggml_nbytes(in.pos));
        std::vector<float> mask((size_t) hp.n_kv * hp.n_tokens);
        for (int t = 0; t < hp.n_tokens; t++) {
            for (int j = 0; j < hp.n_kv; j++) mask[(size_t) t * hp.n_kv + j] = j <= kv_head + t ? 0.0f : -INFINITY;
        }
        ggml_backend_tensor_set(in.mask, mask.data(), 0, ggml_nbytes(in.mask));
    }
    // The marker: reading it starts counting (and tells the proxy the size
    // of ggml's rpc_tensor header), reading it again stops.
    ggml_init_params mp = {ggml_tensor_overhead(), nullptr, true};
    ggml_context * mctx = ggml_init(mp);
    ggml_tensor * marker = ggml_new_tensor_1d(mctx, GGML_TYPE_F32, 1);
    ggml_backend_buffer_t mbuf = ggml_backend_alloc_ctx_tensors_from_buft(mctx, bufts[1]);
    g_wire.marker = (uint64_t) (uintptr_t) marker;
    float mx;
    ggml_backend_tensor_get(marker, &mx, 0, sizeof mx);
    ggml_backend_sched_set_eval_callback(sched, eval_cb, nullptr);
    if (ggml_backend_sched_graph_compute(sched, gf) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "tracerec: compute failed\n");
        return 1;
    }
    ggml_backend_sched_synchronize(sched);
    ggml_backend_tensor_get(marker, &mx, 0, sizeof mx);
    ggml_backend_buffer_free(mbuf);
    ggml_free(mctx);
    std::vector<float> result(ggml_nelements(out));
    ggml_backend_tensor_get(out, result.data(), 0, ggml_nbytes(out));

    auto bname = [&](ggml_backend_t b) -> std::string { return b ? ggml_backend_name(b) : "NULL"; };
    auto bid = [&](ggml_backend_t b) { return b == rpc ? 0 : b == cpu ? 1 : -1; };
    auto tb = [&](ggml_tensor * t) { return ggml_backend_sched_get_tensor_backend(sched, t); };
    auto buf_of = [](ggml_tensor * t) { return t->view_src ? t->view_src->buffer : t->buffer; };

    // Which preallocated buffer holds a tensor.
    std::map<ggml_backend_buffer_t, std::pair<std::string, std::string>> prealloc; // buffer → (buft, usage)
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 2; k++) {
            if (m.buf[r][k]) prealloc[m.buf[r][k]] = {ggml_backend_buft_name(bufts[r]), k ? "any" : "weights"};
        }
    }

    JSON j;
    j.obj();
    j.ks("case", c.name);
    j.ks("note", c.note);
    j.ks("ggml_commit", commit);
    j.kb("causes_build", true);
    j.ki("GGML_SCHED_MAX_COPIES", tracerec_max_copies());
    j.key("hparams");
    j.obj();
    j.ks("kind", hp.kind);
    j.ki("n_layer", hp.n_layer);
    j.ki("n_embd", hp.n_embd);
    j.ki("n_head", hp.n_head);
    j.ki("n_head_kv", hp.n_head);
    j.ki("head_dim", hp.head_dim);
    j.ki("n_tokens", hp.n_tokens);
    j.ki("n_kv", hp.n_kv);
    j.ki("kv_head", kv_head);
    if (hp.kind == "moe") {
        j.ki("n_expert", hp.n_expert);
        j.ki("n_expert_used", hp.n_expert_used);
        j.ki("n_ff_exp", hp.n_ff_exp);
        j.ks("gating", "soft_max; ggml_argsort_top_k; weights normalised by their sum (sum_rows, div; no clamp); silu and mul (not the fused swiglu)");
    } else {
        j.ki("n_ff", hp.n_ff);
    }
    j.ki("n_vocab", hp.n_vocab);
    j.kf("rms_eps", hp.rms_eps);
    j.kf("kq_scale", hp.kq_scale);
    j.ks("rope", "ggml_rope_ext(mode=0, n_dims=head_dim, n_ctx_orig=0, freq_base=10000, freq_scale=1, ext_factor=0, attn_factor=1, beta_fast=32, beta_slow=1)");
    for (auto & kv : c.extra) {
        j.key(kv.first.c_str());
        j.val_prefix();
        j.out += kv.second; // already JSON
    }
    j.eobj();
    j.key("sched_params");
    j.obj();
    j.ki("graph_size", graph_size);
    j.kb("parallel", false);
    j.kb("op_offload", c.op_offload);
    j.ks("bufts", "NULL (default buffer type of each backend)");
    j.eobj();

    j.key("backends");
    j.arr();
    for (int b = 0; b < 2; b++) {
        ggml_backend_buffer_type_t bt = ggml_backend_get_default_buffer_type(backends[b]);
        ggml_backend_dev_t dev = ggml_backend_get_device(backends[b]);
        j.obj();
        j.ki("priority", b);
        j.ks("name", bname(backends[b]));
        j.ks("kind", kinds[b]);
        j.ks("device", ggml_backend_dev_name(dev));
        enum ggml_backend_dev_type dt = ggml_backend_dev_type(dev);
        j.ks("device_type", dt == GGML_BACKEND_DEVICE_TYPE_CPU ? "CPU" : dt == GGML_BACKEND_DEVICE_TYPE_GPU ? "GPU" : "ACCEL");
        j.ks("buft", ggml_backend_buft_name(bt));
        j.kb("buft_is_host", ggml_backend_buft_is_host(bt));
        j.ki("buft_alignment", (long long) ggml_backend_buft_get_alignment(bt));
        j.key("supports_buft");
        j.obj();
        for (int b2 = 0; b2 < 2; b2++) {
            j.kb(ggml_backend_buft_name(ggml_backend_get_default_buffer_type(backends[b2])), ggml_backend_supports_buft(backends[b], ggml_backend_get_default_buffer_type(backends[b2])));
        }
        j.eobj();
        j.eobj();
    }
    j.earr();

    j.key("weight_buffers");
    j.arr();
    for (int k = 0; k < 2; k++) {
        for (int r : {0, 1}) {
            if (!m.buf[r][k]) continue;
            j.obj();
            j.ks("buft", ggml_backend_buft_name(bufts[r]));
            j.ks("usage", k ? "any" : "weights");
            j.ki("size", (long long) ggml_backend_buffer_get_size(m.buf[r][k]));
            j.key("tensors");
            j.arr();
            for (ggml_tensor * t = ggml_get_first_tensor(m.ctx[r][k]); t; t = ggml_get_next_tensor(m.ctx[r][k], t)) j.s(t->name);
            j.earr();
            j.eobj();
        }
    }
    j.earr();

    j.ks("fill_rule", "weights and kv cache: element i (flat memory order) of the tensor with init_index k = (float)(sin(i*0.01 + k)*0.1) computed in double; F16 tensors get ggml_fp32_to_fp16 of that value. init_index order = 'params' list below.");
    j.ks("input_rule", "inp_tokens[t]=(t*7+3)%n_vocab; inp_pos[t]=kv_head+t with kv_head=n_kv-n_tokens; KQ_mask[t*n_kv+j]=0 if j<=kv_head+t else -INF");
    j.key("params");
    j.arr();
    for (size_t k = 0; k < m.params.size(); k++) {
        j.obj();
        j.ki("init_index", (long long) k);
        j.ks("name", m.params[k].t->name);
        j.ks("kind", m.params[k].kind);
        j.eobj();
    }
    j.earr();
    j.ki("n_leafs", (long long) leafs.size());
    j.ki("n_nodes", n_nodes);

    auto tensor = [&](ggml_tensor * t, int index, bool node) {
        const Snapshot & s = before[t];
        j.obj();
        j.ki("index", index);
        j.ks("name", t->name);
        j.ks("op", op_name(t));
        j.ks("op_desc", ggml_op_desc(t));
        j.ks("type", ggml_type_name(t->type));
        long long ne[4], nb[4];
        for (int d = 0; d < 4; d++) {
            ne[d] = t->ne[d];
            nb[d] = (long long) t->nb[d];
        }
        j.key("ne");
        j.ints(ne, 4);
        j.key("nb");
        j.ints(nb, 4);
        j.ki("nbytes", (long long) ggml_nbytes(t));
        if (t->view_src) {
            j.ks("view_src", t->view_src->name);
            j.ki("view_offs", (long long) t->view_offs);
        }
        j.key("src");
        j.arr();
        for (int k = 0; k < GGML_MAX_SRC; k++) {
            if (node && !s.src[k].empty()) j.s(s.src[k]);
            else j.null();
        }
        j.earr();
        bool changed = false;
        if (node) {
            for (int k = 0; k < GGML_MAX_SRC; k++) {
                std::string now = t->src[k] ? t->src[k]->name : "";
                if (now != s.src[k]) changed = true;
            }
        }
        if (changed) {
            j.key("src_after_sched");
            j.arr();
            for (int k = 0; k < GGML_MAX_SRC; k++) {
                if (t->src[k]) j.s(t->src[k]->name);
                else j.null();
            }
            j.earr();
        }
        j.ki("flags_raw", s.flags);
        j.key("flags");
        j.arr();
        for (auto & f : flag_names(t)) j.s(f);
        j.earr();
        long long opp[8];
        for (int k = 0; k < 8; k++) opp[k] = ((const int32_t *) t->op_params)[k];
        j.key("op_params_i32");
        j.ints(opp, 8);
        ggml_backend_buffer_t pb = buf_of(t);
        j.key("prealloc");
        if (prealloc.count(pb)) {
            j.obj();
            j.ks("buft", prealloc[pb].first);
            j.ks("usage", prealloc[pb].second);
            j.kb("is_host", ggml_backend_buffer_is_host(pb));
            j.eobj();
        } else {
            j.null();
        }
        j.key("user_override");
        if (overridden.count(t)) j.s(bname(rpc));
        else j.null();
        j.ks("backend", bname(tb(t)));
        j.ki("backend_id", bid(tb(t)));
        j.ks("cause", tracerec_cause(sched, t));
        j.key("alloc");
        if (pb && t->data) {
            j.obj();
            j.ks("buft", ggml_backend_buft_name(ggml_backend_buffer_get_type(pb)));
            j.ks("usage", prealloc.count(pb) ? prealloc[pb].second : "compute");
            j.ki("offset", (long long) ((char *) t->data - (char *) ggml_backend_buffer_get_base(pb)));
            j.eobj();
        } else {
            j.null();
        }
        if (node) {
            j.key("supports_op");
            j.obj();
            for (int b = 0; b < 2; b++) j.kb(bname(backends[b]).c_str(), supports[t][b]);
            j.eobj();
            j.key("offload_op");
            j.obj();
            for (int b = 0; b < 2; b++) j.kb(bname(backends[b]).c_str(), offload[t][b]);
            j.eobj();
            j.kb("is_view_op", is_view_op(t->op));
            if (t->op == GGML_OP_MUL_MAT_ID && g_ids.count(t->name)) {
                // The experts the ids chose, [token][slot], as the node read them.
                const auto & ids = g_ids.at(t->name);
                const auto & sh = g_ids_shape.at(t->name);
                std::vector<long long> v;
                for (int64_t a1 = 0; a1 < sh[1]; a1++) {
                    for (int64_t a0 = 0; a0 < sh[0]; a0++) v.push_back(ids[a1 * sh[3] + a0 * sh[2]]);
                }
                j.key("ids_values");
                j.ints(v.data(), (int) v.size());
            }
        }
        j.eobj();
    };
    j.key("leafs");
    j.arr();
    for (size_t i = 0; i < leafs.size(); i++) tensor(leafs[i], (int) i, false);
    j.earr();
    j.key("nodes");
    j.arr();
    for (int i = 0; i < n_nodes; i++) tensor(nodes[i], i, true);
    j.earr();

    // The splits, with the bytes each input moved in the recorded eval: all
    // of it, or for an expert weight read first thing by the split's
    // MUL_MAT_ID from host memory, the ranges of the experts the ids chose
    // (ggml_backend_sched_compute_splits: consecutive used experts copied
    // together, each range but the one ending at the last expert with
    // min(expert_size, 512) bytes more).
    const int n_splits = tracerec_n_splits(sched), n_copies = tracerec_n_copies(sched);
    long long total_bytes = 0, total_moved = 0, to_device = 0, from_device = 0, ids_read = 0;
    ggml_tensor * prev_ids = nullptr; // ggml reads a split's ids unless the previous read was of the same tensor
    int total_inputs = 0;
    j.key("result");
    j.obj();
    j.ki("n_splits", n_splits);
    j.ki("n_copies", n_copies);
    j.ki("cur_copy", tracerec_cur_copy(sched));
    j.key("splits");
    j.arr();
    for (int k = 0; k < n_splits; k++) {
        int be, i0, i1, ni;
        tracerec_split(sched, k, &be, &i0, &i1, &ni);
        j.obj();
        j.ki("id", k);
        j.ks("backend", bname(backends[be]));
        j.ki("backend_id", be);
        j.ki("i_start", i0);
        j.ki("i_end", i1);
        j.ki("first_node", i0);
        j.ki("last_node", i1 - 1);
        j.ks("first_node_name", nodes[i0]->name);
        j.ks("last_node_name", nodes[i1 - 1]->name);
        j.ki("n_inputs", ni);
        j.key("inputs");
        j.arr();
        // ggml looks at the split graph's first node (views included).
        ggml_tensor * first = i1 > i0 ? nodes[i0] : nullptr;
        for (int q = 0; q < ni; q++) {
            ggml_tensor * t = tracerec_split_input(sched, k, q);
            ggml_backend_buffer_t pb = buf_of(t);
            bool weight = pb && ggml_backend_buffer_get_usage(pb) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS;
            ggml_tensor * cpy0 = tracerec_tensor_copy(sched, t, be, tracerec_cur_copy(sched));
            long long moved = (long long) ggml_nbytes(t);
            std::vector<std::pair<int, int>> ranges;
            bool partial = first && first->op == GGML_OP_MUL_MAT_ID && first->src[0] == cpy0 && weight &&
                           ggml_backend_buffer_is_host(pb) && !(t->flags & GGML_TENSOR_FLAG_INPUT);
            if (partial) {
                const auto & ids = g_ids.at(first->name);
                const auto & sh = g_ids_shape.at(first->name);
                const int64_t n_expert = t->ne[2];
                const long long esz = (long long) t->nb[2];
                std::vector<bool> used(n_expert);
                for (int64_t a1 = 0; a1 < sh[1]; a1++) {
                    for (int64_t a0 = 0; a0 < sh[0]; a0++) used[ids[a1 * sh[3] + a0 * sh[2]]] = true;
                }
                moved = 0;
                for (int e = 0; e < n_expert;) {
                    if (!used[e]) {
                        e++;
                        continue;
                    }
                    int f = e;
                    while (e + 1 < n_expert && used[e + 1]) e++;
                    ranges.push_back({f, e});
                    moved += (e - f + 1) * esz + (e < n_expert - 1 ? std::min<long long>(esz, 512) : 0);
                    e++;
                }
            }
            if (partial) {
                ggml_tensor * idt = first->src[2];
                for (int q2 = q + 1; q2 < ni; q2++) {
                    ggml_tensor * later = tracerec_split_input(sched, k, q2);
                    if (idt == tracerec_tensor_copy(sched, later, be, tracerec_cur_copy(sched))) idt = later;
                }
                if (idt != prev_ids) {
                    ggml_backend_buffer_t ib = buf_of(idt);
                    if (ib && !ggml_backend_buffer_is_host(ib)) ids_read += (long long) ggml_nbytes(idt);
                    prev_ids = idt;
                }
            }
            if (be == 0) to_device += moved;
            else from_device += moved;
            total_bytes += (long long) ggml_nbytes(t);
            total_moved += moved;
            total_inputs++;
            j.obj();
            j.ks("name", t->name);
            j.ki("bytes", (long long) ggml_nbytes(t));
            j.ki("bytes_moved", moved);
            if (partial) {
                j.key("expert_ranges");
                j.arr();
                for (auto & r : ranges) {
                    long long v[2] = {r.first, r.second};
                    j.ints(v, 2);
                }
                j.earr();
                j.ks("ids_from", first->src[2]->name);
            }
            j.ks("from_backend", bname(tb(t)));
            j.kb("is_leaf", t->op == GGML_OP_NONE);
            j.kb("is_weight", weight);
            j.kb("is_graph_input", (t->flags & GGML_TENSOR_FLAG_INPUT) != 0);
            j.key("copies");
            j.arr();
            for (int cc = 0; cc < n_copies; cc++) {
                ggml_tensor * cpy = tracerec_tensor_copy(sched, t, be, cc);
                j.obj();
                j.ks("name", cpy->name);
                j.ks("cause", tracerec_cause(sched, cpy));
                j.ks("alloc_buft", ggml_backend_buft_name(ggml_backend_buffer_get_type(cpy->buffer)));
                j.ki("alloc_offset", (long long) ((char *) cpy->data - (char *) ggml_backend_buffer_get_base(cpy->buffer)));
                j.eobj();
            }
            j.earr();
            j.eobj();
        }
        j.earr();
        j.eobj();
    }
    j.earr();
    j.ki("n_inputs_total", total_inputs);
    j.ki("bytes_copied_per_eval", total_bytes);
    // What moved to and from the device is measured on the wire: the split
    // inputs' bytes moved, as ggml's rule gives them from the ids, and the
    // ids ggml read back to choose the experts. A difference means the
    // recorder has the rule wrong.
    if (g_wire.set_bytes != to_device || g_wire.get_bytes != from_device + ids_read) {
        fprintf(stderr, "tracerec: %s: on the wire %lld bytes to the device and %lld back; the split inputs moved %lld and %lld, ggml read %lld of ids\n",
                c.name.c_str(), (long long) g_wire.set_bytes, (long long) g_wire.get_bytes, to_device, from_device, ids_read);
        return 1;
    }
    j.ki("bytes_moved_per_eval", total_moved);
    j.key("bytes_on_wire");
    j.obj();
    j.ki("to_device", g_wire.set_bytes);
    j.ki("from_device", g_wire.get_bytes);
    j.ki("ids_read", ids_read);
    j.eobj();
    j.key("graph_inputs_pp");
    j.arr();
    if (n_copies > 1) {
        for (int q = 0; q < tracerec_n_graph_inputs(sched); q++) j.s(tracerec_graph_input(sched, q)->name);
    }
    j.earr();
    j.key("compute_buffer_size");
    j.obj();
    for (int b = 0; b < 2; b++) j.ki(bname(backends[b]).c_str(), (long long) ggml_backend_sched_get_buffer_size(sched, backends[b]));
    j.eobj();
    ggml_cgraph * sg = tracerec_sched_graph(sched);
    j.key("sched_graph");
    j.obj();
    j.ki("n_nodes", ggml_graph_n_nodes(sg));
    j.ki("n_leafs", tracerec_sched_graph_n_leafs(sched));
    auto sgn = [&](ggml_tensor * t, int backend_id) {
        j.obj();
        j.ks("name", t->name);
        j.ks("op", op_name(t));
        j.ki("backend_id", backend_id);
        ggml_backend_buffer_t pb = buf_of(t);
        j.ks("buft", pb ? ggml_backend_buft_name(ggml_backend_buffer_get_type(pb)) : "");
        j.ki("offset", pb && t->data ? (long long) ((char *) t->data - (char *) ggml_backend_buffer_get_base(pb)) : -1);
        j.eobj();
    };
    j.key("nodes");
    j.arr();
    for (int i = 0; i < ggml_graph_n_nodes(sg); i++) sgn(ggml_graph_node(sg, i), tracerec_sched_node_backend_id(sched, i));
    j.earr();
    j.key("leafs");
    j.arr();
    for (int i = 0; i < tracerec_sched_graph_n_leafs(sched); i++) sgn(tracerec_sched_graph_leaf(sched, i), tracerec_sched_leaf_backend_id(sched, i));
    j.earr();
    j.eobj();
    j.eobj();

    double sum = 0, sum_abs = 0, wsum = 0;
    for (size_t i = 0; i < result.size(); i++) {
        sum += result[i];
        sum_abs += fabs(result[i]);
        wsum += result[i] * (double) ((i % 13) + 1);
    }
    j.key("output");
    j.obj();
    j.ks("tensor", out->name);
    long long one[4] = {out->ne[0], out->ne[1], out->ne[2], out->ne[3]};
    j.key("ne");
    j.ints(one, 4);
    j.key("first16");
    j.arr();
    for (size_t i = 0; i < 16 && i < result.size(); i++) j.f(result[i]);
    j.earr();
    j.kf("sum", sum);
    j.kf("sum_abs", sum_abs);
    j.kf("weighted_sum_i_mod13_plus1", wsum);
    j.ks("checksum_rule", "sum = sum_i v[i]; sum_abs = sum_i |v[i]|; weighted = sum_i v[i]*((i%13)+1); all in double over flat memory order");
    j.key("values");
    j.arr();
    for (float v : result) j.f(v);
    j.earr();
    j.eobj();
    j.ks("sched_debug_log", sched_log);
    j.eobj();
    j.out += '\n';

    // The proxy's endpoint, in the backend's and buffer type's names, back
    // to the server's.
    const std::string proxied = "127.0.0.1:" + std::to_string(g_wire.port);
    auto unproxy = [&](std::string & text) {
        for (size_t at = 0; (at = text.find(proxied, at)) != std::string::npos; at += rpc_ep.size()) {
            text.replace(at, proxied.size(), rpc_ep);
        }
    };
    unproxy(j.out);
    unproxy(sched_log);

    FILE * fo = fopen(out_path.c_str(), "w");
    if (!fo) {
        perror(out_path.c_str());
        return 1;
    }
    fputs(j.out.c_str(), fo);
    fclose(fo);
    std::string dbg = out_path.substr(0, out_path.size() - (out_path.size() > 5 && out_path.compare(out_path.size() - 5, 5, ".json") == 0 ? 5 : 0)) + ".sched_debug.txt";
    FILE * fd = fopen(dbg.c_str(), "w");
    if (fd) {
        fputs(sched_log.c_str(), fd);
        fclose(fd);
    }

    ggml_backend_sched_free(sched);
    ggml_free(gctx);
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 2; k++) {
            if (m.buf[r][k]) ggml_backend_buffer_free(m.buf[r][k]);
            ggml_free(m.ctx[r][k]);
        }
    }
    ggml_backend_free(cpu);
    ggml_backend_free(rpc);
    return 0;
}
