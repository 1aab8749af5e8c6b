// harness drives llama.cpp's libllama for graphc's tests: it tokenizes a
// prompt every way llama_tokenize can and, unless -vocab-only, evaluates
// prompt tokens and greedy decode steps, printing JSON on stdout.
//
// The declarations below are written for graphc from llama.h's documented
// API; nothing of llama.cpp is copied. The model is loaded whole, with the
// library's default parameters (so the file needs its tensors even for
// tokenizing): setting vocab_only would need the struct's layout.
//
//	harness MODEL -prompt-file F [-tokens 1,2,3 -n STEPS [-follow 4,5,6] [-all] [-dump DIR]] [-ngl N] [-libdir DIR]
//	harness MODEL -bench [-fa] [-ctk T -ctv T] [-ctx N] [-libdir DIR]
//	harness -scores DIR
//	harness -quantize IN OUT FTYPE [-pure]
//
// -bench is a timing mode, llama-bench's tests driven over stdin: each
// line "pp N" (one batch of N prompt tokens, N <= 512, the default
// context's size), "tg N" (N single-token decodes, the KV cache growing
// from empty), "bd S N" (S sequences of N tokens each, decoded together:
// N batches of one token of each, as llama-batched-bench's generation
// phase; S <= 8, N <= 512), "ttft N" (a prompt of N tokens to its first
// token, the argmax of its logits), "depth D" or "threads T" is answered by one
// JSON line on stdout, the tests' with their seconds. Each test starts
// from the cache "depth D" left: D prompt tokens (llama-bench's -d),
// evaluated in batches of up to 512, untimed, once; a test's own tokens
// are removed after it (llama_memory_seq_rm), so every test finds the same
// D tokens. -ctx sizes the context (512 by default; at least D plus the
// longest test), -fa turns flash attention on and -ctk/-ctv set the
// cache's types, as for the logits.
//
// -scores prints, as one JSON object, ggml's score of each CPU build in DIR
// (libggml-cpu-NAME.so: NAME, the value its ggml_backend_score returns):
// 0 where this processor lacks an instruction the build needs, else the
// higher the better the match. ggml loads the best of those in -libdir.
//
// -all asks for the logits of every prompt token, printed as
// "prompt_logits", one row a token; otherwise llama.cpp computes only the
// last token's (its graph selects that row before the last layer's FFN).
//
// -follow decodes the listed tokens as the steps instead of each step's
// greedy token (which "generated" still reports), so that two runs that
// would pick different tokens evaluate the same ones.
//
// -ngl N puts the last N layers on the GPU (llama.cpp's -ngl), for a
// harness built against a GPU build of llama.cpp.
//
// -quantize is llama-quantize without its options: llama_model_quantize
// of IN to OUT with the library's default parameters (no importance
// matrix, no overrides) but ftype, FTYPE's llama_ftype number, nthread,
// 1, and with -pure pure (llama-quantize --pure: no mix, every
// quantizable tensor FTYPE's default type but where a fallback is needed).
//
// -dump writes every contiguous f32 tensor each evaluation computes to
// DIR/E/NAME, E counting evaluations from 0 (the prompt's batch) and NAME
// ggml's (e.g. Qcur-0): four little-endian int64 dims, ne0 first, then the
// floats. A name ggml gives several tensors of an evaluation (Qcur-0 is the
// product, then the biased and the rotated query) is the first's; the
// later ones are NAME#2, NAME#3 and so on. It needs the eval callback's place in the
// context parameters, known only for the release of flash_attn_off.

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <time.h>

typedef int32_t llama_token;
typedef int32_t llama_pos;
typedef int32_t llama_seq_id;
struct llama_model;
struct llama_context;
struct llama_vocab;

// The parameter structs and llama_batch are opaque here: the harness only
// passes on what the library returns, so their layout, which changes from
// release to release, does not matter. The buffers are larger than any
// release's structs; by value they travel in memory, where a larger
// buffer's tail is ignored.
struct llama_model_params {
	unsigned char opaque[1024];
};
struct llama_context_params {
	unsigned char opaque[1024];
};
struct llama_batch {
	unsigned char opaque[512];
};
struct llama_model_quantize_params {
	unsigned char opaque[256];
};
struct ggml_tensor;
typedef bool (*eval_callback)(struct ggml_tensor *t, bool ask, void *user_data);

