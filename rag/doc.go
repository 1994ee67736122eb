// Package rag answers questions from the index: retrieve, expand, rerank,
// assemble and answer, one file per stage, plain functions over slices of hits.
// It declares the interfaces it consumes (Searcher, ChatModel).
//
// It may import index (read types) and llm.
package rag
