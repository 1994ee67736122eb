// Package fakellm is an OpenAI-compatible chat completions server on
// loopback for tests and benchmarks: the generation model costs money and
// needs the internet, so it is the one part faked, and it speaks the real
// wire protocol (streaming SSE included) over real HTTP. It serves the
// rerank endpoint of llama.cpp's llama-server too (POST /v1/rerank, the
// Jina/Cohere shape), scoring by word overlap unless told otherwise.
//
// It imports no package of this module; only tests and benchmarks use it.
package fakellm