typedef void (*log_callback)(int level, const char *text, void *user_data);

void ggml_backend_load_all_from_path(const char *dir);
void llama_backend_init(void);
void llama_log_set(log_callback cb, void *user_data);
struct llama_model_params llama_model_default_params(void);
struct llama_context_params llama_context_default_params(void);
struct llama_model *llama_model_load_from_file(const char *path, struct llama_model_params params);
const struct llama_vocab *llama_model_get_vocab(const struct llama_model *model);
int32_t llama_vocab_n_tokens(const struct llama_vocab *vocab);
int32_t llama_tokenize(const struct llama_vocab *vocab, const char *text, int32_t text_len,
		       llama_token *tokens, int32_t n_tokens_max, bool add_special, bool parse_special);
struct llama_context *llama_init_from_model(struct llama_model *model, struct llama_context_params params);
struct llama_batch llama_batch_get_one(llama_token *tokens, int32_t n_tokens);
struct llama_batch llama_batch_init(int32_t n_tokens, int32_t embd, int32_t n_seq_max);
void llama_batch_free(struct llama_batch batch);
int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch);
float *llama_get_logits_ith(struct llama_context *ctx, int32_t i);
void llama_set_n_threads(struct llama_context *ctx, int32_t n_threads, int32_t n_threads_batch);
void *llama_get_memory(const struct llama_context *ctx);
void llama_memory_clear(void *mem, bool data);
bool llama_memory_seq_rm(void *mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1);
void llama_synchronize(struct llama_context *ctx);
struct llama_model_quantize_params llama_model_quantize_default_params(void);
uint32_t llama_model_quantize(const char *fname_inp, const char *fname_out, const struct llama_model_quantize_params *params);
const char *ggml_get_name(const struct ggml_tensor *t);
size_t ggml_nbytes(const struct ggml_tensor *t);
bool ggml_is_contiguous(const struct ggml_tensor *t);
void ggml_backend_tensor_get(const struct ggml_tensor *t, void *data, size_t offset, size_t size);

static void quiet(int level, const char *text, void *user_data) {
	(void)user_data;
	if (level == 3 || level == 4) { // GGML_LOG_LEVEL_WARN, _ERROR
		fputs(text, stderr);
	}
}

static void die(const char *msg) {
	fprintf(stderr, "harness: %s\n", msg);
	exit(1);
}

static char *read_file(const char *path, long *len) {
	FILE *f = fopen(path, "rb");
	if (!f) die("cannot open the prompt file");
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(*len + 1);
	if (fread(buf, 1, *len, f) != (size_t)*len) die("cannot read the prompt file");
	buf[*len] = 0;
	fclose(f);
	return buf;
}

static int32_t field(const struct llama_context_params *p, int off) {
	int32_t v;
	memcpy(&v, p->opaque + off, 4);
	return v;
}

// set_gpu_layers sets n_gpu_layers where the model parameters are laid out
// as in the release flash_attn_off knows: two pointers (devices, tensor
// buffer overrides, NULL by default), then n_gpu_layers (-1, the
// library's default) and split_mode (LLAMA_SPLIT_MODE_LAYER, 1).
static bool set_gpu_layers(struct llama_model_params *p, int32_t n) {
	static const unsigned char zero[16];
	int32_t ngl, split;
	memcpy(&ngl, p->opaque + 16, 4);
	memcpy(&split, p->opaque + 20, 4);
	if (memcmp(p->opaque, zero, 16) || ngl != -1 || split != 1) return false;
	memcpy(p->opaque + 16, &n, 4);
	return true;
}

// output_all marks every token of a batch from llama_batch_get_one as an
// output, in llama_batch's layout: n_tokens, then the token, embd, pos,
// n_seq_id and seq_id pointers, then the int8 logits flags at 48 (NULL:
// the last token only).
static bool output_all(struct llama_batch *b, int8_t *flags, int n) {
	static const unsigned char zero[8];
	int32_t nt;
	memcpy(&nt, b->opaque, 4);
	if (nt != n || memcmp(b->opaque + 48, zero, 8)) return false;
	for (int i = 0; i < n; i++) flags[i] = 1;
	memcpy(b->opaque + 48, &flags, sizeof flags);
	return true;
}

