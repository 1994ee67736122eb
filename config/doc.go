// Package config loads vaultask's settings in layers: config.yaml (committed
// defaults) < the overrides file /admin writes < VAULTASK_* environment
// variables. Every layer is strict: an unknown key is an error naming the key
// and its source. Secrets come from the environment only. It owns the
// overrides file too: Overrides reads it and saves a change atomically
// (internal/atomicfile), and Editable is the one rule of which keys a
// browser (/admin) may set there.
//
// It is a leaf: of the module it may import internal/atomicfile alone.
// cmd/vaultask imports it, eval to set A/B arms' keys with Set,
// cmd/ragconfig to map it to the pipeline's settings, and devtools/bench.
package config
