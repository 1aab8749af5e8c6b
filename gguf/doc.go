// Package gguf reads and writes GGUF files, the model format of ggml and
// llama.cpp, so that graphc's generated models can run on real weights.
//
// The format is GGUF as ggml-org/ggml docs/gguf.md specifies it: the magic
// "GGUF", a version, the tensor and metadata counts, the metadata pairs
// (scalars, strings and arrays, arrays nested), the tensor infos (name,
// shape, ggml type, data offset), padding to general.alignment (32 by
// default) and the data section. Versions 2 and 3 are read (they differ
// only in that 3 may be big-endian, which is detected and refused);
// version 1 is refused with a message. Writer writes version 3.
//
// # Reading
//
// Open maps a file read-only and validates it; Mapped.Data and
// Mapped.Weights hand out tensor data as slices of the mapping, so a model
// of any size loads in the time it takes to read its header, and its
// pages are shared with the page cache:
//
//	m, err := gguf.Open("model.gguf")
//	...
//	defer m.Close()
//	weights, err := m.Weights(llama.Weights) // llama.cpp tensor names as they are
//	...
//	model, err := llama.New(weights, 0)
//
// Parse validates a file behind any io.ReaderAt without mapping it.
//
// # Validation
//
// Parse trusts nothing in the file. Every count and length is checked
// against the bytes left before anything is read or allocated, so a
// hostile header cannot cause a huge allocation, an out-of-range read or a
// panic (FuzzParse checks this). It refuses: a bad magic, an unsupported
// version, truncation anywhere, empty or duplicate metadata keys, unknown
// value types, bools other than 0 and 1, arrays nested more than
// MaxArrayDepth deep, a general.alignment that is not a u32 power of two,
// and, for each tensor, a duplicate or over-long name, n_dims outside 1…4,
// a dimension of 0 or past int64, an element count or byte size past
// int64, an unknown ggml type, ne0 not a multiple of the type's block
// size, a data offset not a multiple of the alignment, and data that ends
// past the end of the file or overlaps another tensor's. All tensor
// problems are reported at once, each a *FormatError naming the file, the
// tensor, and what was expected and found.
//
// Parse is stricter than ggml's gguf_init_from_file where the spec calls
// a file invalid or no ggml writer produces it: it refuses n_dims = 0 and
// dimensions of 0 (ggml accepts empty tensors), bools other than 0 and 1,
// and keys over 65535 bytes. It is more lenient where the spec allows
// more than ggml reads: tensor offsets may come in any order, with gaps
// (ggml insists on its own writer's layout), and arrays may nest (ggml
// refuses arrays of arrays).
//
// # Writing
//
// Writer writes files; AddTensorFunc produces a tensor's data while the
// file is written, so a file of gigabytes is never in memory. Vocab gives
// a test file a small tokenizer vocabulary llama.cpp loads (its doc shows
// the layout: SentencePiece with byte fallback, or byte-level BPE with
// merges). CheckMeta checks a file's metadata against the values a
// generated model was compiled for.
//
// # Quantized files as llama.cpp writes them
//
// Mix is llama.cpp's choice of each tensor's type when llama-quantize
// quantizes a model to a file type (FileType, general.file_type: q4_K_m,
// q6_K, iq4_xs, …): the rules of src/llama-quant.cpp's
// llama_tensor_get_type without an importance matrix, as tables (the file
// types and their per-category rules, the categories by name, the names
// never quantized, the fallbacks for rows that are not whole blocks).
// QuantizedMeta is the metadata the quantizer writes and LoaderCompare the
// order of its tensors, so that a writer can produce its file byte for
// byte (gguf/ggufarch does; internal/llamacpp checks it against
// llama_model_quantize).
//
// # Why our own reader
//
// Go has GGUF libraries, github.com/gpustack/gguf-parser-go the most
// complete. We wrote this small package instead because graphc needs
// exactly what such a library is not built around: tensor data as
// zero-copy slices of a read-only mapping handed straight to generated
// code; validation strict enough that a corrupt or hostile file is an
// error naming the tensor, never a panic or an out-of-range slice, proven
// by a fuzzer we run against our own code; ggml's type traits as the one
// source of tensor sizes; and no new module dependency for some 1,500
// lines of format code that the spec describes completely (gguf-parser-go
// requires eleven modules, among them HTTP and JSON libraries for its
// remote-file and estimation features, which graphc does not need). mmap is the standard library's syscall.Mmap on
// Linux and macOS, with a portable fallback that reads the file.
package gguf
