// Package config loads vaultask's settings in layers: config.yaml (committed
// defaults) < the overrides file written by /admin < VAULTASK_* environment
// variables. Every layer is strict: an unknown key is an error naming the key
// and its source. Secrets come from the environment only.
//
// It is a leaf: it may import no sibling package. cmd/vaultask imports it,
// eval to set A/B arms' keys with Set, internal/ragconfig to map it to the
// pipeline's settings, and internal/bench.
package config
