// Package atomicfile replaces a file whole or not at all: the one way the
// module saves a file a crash must not leave half written (config's
// overrides file, serve's MCP session key, the built-in models' files
// `vaultask fetch-model` installs). It imports nothing of the module.
package atomicfile
