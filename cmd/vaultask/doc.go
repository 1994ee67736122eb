// Command vaultask answers questions from an Obsidian vault. See `vaultask help`.
//
// It wires everything: the configuration, the subcommands (small run
// functions over a Main whose outside world is passed in), signals and
// logging. The vault is a source (source.go): a LiveSync database or a
// folder of markdown, which openSource alone tells apart; index, reconcile,
// follow and serve ask it to list, plan, sync and follow. serve's service
// owns the index, the source's follower, the embedder and the HTTP server.
//
// It is the only importer of feed, and may import every package.
package main
