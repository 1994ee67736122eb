// Package builtin is what every built-in embedding model shares, so that a
// model is one package exporting one Spec and one line in llm's list:
//
//   - spec.go: the Spec (its id, folder, archive and pinned sums, prefixes,
//     size, distances, coverage fit and loader), which llm registers and
//     the fetch reads; Load, Fetch (internal/modelfetch), the folder a
//     model is looked for in, and the load errors that name the command
//     fetching the files again;
//   - encoder.go: the lifecycle of a model run on llm/internal/bert's
//     encoder (e5's, bge's): the model file opened, checked and mapped
//     while it loads (internal/modelfile), the tokenizer, Embed guarded
//     against a file rewritten underneath, TokenCount, the background
//     view on threads of the lowest priority, and Close.
//
// It may import internal/modelfetch, internal/modelfile and
// llm/internal/bert and nothing else of this module.
package builtin
