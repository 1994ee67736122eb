// Command fakellm runs the fake model server of package fakellm on loopback
// until interrupted, so that `vaultask eval retrieval` and `vaultask ask`
// can be pointed at it (--rerank-url, models.rerank_base_url) to measure
// the rerank path's plumbing, cost and fallback without a model. On exit
// it prints what the rerank endpoint received.
package main
