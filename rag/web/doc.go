// Package web searches the web for the answer pipeline's labelled fallback:
// DuckDuckGo (the no-key HTML endpoint, parsed with an HTML parser), Tavily and
// Brave (API keys from the environment). Each provider returns at most n
// plain-text results; any failure is an error naming the provider, so the
// caller can degrade to a vault-only answer.
//
// It imports no package of this module but internal/clip, which cuts titles
// and snippets as rag cuts its passages; cmd adapts Result to rag's own type.
package web
