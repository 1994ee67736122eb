// Package bert is the transformer encoder the built-in embedders share
// (llm/e5's multilingual-e5-small, llm/bge's bge-small-en-v1.5): BERT's
// post-LN layers (self-attention over each window, exact-erf GELU,
// LayerNorm after each residual), run on internal/simd's kernels with Q8
// activations times weights each model quantizes its own way (the Linear
// interface: Q4_0 for e5, int8 for bge), fp32 attention, and the pooling
// the model wants (mean, or the first token's state), L2-normalized. It
// owns the windows of a long text, the batching of a call's windows into
// passes, the scratch pool and the spreading of work over goroutines or
// over threads of the lowest priority (Background).
//
// It knows no file format and no tokenizer: a model package reads its
// weights into Weights and its texts into token ids.
//
// It may import internal/simd and internal/lowprio and nothing else of
// this module.
package bert