// flash_attn_off turns flash attention off where the context parameters
// are laid out as in the release @node-llama-cpp/linux-x64@3.22.1 carries:
// n_ctx 512, n_batch 2048, n_ubatch 512 at offsets 0, 4, 8, and the
// rope-scaling, pooling, attention and flash-attention types, all -1
// (unspecified, auto), at 40 to 52. Flash attention sums in f16 on the CPU,
// which costs about 2e-3 in these tests' logits; graphc's graph is the
// plain softmax path. Elsewhere the default stays and the caller is told.
static bool flash_attn_off(struct llama_context_params *p) {
	if (field(p, 0) != 512 || field(p, 4) != 2048 || field(p, 8) != 512) return false;
	for (int off = 40; off <= 52; off += 4)
		if (field(p, off) != -1) return false;
	int32_t disabled = 0;
	memcpy(p->opaque + 52, &disabled, 4);
	return true;
}

// flash_attn_on turns flash attention on (flash_attn_type 1, enabled) in
// the layout flash_attn_off knows, for comparing graphc's -fa on.
static bool flash_attn_on(struct llama_context_params *p) {
	if (!flash_attn_off(p)) return false;
	int32_t enabled = 1;
	memcpy(p->opaque + 52, &enabled, 4);
	return true;
}

// set_eval_callback installs cb in the layout flash_attn_off knows:
// cb_eval and its user data at 88 and 96 (both NULL by default), then
// type_k and type_v, f16 (1) by default.
static bool set_eval_callback(struct llama_context_params *p, eval_callback cb, void *user_data) {
	static const unsigned char zero[16];
	if (memcmp(p->opaque + 88, zero, 16) || field(p, 104) != 1 || field(p, 108) != 1) return false;
	memcpy(p->opaque + 88, &cb, sizeof cb);
	memcpy(p->opaque + 96, &user_data, sizeof user_data);
	return true;
}

// set_cache_types sets type_k and type_v (ggml type ids; -1 keeps f16) in
// the layout set_eval_callback knows, for comparing graphc's -ctk and -ctv.
static bool set_cache_types(struct llama_context_params *p, int32_t type_k, int32_t type_v) {
	if (field(p, 0) != 512 || field(p, 104) != 1 || field(p, 108) != 1) return false;
	if (type_k >= 0) memcpy(p->opaque + 104, &type_k, 4);
	if (type_v >= 0) memcpy(p->opaque + 108, &type_v, 4);
	return true;
}

// The ggml_tensor fields dump reads: its type first, its dims after the
// buffer pointer; ggml.h has kept them there since the backend API began.
static int32_t tensor_type(const struct ggml_tensor *t) {
	int32_t v;
	memcpy(&v, t, 4);
	return v;
}

static const int64_t *tensor_ne(const struct ggml_tensor *t) { return (const int64_t *)((const char *)t + 16); }

// dumping is -dump's state: the directory and the evaluation.
struct dumping {
	const char *dir;
	int eval;
};

// dump is the eval callback of -dump.
static bool dump(struct ggml_tensor *t, bool ask, void *user_data) {
	const struct dumping *d = user_data;
	bool want = tensor_type(t) == 0 && ggml_is_contiguous(t) && ggml_get_name(t)[0] && !strchr(ggml_get_name(t), '/');
	if (ask || !want) return ask ? want : true;
	char path[4096];
	snprintf(path, sizeof path, "%s/%d", d->dir, d->eval);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%d/%s", d->dir, d->eval, ggml_get_name(t));
	struct stat st;
	for (int k = 2; stat(path, &st) == 0; k++)
		snprintf(path, sizeof path, "%s/%d/%s#%d", d->dir, d->eval, ggml_get_name(t), k);
	FILE *f = fopen(path, "wb");
	if (!f) die("-dump: cannot create a file in the directory");
	size_t n = ggml_nbytes(t);
	void *buf = malloc(n);
	ggml_backend_tensor_get(t, buf, 0, n);
	if (fwrite(tensor_ne(t), 8, 4, f) != 4 || fwrite(buf, 1, n, f) != n || fclose(f)) die("-dump: cannot write");
	free(buf);
	return true;
}

// parse_ids reads up to 64 comma-separated token ids into ids.
static int parse_ids(const char *arg, llama_token *ids) {
	int n = 0;
	for (char *s = (char *)arg; *s && n < 64;) {
		ids[n++] = (llama_token)strtol(s, &s, 10);
		if (*s == ',') s++;
	}
	return n;
}

