// Package llm holds the model clients: OpenAI-compatible chat, streaming and
// embeddings, routing from a provider-prefixed model id, and the built-in
// offline embedder. No other package knows a provider name.
//
// It is a leaf: it may import no sibling package.
package llm
