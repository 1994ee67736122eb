// Package llm holds the model clients and what vaultask knows of models. No
// other package knows a provider name.
//
//   - provider.go: the providers a model id's prefix routes to (builtin,
//     ollama, llamacpp, openai, openrouter), their keys' environment
//     variables, ParseModelID, and the rule that embedding runs locally
//     (CheckLocalEmbedding; Policy hands both checks to config).
//   - client.go: the OpenAI-compatible client (openai-go): chat, streamed
//     chat, embeddings, with retries; rerank.go its cross-encoder rerank
//     endpoint (llama-server's /v1/rerank); failure.go a failure's reason
//     in a few words, for an answer that had to do without the model.
//   - builtin.go: the built-in embedding models, a line each: each model
//     package's Spec (llm/builtin), which everything else reads; the
//     loader, from the model's folder of the built-in models' directory,
//     and the fetch of their files (FetchBuiltin, `vaultask fetch-model`).
//   - embedder.go: the Embedder everything embeds with, over the client or
//     a built-in model, with each model's query and document prefixes.
//   - embedding_models.go: what is known of each embedding model by name
//     (the built-in models by their specs, the others by a table): its
//     prefixes, its size, and the distances retrieval judges its hits by
//     (EmbeddingDistances).
//   - coverage.go: the coverage fits of each embedding model and of full
//     text (coverage/*.json, fitted by devtools/cmd/coverage-fit), which
//     cmd/ragconfig hands rag as its coverage models.
//
// It may import its built-in models (llm/builtin, llm/uselite, llm/e5,
// llm/bge), no other package of the module: the model clients are a leaf
// that never reaches the index, CouchDB or the pipeline, and only this
// package links openai-go.
package llm