static void print_ids(const char *name, const llama_token *ids, int n) {
	printf("\"%s\":[", name);
	for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
	printf("]");
}

static void print_floats(const float *v, int n) {
	printf("[");
	for (int i = 0; i < n; i++) printf("%s%.9g", i ? "," : "", v[i]);
	printf("]");
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// set_seqs sets n_ctx and n_seq_max (at 0 and 12, 512 and 1 by default)
// in the layout flash_attn_off knows, for "bd": each sequence gets
// n_ctx / n_seq_max cache cells.
static bool set_seqs(struct llama_context_params *p, int32_t n_ctx, int32_t n_seq_max) {
	if (field(p, 0) != 512 || field(p, 12) != 1) return false;
	memcpy(p->opaque, &n_ctx, 4);
	memcpy(p->opaque + 12, &n_seq_max, 4);
	return true;
}

// batch_fields are the arrays of a llama_batch from llama_batch_init,
// llama.h's layout: n_tokens, then the token, embd, pos, n_seq_id, seq_id
// and logits pointers.
struct batch_fields {
	llama_token *token;
	llama_pos *pos;
	int32_t *n_seq_id;
	llama_seq_id **seq_id;
	int8_t *logits;
};

static struct batch_fields batch_fields(struct llama_batch *b) {
	struct batch_fields f;
	memcpy(&f.token, b->opaque + 8, 8);
	memcpy(&f.pos, b->opaque + 24, 8);
	memcpy(&f.n_seq_id, b->opaque + 32, 8);
	memcpy(&f.seq_id, b->opaque + 40, 8);
	memcpy(&f.logits, b->opaque + 48, 8);
	if (!f.token || !f.pos || !f.n_seq_id || !f.seq_id || !f.logits) die("bd: this release's llama_batch is laid out unlike the one the harness knows");
	return f;
}

// batched is "bd S N" on its own context (bctx, made on first use with
// room for 8 sequences of 512 tokens in one cache): N evaluations of S
// tokens, one of each sequence, every one an output.
static double batched(struct llama_model *model, struct llama_context **bctx, int threads, int seqs, int n, int n_vocab) {
	if (!*bctx) {
		struct llama_context_params cp = llama_context_default_params();
		flash_attn_off(&cp);
		if (!set_seqs(&cp, 4096, 8)) die("bd: the harness does not know this release's context parameters");
		*bctx = llama_init_from_model(model, cp);
		if (!*bctx) die("llama_init_from_model failed");
	}
	struct llama_context *ctx = *bctx;
	llama_set_n_threads(ctx, threads, threads);
	llama_memory_clear(llama_get_memory(ctx), true);
	struct llama_batch b = llama_batch_init(seqs, 0, 1);
	struct batch_fields f = batch_fields(&b);
	double t0 = now();
	for (int p = 0; p < n; p++) {
		memcpy(b.opaque, &seqs, 4);
		for (int s = 0; s < seqs; s++) {
			f.token[s] = (llama_token)(((p * seqs + s) * 7 + 3) % n_vocab);
			f.pos[s] = p;
			f.n_seq_id[s] = 1;
			f.seq_id[s][0] = s;
			f.logits[s] = 1;
		}
		if (llama_decode(ctx, b)) die("llama_decode of a batched step failed");
	}
	llama_synchronize(ctx);
	double secs = now() - t0;
	llama_batch_free(b);
	return secs;
}

// bench is -bench: llama-bench's pp and tg tests on one context (the
// default parameters but n_ctx; flash attention off where flash_attn_off
// can, unless fa_on), timed as llama-bench times them, from the first
// llama_decode to llama_synchronize after the last. The tokens are
// (i*7+3) % n_vocab, the fill of graphc's llama example.
static void bench(struct llama_model *model, int n_vocab, int n_ctx, bool fa_on, int type_k, int type_v) {
	struct llama_context_params cp = llama_context_default_params();
	bool fa_set = fa_on ? flash_attn_on(&cp) : flash_attn_off(&cp);
	if ((type_k >= 0 || type_v >= 0) && !set_cache_types(&cp, type_k, type_v)) die("-ctk, -ctv: this release's context parameters are laid out unlike the one the harness knows");
	if (n_ctx != 512 && !set_seqs(&cp, n_ctx, 1)) die("-ctx: this release's context parameters are laid out unlike the one the harness knows");
	struct llama_context *ctx = llama_init_from_model(model, cp);
	if (!ctx) die("llama_init_from_model failed");
	void *mem = llama_get_memory(ctx);
	int threads = 1;
	llama_set_n_threads(ctx, threads, threads);
	enum { max_tokens = 512 };
	static llama_token toks[max_tokens];
	for (int i = 0; i < max_tokens; i++) toks[i] = (llama_token)((i * 7 + 3) % n_vocab);
	printf("{\"n_vocab\":%d,\"flash_attn_off\":%s,\"flash_attn_set\":%s}\n", n_vocab, fa_set && !fa_on ? "true" : "false", fa_set ? "true" : "false");
	fflush(stdout);
	struct llama_context *bctx = NULL;
	int depth = 0;
	char line[128], kind[16];
	while (fgets(line, sizeof line, stdin)) {
		int n, seqs;
		if (sscanf(line, "bd %d %d", &seqs, &n) == 2) {
			if (seqs < 1 || seqs > 8 || n < 1 || n > 512) die("-bench: bd S N: want 1 <= S <= 8 and 1 <= N <= 512");
			double secs = batched(model, &bctx, threads, seqs, n, n_vocab);
			printf("{\"test\":\"bd\",\"n\":%d,\"seqs\":%d,\"threads\":%d,\"seconds\":%.9f}\n", n, seqs, threads, secs);
			fflush(stdout);
			continue;
		}
		if (sscanf(line, "%15s %d", kind, &n) != 2 || n < 0) die("-bench: want lines pp N, tg N, bd S N, depth D or threads T");
		if (!strcmp(kind, "threads")) {
			threads = n;
			llama_set_n_threads(ctx, threads, threads);
			printf("{\"threads\":%d}\n", threads);
			fflush(stdout);
			continue;
		}
		if (!strcmp(kind, "depth")) {
			if (n + 1 > n_ctx) die("-bench: depth D: the context (-ctx) holds fewer tokens");
			llama_memory_clear(mem, true);
			double t0 = now();
			static llama_token chunk[max_tokens];
			for (int p = 0; p < n; p += max_tokens) {
				int m = n - p < max_tokens ? n - p : max_tokens;
				for (int i = 0; i < m; i++) chunk[i] = (llama_token)(((p + i) * 7 + 3) % n_vocab);
				if (llama_decode(ctx, llama_batch_get_one(chunk, m))) die("llama_decode of the depth's batch failed");
			}
			llama_synchronize(ctx);
			depth = n;
			printf("{\"test\":\"depth\",\"n\":%d,\"threads\":%d,\"seconds\":%.9f}\n", n, threads, now() - t0);
			fflush(stdout);
			continue;
		}
		if (n < 1 || n > max_tokens) die("-bench: 1 to 512 tokens a test");
		if (depth + n > n_ctx) die("-bench: the depth and the test's tokens are more than the context (-ctx) holds");
		if (depth == 0) llama_memory_clear(mem, true);
		else if (!llama_memory_seq_rm(mem, -1, depth, -1)) die("llama_memory_seq_rm failed");
		double t0 = now();
		if (!strcmp(kind, "pp")) {
			if (llama_decode(ctx, llama_batch_get_one(toks, n))) die("llama_decode of the batch failed");
		} else if (!strcmp(kind, "tg")) {
			for (int i = 0; i < n; i++)
				if (llama_decode(ctx, llama_batch_get_one(&toks[i], 1))) die("llama_decode of a step failed");
		} else if (!strcmp(kind, "ttft")) {
			if (llama_decode(ctx, llama_batch_get_one(toks, n))) die("llama_decode of the prompt failed");
			const float *logits = llama_get_logits_ith(ctx, -1);
			if (!logits) die("llama_get_logits_ith returned no logits");
			int best = 0;
			for (int i = 1; i < n_vocab; i++)
				if (logits[i] > logits[best]) best = i;
			volatile int token = best; // the argmax is part of the time: keep it
			(void)token;
		} else {
			die("-bench: want lines pp N, tg N, bd S N, depth D or threads T");
		}
		llama_synchronize(ctx);
		double secs = now() - t0;
		printf("{\"test\":\"%s\",\"n\":%d,\"threads\":%d,\"seconds\":%.9f}\n", kind, n, threads, secs);
		fflush(stdout);
	}
}

// quantize is -quantize. The parameters are set where the release
// @node-llama-cpp/linux-x64@3.22.1 carries lays them out: nthread and
// ftype, int32 at 0 and 4, then output_tensor_type and
// token_embedding_type at 8 and 12 (GGML_TYPE_COUNT, 43, by default: the
// quantizer's choice), then the bools allow_requantize and
// quantize_output_tensor (false, true), only_copy and pure (false) at 16
// to 19. The defaults are checked before anything is set, as
// flash_attn_off does.
static int quantize(const char *in, const char *out, int ftype, bool pure) {
	struct llama_model_quantize_params p = llama_model_quantize_default_params();
	int32_t v[4];
	memcpy(v, p.opaque, sizeof v);
	if (v[0] != 0 || v[1] != 7 || v[2] != 43 || v[3] != 43 || p.opaque[16] != 0 || p.opaque[17] != 1 || p.opaque[18] != 0 || p.opaque[19] != 0)
		die("-quantize: this release's quantize parameters are laid out unlike the one the harness knows");
	int32_t nthread = 1;
	memcpy(p.opaque + 0, &nthread, 4);
	p.opaque[19] = pure;
	memcpy(p.opaque + 4, &ftype, 4);
	if (llama_model_quantize(in, out, &p) != 0) die("llama_model_quantize failed");
	return 0;
}

// scores is -scores.
static int scores(const char *dir) {
	DIR *d = opendir(dir);
	if (!d) die("-scores: cannot read the directory");
	const char *prefix = "libggml-cpu-";
	size_t np = strlen(prefix);
	printf("{");
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, np) || len < np + 4 || strcmp(e->d_name + len - 3, ".so")) continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		int (*score)(void) = lib ? (int (*)(void))dlsym(lib, "ggml_backend_score") : NULL;
		printf("%s\"%.*s\":%d", n++ ? "," : "", (int)(len - np - 3), e->d_name + np, score ? score() : 0);
		if (lib) dlclose(lib);
	}
	closedir(d);
	printf("}\n");
	return 0;
}

int main(int argc, char **argv) {
	if (argc == 3 && !strcmp(argv[1], "-scores")) return scores(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "-quantize")) {
		if (argc == 6 && strcmp(argv[5], "-pure")) die("usage: harness -quantize IN OUT FTYPE [-pure]");
		llama_log_set(quiet, NULL);
		llama_backend_init();
		return quantize(argv[2], argv[3], atoi(argv[4]), argc == 6);
	}
	if (argc < 2) die("usage: harness MODEL -prompt-file F [-tokens 1,2,3 -n STEPS] [-libdir DIR] | MODEL -bench [-fa] [-ctk T -ctv T] [-ctx N] [-libdir DIR]");
	const char *model_path = argv[1], *prompt_path = NULL, *tokens_arg = NULL, *libdir = NULL, *dump_dir = NULL, *follow_arg = NULL;
	int steps = 0, ngl = -1, n_ctx = 512;
	bool bench_mode = false, all = false;
	bool fa_on = false; // -fa: flash attention on (flash_attn_on)
	int type_k = -1, type_v = -1; // -ctk, -ctv: the KV cache's ggml types (set_cache_types)
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-bench")) bench_mode = true;
		else if (!strcmp(argv[i], "-prompt-file") && i + 1 < argc) prompt_path = argv[++i];
		else if (!strcmp(argv[i], "-tokens") && i + 1 < argc) tokens_arg = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc) steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-libdir") && i + 1 < argc) libdir = argv[++i];
		else if (!strcmp(argv[i], "-dump") && i + 1 < argc) dump_dir = argv[++i];
		else if (!strcmp(argv[i], "-ngl") && i + 1 < argc) ngl = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-all")) all = true;
		else if (!strcmp(argv[i], "-fa")) fa_on = true;
		else if (!strcmp(argv[i], "-ctk") && i + 1 < argc) type_k = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-ctv") && i + 1 < argc) type_v = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-follow") && i + 1 < argc) follow_arg = argv[++i];
		else if (!strcmp(argv[i], "-ctx") && i + 1 < argc) n_ctx = atoi(argv[++i]);
		else die("unknown argument");
	}
	if (steps < 0 || steps > 63) die("-n: 0 to 63 steps");
	llama_log_set(quiet, NULL);
	if (libdir) ggml_backend_load_all_from_path(libdir);
	llama_backend_init();

	struct llama_model_params mp = llama_model_default_params();
	if (ngl >= 0 && !set_gpu_layers(&mp, ngl)) die("-ngl: this release's model parameters are laid out unlike the one the harness knows");
	struct llama_model *model = llama_model_load_from_file(model_path, mp);
	if (!model) die("llama_model_load_from_file failed");
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	int n_vocab = llama_vocab_n_tokens(vocab);
	if (bench_mode) {
		if (n_ctx < 1) die("-ctx: want a positive number of tokens");
		bench(model, n_vocab, n_ctx, fa_on, type_k, type_v);
		return 0;
	}

	printf("{\"n_vocab\":%d", n_vocab);
	if (prompt_path) {
		long len;
		char *prompt = read_file(prompt_path, &len);
		int cap = (int)len + 16;
		llama_token *ids = malloc(sizeof(llama_token) * cap);
		const char *names[4] = {"ids", "ids_add", "ids_parse", "ids_add_parse"};
		for (int mode = 0; mode < 4; mode++) {
			int n = llama_tokenize(vocab, prompt, (int32_t)len, ids, cap, mode & 1, mode & 2);
			if (n < 0) die("llama_tokenize: buffer too small");
			printf(",");
			print_ids(names[mode], ids, n);
		}
		free(ids);
		free(prompt);
	}
	if (tokens_arg) {
		llama_token toks[64], follow[64];
		int n = parse_ids(tokens_arg, toks), n_follow = follow_arg ? parse_ids(follow_arg, follow) : 0;
		if (follow_arg && n_follow != steps) die("-follow: one token a step");
		// The default context holds 512 tokens and takes them in one batch.
		struct llama_context_params cp = llama_context_default_params();
		bool fa_set = fa_on ? flash_attn_on(&cp) : flash_attn_off(&cp);
		if ((type_k >= 0 || type_v >= 0) && !set_cache_types(&cp, type_k, type_v)) die("-ctk, -ctv: this release's context parameters are laid out unlike the one the harness knows");
		struct dumping dumping = {dump_dir, 0};
		if (dump_dir && !set_eval_callback(&cp, dump, &dumping)) die("-dump: this release's context parameters are laid out unlike the one the harness knows");
		struct llama_context *ctx = llama_init_from_model(model, cp);
		if (!ctx) die("llama_init_from_model failed");
		llama_set_n_threads(ctx, 2, 2);
		struct llama_batch prompt = llama_batch_get_one(toks, n);
		int8_t flags[64];
		if (all && !output_all(&prompt, flags, n)) die("-all: this release's llama_batch is laid out unlike the one the harness knows");
		if (llama_decode(ctx, prompt)) die("llama_decode of the prompt failed");
		if (all) {
			printf(",\"prompt_logits\":[");
			for (int i = 0; i < n; i++) {
				const float *logits = llama_get_logits_ith(ctx, i);
				if (!logits) die("llama_get_logits_ith returned no logits");
				printf("%s", i ? "," : "");
				print_floats(logits, n_vocab);
			}
			printf("]");
		}
		llama_token generated[64];
		printf(",\"logits\":[");
		for (int step = 0; step <= steps && step < 64; step++) {
			const float *logits = llama_get_logits_ith(ctx, -1);
			if (!logits) die("llama_get_logits_ith returned no logits");
			printf("%s", step ? "," : "");
			print_floats(logits, n_vocab);
			if (step == steps) break;
			llama_token best = 0;
			for (int i = 1; i < n_vocab; i++)
				if (logits[i] > logits[best]) best = i;
			generated[step] = best;
			dumping.eval++;
			llama_token *next = follow_arg ? &follow[step] : &generated[step];
			if (llama_decode(ctx, llama_batch_get_one(next, 1))) die("llama_decode of a step failed");
		}
		printf("],\"flash_attn_set\":%s,", fa_set ? "true" : "false");
		print_ids("generated", generated, steps);
	}
	printf("}\n");
	return 0;
}
